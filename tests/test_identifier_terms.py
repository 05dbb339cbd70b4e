"""A query word written as code (`test_cli`, `utf8`) is matched whole by the evidence gate, never by
its prefix: "test_c*" (the phrase test c*) met "failed tests: `ctest" in tldr's ctest page, and a
coding prompt about the user's tests/test_cli.py injected tldr's pytest page (trial9)."""
from __future__ import annotations

from conftest import lorem_notes, write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.channels import build_fts_query
from vaultrag.store import Term


def test_identifiers_have_no_looser_form():
    fq = build_fts_query("fix the failing test in tests/test_cli.py")
    assert fq.loose[Term("test_cli")] == (Term("test_cli"),)
    assert len(fq.loose[Term("failing")]) == 2  # a plain word keeps its prefix form
    assert build_fts_query("decode utf8 names").loose[Term("utf8")] == (Term("utf8"),)


def test_an_identifier_the_vault_lacks_is_not_met_by_a_word_it_starts(tmp_path, cfg_for):
    notes = {**lorem_notes(), "ctest.md": "# ctest\n\n> CMake test driver.\n\n- Print logs on failed tests: "
                                          "`ctest --output-on-failure`\n"}
    cfg = cfg_for(write_notes(tmp_path / "v", notes))
    reindex(cfg)
    ev = search("failed test_cli", cfg, gate=False).evidence
    assert ev["terms_matched"] == 1 and ev["terms_total"] == 2, ev  # "failed" only
    assert ev["term_coverage"] < 0.5, ev
