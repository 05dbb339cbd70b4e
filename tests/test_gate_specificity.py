"""The evidence gate weighs how unlikely a chunk's matched words meet by chance (specificity) where
coverage alone is modest (pipeline.lexical_evidence), on a real index of generated notes."""
from __future__ import annotations

import pytest

from conftest import lorem_notes, write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.pipeline import (GATE_MIN_SPECIFICITY, GATE_MIN_TERM_COVERAGE, GATE_RARE_COVERAGE,
                                        GATE_RARE_SPECIFICITY, GATE_SURE_COVERAGE, lexical_evidence)

WORDS = ["wrenfold", "tassilo", "brimcote", "quenmark", "ostrevel", "pardine"]


def _extra(i: int) -> list[str]:
    """Six words in six notes each, in disjoint sets (word k in notes 6k+1 .. 6k+5), and the first
    two also together in note 50: no note holds more than two of them. Two rare words meet in note 7."""
    words = [w for k, w in enumerate(WORDS) if 6 * k + 1 <= i <= 6 * k + 5 or (k in (0, 1) and i == 50)]
    words += [WORDS[k] for k in (2, 3, 4, 5) if i == 6 * k + 6]  # their sixth note
    if i == 7:
        words += ["zeppelin", "marmalade"]
    return words


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    from vaultrag.config import load_config

    root = tmp_path_factory.mktemp("gate-spec")
    v = write_notes(root / "v", lorem_notes(_extra))
    c = load_config(vault=str(v), db=str(root / "index.sqlite"))
    reindex(c)
    return c


def test_words_that_meet_by_chance_are_not_evidence(cfg):
    # the best note holds two of six equally rare words: a third of the weight, as two words in
    # 6 of 60 notes meet in some note by chance anyway
    ans = search(" ".join(WORDS), cfg)
    ev = ans.evidence
    assert GATE_MIN_TERM_COVERAGE <= ev["term_coverage"] < GATE_SURE_COVERAGE
    assert ev["specificity"] < GATE_MIN_SPECIFICITY and not ev["grams"]
    assert ans.status == "no_evidence" and ans.reason == "below_threshold"
    # two of them are a half: answered
    half = search(" ".join(WORDS[:4]), cfg)
    assert half.evidence["term_coverage"] >= GATE_SURE_COVERAGE and half.status == "ok"
    assert half.hits[0].path == "n50.md"


def test_rare_words_meeting_in_one_note_are_evidence_at_lower_coverage(cfg):
    # two words found in one note only, together, plus three words the vault lacks
    ans = search("zeppelin marmalade fjordbluster wombatique quasarnix", cfg)
    ev = ans.evidence
    assert GATE_RARE_COVERAGE <= ev["term_coverage"] < GATE_MIN_TERM_COVERAGE
    assert ev["specificity"] >= GATE_RARE_SPECIFICITY
    assert ans.status == "ok" and ans.hits[0].path == "n07.md"
    # one more unknown word and the rare pair is no longer enough
    assert search("zeppelin marmalade fjordbluster wombatique quasarnix gloppity", cfg).status == "no_evidence"


@pytest.mark.parametrize("cov, spec, grams, expected", [
    (0.35, 0.5, False, False),   # modest coverage, chance co-occurrence
    (0.35, 2.0, False, True),    # modest coverage, words that rarely meet
    (0.45, 0.0, False, True),    # sure coverage
    (0.30, 4.5, False, True),    # rare meeting, lower coverage
    (0.30, 3.0, False, False),
    (0.25, 9.0, False, False),   # below every bar
    (0.35, 0.0, True, True),     # CJK / spaceless grams: coverage alone, as before
    (0.30, 9.0, True, False),
])
def test_lexical_evidence_rule(cov, spec, grams, expected):
    assert lexical_evidence({"term_coverage": cov, "specificity": spec, "grams": grams}) is expected
