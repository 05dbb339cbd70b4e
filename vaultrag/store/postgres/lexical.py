"""BM25 over PostgreSQL, computed as FTS5's bm25() computes it, without touching every candidate.

The slow way (unnest the tsvector of every chunk GIN finds, count each term's documents among
them) cost ~0.3-7 s a query at tldr scale (38k chunks): a common word ("file") matches 60% of the
corpus. Here, three steps, at most three round trips:

1. Statistics, from the per-generation vocabulary table `lexemes` (lexeme -> chunks holding it,
   kept in step with every write, FTS5 keeps the same numbers in its doclists): each query part
   expanded to the index lexemes it names (a prefix: every lexeme starting with it), and each
   term's document frequency (a single whole lexeme: read from the table; a prefix or a phrase:
   counted over GIN, as FTS5 counts a phrase's rows).
2. Candidates by the rarest terms only: terms sorted by their largest possible contribution
   (idf * (k1 + 1)), the rarest kept while their documents stay under PRUNE_CANDIDATES. A chunk
   holding none of them scores below the sum of the other terms' bounds; when the `limit`-th best
   candidate scores above that, the answer is exact. Otherwise the same again with the budget
   SCAN_CAP (more terms kept, a smaller bound for the rest: MaxScore in two steps). Still not
   proven: when every match is at most SCAN_CAP chunks, step 3 scores them all (exact); past that
   (terms common across a large collection: p99 14.8 s at 458k chunks) the answer is the best of
   at most 2 x SCAN_CAP candidates, the chunks holding every query term and those holding the
   kept rare terms, and is reported as approximate (`Ranked.exact`).
3. Each candidate's term frequencies from its tsvector reduced, in C, to the query's lexemes
   (`setweight` to D + `ts_filter`), the column told by the position (analyzer.COLUMN_BASE).

Scores are ordered rounded to SCORE_DIGITS decimals, then by id, so floating-point summation
order never reorders two chunks that tie (identical text) -- as FTS5's ties fall to the rowid.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..base import Term
from . import analyzer

BM25_K1 = 1.2
BM25_B = 0.75
IDF_FLOOR = 1e-6  # FTS5: a term in more than half the rows still counts, barely
# Step 2's candidate budget: the rarest terms' documents up to this many chunks. A few thousand
# tsvectors cost a few ms; a common tldr word's 20k+ cost ~0.4 s.
PRUNE_CANDIDATES = 3000
# The work a query may do past the exact proofs: tsvectors read per candidate set. ~20k cost
# ~0.4 s at tldr scale under load (the figure above); every match of a few common words at 458k
# chunks is 10^5+ (seconds). Collections whose matches stay under it are always ranked exactly
# (every dev set: parity unchanged, BENCHMARKS.md "Issue 15, fourth round").
SCAN_CAP = 20000
SCORE_DIGITS = 9


@dataclass(frozen=True)
class TermStats:
    """One flattened query term as the index sees it."""
    index: int
    parts: tuple[tuple[str, ...], ...]  # per part (in order), the index lexemes it matches
    df: int  # chunks holding the term

    @property
    def present(self) -> bool:
        return self.df > 0 and all(self.parts)


def successor(prefix: str) -> str:
    """The smallest string after every string starting with `prefix` (byte order: COLLATE "C")."""
    code = ord(prefix[-1]) + 1
    if 0xD800 <= code <= 0xDFFF:  # surrogates are not characters: skip them
        code = 0xE000
    if code > 0x10FFFF:
        return prefix + "\U0010FFFF"
    return prefix[:-1] + chr(code)


# Step 1: every query part's index lexemes with their document frequencies.
VOCAB_SQL = """
SELECT q.k, l.lexeme, sum(l.df)::bigint
FROM unnest(%(lex)s::text[], %(hi)s::text[], %(pre)s::bool[]) WITH ORDINALITY AS q(lex, hi, pre, k)
CROSS JOIN LATERAL (
    SELECT lexeme, df FROM lexemes WHERE gen = ANY(%(gens)s) AND lexeme >= q.lex COLLATE "C"
    AND lexeme < q.hi COLLATE "C" AND df > 0) l
GROUP BY q.k, l.lexeme
"""
# ... and the document count of terms that are not one whole lexeme (a prefix, a phrase).
COUNT_SQL = """
SELECT q.k, (SELECT count(*) FROM chunks WHERE gen = ANY(%(gens)s) AND tsv @@ q.tq)
FROM unnest(%(tqs)s::tsquery[]) WITH ORDINALITY AS q(tq, k)
"""

# Steps 2 and 3: BM25 of the chunks holding any of the candidate terms (`tq`), every query term
# scored. v: (lexeme, term, part, parts); w: (term, idf). Built in three shapes (score_sql): the
# common one (every term one whole lexeme) skips the grouping prefixes and phrases need.
_SCORE_HEAD = """
WITH v(lexeme, i, j, n) AS (
    SELECT * FROM unnest(%(vlex)s::text[], %(vi)s::int[], %(vj)s::int[], %(vn)s::int[])),
w(i, idf) AS (SELECT * FROM unnest(%(wi)s::int[], %(widf)s::float8[])),
c AS MATERIALIZED (
    SELECT id, ntok, ts_filter(setweight(tsv, 'D', %(lexemes)s::text[]), '{d}') AS t
    {candidates}),
p AS (  -- per candidate and query lexeme: occurrences weighted by column (positions are sorted)
    SELECT c.id, c.ntok, u.lexeme,
           %(wa)s::float8 * width_bucket(%(hb)s::smallint, u.positions)
           + %(wb)s::float8 * (width_bucket(%(hc)s::smallint, u.positions) - width_bucket(%(hb)s::smallint, u.positions))
           + %(wc)s::float8 * (cardinality(u.positions) - width_bucket(%(hc)s::smallint, u.positions)) AS f
    FROM c CROSS JOIN LATERAL unnest(c.t) AS u(lexeme, positions, weights)),
"""
_T_LEXEMES = """t AS (SELECT p.id, p.ntok, v.i, p.f FROM p JOIN v ON v.lexeme = p.lexeme),"""
_T_PREFIXES = """t AS (SELECT p.id, p.ntok, v.i, sum(p.f) AS f FROM p JOIN v ON v.lexeme = p.lexeme GROUP BY p.id, p.ntok, v.i),"""
_T_PHRASES = """pt AS (SELECT p.id, p.ntok, v.i, v.j, v.n, sum(p.f) AS f FROM p JOIN v ON v.lexeme = p.lexeme
       GROUP BY p.id, p.ntok, v.i, v.j, v.n),
t AS (SELECT id, ntok, i, min(f) AS f FROM pt GROUP BY id, ntok, i, n HAVING count(*) = n),"""
_SCORE_TAIL = """
s AS (SELECT t.id, sum(w.idf * t.f * (%(k1)s::float8 + 1) / (t.f + %(k1)s::float8 * (1 - %(b)s::float8
                 + %(b)s::float8 * t.ntok / %(avgdl)s::float8))) AS s
      FROM t JOIN w USING (i) GROUP BY t.id)
SELECT id, s FROM s ORDER BY round(s::numeric, %(digits)s) DESC, id LIMIT %(limit)s
"""


# Candidates: every chunk matching `tq`; or, capped, at most `cap` holding every term plus at most
# `cap` matching `tq` (which ones, when more match: the order the scan meets them).
_CANDIDATES = "FROM chunks WHERE gen = ANY(%(gens)s) AND tsv @@ %(tq)s::tsquery{check}"
_CANDIDATES_CAPPED = """FROM chunks WHERE id IN (
        (SELECT id FROM chunks WHERE gen = ANY(%(gens)s) AND tsv @@ %(tqand)s::tsquery LIMIT %(cap)s)
        UNION (SELECT id FROM chunks WHERE gen = ANY(%(gens)s) AND tsv @@ %(tq)s::tsquery{check} LIMIT %(cap)s))"""


def score_sql(phrases: bool, prefixes: bool, check_all: bool, capped: bool = False) -> str:
    """The scoring query: `phrases` (a term of several parts), `prefixes` (a part matching several
    lexemes), `check_all` (candidates must also match the full query: pruned, with phrases),
    `capped` (at most 2 x %(cap)s candidates, %(tqand)s: chunks holding every term)."""
    t = _T_PHRASES if phrases else _T_PREFIXES if prefixes else _T_LEXEMES
    cands = (_CANDIDATES_CAPPED if capped else _CANDIDATES).replace(
        "{check}", " AND tsv @@ %(tqall)s::tsquery" if check_all else "")
    return _SCORE_HEAD.replace("{candidates}", cands) + t + _SCORE_TAIL


@dataclass(frozen=True)
class Ranked:
    """BM25's best chunks; `exact` False when the scan cap cut the candidates (SCAN_CAP)."""
    hits: list[tuple[int, float]]
    exact: bool = True


def idf(nrows: int, df: int) -> float:
    return max(math.log((nrows - df + 0.5) / (df + 0.5)), IDF_FLOOR)


def term_stats(conn, gens: list[int], terms: list[Term]) -> list[TermStats]:
    """Step 1 for the flattened `terms`: their lexemes and document frequencies."""
    parts = [analyzer.query_lexemes(t) for t in terms]
    flat = [(i, j, p, t.prefix and j == len(lx.parts) - 1)
            for i, (t, lx) in enumerate(zip(terms, parts)) for j, p in enumerate(lx.parts)]
    found: dict[int, dict[str, int]] = {}
    if flat:
        rows = conn.execute(VOCAB_SQL, {"gens": gens, "lex": [p for _, _, p, _ in flat],
                                        "hi": [successor(p) if pre else p + "\x01" for _, _, p, pre in flat],
                                        "pre": [pre for *_, pre in flat]}).fetchall()
        for k, lexeme, df in rows:
            found.setdefault(k - 1, {})[lexeme] = int(df)
    by_term: dict[int, list[dict[str, int]]] = {i: [] for i in range(len(terms))}
    for k, (i, _j, _p, _pre) in enumerate(flat):
        by_term[i].append(found.get(k, {}))
    df: dict[int, int] = {}
    counted = []
    for i, lexemes in by_term.items():
        if not lexemes or not all(lexemes):
            df[i] = 0  # no token, or a part the index does not hold
        elif len(lexemes) == 1 and not terms[i].prefix:
            df[i] = next(iter(lexemes[0].values()))
        else:
            counted.append(i)
    if counted:
        tqs = [analyzer.tsquery([terms[i]]) for i in counted]
        for k, n in conn.execute(COUNT_SQL, {"gens": gens, "tqs": tqs}).fetchall():
            df[counted[k - 1]] = int(n)
    return [TermStats(i, tuple(tuple(sorted(lx)) for lx in by_term[i]), df[i]) for i in range(len(terms))]


def _tsquery(lexemes: list[str]) -> str:
    return " | ".join(analyzer._quote(lx) for lx in lexemes)


def _any_lexeme(stats: list[TermStats]) -> str:
    """A tsquery matching a chunk that holds any lexeme of any part of the terms `stats`."""
    return _tsquery(sorted({lx for st in stats for part in st.parts for lx in part}))


def _rare(order: list[TermStats], budget: int) -> list[TermStats]:
    """The rarest terms (at least one) while their documents add up to at most `budget`."""
    rare, used = [], 0
    for st in order:
        if rare and used + st.df > budget:
            break
        rare.append(st)
        used += st.df
    return rare


def bm25(conn, gens: list[int], terms: list[Term], stats: list[TermStats], nrows: int, avgdl: float, limit: int,
         weights: tuple[float, float, float]) -> Ranked:
    """Steps 2 and 3: the `limit` best chunks by BM25 (exactly FTS5's ranking unless capped)."""
    live = [st for st in stats if st.present]
    if not live or limit <= 0:
        return Ranked([])
    bound = {st.index: idf(nrows, st.df) * (BM25_K1 + 1) for st in live}
    order = sorted(live, key=lambda st: (-bound[st.index], st.index))
    base = {"gens": gens, "wa": float(weights[0]), "wb": float(weights[1]), "wc": float(weights[2]),
            "hb": analyzer.COLUMN_BASE[1], "hc": analyzer.COLUMN_BASE[2], "k1": BM25_K1, "b": BM25_B,
            "avgdl": avgdl, "digits": SCORE_DIGITS, "limit": limit, "cap": SCAN_CAP,
            "wi": [st.index for st in live], "widf": [idf(nrows, st.df) for st in live]}
    v = [(lx, st.index, j, len(st.parts)) for st in live for j, part in enumerate(st.parts) for lx in part]
    base.update(vlex=[r[0] for r in v], vi=[r[1] for r in v], vj=[r[2] for r in v], vn=[r[3] for r in v],
                lexemes=sorted({r[0] for r in v}))
    base["tqall"] = analyzer.tsquery([terms[st.index] for st in live])
    phrases = any(len(st.parts) > 1 for st in live)
    prefixes = any(len(part) > 1 for st in live for part in st.parts)
    rare: list[TermStats] = []
    for budget in (PRUNE_CANDIDATES, SCAN_CAP):
        wider = _rare(order, budget)
        if len(wider) == len(live) or len(wider) == len(rare) or sum(st.df for st in wider) > SCAN_CAP:
            continue  # every term (step 3 is the same work), no term more than the last try, or over the cap
        rare = wider
        # Candidates: chunks holding any lexeme of a rare term (every part of a phrase: a chunk
        # holding all its parts scores for it, adjacent or not) among those the full query finds.
        # A chunk outside holds no rare part, so it scores under `rest`.
        rest = sum(bound[st.index] for st in order[len(rare):])
        base["tq"] = _any_lexeme(rare)
        rows = conn.execute(score_sql(phrases, prefixes, phrases), base).fetchall()
        if len(rows) == limit and float(rows[-1][1]) > rest:
            return Ranked([(r[0], float(r[1])) for r in rows])
    capped = min(sum(st.df for st in live), nrows) > SCAN_CAP  # a collection under the cap is always exact
    if capped:  # every match would be more than the cap: the best of the capped candidates
        rare = rare or _rare(order, SCAN_CAP)
        base["tq"] = _any_lexeme(rare)
        base["tqand"] = " & ".join(f"({_any_lexeme([st])})" for st in live)
        rows = conn.execute(score_sql(phrases, prefixes, phrases, capped=True), base).fetchall()
        return Ranked([(r[0], float(r[1])) for r in rows], exact=False)
    rows = conn.execute(score_sql(phrases, prefixes, False), {**base, "tq": base["tqall"]}).fetchall()
    return Ranked([(r[0], float(r[1])) for r in rows])
