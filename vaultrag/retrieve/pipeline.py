"""search(): channels -> fusion -> diversity -> wikilink expansion -> evidence gate -> live
citations -> token budget. Standard library only: this runs inside hook processes."""
from __future__ import annotations

import math
import time
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ..config import Config, load_config
from ..store import Store, StoredChunk, Term, open_store
from ..sessions import is_session_path
from ..textutil import SEG_RE, fold, gram_units, is_stopword, query_terms
from .channels import (FtsQuery, bm25_channel, build_fts_query, meta_channel, note_languages, respell, similarities,
                       vec_channel)
from .proximity import near_specificity, one_word_each
from .citations import FileCache, changed_on_disk, locate, locate_session, stored_copy
from .fusion import rescore, rrf
from .framing import topic
from .graph import expand
from .replies import replies_first, session_ids
from .types import CHANNELS, Answer, Candidate, ChannelStatus, Hit

# Evidence gate, calibrated 2026-12-01 on every dev query of xquad en/de/es/ru/zh, scifact and
# obsidian-help en/de/ru/zh/pl (answerable) and 400 queries each of xquad-en/es + scifact against the
# obsidian-help en vault, xquad-de/ru/zh against the de/ru/zh vaults (unanswerable, same language);
# see BENCHMARKS.md "Evidence gate". Answer when any holds:
# - an exact note-name match (the metadata channel pinned a hit);
# - the best of the top lexical hits holds at least this share of the query's term weight: the
#   BM25 terms plus the words the vault lacks (pruned from the BM25 query, but they are what says
#   it cannot answer; see term_coverage), weighted by IDF squared (rare words decide), a term
#   matching when it or its leading 70% as a prefix does (inflected forms). On the grid 0.33
#   abstained on at most 9.1% of answerable queries (xquad-de) and answered at most 8.5% of
#   unrelated ones (xquad-en); the old rule (kept terms only, IDF, 0.4) 13.5% / 20%, and 55% of
#   Chinese questions against the Chinese vault while absent CJK bigrams were all left out;
# - the nearest chunk's cosine similarity reaches the vector floor, for a query the model can read.
GATE_MIN_TERM_COVERAGE = 0.33
# For a query of words (not CJK or spaceless-script grams), coverage alone is not enough where it
# is modest: between GATE_MIN_TERM_COVERAGE and GATE_SURE_COVERAGE the best chunk's terms must meet
# as they would not by chance (term_evidence's `specificity`, the ln of how unlikely: >=
# GATE_MIN_SPECIFICITY), and a chunk whose terms meet very unlikely by chance (>=
# GATE_RARE_SPECIFICITY) is evidence from GATE_RARE_COVERAGE up. Grams overlap and are not
# independent, so their specificity says less: gram queries keep coverage alone. Chosen on a dump of
# every dev query's evidence (eval.py parts, lang_gate.py halves; BENCHMARKS.md "Stop 19 — gate8"):
# same-language off-topic answered (lang_gate halves) ar 0.142 -> 0.118, en 0.208 -> 0.181, de 0.120
# -> 0.095, es 0.178 -> 0.174, ru 0.111 -> 0.097, with abstention on their answerable halves lower
# too; the neighbouring settings (1-1.5, 0.4-0.45, 0.25-0.28, 3-4) all moved both errors down.
GATE_SURE_COVERAGE = 0.4
GATE_MIN_SPECIFICITY = 1.5
GATE_RARE_COVERAGE = 0.28
GATE_RARE_SPECIFICITY = 4.0
# Static-embedding cosines are poorly calibrated: unrelated questions ("what is the capital of
# france") reached 0.81 on the example vault, so vectors alone open the gate only near-duplicates.
# This is the floor of a model that declares none; a model folder may declare its own in its
# config.json (channels.model_vec_gate; the bundled model, centred, does: its cosines sit lower).
GATE_MIN_VEC_SIMILARITY = 0.95
# Vectors vouch only for queries the model can represent (most words known to its vocabulary):
# shredded Cyrillic queries reached cosine 0.95 against unrelated Russian text.
GATE_MIN_VEC_KNOWN = 0.5  # a model folder may declare its own (channels.model_vec_gate)
GATE_TOP_LEXICAL = 3  # how many BM25 hits the coverage check inspects
# A word the vault lacks that typo tolerance matched to a near term (channels.typo_alternatives)
# counts half: a typo, or a rare word the vault does not know that happens to be one edit from
# one it does (full credit: unrelated xquad-en questions answered 7.8% -> 10.4% on obsidian-help).
GATE_TYPO_CREDIT = 0.5
# Spaceless alphabets (Thai, Lao, Khmer, Myanmar): a query gram (two grapheme clusters) counts as
# held by a chunk only inside a run of SEG_RUN_MATCH clusters of the query that the chunk holds
# contiguously, and every gram of the query weighs (not only BM25's 8 rarest: for Thai those are
# mostly grams straddling two words, found by chance in a few chunks), by IDF to SEG_IDF_POWER.
# xquad-th, abstained on answerable (benchmarks/eval.py, full set) / on lang_gate.py's half vault,
# and off-topic answered (same language): main's rule (BM25's 8 terms + absent grams, IDF^2)
# 0.100 / 0.121 / 0.185; runs of 3, IDF^1.5 0.049 / 0.046 / 0.133; IDF^2 0.082 / 0.074 / 0.119;
# runs of 4, IDF^1.5 0.074 / 0.072 / 0.083; every gram without adjacency (runs of 2), IDF^2
# 0.054 / 0.048 / 0.207 (BENCHMARKS.md "Stop 16 — lang5").
# Stop 18 (lang7), same runs side by side, lang_gate.py at 150 queries: runs of 3 0.047 / 0.167,
# 4 0.080 / 0.107, 4 with IDF^2 0.093 / 0.093, 4 with IDF^1 0.073 / 0.147, 5 0.147 / 0.073;
# eval.py full set, runs of 4: abstained 0.074, as answered 0.889 (3: 0.049 / 0.906).
SEG_RUN_MATCH = 4
SEG_IDF_POWER = 1.5
GATE_MAX_ABSENT = 8  # words the vault lacks that the gate counts (bounds its cost on long prompts)
# Vectors re-rank what the lexical channels found; a chunk found by vectors alone joins the fusion
# only when it is this similar. Measured (BENCHMARKS.md, eval): with the bundled static model,
# vector-only candidates pulled nDCG@10 below BM25 alone on every set (xquad-ru 0.47 -> 0.57 with
# them was gate luck, ranking on answered queries fell 0.98 -> 0.57).
# Not per model: with the centred bundled model (floor 0.6) letting vector-only chunks in from 0.6 left
# nDCG@10 / MRR@10 unchanged to 4 decimals on scifact, obs-en, xquad-en/de (BENCHMARKS.md "Stop 16 — sem5")
# and only fetched more chunks; at 0.95 they are near-duplicates for any model.
VEC_ONLY_MIN_SIMILARITY = GATE_MIN_VEC_SIMILARITY
# When the lexical channels found candidates, vectors re-score those by point lookups, and the KNN
# only has to find near-duplicates and the gate's best similarity: its 10 nearest suffice. vec0's
# KNN costs ~0.035 ms per unit of depth at 38k chunks (30 -> 10: 4.9 -> 3.2 ms, BENCHMARKS.md).
# Vectors ranking alone (no lexical candidates, `--channels vec`, fusion "rrf") search the full
# candidate depth.
VEC_NEAR_DEPTH = 10


# k means k hits in all: linked notes take at most this share of them (k=10: 2 slots, k<5: none),
# plus any slot the direct hits leave empty. On the dev sets graph hits past the direct ones moved
# obsidian-help anchor MRR 0.559 -> 0.561 and nothing else (BENCHMARKS.md, eval): they are extras.
GRAPH_MAX_SHARE = 0.2


def take_k(direct: list[Candidate], extra: list[Candidate], k: int) -> list[Candidate]:
    """The `k` hits returned: the best direct ones, then graph hits in the slots left for them."""
    n_graph = min(len(extra), max(int(k * GRAPH_MAX_SHARE), k - len(direct)))
    return direct[:k - n_graph] + extra[:n_graph]


# Metadata scores below this are names covering only part of the query (channels.meta_channel:
# coverage x kind weight, plus 1 for the whole query).
PARTIAL_NAME_SCORE = 1.0


def defer_to_agreement(fused: list[Candidate], bm25: list[tuple[int, float]], knn: list[tuple[int, float]],
                       chunks: dict[int, StoredChunk]) -> list[Candidate]:
    """When BM25 and vectors both rank one note first, a partial name match (a name covering part
    of the query) does not outrank it ("how does ARP find a MAC address": the ARP note, not the
    note named "MAC address"). A name that is the whole query still wins, pinned or not (a heading
    query: deferring there too cost obsidian-help heading MRR 0.894 -> 0.845)."""
    meta = fused[0].raw.get("meta") if fused else None
    if not fused or fused[0].pinned or meta is None or meta >= PARTIAL_NAME_SCORE or not bm25 or not knn:
        return fused
    b, v, top = chunks.get(bm25[0][0]), chunks.get(knn[0][0]), chunks.get(fused[0].chunk_id)
    if b is None or v is None or top is None or b.file_id != v.file_id or top.file_id == b.file_id:
        return fused
    i = next((i for i, c in enumerate(fused) if c.chunk_id == b.id), None)
    return fused if i is None else [fused[i]] + fused[:i] + fused[i + 1:]


def vec_gate(qv) -> tuple[float, float]:
    """(cosine at which the nearest chunk is evidence for the gate, known-word share the query needs
    for it): the query's model's own where its folder declares them (channels.model_vec_gate), else
    GATE_MIN_VEC_SIMILARITY and GATE_MIN_VEC_KNOWN."""
    floor = qv.floor if qv is not None and qv.floor is not None else GATE_MIN_VEC_SIMILARITY
    known = qv.min_known if qv is not None and qv.min_known is not None else GATE_MIN_VEC_KNOWN
    return floor, known


def _tiebreak(chunks: dict[int, StoredChunk]):
    def key(cid: int) -> tuple:
        ch = chunks.get(cid)
        return (ch.path, ch.section_index, ch.chunk_index) if ch else ("\uffff", cid, 0)
    return key


def diversify(cands: Iterable[Candidate], chunks: dict[int, StoredChunk], max_per_note: int,
              query: str = "") -> list[Candidate]:
    """At most `max_per_note` chunks per note; a chunk whose text duplicates a better one is dropped;
    of a note's language copies (retrieve/copies) only the one in the query's language is kept, in
    the place of the best-ranked copy."""
    cands = _one_copy(list(cands), chunks, query)
    per_note: dict[int, int] = {}
    seen_text: set[str] = set()
    out = []
    for c in cands:
        ch = chunks.get(c.chunk_id)
        if ch is None or ch.content_hash in seen_text or per_note.get(ch.file_id, 0) >= max_per_note:
            continue
        seen_text.add(ch.content_hash)
        per_note[ch.file_id] = per_note.get(ch.file_id, 0) + 1
        out.append(c)
    return out


def _one_copy(cands: list[Candidate], chunks: dict[int, StoredChunk], query: str) -> list[Candidate]:
    """`cands` without the language copies of a note other than the preferred one
    (copies.preferred_copies), whose chunks move up to where the note's first copy stood."""
    first: dict[int, tuple[int, str, str]] = {}
    for c in cands:
        ch = chunks.get(c.chunk_id)
        if ch is not None and ch.file_id not in first:
            first[ch.file_id] = (ch.file_id, ch.path, " ".join((ch.title or "", ch.text)))
    if len(first) < 2:
        return cands
    from .copies import preferred_copies

    keep = preferred_copies(query, list(first.values()))
    if not keep:
        return cands
    pos: dict[int, int] = {}  # kept copy -> the rank of its group's first member
    for i, c in enumerate(cands):
        ch = chunks.get(c.chunk_id)
        if ch is not None and ch.file_id in keep:
            pos.setdefault(keep[ch.file_id], i)
    ranked = []
    for i, c in enumerate(cands):
        ch = chunks.get(c.chunk_id)
        fid = ch.file_id if ch is not None else None
        if fid in keep and keep[fid] != fid:
            continue
        ranked.append((min(i, pos.get(fid, i)), i, c))
    return [c for _, _, c in sorted(ranked, key=lambda r: r[:2])]


def _cjk_chars(term) -> set[str]:
    """The characters of a CJK gram term; none for a word or a gram of a spaceless alphabet."""
    return set() if term.text.isascii() or SEG_RE.match(term.text) else set(gram_units(term.text))


def _idf(df: int, n: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


# BM25's smoothed IDF weighs a word the vault lacks far above its rarest word when the vault is
# tiny (3 chunks: 2.1x, squared 4.5x; 240 chunks: 1.2x): a new user's first notes then refused
# nearly half the questions they answer ("where is the FritzBox router kept?": "kept" outweighed
# both words the note has). Below the smallest vault the gate was calibrated on, an absent word
# weighs what it would there relative to a word one chunk holds (lang_gate.py --vault-docs).
GATE_IDF_MIN_CHUNKS = 240


def _gate_idf(df: int, n: int) -> float:
    if df or n >= GATE_IDF_MIN_CHUNKS:
        return _idf(df, n)
    m = GATE_IDF_MIN_CHUNKS
    return _idf(1, n) * _idf(0, m) / _idf(1, m)


def _run_evidence(store: Store, fq: FtsQuery, ids: list[int], n: int,
                  chunks: dict[int, StoredChunk] | None) -> tuple[float, dict[int, float], dict[int, list[int]]]:
    """The spaceless-script part of the gate's weight (see SEG_RUN_MATCH): (total weight, weight
    held per chunk id, the grams each holds: (document count, whether BM25 kept the gram))."""
    grams = _run_grams(fq.runs)
    df = {}
    for g in grams:
        t = Term(g)
        df[g] = fq.df[t] if t in fq.df else store.doc_freq(t, n)
    weight = {g: _idf(df[g], n) ** SEG_IDF_POWER for g in grams}
    chunks = chunks if chunks is not None and all(c in chunks for c in ids) else store.chunks_by_id(ids)
    got = {cid: 0.0 for cid in ids}
    held: dict[int, list[tuple[int, bool]]] = {cid: [] for cid in ids}
    kept = set(fq.terms)
    for cid in ids:
        ch = chunks.get(cid)
        if ch is None:
            continue
        # the chunk's folded text without spaces: FTS5's cluster tokens stand next to each other
        # across a space too (fts_text itself costs ~15x more: it splits every cluster)
        text = "".join(fold(" ".join((ch.text, ch.heading_path or "", ch.context or ""))).split())
        for g, (run, i) in grams.items():
            if not df[g]:
                continue
            span = min(SEG_RUN_MATCH, len(run))  # the windows of `span` clusters holding the gram
            if any(_holds(text, "".join(run[a:a + span]))
                   for a in range(max(0, i + min(2, len(run)) - span), min(i, len(run) - span) + 1)):
                got[cid] += weight[g]
                held[cid].append((df[g], Term(g) in kept))
    return sum(weight.values()), got, held


def _run_grams(runs: tuple[tuple[str, ...], ...]) -> dict[str, tuple[tuple[str, ...], int]]:
    """gram (two clusters, as query_terms makes them) -> (its run, position), first seen."""
    grams: dict[str, tuple[tuple[str, ...], int]] = {}
    for run in runs:
        for i in range(max(1, len(run) - 1)):
            grams.setdefault(" ".join(run[i:i + 2]), (run, i))
    return grams


def _holds(text: str, clusters: str) -> bool:
    """`clusters` (whole grapheme clusters) occur in `text` ending where a cluster ends (the next
    character is not a combining mark: "ก" is not in "กิ")."""
    i = text.find(clusters)
    while i >= 0:
        j = i + len(clusters)
        if j == len(text) or not unicodedata.category(text[j]).startswith("M"):
            return True
        i = text.find(clusters, i + 1)
    return False


def _absent_function_words(store: Store, absent: list) -> set:
    """The terms of `absent` (no chunk holds them) that are function words of the vault's note
    languages (notelang.absent_function_terms): left out of the gate's weight. None for a vault
    without note languages (notelang is not imported then)."""
    langs = note_languages(store) if absent else ()
    if not langs:
        return set()
    from ..notelang import absent_function_terms

    stop = absent_function_terms(langs)
    return {t for t in absent if t.text in stop}


def term_coverage(store: Store, fq: FtsQuery, ids: list[int]) -> float:
    """Best share (0..1) of the query's IDF^2-weighted terms found in any of `ids` (see
    `term_evidence`)."""
    return term_evidence(store, fq, ids)["term_coverage"]


def term_evidence(store: Store, fq: FtsQuery, ids: list[int], chunks: dict[int, StoredChunk] | None = None) -> dict:
    """Best share (0..1) of the query's IDF^2-weighted terms found in any of `ids`.

    The terms: those BM25 searched, plus (up to GATE_MAX_ABSENT) those pruned because no chunk
    holds them; terms pruned as too common weigh next to nothing and are left out. A CJK term no
    chunk holds is left out when it shares a character with one the index has: it straddles a
    word boundary (an artefact of bigram segmentation), not a word the vault lacks. The grams of a
    spaceless alphabet are weighed apart (`_run_evidence`; `chunks`: the chunks of `ids` if loaded).
    A query of stopwords only names no topic: 0.

    Also returns what unsolicited injection weighs (inject.py), of the best-covered chunk:
    `specificity`, how unlikely its terms meet in one chunk by chance (the sum of ln(N/df) over
    the terms it holds, minus ln N: ~0 when a chunk like it is expected anyway), `near_specificity`,
    the same within the best window of its words (retrieve/proximity; = specificity for grams or
    without `chunks`), and
    `terms_matched` / `terms_total`."""
    none = {"term_coverage": 0.0, "specificity": 0.0, "near_specificity": 0.0, "terms_matched": 0, "terms_total": 0}
    seg = (lambda t: bool(SEG_RE.match(t.text))) if fq.runs else (lambda t: False)
    absent = [t for t in fq.dropped if fq.df.get(t) == 0 and not seg(t)][:GATE_MAX_ABSENT]
    terms = [t for t in fq.terms if not seg(t)] + absent
    if not ids or not (terms or fq.runs) or (terms and not fq.runs and all(is_stopword(t.text) for t in terms)):
        return none
    n = max(1, store.chunk_count())
    df = {t: fq.df[t] if t in fq.df else store.doc_freq(t, n) for t in terms}
    unsaid = _absent_function_words(store, [t for t in terms if not df[t]])
    terms = [t for t in terms if t not in unsaid]
    present = [t for t in fq.terms if df.get(t)] + [t for t in fq.dropped if fq.df.get(t)]
    known_cjk = set().union(*(_cjk_chars(t) for t in present))
    weight = {t: _gate_idf(df[t], n) ** 2 for t in terms if df[t] or not _cjk_chars(t) & known_cjk}
    got = {cid: 0.0 for cid in ids}
    held: dict[int, list[tuple[int, bool]]] = {cid: [] for cid in ids}  # (df, counted in specificity)
    words_held: dict[int, list[tuple[Term, float]]] = {cid: [] for cid in ids}  # (term, ln N/df): proximity
    total = sum(weight.values())
    if fq.runs:
        run_total, run_got, run_held = _run_evidence(store, fq, ids, n, chunks)
        total += run_total
        for cid in ids:
            got[cid] += run_got[cid]
            held[cid] += run_held[cid]
    if not total:
        return none
    for t in weight:
        found = store.contains((t,), ids) if df[t] else set()
        looser = (fq.loose or {}).get(t, (t,))
        missed = [cid for cid in ids if cid not in found]
        if looser != (t,) and missed:  # the prefix form is the costly query: ask only where needed
            found |= store.contains(looser, missed)
        credit = GATE_TYPO_CREDIT if t in fq.typos else 1.0  # a typo's correction: half a match
        rarity = math.log(n / max(1, df[t]))
        for cid in found:
            got[cid] += weight[t] * credit
            held[cid].append((df[t], True))
            words_held[cid].append((t, rarity))
    best = max(ids, key=lambda cid: (got[cid], -ids.index(cid)))
    # specificity counts a spaceless script's grams only among BM25's kept terms, as it did before
    # they were all weighed: overlapping grams are not independent (inject.py's scale)
    spec = round(max(0.0, sum(math.log(n / max(1, d)) for d, counted in held[best] if counted) - math.log(n)), 3)
    n_runs = len(_run_grams(fq.runs))
    grams = bool(fq.runs) or any(_cjk_chars(t) for t in weight)
    near = None if grams or not chunks else near_specificity(chunks.get(best), one_word_each(words_held[best], fq), n)
    return {"term_coverage": round(got[best] / total, 4), "specificity": spec,
            "near_specificity": spec if near is None else min(near, spec),
            "terms_matched": len(held[best]), "terms_total": len(weight) + n_runs, "grams": grams}


def lexical_evidence(evidence: dict) -> bool:
    """Whether term_evidence's figures open the gate (see GATE_SURE_COVERAGE)."""
    cov, spec = evidence["term_coverage"], evidence["specificity"]
    if evidence.get("grams"):
        return cov >= GATE_MIN_TERM_COVERAGE
    return ((cov >= GATE_MIN_TERM_COVERAGE and (cov >= GATE_SURE_COVERAGE or spec >= GATE_MIN_SPECIFICITY))
            or (cov >= GATE_RARE_COVERAGE and spec >= GATE_RARE_SPECIFICITY))


def top_margin(bm25: list[tuple[int, float]], chunks: dict[int, StoredChunk]) -> float | None:
    """How far the best note by BM25 stands out: 1 - (the next note's best score) / (its best
    score); 0 when two notes tie, None with fewer than two notes."""
    best: dict[int, float] = {}
    for cid, score in bm25:
        ch = chunks.get(cid)
        if ch is not None and score > best.get(ch.file_id, float("-inf")):
            best[ch.file_id] = score
    top = sorted(best.values(), reverse=True)[:2]
    if len(top) < 2 or top[0] <= 0:
        return None
    return round(1.0 - max(0.0, top[1]) / top[0], 4)


TITLE_PREFIX_SHARE = 0.8


def _same_word(a: str, b: str) -> bool:
    """Inflected forms of one word: equal; or one is the other (4+ characters) plus at most 3
    (note/notes, sync/syncing); or they share 80% of the longer word and 5+ characters
    (stored/stores, template/templates). Not content/context, general/generic, data/database."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if len(short) >= 4 and len(long) - len(short) <= 3 and long.startswith(short):
        return True
    need = max(5, math.ceil(TITLE_PREFIX_SHARE * len(long)))
    return len(short) >= need and short[:need] == long[:need]


def title_share(query: str, chunks: dict[int, StoredChunk]) -> dict[int, float]:
    """chunk id -> share of its note title's words that the query contains (inflected forms meet,
    see `_same_word`): a query that names a note points at it."""
    q = query_terms(query)
    exact = set(q)
    # Two different words are `_same_word` only when both have 4+ characters and the same first 4:
    # each title word is compared with the query words of its first 4 characters alone (a hook's
    # calibration runs this over 100 candidates for 221 prompts: half its time went here).
    by_prefix: dict[str, list[str]] = {}
    for w in q:
        if len(w) >= 4:
            by_prefix.setdefault(w[:4], []).append(w)
    shares: dict[str, float] = {}
    for ch in chunks.values():
        if ch.title not in shares:
            tw = _title_terms(ch.title or "")
            hit = sum(t in exact or any(_same_word(t, w) for w in by_prefix.get(t[:4], ())) for t in tw)
            shares[ch.title] = hit / len(tw) if tw else 0.0
    return {cid: shares[ch.title] for cid, ch in chunks.items()}


@lru_cache(maxsize=4096)
def _title_terms(title: str) -> tuple[str, ...]:
    return tuple(query_terms(title))  # the same notes' titles come back query after query


# A search limited to some scopes (issue 17) asks the channels for this many times more candidates,
# since the others' are filtered out after: a vault of 10k notes must not crowd out the sessions.
SCOPE_OVERFETCH = 3


def _scope_keep(cfg: Config, scope, exclude_session: str | None):
    """(path -> kept, or None for all; whether the scope is narrower than the vault: then the channels
    dig deeper), for the scopes asked for minus the given session's own messages."""
    from ..sessions.scopes import parse_scope, selector, session_id_of

    wanted = parse_scope(scope, cfg.scopes)
    keep = selector(wanted, cfg.scopes)
    narrow = keep is not None and "vault" not in wanted
    if not exclude_session:
        return keep, narrow
    return (lambda path: (keep is None or keep(path)) and session_id_of(path) != exclude_session), narrow


def search(query: str, config: Config | None = None, *, k: int | None = None, channels: Iterable[str] | None = None,
           graph: bool = True, max_tokens: int | None = None, store: Store | None = None, gate: bool = True,
           scope=None, exclude_session: str | None = None) -> Answer:
    """Answer `query` from the index of the configured vault. Never raises on odd query text.

    `gate=False` returns the ranking even when the evidence is weak (`evidence["passed"]` still
    says what the gate decided); the eval harness uses it to measure ranking and gate apart.
    `max_tokens=0` returns every hit whole, ignoring the token and 10,000-character budgets.
    `scope`: "all" (default), "vault", "sessions", a `scopes:` rule's name, or several comma-separated;
    `exclude_session`: a session id whose own messages are never returned (hooks)."""
    from .budget import fit_budget

    cfg = config or load_config()
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    k = k or cfg.k
    keep, narrow = _scope_keep(cfg, scope, exclude_session)
    depth = cfg.candidates * (SCOPE_OVERFETCH if narrow else 1)
    wanted = tuple(c for c in CHANNELS if channels is None or c in set(channels))
    own = store is None
    store = store or open_store(cfg, readonly=True)
    try:
        vault = Path(cfg.vault or store.meta().vault or ".")
        status: dict[str, ChannelStatus] = {}
        results: dict[str, list[tuple[int, float]]] = {}
        pinned: set[int] = set()
        used: set[int] = set()  # notes whose one-word name the query uses as a name (retrieve/name_use)
        named = False
        asked = topic(query)  # "what do my notes say about X": X (framing.py)
        fq = build_fts_query(asked, store)
        spelled = respell(asked, fq.respelt)  # the vault's spelling of the words BM25 respelled
        if "meta" in wanted:
            t = time.perf_counter()
            hits, status["meta"] = meta_channel(store, spelled, depth)
            results["meta"] = [(cid, s) for cid, s, _, _, _ in hits]
            pinned = {cid for cid, _, pin, _, _ in hits if pin}
            named = any(whole for _, _, pin, whole, _ in hits if not pin)
            used = {cid for cid, _, _, _, use in hits if use}
            timings["meta"] = (time.perf_counter() - t) * 1000
        if "bm25" in wanted:
            t = time.perf_counter()
            results["bm25"], status["bm25"] = bm25_channel(store, fq, depth)
            timings["bm25"] = (time.perf_counter() - t) * 1000
        qv = None
        rescoring = cfg.fusion != "rrf" and bool(results.get("bm25") or results.get("meta"))
        if "vec" in wanted:
            t = time.perf_counter()
            near = min(depth, VEC_NEAR_DEPTH * (depth // cfg.candidates)) if rescoring else depth
            results["vec"], status["vec"], qv = vec_channel(store, spelled, near)
            timings["vec"] = (time.perf_counter() - t) * 1000
        for c in CHANNELS:
            status.setdefault(c, ChannelStatus(ran=False, reason="not requested"))
        knn = results.get("vec", [])
        sims: dict[int, float] = dict(knn)
        alpha = 0.0
        if knn and rescoring:
            # Vectors re-score what the lexical channels found (weighted by how much of the query
            # the model's vocabulary knows); alone, they add only near-duplicates.
            lexical = {cid for ch in ("bm25", "meta") for cid, _ in results.get(ch, [])}
            results["vec"] = [(cid, sim) for cid, sim in knn if cid not in lexical and sim >= VEC_ONLY_MIN_SIMILARITY]
            alpha = cfg.vec_rerank * qv.known if qv else 0.0
            if alpha > 0 and results.get("bm25"):
                t = time.perf_counter()
                sims.update(similarities(store, qv, [cid for cid, _ in results["bm25"]]))
                timings["vec"] += (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        gate_lexical = None
        ids = [cid for hits in results.values() for cid, _ in hits]
        chunks = store.chunks_by_id(ids + ([cid for cid, _ in knn] if keep is not None else []))
        if keep is not None:  # issue 17: only the scopes asked for (paths say which a chunk is in)
            results, knn, pinned = _in_scope(chunks, keep, results, knn, pinned)
        if rescoring and results.get("bm25"):
            # BM25's candidates re-scored by the vector blend and, a metadata signal, by how much
            # of their note's title the query names.
            boost = cfg.title_boost if "meta" in wanted else 0.0
            # over BM25's own candidates only (the KNN's nearest chunks fetched beside them may be any
            # note, in any script: their titles would only cost tokenizing, rescore reads no others)
            prior = title_share(spelled, {cid: chunks[cid] for cid, _ in results["bm25"] if cid in chunks}) if boost > 0 else None
            rescored = rescore(results["bm25"], sims, alpha, prior, boost)
            if cfg.note_agg > 0:
                # notes with several matching chunks move up; the evidence (the gate, the hook's
                # injection routes) still reads the best chunks by their own blend, as calibrated
                gate_lexical = rescored
                notes = {cid: chunks[cid].file_id for cid, _ in results["bm25"] if cid in chunks}
                rescored = rescore(results["bm25"], sims, alpha, prior, boost, notes, cfg.note_agg)
            results["bm25"] = rescored
        weights = {"meta": cfg.weight_meta, "bm25": cfg.weight_bm25, "vec": cfg.weight_vec}
        fused = rrf(results, weights, k=cfg.rrf_k, tiebreak=_tiebreak(chunks), pinned=frozenset(pinned))
        fused = defer_to_agreement(fused, results.get("bm25", []), knn, chunks)
        knn_rank = {cid: i for i, (cid, _) in enumerate(knn, start=1)}
        for cand in fused:  # --explain: the KNN rank and similarity of every candidate vectors found
            if cand.chunk_id in knn_rank:
                cand.ranks["vec"] = knn_rank[cand.chunk_id]
                cand.raw["vec"] = sims[cand.chunk_id]
        direct = diversify(fused, chunks, cfg.max_per_note, spelled)
        lead = direct[:1]  # the best chunk by its own score: what the evidence reads (below)
        if gate_lexical is not None and fused:
            lead = diversify(defer_to_agreement(rrf({**results, "bm25": gate_lexical}, weights, k=cfg.rrf_k,
                                                    tiebreak=_tiebreak(chunks), pinned=frozenset(pinned)),
                                                gate_lexical, knn, chunks), chunks, cfg.max_per_note, spelled)[:1]
        timings["fusion"] = (time.perf_counter() - t) * 1000

        if not fused:
            return Answer("no_evidence", "no_hits", query, status, 0, (), {}, _done(timings, t0))

        t = time.perf_counter()
        lexical_ids = [cid for cid, _ in (results.get("bm25", []) if gate_lexical is None else gate_lexical)[:GATE_TOP_LEXICAL]]
        # A note's title, alias or file name inside the query holding all its content words
        # ("what is the dragonfly handshake", alias "Dragonfly Handshake") is evidence like an
        # exact name, though it does not pin the hit first.
        evidence = {"pinned": bool(pinned), "named": named,
                    "title_named": bool(lead) and title_share(spelled, {lead[0].chunk_id: chunks[lead[0].chunk_id]}
                                                               ).get(lead[0].chunk_id, 0.0) >= 1.0,
                    "command": bool(lead) and chunks[lead[0].chunk_id].file_id in {chunks[c].file_id for c in used
                                                                                  if c in chunks},
                    **term_evidence(store, fq, lexical_ids, chunks),
                    "vec_similarity": max((s for _, s in knn), default=None),
                    "vec_known": qv.known if qv else None,
                    "top_margin": top_margin(results.get("bm25", []), chunks)}
        floor, min_known = vec_gate(qv)
        vec_ok = (evidence["vec_known"] or 0.0) >= min_known
        strong = (evidence["pinned"] or named or evidence["command"] or lexical_evidence(evidence)
                  or (vec_ok and (evidence["vec_similarity"] or 0.0) >= floor))
        evidence["passed"] = strong
        timings["gate"] = (time.perf_counter() - t) * 1000
        if gate and not strong:
            return Answer("no_evidence", "below_threshold", query, status, 0, (), evidence, _done(timings, t0))

        t = time.perf_counter()
        sessions = session_ids(direct, chunks)
        if len(sessions) > 1:  # a past session's question after the reply that answered it
            direct = replies_first(direct, chunks, _origins(store, [chunks[c] for c in sessions]), spelled)
        extra = expand(store, direct[:k], chunks, seeds=cfg.graph_seeds, fanout=cfg.graph_fanout) if graph else []
        picked = take_k(direct, extra, k)
        timings["graph"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        path_key = store.meta().path_key  # finds the real file of a path stored redacted (paths.py)
        caches: dict[Path, FileCache] = {}  # one per vault folder (a search over several collections)
        hits: list[Hit] = []
        origins = _origins(store, [chunks[c.chunk_id] for c in picked])
        transcripts: dict = {}
        sessions_root = _sessions_root(cfg, store) if origins else None
        for cand in picked:
            ch = chunks[cand.chunk_id]
            root = Path(ch.root) if ch.root else vault
            if cand.chunk_id in origins:  # a past session's message: found again by its uuid
                found = locate_session(ch, sessions_root, origins[cand.chunk_id], transcripts)
            else:
                files = _file_cache(caches, root, cfg, path_key)
                # A shared index searched from a machine without the files: cite the stored text.
                found = locate(ch, files) if root.is_dir() else stored_copy(ch)
            if found is None:
                continue
            citation, text, start, end = found
            tokens = ch.tokens if text == ch.text else max(1, round(ch.tokens * len(text) / max(1, len(ch.text))))
            hits.append(Hit(path=ch.path, title=ch.title, heading_path=ch.heading_path, text=text, line_start=start,
                            line_end=end, citation=citation, score=cand.score, ranks=cand.ranks, raw=cand.raw,
                            via=cand.via, graph_provenance=cand.graph_provenance, tokens=tokens, chunk_id=ch.id,
                            content_hash=ch.content_hash, scope=_scope(ch, cfg, origins),
                            origin=origins.get(ch.id)))
        stale = changed_on_disk(vault, [c for c in chunks.values() if not c.root and not is_session_path(c.path)],
                                _file_cache(caches, vault, cfg, path_key)) if vault.is_dir() else 0
        timings["citations"] = (time.perf_counter() - t) * 1000
        if not hits:
            return Answer("no_evidence", "unresolvable", query, status, stale, (), evidence, _done(timings, t0))
        budget = max_tokens if max_tokens is not None else cfg.max_tokens
        if budget > 0:  # 0: no budget, every hit whole (evaluation)
            hits = fit_budget(hits, budget)
        return Answer("ok", None, query, status, stale, tuple(hits), evidence, _done(timings, t0))
    finally:
        if own:
            store.close()


def _in_scope(chunks: dict[int, StoredChunk], keep, results: dict, knn: list, pinned: set):
    """The channels' results, KNN list and pinned ids without the chunks outside the scope."""
    ok = {cid for cid, ch in chunks.items() if keep(ch.path)}
    return ({name: [(cid, s) for cid, s in hits if cid in ok] for name, hits in results.items()},
            [(cid, s) for cid, s in knn if cid in ok], {cid for cid in pinned if cid in ok})


def _origins(store: Store, chunks: list[StoredChunk]) -> dict[int, dict]:
    """chunk id -> origin of the transcript chunks among `chunks` (files have none)."""
    ids = [ch.id for ch in chunks if is_session_path(ch.path)]
    if not ids:
        return {}
    from ..sessions.scopes import session_origin

    by_id = {ch.id: ch for ch in chunks}
    stored = store.origins(ids)
    return {cid: session_origin(stored.get(cid, ("", None))[1], by_id[cid].path) for cid in ids}


def _sessions_root(cfg: Config, store: Store) -> Path | None:
    from ..sessions import sessions_root

    return sessions_root(cfg, store)


def _scope(ch: StoredChunk, cfg: Config, origins: dict) -> str:
    from ..sessions.scopes import scope_of

    return "sessions" if ch.id in origins else scope_of(ch.path, cfg.scopes)


def _file_cache(caches: dict[Path, FileCache], root: Path, cfg: Config, path_key: str | None) -> FileCache:
    if root not in caches:
        caches[root] = FileCache(root, lambda: _chunk_settings(cfg), cfg.max_file_bytes, path_key)
    return caches[root]


def _chunk_settings(cfg: Config):
    from ..chunker import settings_for  # lazy: only a changed file's citation re-chunks it

    return settings_for(cfg)


def _done(timings: dict, t0: float) -> dict:
    timings["total"] = (time.perf_counter() - t0) * 1000
    return {k: round(v, 2) for k, v in timings.items()}

