"""The three recall channels. Each returns ranked (chunk id, raw score) and a status; a channel that
cannot run says why and the others still answer. Standard library only (hook path)."""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from pathlib import Path

from ..store import Store
from ..textutil import fts_phrase, fts_term, meta_key, query_terms, word_prefix
from .types import ChannelStatus

# FTS5 column weights: chunk text, heading path, 'title | type | tags' context (issue 5).
BM25_WEIGHTS = (1.0, 0.5, 0.3)
# Long prompts: keep the rarest terms only. A raw 20-word OR query cost 187 ms at 50k chunks,
# pruned to 5 rarest terms 9 ms; rare terms carry almost all of BM25's signal anyway.
MAX_QUERY_TERMS = 8
# Counting a term's documents stops here: a term this common is dropped first in any case.
DF_COUNT_CAP = 5000
# Typo tolerance (words no chunk holds): at most this many words per query are corrected, each
# by up to TYPO_ALTERNATIVES index terms one edit away (two for stems of 9+ letters:
# "authentif" -> "authent"). Shorter words are left alone: at 4 letters one edit reaches too much.
TYPO_MIN_CHARS = 5
TYPO_MAX_WORDS = 3
TYPO_ALTERNATIVES = 3
TYPO_TWO_EDITS_CHARS = 9
# Metadata channel: longest name (in words) looked up as a query n-gram.
MAX_KEY_WORDS = 8
# A name matched inside a longer query counts only if it covers this share of the query's
# content words, or is a specific name (several words, or one long / digit-bearing identifier).
MIN_KEY_COVERAGE = 0.5
SPECIFIC_KEY_CHARS = 8
KIND_WEIGHT = {"title": 1.0, "alias": 1.0, "file": 1.0, "heading": 0.8, "tag": 0.5}
# Weaker name matches (a tag, or a heading covering under ~60% of the query) are dropped: kept,
# they pulled obsidian-help description queries from MRR 0.857 to 0.757 (BENCHMARKS.md, eval).
MIN_META_SCORE = 0.5


@dataclass(frozen=True)
class FtsQuery:
    match: str  # the FTS5 MATCH expression ('' when there is nothing to search)
    terms: tuple[str, ...]  # kept terms, as FTS5 expressions
    dropped: tuple[str, ...]  # terms pruned: too common, or in no chunk at all
    df: dict[str, int]  # document counts of every term (capped), when pruning ran
    loose: dict[str, str] | None = None  # term -> the looser form the evidence gate accepts


def build_fts_query(text: str, store: Store | None = None, max_terms: int = MAX_QUERY_TERMS) -> FtsQuery:
    """The one function that turns user text into an FTS5 query.

    Every term is quoted (so `-`, `:`, `*`, `AND`, parentheses and quotes in user text are plain
    text, never syntax) and the terms are OR-ed; BM25 rewards chunks matching more of them. A
    non-ASCII word is searched by its leading part (textutil.fts_term). With
    more than `max_terms` terms and a store at hand, only the rarest are kept.
    """
    loose: dict[str, str] = {}
    for word in query_terms(text):
        term = fts_term(word)
        stem = word_prefix(word) if word.isascii() else None  # a non-ASCII term is a prefix already
        loose.setdefault(term, f"{term} OR {fts_phrase(stem)}*" if stem else term)
    terms = list(loose)
    df: dict[str, int] = {}
    dropped: list[str] = []
    pruning = len(terms) > max_terms and store is not None
    if pruning:
        df = {t: store.fts_doc_count(t, DF_COUNT_CAP) for t in terms}
    if store is not None:
        fixed = typo_alternatives(store, terms, df)
        if fixed:
            terms = [fixed.get(t, t) for t in terms]
            for t, expr in fixed.items():
                loose[expr] = expr
                if pruning:
                    df[expr] = store.fts_doc_count(expr, DF_COUNT_CAP)
    if pruning:
        present = [t for t in terms if df[t] > 0]
        order = sorted(present, key=lambda t: (df[t], terms.index(t)))
        keep = set(order[:max_terms])
        dropped = [t for t in terms if t not in keep]
        terms = [t for t in terms if t in keep]
    return FtsQuery(" OR ".join(terms), tuple(terms), tuple(dropped), df, loose)


def _typo_word(term: str) -> str | None:
    """The plain word inside a quoted ASCII term that typo tolerance may correct, else None:
    letters only (identifiers with digits, underscores or dots stay exact), TYPO_MIN_CHARS+."""
    w = term[1:-1] if term.startswith('"') and term.endswith('"') else ""
    return w if len(w) >= TYPO_MIN_CHARS and w.isascii() and w.isalpha() else None


def typo_alternatives(store: Store, terms: list[str], df: dict[str, int]) -> dict[str, str]:
    """term -> `("word" OR "near"* ...)` for words no chunk holds ("kerberose", "leese"): the
    index's nearest terms (store.near_terms over its FTS vocabulary, stemmed as it stems) join
    the word. Words the index knows are never touched, so exact identifiers stay exact."""
    unknown = []
    for t in terms:
        w = _typo_word(t)
        if w and (df[t] if t in df else store.fts_doc_count(t, 1)) == 0:
            unknown.append((t, w))
        if len(unknown) >= TYPO_MAX_WORDS:
            break
    if not unknown:
        return {}
    stems = store.stem([w for _, w in unknown])
    out = {}
    for t, w in unknown:
        stem = stems.get(w, w)
        cap = 2 if len(stem) >= TYPO_TWO_EDITS_CHARS else 1
        near = store.near_terms(stem, cap, TYPO_ALTERNATIVES)
        if near:
            out[t] = "(" + " OR ".join([t] + [fts_phrase(c) + "*" for c, _, _ in near]) + ")"
    return out


def bm25_channel(store: Store, q: FtsQuery, limit: int) -> tuple[list[tuple[int, float]], ChannelStatus]:
    if not q.match:
        return [], ChannelStatus(ran=True, hits=0, reason="no searchable terms")
    hits = store.fts_search(q.match, limit, BM25_WEIGHTS)
    # bm25() is negative (lower is better); report it positive so larger means stronger everywhere.
    hits = [(cid, -score) for cid, score in hits]
    note = f"pruned {len(q.dropped)} common terms" if q.dropped else None
    return hits, ChannelStatus(ran=True, hits=len(hits), reason=note)


def _ngrams(words: list[str], n_max: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in range(1, min(n_max, len(words)) + 1):
        for i in range(len(words) - n + 1):
            out.setdefault(" ".join(words[i:i + n]), n)
    return out


def meta_channel(store: Store, text: str, limit: int) -> tuple[list[tuple[int, float, bool, bool]], ChannelStatus]:
    """Exact and near-exact matches of the query (or a name inside it) on titles, aliases, file
    names, headings and tags. Returns (chunk id, score, exact, whole) ranked; `exact` = the whole
    query is a note's title, alias or file name, which wins outright; `whole` = a title, alias or
    file name inside the query holds every content word of it ("what is the dragonfly handshake",
    alias "Dragonfly Handshake")."""
    full = meta_key(text)
    if not full:
        return [], ChannelStatus(ran=True, hits=0, reason="empty query")
    words = full.split()
    q_terms = set(query_terms(text))
    content = max(1, len(q_terms))
    grams = _ngrams(words, MAX_KEY_WORDS)
    grams.setdefault(full, len(words))
    rows = store.match_keys(list(grams))
    best: dict[tuple[int, int | None], tuple[float, bool, bool]] = {}
    for key, kind, file_id, chunk_id in rows:
        n = len(key.split())
        exact = key == full
        coverage = 1.0 if exact else min(1.0, n / content)
        specific = n >= 2 or len(key) >= SPECIFIC_KEY_CHARS or any(c.isdigit() for c in key)
        if not exact and coverage < MIN_KEY_COVERAGE and not specific:
            continue
        score = coverage * KIND_WEIGHT.get(kind, 0.5) + (1.0 if exact else 0.0)
        if score < MIN_META_SCORE:
            continue
        name = kind in ("title", "alias", "file")
        pin = exact and name
        whole = name and (exact or q_terms <= set(query_terms(key)))
        slot = (file_id, chunk_id)
        if slot not in best or (score, pin, whole) > best[slot]:
            best[slot] = (score, pin, whole)
    # File-level keys point at the note's lead chunk.
    leads = store.lead_chunks([fid for fid, cid in best if cid is None])
    by_chunk: dict[int, tuple[float, bool, bool]] = {}
    for (fid, cid), val in best.items():
        target = cid if cid is not None else leads.get(fid)
        if target is not None and (target not in by_chunk or val > by_chunk[target]):
            by_chunk[target] = val
    ranked = sorted(by_chunk.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
    return [(cid, *val) for cid, val in ranked], ChannelStatus(ran=True, hits=len(ranked))


# -- vectors ------------------------------------------------------------------------------------
_ENCODERS: dict[str, object] = {}


def encoder_for(model_path: str):
    """The lean (stdlib) query encoder for the model the index was built with, cached per process."""
    enc = _ENCODERS.get(model_path)
    if enc is None:
        from ..lean_encoder import LeanEncoder

        enc = LeanEncoder.from_folder(model_path)
        _ENCODERS[model_path] = enc
    return enc


def query_blob(vec: list[float], vector_type: str) -> bytes | None:
    """Pack a query vector as float32. For int8 indexes `Store.vec_search` quantises it exactly as
    the chunks were (store/vectors.py); packing it as int8 here would round it twice."""
    if vector_type == "int8" and not any(vec):
        return None
    return struct.pack(f"<{len(vec)}f", *vec)


@dataclass(frozen=True)
class QueryVector:
    blob: bytes  # packed like the index's vectors
    vector_type: str
    known: float  # share of the query's words the model's vocabulary holds whole (0..1)


def vec_channel(store: Store, text: str, limit: int) -> tuple[list[tuple[int, float]], ChannelStatus, QueryVector | None]:
    """Vector KNN. Also returns the query vector, which fusion uses to re-score lexical hits."""
    if store.vec_error is not None:
        return [], ChannelStatus(ran=False, reason=store.vec_error), None
    if store.get_meta("vectors_invalid") == "1":
        return [], ChannelStatus(ran=False, reason="vectors out of date; run python -m vaultrag.reindex"), None
    if not store.has_vec_table():
        return [], ChannelStatus(ran=False, reason="the index has no vectors (built without an embedding model)"), None
    model_path = store.get_meta("model_path")
    if not model_path or not Path(model_path).is_dir():
        return [], ChannelStatus(ran=False, reason=f"embedding model folder {model_path!r} not found; run reindex"), None
    try:
        enc = encoder_for(model_path)
        vec = enc.encode(text)
        known = enc.known_share(query_terms(text))
    except Exception as exc:  # unreadable model files: degrade to the other channels
        return [], ChannelStatus(ran=False, reason=f"query encoder failed: {exc}"), None
    vtype = store.vector_type()
    blob = query_blob(list(vec), vtype)
    if blob is None:
        return [], ChannelStatus(ran=True, hits=0, reason="no known tokens in the query"), None
    hits = _similarity(store.vec_search(blob, limit, vtype))
    return hits, ChannelStatus(ran=True, hits=len(hits)), QueryVector(blob, vtype, known)


def similarities(store: Store, qv: QueryVector, ids: list[int]) -> dict[int, float]:
    """Cosine similarity of the query to each of `ids` that has a vector."""
    return dict(_similarity(store.vec_distances(qv.blob, ids, qv.vector_type).items()))


def _similarity(distances) -> list[tuple[int, float]]:
    """Cosine distances as similarities (1 - distance): larger is stronger, like the other channels."""
    return [(cid, round(1.0 - dist, 6)) for cid, dist in distances if not math.isnan(dist)]
