"""Reciprocal Rank Fusion with per-channel weights and a full trace of every channel's rank and score."""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

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
