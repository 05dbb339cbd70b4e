"""What the embedding model sees for a chunk: hex identifiers are left out (issue 19, sem12), and an
index embedded by the earlier recipe is re-embedded once. Real model file, real SQLite."""
from __future__ import annotations

import hashlib
import pytest

from conftest import write_notes
from vaultrag import index_vectors
from vaultrag.index_vectors import embed_input
from vaultrag.indexer import reindex
from vaultrag.store import Store

HASH = hashlib.sha256(b"a paragraph").hexdigest()
TEXT = ("The Rhine flows from the Swiss Alps through Germany and the Netherlands into the North Sea; "
        "its delta is one of the largest river deltas of Europe.")


@pytest.mark.parametrize("word", [
    HASH, HASH[:8], HASH[:40].upper(), "123e4567-e89b-12d3-a456-426614174000", "9c1b3f2a",
    "188205363-0f24b2a5-3706-4a8c-b38b-7a66baa68ce6",  # a GitHub attachment id: digits first, one token
])
def test_hex_identifiers_are_left_out(word):
    got = embed_input(f"Notes {word}", "", f"Seen in {word}, twice: {word}.")
    assert word.lower() not in got.lower()
    assert got.split() == ["Notes", "Seen", "in", ",", "twice:", "."]


@pytest.mark.parametrize("word", [
    "deadbeefcafe",  # hex letters only: a word
    "20261204",  # digits only: a date, a number
    "2026-12-04", "1a2b3c4",  # 7 characters: under the length
    "200172336-2026", "12345678-1234",  # digit groups joined by dashes: numbers
    "sha256", "x86_64", "0x1f", "utf8", "abcdefg12345",  # not all hex
])
def test_other_words_are_kept(word):
    assert embed_input("Title", "Section", f"the {word} here") == f"Title\nSection\nthe {word} here"


def test_text_of_identifiers_only_is_embedded_as_written():
    assert embed_input(HASH, "", HASH) == f"{HASH}\n{HASH}"


def test_without_hex_characters_the_input_is_unchanged():
    assert embed_input("A title", "A > B", "Some text.") == "A title\nA > B\nSome text."


def test_a_hash_title_no_longer_outweighs_the_paragraph():
    """The XQuAD-shaped note (a hash as its title, written again as its H1): its vector was far from the
    paragraph's own, and is now the paragraph's (the bundled model, as the indexer loads it)."""
    from vaultrag.embedder import load_embedder

    emb = load_embedder("bundled")
    joined = "\n".join((HASH, f"# {HASH}\n\n{TEXT}"))
    old, new, body = emb.encode([joined, embed_input(HASH, "", f"# {HASH}\n\n{TEXT}"), f"# \n\n{TEXT}"])
    assert float(old @ body) < 0.9
    assert float(new @ body) > 0.999


def _vectors(db):
    with Store(db, readonly=True) as s:
        return dict(s.conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall())


def test_an_index_of_the_earlier_recipe_is_re_embedded_once(tmp_path, cfg_for, monkeypatch):
    vault = write_notes(tmp_path / "v", {
        f"{HASH}.md": f"# {HASH}\n\n{TEXT}\n",
        "plain.md": "# Plain\n\nA note about gardening tomatoes on a balcony in summer.\n",
    })
    cfg = cfg_for(vault)
    with pytest.MonkeyPatch.context() as old:  # the recipe before sem12: every word, no version key
        old.setattr(index_vectors, "EMBED_INPUT_VERSION", 1)
        old.setattr(index_vectors, "embed_input", lambda t, h, x: "\n".join(p for p in (t, h, x) if p))
        old.setattr("vaultrag.indexer.embed_input", index_vectors.embed_input)
        reindex(cfg)
        before = _vectors(cfg.db_path())
        assert reindex(cfg).embedding.embedded == 0

    report = reindex(cfg)  # nothing changed in the vault: the new recipe alone re-embeds
    assert report.embedding.reembedded_all and report.embedding.embedded == len(before)
    after = _vectors(cfg.db_path())
    with Store(cfg.db_path(), readonly=True) as s:
        ids = {path: cid for cid, path in s.conn.execute(
            "SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id")}
    hashed, plain = ids[f"{HASH}.md"], ids["plain.md"]
    assert after[plain] == before[plain], "a chunk without identifiers keeps its vector, byte for byte"
    assert after[hashed] != before[hashed]

    # the same bytes as a fresh index of the new recipe; and then nothing to do
    from vaultrag.config import load_config

    fresh = load_config(vault=str(vault), db=str(tmp_path / "fresh.sqlite"))
    reindex(fresh)
    assert sorted(_vectors(fresh.db_path()).values()) == sorted(after.values())
    assert reindex(cfg).embedding.embedded == 0
    (vault / "plain.md").write_text("# Plain\n\nTomatoes on a balcony need sun and water.\n", encoding="utf-8")
    assert reindex(cfg).embedding.embedded == 1


def test_query_near_the_paragraph_finds_the_hash_titled_note(tmp_path, cfg_for):
    """End to end: the vectors-only ranking puts the paragraph first for a question in other words."""
    from vaultrag.retrieve import search

    notes = {f"{hashlib.sha256(str(i).encode()).hexdigest()}.md": f"# {hashlib.sha256(str(i).encode()).hexdigest()}\n\n{t}\n"
             for i, t in enumerate([TEXT, "Photosynthesis turns light, water and carbon dioxide into sugar in leaves.",
                                    "The stock market fell sharply after the central bank raised interest rates."])}
    cfg = cfg_for(write_notes(tmp_path / "v", notes))
    reindex(cfg)
    ans = search("which river runs into the north sea through the netherlands", cfg, channels=["vec"], gate=False,
                 max_tokens=0)
    assert [h.path for h in ans.hits][:1] == [next(iter(notes))]
