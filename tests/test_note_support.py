"""Note-level aggregation of chunk scores (retrieve/fusion.rescore's `notes`/`beta`, config note_agg)."""
from __future__ import annotations

import dataclasses
import random

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.retrieve.fusion import _with_note_support, rescore


def test_a_note_with_two_strong_chunks_passes_a_note_with_one():
    hits = [(1, 10.0), (2, 9.5), (3, 9.0), (4, 1.0)]
    notes = {1: 100, 2: 200, 3: 200, 4: 300}
    assert rescore(hits, {}, 0.0, notes=notes, beta=0.0) == hits
    out = rescore(hits, {}, 0.0, notes=notes, beta=0.5)
    assert [cid for cid, _ in out] == [2, 1, 3, 4]  # note 200's best chunk leads, its second keeps its own score
    assert sorted(out) == sorted(hits)  # raw BM25 scores kept
    assert rescore(hits, {}, 0.0, notes=None, beta=0.5) == hits  # nothing to aggregate by


def test_the_title_prior_is_not_counted_twice():
    # chunks 2 and 3 share a note whose title the query names: its prior lifts each chunk once,
    # the support a chunk gets from its sibling is the sibling's BM25 + cosine blend only
    hits = [(1, 10.0), (2, 5.0), (3, 5.0), (4, 0.0)]
    notes = {1: 1, 2: 2, 3: 2, 4: 4}
    prior = {2: 1.0, 3: 1.0}
    got = dict((cid, i) for i, (cid, _) in enumerate(rescore(hits, {}, 0.0, prior, 0.3, notes, 0.5)))
    # chunk 2: 0.5 + 0.3 + 0.5 * 0.5 = 1.05 > chunk 1's 1.0; with the prior summed too it would be 1.2
    assert got[2] == 0 and got[1] == 1
    hits = [(1, 10.0), (2, 4.0), (3, 4.0), (4, 0.0)]  # 0.4 + 0.3 + 0.2 = 0.9 < 1.0 (summed prior: 1.05)
    assert [cid for cid, _ in rescore(hits, {}, 0.0, prior, 0.3, notes, 0.5)][0] == 1


def _support_reference(blended, notes, beta):
    out = dict(blended)
    for note in {notes.get(c, -1 - c) for c in blended}:
        mine = sorted(((-v, c) for c, v in blended.items() if notes.get(c, -1 - c) == note))
        if len(mine) > 1:
            out[mine[0][1]] = -mine[0][0] - beta * mine[1][0]
    return out


def test_note_support_matches_a_naive_reference():
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 30)
        blended = {cid: rng.choice([0.0, 0.5, 1.0, rng.random()]) for cid in range(n)}
        notes = {cid: rng.randint(0, 6) for cid in range(n) if rng.random() < 0.9}
        beta = rng.choice([0.3, 0.5, 1.0])
        got, want = _with_note_support(blended, notes, beta), _support_reference(blended, notes, beta)
        assert got.keys() == want.keys()
        assert all(abs(got[c] - want[c]) < 1e-12 for c in got)


def _vault(tmp_path):
    filler = {f"Misc {i}.md": f"# Misc {i}\n\nNotes on topic number {i}: I keep pottery, cycling and tea here.\n" for i in range(30)}
    return write_notes(tmp_path / "v", {
        # one chunk that says "sourdough starter" most densely
        "Bread log.md": "# Bread log\n\nSourdough starter fed on Monday, sourdough bread baked "
                        "on Tuesday.\n",
        # a note whose two sections each speak of it
        "Fermentation.md": "# Fermentation\n\n## Feeding\n\nA sourdough starter is fed flour and water every day "
                           "so the yeast stays active.\n\n## Storage\n\nKeep the sourdough starter in the fridge "
                           "between bakes; it sleeps there for a week.\n",
        **filler})


def test_search_ranks_the_note_several_chunks_of_which_match(tmp_path, cfg_for):
    cfg = cfg_for(_vault(tmp_path))
    reindex(cfg)
    query = "how do I keep a sourdough starter"
    off = search(query, dataclasses.replace(cfg, note_agg=0.0), gate=False, graph=False, max_tokens=0)
    on = search(query, dataclasses.replace(cfg, note_agg=0.5), gate=False, graph=False, max_tokens=0)
    assert off.hits[0].path == "Bread log.md"
    assert [h.path for h in on.hits[:3]] == ["Fermentation.md", "Bread log.md", "Fermentation.md"]  # its 2nd chunk stays
    assert on.evidence == off.evidence  # the gate reads chunks by their own score either way
