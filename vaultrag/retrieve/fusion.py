"""Reciprocal Rank Fusion with per-channel weights and a full trace of every channel's rank and score."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .types import CHANNELS, Candidate

RRF_K = 60  # Cormack et al. 2009; flattens rank differences past the top ~10


def rrf(results: Mapping[str, Sequence[tuple[int, float]]], weights: Mapping[str, float], *, k: int = RRF_K,
        tiebreak: Callable[[int], tuple], pinned: frozenset[int] = frozenset()) -> list[Candidate]:
    """score(d) = sum over channels c of w_c / (k + rank_c(d)), ranks 1-based.

    Returns every candidate, best first. Pinned chunks (exact note-name matches) come first. Ties
    break on `tiebreak(chunk_id)` (path, section, chunk), so the order is fully deterministic. A
    channel that did not find a chunk has rank and raw score None, never 0.
    """
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int | None]] = {}
    raws: dict[int, dict[str, float | None]] = {}
    for channel in CHANNELS:
        w = float(weights.get(channel, 1.0))
        for rank, (cid, raw) in enumerate(results.get(channel, ()), start=1):
            if cid not in scores:
                scores[cid] = 0.0
                ranks[cid] = {c: None for c in CHANNELS}
                raws[cid] = {c: None for c in CHANNELS}
            if ranks[cid][channel] is not None:
                continue  # a channel lists a chunk once; keep its best rank
            scores[cid] += w / (k + rank)
            ranks[cid][channel] = rank
            raws[cid][channel] = raw
    order = sorted(scores, key=lambda cid: (cid not in pinned, -scores[cid], tiebreak(cid)))
    return [Candidate(chunk_id=cid, score=round(scores[cid], 6), ranks=ranks[cid], raw=raws[cid],
                      pinned=cid in pinned) for cid in order]


def _minmax(values: dict[int, float]) -> dict[int, float]:
    lo, hi = min(values.values()), max(values.values())
    return {k: (v - lo) / (hi - lo) if hi > lo else 1.0 for k, v in values.items()}


def rescore(hits: Sequence[tuple[int, float]], sims: Mapping[int, float], alpha: float,
            prior: Mapping[int, float] | None = None, gamma: float = 0.0,
            notes: Mapping[int, int] | None = None, beta: float = 0.0) -> list[tuple[int, float]]:
    """Re-order lexical hits by minmax(BM25) + alpha * minmax(cosine) + gamma * prior (a 0..1 score
    per hit: the share of its note's title the query names); each keeps its raw BM25 score. With
    `notes` (chunk id -> note id) and `beta` > 0, a note's best chunk also gains beta times the
    BM25 + cosine blend of the note's second-best candidate chunk: a note with two strong chunks
    ranks over one with a single, slightly stronger one (the title prior is per note already: not summed).

    Rank fusion throws away how far apart BM25 scores are, so even a small RRF weight let a weak
    static-embedding channel reshuffle confident BM25 rankings (xquad-en 0.968 -> 0.953 at weight
    0.1). A score blend over BM25's own candidates keeps those gaps and lets vectors break near-ties.
    """
    aggregate = beta > 0 and notes is not None
    if not hits or (alpha <= 0 and not (gamma > 0 and prior) and not aggregate):
        return list(hits)
    order = {cid: i for i, (cid, _) in enumerate(hits)}
    lex = _minmax(dict(hits))
    sem = _minmax({cid: sims.get(cid, 0.0) for cid, _ in hits}) if alpha > 0 else {}
    content = {cid: lex[cid] + alpha * sem.get(cid, 0.0) for cid, _ in hits}
    if aggregate:
        content = _with_note_support(content, notes, beta)
    blended = {cid: content[cid] + gamma * (prior or {}).get(cid, 0.0) for cid, _ in hits}
    return sorted(hits, key=lambda h: (-blended[h[0]], order[h[0]]))


def _with_note_support(blended: dict[int, float], notes: Mapping[int, int], beta: float) -> dict[int, float]:
    """The best chunk of each note plus beta times its note's second-best blend; other chunks as they
    are (which note comes first may change, a note's second chunk does not pass another note)."""
    best: dict[int, list[tuple[float, int]]] = {}
    for cid, b in blended.items():
        best.setdefault(notes.get(cid, -1 - cid), []).append((b, cid))
    out = dict(blended)
    for ranked in best.values():
        if len(ranked) > 1:
            ranked.sort(key=lambda x: (-x[0], x[1]))
            out[ranked[0][1]] += beta * ranked[1][0]
    return out
