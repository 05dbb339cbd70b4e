"""British and American spellings: a question in one finds a note in the other, with the gate's
full credit (a spelling is not a typo), and a word the vault holds is searched as typed. Real
index, real model."""
from __future__ import annotations

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.channels import build_fts_query
from vaultrag.retrieve.spelling import variants
from vaultrag.store import Store, Term

NOTES = {
    "Graph view.md": """
        # Graph view

        Each node of the graph can get a color from a group rule: open the settings, add a group, pick a
        color for the notes whose path or tag matches. Colors apply to the node and its label.
        """,
    "Filing.md": """
        # Filing

        Organise the archive by year, then catalogue each box; the centre shelf holds the current
        programme of work.
        """,
    "Printer.md": """
        # Printer

        Print a test page after installing the driver. If the test page fails, check the USB cable.
        """,
}


@pytest.fixture
def vault(tmp_path, cfg_for):
    cfg = cfg_for(write_notes(tmp_path / "v", NOTES))
    reindex(cfg)
    return cfg


@pytest.mark.parametrize("word,other", [
    ("colour", "color"), ("color", "colour"), ("colours", "colors"), ("organise", "organize"),
    ("organization", "organisation"), ("analyse", "analyze"), ("centre", "center"),
    ("center", "centre"), ("catalogue", "catalog"), ("licence", "license"), ("defense", "defence"),
    ("travelled", "traveled"), ("modeling", "modelling"), ("grey", "gray"), ("programme", "program"),
    ("judgement", "judgment"), ("anaemia", "anemia"), ("favorite", "favourite"),
])
def test_variants_spell_the_word_the_other_way(word, other):
    assert other in variants(word)


@pytest.mark.parametrize("word", ["hour", "door", "four", "filed", "sealed", "handling", "api", "x2y", "naïve"])
def test_words_without_another_spelling_have_none(word):
    assert variants(word) == []


def test_a_british_question_finds_the_american_note_with_full_credit(vault):
    with Store(vault.db_path(), readonly=True) as s:
        q = build_fts_query("graph node colour", s)
        assert Term("color") in q.terms and Term("colour") not in q.terms
        assert not q.typos, "a spelling is not a typo: no half credit"
    british = search("which colour does a graph node get from a group rule", vault)
    american = search("which color does a graph node get from a group rule", vault)
    assert british.status == "ok" and british.hits[0].path == "Graph view.md"
    # the gate weighs the British question exactly as the American one
    assert british.evidence["term_coverage"] == american.evidence["term_coverage"] >= 0.9


def test_an_american_question_finds_the_british_note(vault):
    ans = search("organize the catalog on the center shelf", vault)
    assert ans.status == "ok" and ans.hits[0].path == "Filing.md"
    with Store(vault.db_path(), readonly=True) as s:
        terms = {t.text for t in build_fts_query("organize catalog center", s).terms}
    assert terms == {"organise", "catalogue", "centre"}


def test_a_word_the_vault_holds_is_searched_as_typed(vault):
    with Store(vault.db_path(), readonly=True) as s:
        assert build_fts_query("color", s).terms == (Term("color"),)
        assert build_fts_query("programme", s).terms == (Term("programme"),)
        # a word with no other spelling the vault holds goes on to typo tolerance untouched
        q = build_fts_query("colur", s)
        assert q.terms[0].text == "colur" and q.typos


def test_the_spelling_the_vault_writes_far_more_often_is_searched(tmp_path, cfg_for):
    """One British note in an American vault: "colour" is searched as "color", which the notes
    write (and every channel sees the vault's spelling: the heading "Color settings" is met)."""
    notes = {f"Theme {i}.md": f"# Theme {i}\n\nThe accent color of theme {i} is set in its color settings.\n"
             for i in range(6)}
    notes["Palette.md"] = "# Palette\n\nOne colour per palette entry.\n"
    notes["Appearance.md"] = "# Appearance\n\n## Color settings\n\nPick the interface color and the font.\n"
    cfg = cfg_for(write_notes(tmp_path / "v", notes))
    reindex(cfg)
    with Store(cfg.db_path(), readonly=True) as s:
        q = build_fts_query("colour settings", s)
        assert Term("color") in q.terms and ("colour", "color") in q.respelt
        # fewer than SPELLING_DOMINANT times as many: searched as typed
        assert build_fts_query("palette", s).respelt == ()
    ans = search("Colour settings", cfg)
    assert ans.status == "ok" and ans.hits[0].path == "Appearance.md"
    assert ans.hits[0].heading_path.endswith("Color settings")


def test_respell_rewrites_whole_words_only():
    from vaultrag.retrieve.channels import respell
    assert respell("Colour of the colours, discolour", (("colour", "color"),)) == "color of the colours, discolour"
    assert respell("as typed", ()) == "as typed"
