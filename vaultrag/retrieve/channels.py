"""The three recall channels. Each returns ranked (chunk id, raw score) and a status; a channel that
cannot run says why and the others still answer. Standard library only (hook path)."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..frozen import frozen
from ..store import Store, Term
from ..textutil import NOTE_LANGS_META, meta_key, query_terms, spaceless_runs, word_prefix
from .compounds import compound_alternatives
from .name_use import name_uses
from .types import ChannelStatus

# BM25 column weights: chunk text, heading path, 'title | type | tags' context (issue 5).
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
# Respelling (British <-> American, retrieve/spelling) looks at words of this many letters up, at
# most SPELLING_MAX_WORDS of them per query, and searches the other spelling when no chunk holds
# the word or this many times as many chunks hold the other spelling.
SPELLING_MIN_CHARS = 4
SPELLING_MAX_WORDS = 6
SPELLING_DOMINANT = 5
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


@frozen
class FtsQuery:
    """The lexical query: backend-neutral terms the store turns into its own syntax."""
    terms: tuple[Term, ...]  # kept terms (OR-ed: BM25 rewards chunks matching more of them)
    dropped: tuple[Term, ...]  # terms pruned: too common, or in no chunk at all
    df: dict[Term, int]  # document counts of every term (capped), when pruning ran
    loose: dict[Term, tuple[Term, ...]] | None = None  # term -> the looser forms the evidence gate accepts
    typos: frozenset[Term] = frozenset()  # terms whose alternatives are typo corrections (the gate's half credit)
    runs: tuple[tuple[str, ...], ...] = ()  # clusters of the query's spaceless-script runs (the gate's adjacency)
    respelt: tuple[tuple[str, str], ...] = ()  # (word as typed, the vault's spelling): see `respell`
    # the term texts of each hyphenated word of the prompt ("Wi-Fi": wi, fi), words BM25 searches
    # apart: as evidence they are one word, not two meeting by chance (retrieve/proximity)
    hyphenated: tuple[tuple[str, ...], ...] = ()

    @property
    def match(self) -> bool:
        """Anything to search."""
        return bool(self.terms)


LexicalQuery = FtsQuery


def query_term(word: str) -> Term:
    """One query word as a Term: a non-ASCII word is searched by its leading part (a prefix:
    textutil.word_prefix); ASCII words whole (the index stems English); a CJK bigram as is."""
    stem = None if word.isascii() else word_prefix(word)
    return Term(stem, prefix=True) if stem else Term(word)


def build_fts_query(text: str, store: Store | None = None, max_terms: int = MAX_QUERY_TERMS) -> FtsQuery:
    """The one function that turns user text into lexical query terms (the store quotes them in
    its own syntax, so nothing in user text is ever syntax). With more than `max_terms` terms and a
    store at hand, only the rarest are kept."""
    loose: dict[Term, tuple[Term, ...]] = {}
    langs = note_languages(store)
    if langs:
        from ..notelang import note_stems
    for word in query_terms(text):
        term = query_term(word)
        # the gate's looser form of a word searched whole: ASCII, or a stem (textutil.word_prefix);
        # an identifier (`test_cli`, `utf8`) has none: its prefix is other words ("test_c*", the
        # phrase test c*, met "failed tests: `ctest" in tldr, and a coding prompt injected: trial9)
        stem = word_prefix(word, stems=True) if term.text == word and not term.prefix and not _identifier(word) else None
        alts = note_stems(word, langs) if langs else ()
        if alts:  # issue 20: the word OR its stems in the vault's note languages (index: notelang)
            term = Term(term.text, term.prefix, alts)
        loose.setdefault(term, (term, Term(stem, prefix=True)) if stem else (term,))
    terms = list(loose)
    df: dict[Term, int] = {}
    dropped: list[Term] = []
    pruning = len(terms) > max_terms and store is not None
    fixed: dict[Term, Term] = {}
    respelt: dict[Term, Term] = {}
    if pruning:
        df = {t: store.doc_freq(t, DF_COUNT_CAP) for t in terms}
    if store is not None:
        respelt = respelled(store, terms, df)
        if respelt:  # the vault's spelling replaces the word as typed; the gate gives it full credit
            terms = [respelt.get(t, t) for t in terms]
            for t, alt in respelt.items():
                stem = word_prefix(alt.text, stems=True)
                loose[alt] = (alt, Term(stem, prefix=True)) if stem else (alt,)
                if pruning:
                    df[alt] = store.doc_freq(alt, DF_COUNT_CAP)
        joined = compound_alternatives(store, text, terms, df)  # "roll back" / "rollback", "Wi-Fi" / "wifi"
        if joined:
            terms = [joined.get(t, t) for t in terms]
            for t, alt in joined.items():
                loose[alt] = (alt,) + loose.get(t, (t,))[1:]
                if pruning:
                    df[alt] = store.doc_freq(alt, DF_COUNT_CAP)
        fixed = typo_alternatives(store, terms, df)
        if fixed:
            terms = [fixed.get(t, t) for t in terms]
            for t, alt in fixed.items():
                loose[alt] = (alt,)
                if pruning:
                    df[alt] = store.doc_freq(alt, DF_COUNT_CAP)
    if pruning:
        present = [t for t in terms if df[t] > 0]
        order = sorted(present, key=lambda t: (df[t], terms.index(t)))
        keep = set(order[:max_terms])
        dropped = [t for t in terms if t not in keep]
        terms = [t for t in terms if t in keep]
    return FtsQuery(tuple(terms), tuple(dropped), df, loose, frozenset(fixed.values()), tuple(spaceless_runs(text)),
                    tuple((t.text, alt.text) for t, alt in respelt.items()), hyphenated_words(text))


def hyphenated_words(text: str) -> tuple[tuple[str, ...], ...]:
    """The query term texts of each word of `text` written with a hyphen, of two or more terms."""
    if "-" not in text:
        return ()
    out = []
    for m in _HYPHENATED_RE.finditer(text):
        parts = tuple(dict.fromkeys(query_term(w).text for w in query_terms(m.group(0))))
        if len(parts) > 1:
            out.append(parts)
    return tuple(out)


_HYPHENATED_RE = re.compile(r"[^\W_]+(?:-[^\W_]+)+")


_WORD_RE = re.compile(r"[A-Za-z]+")


def _identifier(word: str) -> bool:
    """A query word written as code: with an underscore or a digit among its letters."""
    return "_" in word or (any(c.isdigit() for c in word) and not word.isdigit())


def respell(text: str, respelt: tuple[tuple[str, str], ...]) -> str:
    """`text` with each word of `respelt` (FtsQuery.respelt) in the vault's spelling, so the
    metadata, title and vector channels see the words the notes use, as BM25 does ("Colour
    settings" -> "color settings" meets the heading "Color settings"). Case-insensitive, whole words."""
    if not respelt:
        return text
    to = dict(respelt)
    return _WORD_RE.sub(lambda m: to.get(m.group(0).lower(), m.group(0)), text)


def note_languages(store: Store | None) -> tuple[str, ...]:
    """The vault's note languages (Snowball names) from the index metadata; () without a store or
    for an index that stems no note by language."""
    raw = store.get_meta(NOTE_LANGS_META) if store is not None else None
    return tuple(x for x in raw.split(",") if x) if raw else ()


def _typo_word(term: Term, min_chars: int = TYPO_MIN_CHARS) -> str | None:
    """The plain word of a whole ASCII term that typo tolerance or respelling may change, else
    None: letters only (identifiers with digits, underscores or dots stay exact), min_chars+."""
    w = term.text if not term.prefix and not term.alternatives else ""
    return w if len(w) >= min_chars and w.isascii() and w.isalpha() else None


def respelled(store: Store, terms: list[Term], df: dict[Term, int]) -> dict[Term, Term]:
    """term -> Term(variant) for English words whose other spelling the vault writes instead
    (retrieve/spelling): "colour" in a vault that writes "color", "organize" in one that writes
    "organise". Instead means: no chunk holds the word as typed, or SPELLING_DOMINANT times as
    many chunks hold the other spelling (a vault in American English with one note in British).
    Otherwise the word is searched as typed. At most SPELLING_MAX_WORDS words with another
    spelling are looked at per query."""
    out: dict[Term, Term] = {}
    looked = 0
    for t in terms:
        w = _typo_word(t, SPELLING_MIN_CHARS)
        if not w:
            continue
        from .spelling import variants  # lazy: only a query with a candidate word pays for it
        others = [v for v in variants(w) if Term(v) not in terms]
        if not others:
            continue
        looked += 1
        for v in others:  # most variants are non-words: one cheap lookup each, then the word's own count
            n = store.doc_freq(Term(v), DF_COUNT_CAP)
            if n > 0 and n >= SPELLING_DOMINANT * (df[t] if t in df else store.doc_freq(t, n // SPELLING_DOMINANT + 1)):
                out[t] = Term(v)
                break
        if looked >= SPELLING_MAX_WORDS:
            break
    return out


def typo_alternatives(store: Store, terms: list[Term], df: dict[Term, int]) -> dict[Term, Term]:
    """term -> the same term with `alternatives` (searched as `word OR near* ...`) for words no
    chunk holds ("kerberose", "leese"): the index's nearest terms (store.near_terms over its
    vocabulary, stemmed as it stems) join the word. Words the index knows are never touched, so
    exact identifiers stay exact. A backend without a vocabulary (Store.near_terms: none) corrects
    nothing."""
    unknown = []
    for t in terms:
        w = _typo_word(t)
        if w and (df[t] if t in df else store.doc_freq(t, 1)) == 0:
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
            out[t] = Term(t.text, t.prefix, tuple(c for c, _, _ in near))
    return out


def bm25_channel(store: Store, q: FtsQuery, limit: int) -> tuple[list[tuple[int, float]], ChannelStatus]:
    if not q.match:
        return [], ChannelStatus(ran=True, hits=0, reason="no searchable terms")
    hits = store.lexical(q.terms, limit, BM25_WEIGHTS)  # BM25, larger is stronger
    note = f"pruned {len(q.dropped)} common terms" if q.dropped else None
    return hits, ChannelStatus(ran=True, hits=len(hits), reason=note)


def _ngrams(words: list[str], n_max: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in range(1, min(n_max, len(words)) + 1):
        for i in range(len(words) - n + 1):
            out.setdefault(" ".join(words[i:i + n]), n)
    return out


def meta_channel(store: Store, text: str, limit: int) -> tuple[list[tuple[int, float, bool, bool, bool]], ChannelStatus]:
    """Exact and near-exact matches of the query (or a name inside it) on titles, aliases, file
    names, headings and tags. Returns (chunk id, score, exact, whole, used) ranked; `exact` = the
    whole query is a note's title, alias or file name, which wins outright; `whole` = a title, alias
    or file name inside the query holds every content word of it ("what is the dragonfly handshake",
    alias "Dragonfly Handshake"); `used` = the query uses the note's one-word name as a name ("the
    ss command", "use `tar` to ...": retrieve/name_use), which counts as if it covered the query."""
    full = meta_key(text)
    if not full:
        return [], ChannelStatus(ran=True, hits=0, reason="empty query")
    words = full.split()
    q_terms = set(query_terms(text))
    content = max(1, len(q_terms))
    grams = _ngrams(words, MAX_KEY_WORDS)
    grams.setdefault(full, len(words))
    rows = store.match_keys(list(grams))
    uses = name_uses(text) if rows else frozenset()
    best: dict[tuple[int, int | None], tuple[float, bool, bool, bool]] = {}
    for key, kind, file_id, chunk_id in rows:
        n = len(key.split())
        exact = key == full
        name = kind in ("title", "alias", "file")
        used = name and not exact and key in uses
        coverage = 1.0 if exact or used else min(1.0, n / content)
        specific = n >= 2 or len(key) >= SPECIFIC_KEY_CHARS or any(c.isdigit() for c in key)
        if not exact and coverage < MIN_KEY_COVERAGE and not specific:
            continue
        score = coverage * KIND_WEIGHT.get(kind, 0.5) + (1.0 if exact else 0.0)
        if score < MIN_META_SCORE:
            continue
        pin = exact and name
        whole = name and (exact or q_terms <= set(query_terms(key)))
        slot = (file_id, chunk_id)
        if slot not in best or (score, pin, whole, used) > best[slot]:
            best[slot] = (score, pin, whole, used)
    # File-level keys point at the note's lead chunk.
    leads = store.lead_chunks([fid for fid, cid in best if cid is None])
    by_chunk: dict[int, tuple[float, bool, bool, bool]] = {}
    for (fid, cid), val in best.items():
        target = cid if cid is not None else leads.get(fid)
        if target is not None and (target not in by_chunk or val > by_chunk[target]):
            by_chunk[target] = val
    ranked = sorted(by_chunk.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
    return [(cid, *val) for cid, val in ranked], ChannelStatus(ran=True, hits=len(ranked))


# -- vectors ------------------------------------------------------------------------------------
_ENCODERS: dict[str, object] = {}


def encoder_for(model_path: str):
    """The lean (stdlib) query encoder for the model the index was built with, cached per process
    (and its vocabulary per user: vaultrag.lean_vocab)."""
    enc = _ENCODERS.get(model_path)
    if enc is None:
        from ..config import xdg_dir
        from ..lean_vocab import cached_encoder

        enc = cached_encoder(model_path, xdg_dir("cache") / "encoders")  # no tokenizer.json parse per process
        _ENCODERS[model_path] = enc
    return enc


# Keys of a model folder's config.json: the cosine at which that model's nearest chunk is evidence on
# its own, and the known-word share a query needs for it (a centred model's cosines sit far below an
# uncentred one's: scripts/center_model.py; the pipeline's defaults serve models that declare none).
VEC_FLOOR_KEY = "vaultrag_vec_floor"
VEC_KNOWN_KEY = "vaultrag_vec_known"
_GATES: dict[str, tuple[float | None, float | None]] = {}


def model_vec_gate(model_path: str) -> tuple[float | None, float | None]:
    """(floor, known share) the model folder's config.json declares (numbers in (0, 1]; None where it
    declares none). Read once per process and folder; an unreadable file declares nothing."""
    if model_path not in _GATES:
        got: list[float | None] = [None, None]
        try:
            with open(os.path.join(model_path, "config.json"), encoding="utf-8") as fh:
                config = json.load(fh)
            for i, key in enumerate((VEC_FLOOR_KEY, VEC_KNOWN_KEY)):
                value = config.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 < value <= 1.0:
                    got[i] = float(value)
        except (OSError, ValueError, AttributeError):
            pass
        _GATES[model_path] = (got[0], got[1])
    return _GATES[model_path]


@frozen
class QueryVector:
    vector: tuple[float, ...]  # the query embedded by the index's own model (the store packs it)
    known: float  # share of the query's words the model's vocabulary holds whole (0..1)
    floor: float | None = None  # the model's own vector floor (model_vec_gate), None: the pipeline's default
    min_known: float | None = None  # ... and the known-word share it wants for the gate


def vec_channel(store: Store, text: str, limit: int) -> tuple[list[tuple[int, float]], ChannelStatus, QueryVector | None]:
    """Vector KNN. Also returns the query vector, which fusion uses to re-score lexical hits."""
    if store.vec_error is not None:
        return [], ChannelStatus(ran=False, reason=store.vec_error), None
    meta = store.meta()
    if meta.vectors_invalid:
        from ..errors import fix_command

        return [], ChannelStatus(ran=False, reason=f"vectors out of date; run {fix_command('reindex')}"), None
    if not store.has_vectors():
        return [], ChannelStatus(ran=False, reason="the index has no vectors (built without an embedding model)"), None
    model_path = meta.model_path
    if not model_path or not Path(model_path).is_dir():
        from ..errors import fix_command

        return [], ChannelStatus(ran=False, reason=f"embedding model folder {model_path!r} not found; "
                                                   f"run {fix_command('reindex')}"), None
    try:
        enc = encoder_for(model_path)
        vec = enc.encode(text)
        known = enc.known_share(query_terms(text))
    except Exception as exc:  # unreadable model files: degrade to the other channels
        return [], ChannelStatus(ran=False, reason=f"query encoder failed: {exc}"), None
    vector = tuple(float(x) for x in vec)
    if not any(vector):
        return [], ChannelStatus(ran=True, hits=0, reason="no known tokens in the query"), None
    hits = _rounded(store.knn(vector, limit))
    return hits, ChannelStatus(ran=True, hits=len(hits)), QueryVector(vector, known, *model_vec_gate(model_path))


def similarities(store: Store, qv: QueryVector, ids: list[int]) -> dict[int, float]:
    """Cosine similarity of the query to each of `ids` that has a vector."""
    return dict(_rounded(store.similarities(qv.vector, ids).items()))


def _rounded(sims) -> list[tuple[int, float]]:
    """Similarities to 6 decimals: the same bytes out on every platform and backend."""
    return [(cid, round(sim, 6)) for cid, sim in sims]
