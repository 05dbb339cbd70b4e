"""Pseudo-relevance feedback (RM3-style): words that BM25's best chunks share and the query lacks
are searched as a second query, whose score re-weighs BM25's candidates. Standard library only."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ..store import Store, StoredChunk, Term
from ..textutil import is_run, is_stopword, query_terms, words
from .channels import BM25_WEIGHTS, DF_COUNT_CAP, FtsQuery, query_term

# An expansion word must occur in at least this many of the feedback chunks: a word of one chunk
# is that chunk's topic, not the query's.
PRF_MIN_DOCS = 2
PRF_MIN_CHARS = 3  # shorter words (units, initials) are noise as expansion terms
PRF_POOL = 40
PRF_DEPTH = 300  # the expansion query's hits read; BM25 candidates past them score 0 on it  # words weighed by IDF (one document count each) before the best are taken


def _doc_terms(text: str) -> list[str]:
    """A chunk's words as the query side makes terms of them, with repeats (CJK runs as grams)."""
    out: list[str] = []
    for tok in words(text):
        if is_run(tok):
            out.extend(query_terms(tok))
        elif len(tok) >= PRF_MIN_CHARS and not is_stopword(tok) and not tok.isdigit():
            out.append(tok)
    return out


def expansion_terms(store: Store, fq: FtsQuery, hits: Sequence[tuple[int, float]], chunks: dict[int, StoredChunk],
                    n_terms: int, n_docs: int) -> list[Term]:
    """The `n_terms` words of the top `n_docs` hits most probable under their relevance model
    (sum over feedback chunks of P(chunk) * P(word | chunk), P(chunk) by its BM25 score share),
    times IDF; none of the query's own terms."""
    top = [(cid, s) for cid, s in hits[:n_docs] if cid in chunks and s > 0]
    total = sum(s for _, s in top)
    if len(top) < PRF_MIN_DOCS or total <= 0:
        return []
    own = {t.text for t in fq.terms} | {t.text for t in fq.dropped}
    rm: Counter = Counter()
    seen_in: Counter = Counter()
    for cid, s in top:
        ch = chunks[cid]
        terms = _doc_terms(" ".join((ch.text, ch.heading_path or "")))
        if not terms:
            continue
        tf = Counter(terms)
        for w, n in tf.items():
            rm[w] += (s / total) * n / len(terms)
            seen_in[w] += 1
    pool = [w for w, _ in rm.most_common() if seen_in[w] >= PRF_MIN_DOCS and w not in own][:PRF_POOL]
    stems = store.stem(pool) if pool else {}
    own_stems = set(store.stem(sorted(own)).values()) if own else set()
    n = max(1, store.chunk_count()) if pool else 1
    weighed = []
    used: set[str] = set()
    for w in pool:
        stem = stems.get(w, w)
        if stem in own_stems or stem in used:
            continue
        used.add(stem)
        term = query_term(w)
        df = store.doc_freq(term, DF_COUNT_CAP)
        weighed.append((rm[w] * math.log(1 + (n - df + 0.5) / (df + 0.5)), w, term))
    weighed.sort(key=lambda x: (-x[0], x[1]))
    return [t for _, _, t in weighed[:n_terms]]


def _minmax(values: dict[int, float]) -> dict[int, float]:
    lo, hi = min(values.values()), max(values.values())
    return {k: (v - lo) / (hi - lo) if hi > lo else 1.0 for k, v in values.items()}


def with_feedback(store: Store, fq: FtsQuery, hits: list[tuple[int, float]], chunks: dict[int, StoredChunk],
                  n_terms: int, n_docs: int, weight: float) -> tuple[list[tuple[int, float]], list[Term]]:
    """BM25's hits re-ordered by minmax(BM25) + weight * minmax(score of the expansion query);
    the scores returned are that blend (rescaled to BM25's range), so later stages see it."""
    if not hits or weight <= 0 or n_terms <= 0:
        return hits, []
    terms = expansion_terms(store, fq, hits, chunks, n_terms, n_docs)
    if not terms:
        return hits, []
    ids = [cid for cid, _ in hits]
    exp = dict(store.lexical(terms, max(PRF_DEPTH, 4 * len(ids)), BM25_WEIGHTS))
    lex = _minmax(dict(hits))
    fb = _minmax({cid: exp.get(cid, 0.0) for cid in ids})
    hi = max(s for _, s in hits)
    blended = {cid: (lex[cid] + weight * fb[cid]) / (1 + weight) * hi for cid in ids}
    order = {cid: i for i, cid in enumerate(ids)}
    return sorted(((cid, round(blended[cid], 6)) for cid in ids), key=lambda h: (-h[1], order[h[0]])), terms
