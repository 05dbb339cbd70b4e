"""Words written together or apart find each other ("roll back" / "rollback", "Wi-Fi" / "wifi",
"set up" / "setup"), only where the vault writes the other form (trial finding: "how do I roll
back a migration" missed the note on "Rollback")."""
from __future__ import annotations

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.channels import build_fts_query
from vaultrag.retrieve.compounds import joined_pairs, splits
from vaultrag.store import Term, open_store

FILLER = {f"misc{i}.md": f"# Note {i}\n\nShopping list {i}: apples, bread and cheese for the weekend.\n"
          for i in range(30)}
NOTES = {
    "deploy.md": "# Deploys\n\n## Rollback\n\nA failed migration is undone with the rollback script in ops/, "
                 "then the previous release is promoted.\n",
    "home.md": "# Home network\n\nThe Wi-Fi router sits in the hall; reboot it when the printer drops off.\n",
    "game.md": "# Board games\n\nRoll the dice twice and move back three squares on a six.\n",
    **FILLER,
}


@pytest.fixture
def vault_cfg(tmp_path, cfg_for):
    cfg = cfg_for(write_notes(tmp_path / "v", NOTES))
    reindex(cfg)
    return cfg


def test_pairs_and_splits():
    assert joined_pairs("how do I roll back a Wi-Fi set up") == [("roll", "back"), ("wi", "fi"), ("fi", "set"),
                                                                ("set", "up")]
    assert joined_pairs("how do I") == []  # stopwords only, one-letter words
    assert joined_pairs("the process is in files, log as text") == []  # function words, a comma
    assert joined_pairs("log in, then sign-in or check out") == [("log", "in"), ("sign", "in"), ("check", "out")]
    assert joined_pairs("snake_case foo2 bar") == []  # identifiers are not words written apart
    assert splits("wifi") == ["wi fi"]
    assert splits("rollback")[0] == "roll back" and len(splits("rollback")) == 5


def test_two_words_find_the_compound(vault_cfg):
    ans = search("how do I roll back a migration", vault_cfg)
    assert ans.status == "ok" and ans.hits[0].path == "deploy.md", [h.path for h in ans.hits]


def test_a_compound_finds_the_words_apart(vault_cfg):
    ans = search("where is the wifi?", vault_cfg)
    assert ans.status == "ok" and ans.hits[0].path == "home.md", [h.path for h in ans.hits]


def test_only_forms_the_vault_writes_join_the_query(vault_cfg):
    with open_store(vault_cfg, readonly=True) as store:
        fq = build_fts_query("how do I roll back a migration", store)
        by_text = {t.text: t for t in fq.terms}
        assert by_text["roll"].alternatives == ("rollback",) and by_text["back"].alternatives == ("rollback",)
        assert by_text["migration"].alternatives == ()
        # "move back" is two words in a note, but no note writes "moveback": nothing is added
        assert all(t.alternatives == () for t in build_fts_query("move back three squares", store).terms)
        fq = build_fts_query("the wifi is down", store)
        assert Term("wifi", False, ("wi fi",)) in fq.terms
        # a word the vault holds is searched as typed, never split
        assert all(t.alternatives == () for t in build_fts_query("printer router", store).terms)


def test_the_gate_credits_the_compound_in_full(vault_cfg):
    """A chunk holding "rollback" covers the prompt's "roll" and "back" as the two words would."""
    apart = search("roll back migration", vault_cfg).evidence
    assert apart["term_coverage"] == 1.0
