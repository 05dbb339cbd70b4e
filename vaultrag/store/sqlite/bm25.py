"""FTS5's bm25() top k, computed without scoring every match (issue 18, the warm query).

`SELECT ... bm25(chunks_fts, ...) ... ORDER BY s LIMIT k` scores every chunk the OR-query matches:
"http" alone is in 23k of tldr's 39k chunks (18 ms CPU). Here, MaxScore, as the PostgreSQL store's
lexical channel prunes (store/postgres/lexical.py):

1. The query's phrases as FTS5 numbers them (every quoted string of fts.match_any), their tokens by
   SQLite's own tokenizer (a temporary FTS5 table with the index's tokenizer), their document counts
   (FTS5 counting each one's MATCH, as Store.doc_freq does) and bounds, idf * (k1 + 1).
2. A round reads the rarest phrases left (ESSENTIAL_CHUNKS): FTS5 scores each one alone, and a
   one-phrase bm25() is exactly that phrase's term of the whole query's score. Their chunks are the
   candidates; which candidates hold each other phrase, FTS5 says (`q AND (read OR ...)`), so each
   candidate has a lower and an upper bound. Candidates that may reach the k best are scored
   exactly: the other phrases' terms computed here from their fts5vocab instances, the row's
   length (docsize) and the averages record, by bm25()'s expression, summed in phrase order.
3. A chunk holding no phrase read scores at most the sum of the other phrases' bounds; once the
   k-th best scores above that, the k best are exact. Else another round, and past READ_BUDGET
   chunks (or under SQL_MATCHES matches) the caller asks bm25() after all.

Every score is the double bm25() returns; ties fall to the smaller rowid (`ORDER BY s, rowid`).
tests/test_bm25.py compares every id and score with bm25()'s. Standard library only (hook path).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ..base import Term
from . import fts, schema

K1 = 1.2  # fts5_aux.c's constants
B = 0.75
IDF_FLOOR = 1e-6
# Chunks of the phrases read (scored alone), at most: past it bm25() over every match answers.
READ_BUDGET = 4000
# Phrases read (scored alone by FTS5) in one round: the rarest while their chunks add up to this.
ESSENTIAL_CHUNKS = 1500
# Pruning pays only where bm25() would score very many matches: below this many (the phrases'
# document counts summed) bm25() in SQL answers. tldr, 150 queries, CPU (BENCHMARKS.md, stop 16):
# FTS5 scores a match in ~0.7 us in C, this module reads a row into Python in ~1-2 us, so at
# 6-8k matches pruning cost 2x bm25(); past 15k ("http": 23k of 39k chunks) it wins, 18.5 -> 6.5 ms.
SQL_MATCHES = 15000
# The proof compares sums of floating-point bounds: a relative margin past any rounding.
MARGIN = 1e-9
COLUMNS = ("text", "heading", "context")  # chunks_fts's columns, in order (schema.BASE)
TOKEN_CACHE = 4096  # query strings whose tokens are remembered (per Store)


class Phrase:
    """One quoted string of the MATCH expression: tokens as the index holds them, prefix or not."""
    __slots__ = ("index", "tokens", "prefix", "query", "df", "idf", "bound")

    def __init__(self, index: int, tokens: tuple[str, ...], prefix: bool, query: str):
        self.index, self.tokens, self.prefix, self.query = index, tokens, prefix, query
        self.df = 0
        self.idf = self.bound = 0.0


def phrases_of(terms: Sequence[Term]) -> list[tuple[str, bool, str]]:
    """(text, prefix, FTS5 string) of every phrase of fts.match_any(terms), in the order FTS5
    numbers them."""
    out = []
    for t in terms:
        out.append((t.text, t.prefix, fts.phrase(t.text) + ("*" if t.prefix else "")))
        out.extend((a, True, fts.phrase(a) + "*") for a in t.alternatives)
    return out


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (FTS5's docsize and averages records)."""
    out, i, n = [], 0, len(blob)
    while i < n:
        v = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                v = (v << 8) | byte
                break
            v = (v << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        out.append(v)
    return out


def _successor(prefix: str) -> str:
    """The smallest string after every string starting with `prefix` (UTF-8 byte order)."""
    code = ord(prefix[-1]) + 1
    if 0xD800 <= code <= 0xDFFF:
        code = 0xE000
    return prefix + "\U0010FFFF" if code > 0x10FFFF else prefix[:-1] + chr(code)


class Bm25:
    """The exact top-k for one SQLite connection (a Store's): its temporary tables and caches."""

    def __init__(self, conn, cache: bool):
        self.conn = conn
        # `cache`: keep table statistics and document counts while `PRAGMA data_version` stays (a
        # read-only connection: data_version does not see the connection's own writes).
        self.cache = cache
        self._ready = False
        self._tokens: dict[str, tuple[str, ...]] = {}
        self._stats: tuple[int, int, float] | None = None  # (data_version, rows, average length)
        self.df: dict[str, int] = {}  # FTS5 string -> chunks matching it, for the last data_version
        self._df_version: int | None = None

    def _setup(self) -> None:
        if not self._ready:
            ex = self.conn.execute
            ex(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.vr_tok USING fts5(w, tokenize={schema.FTS_TOKENIZE_SQL})")
            ex("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vr_tok_v USING fts5vocab(temp, vr_tok, instance)")
            ex("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vr_inst USING fts5vocab(main, chunks_fts, instance)")
            self._ready = True

    # -- what FTS5 knows of the query and the table ----------------------------------------------
    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """Each text's tokens as the index's tokenizer makes them (stemmed, folded), in order."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._tokens]
        if todo:
            if len(self._tokens) + len(todo) > TOKEN_CACHE:  # full: start again, with all of `texts`
                self._tokens.clear()
                todo = list(dict.fromkeys(texts))
            ex = self.conn.execute
            ex("DELETE FROM temp.vr_tok")
            self.conn.executemany("INSERT INTO temp.vr_tok(rowid, w) VALUES (?, ?)", list(enumerate(todo)))
            found: dict[int, list[str]] = {}
            for doc, term in ex("SELECT doc, term FROM temp.vr_tok_v ORDER BY doc, offset"):
                found.setdefault(doc, []).append(term)
            ex("DELETE FROM temp.vr_tok")
            for i, text in enumerate(todo):
                self._tokens[text] = tuple(found.get(i, ()))
        return [self._tokens[t] for t in texts]

    def _version(self) -> int | None:
        return self.conn.execute("PRAGMA data_version").fetchone()[0] if self.cache else None

    def cached_df(self, query: str) -> int | None:
        """Chunks matching the FTS5 string `query` as the last top() counted them, if still valid."""
        if self.cache and self._df_version is not None and query in self.df and self._df_version == self._version():
            return self.df[query]
        return None

    def table_stats(self, version: int) -> tuple[int, float]:
        """(rows, average tokens a row) from FTS5's averages record, as bm25() reads them."""
        if self._stats is None or version is None or self._stats[0] != version:
            row = self.conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
            values = _varints(row[0]) if row else [0]
            nrow, ntoken = values[0], sum(values[1:])
            self._stats = (version, nrow, ntoken / nrow if nrow else 0.0)
        return self._stats[1], self._stats[2]

    def _doc_counts(self, phrases: list[Phrase], version: int | None) -> None:
        """Each phrase's document count, FTS5 counting its MATCH: the very query Store.doc_freq runs
        for the gate's terms, which then reuse these counts (cached_df)."""
        if version is None or self._df_version != version:
            self.df, self._df_version = {}, version
        sql = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
        for p in phrases:
            if p.query not in self.df:
                self.df[p.query] = self.conn.execute(sql, (p.query,)).fetchone()[0]
            p.df = self.df[p.query]

    # -- instances ---------------------------------------------------------------------------------
    def _token_rows(self, token: str, prefix: bool, docs: list[int], offsets: bool):
        """fts5vocab instance rows (doc, col[, offset]) of `token` (every index term starting with
        it, `prefix`) in `docs` (SQLite filters the term's instances in C)."""
        cols = "doc, col, offset" if offsets else "doc, col"
        where, args = ("term >= ? AND term < ?", [token, _successor(token)]) if prefix else ("term = ?", [token])
        where += " AND doc IN (SELECT value FROM json_each(?))"
        args.append("[" + ",".join(map(str, docs)) + "]")
        return self.conn.execute(f"SELECT {cols} FROM temp.vr_inst WHERE {where}", args)

    def counts(self, p: Phrase, docs: list[int]) -> dict[int, list[int]]:
        """doc -> instances of phrase `p` per column in each of `docs` that holds it."""
        col = {name: i for i, name in enumerate(COLUMNS)}
        out: dict[int, list[int]] = {}
        if len(p.tokens) == 1:
            for doc, c in self._token_rows(p.tokens[0], p.prefix, docs, False):
                n = out.get(doc)
                if n is None:
                    n = out[doc] = [0, 0, 0]
                n[col[c]] += 1
            return out
        if not docs:
            return out
        # A phrase of several tokens: an instance where each token stands right after the last.
        last = len(p.tokens) - 1
        at: list[set[tuple[int, str, int]]] = []
        for j, token in enumerate(p.tokens):
            at.append({(d, c, o - j) for d, c, o in self._token_rows(token, p.prefix and j == last, docs, True)})
        for d, c, _o in sorted(set.intersection(*at)):
            n = out.get(d)
            if n is None:
                n = out[d] = [0, 0, 0]
            n[col[c]] += 1
        return out

    def lengths(self, docs: Sequence[int]) -> dict[int, int]:
        """Tokens of each row (every column), FTS5's docsize table."""
        out = {}
        for i in range(0, len(docs), 500):
            part = docs[i:i + 500]
            sql = f"SELECT id, sz FROM chunks_fts_docsize WHERE id IN ({','.join('?' * len(part))})"
            for d, sz in self.conn.execute(sql, part):
                out[d] = sum(sz) if max(sz, default=0) < 0x80 else sum(_varints(sz))  # mostly one byte a column
        return out

    # -- the top k ---------------------------------------------------------------------------------
    def top(self, terms: Sequence[Term], limit: int, weights: tuple[float, float, float]) -> list[tuple[int, float]] | None:
        """(chunk id, bm25 score, larger is better) of the `limit` best chunks holding any of `terms`,
        best first, exactly as `-bm25()` orders and scores them; None when FTS5's bm25() should
        answer (a phrase without tokens, or more chunks to read than READ_BUDGET)."""
        if limit <= 0 or not terms:
            return []
        spec = phrases_of(terms)
        phrases = [Phrase(i, (), pre, q) for i, (_, pre, q) in enumerate(spec)]
        version = self._version()
        nrow, avgdl = self.table_stats(version)
        self._doc_counts(phrases, version)
        live = [p for p in phrases if p.df > 0]
        if not live:
            return []
        for p in live:
            idf = math.log((nrow - p.df + 0.5) / (p.df + 0.5))
            p.idf = idf if idf > 0.0 else IDF_FLOOR
            p.bound = p.idf * (K1 + 1.0)
        if sum(p.df for p in live) <= SQL_MATCHES:
            return None  # few matches: bm25() scores them all sooner than Python reads them
        self._setup()
        for p, tk in zip(phrases, self.tokens([text for text, _, _ in spec])):
            p.tokens = tk
        if any(not p.tokens for p in live):
            return None
        order = sorted(live, key=lambda p: (-p.bound, p.index))
        w = [float(x) for x in weights]
        part: dict[int, dict[int, float]] = {}  # doc -> phrase index -> its bm25 term, exact
        lower: dict[int, float] = {}  # doc -> the read phrases' terms summed (a bound, any order)
        read = 0
        j = 0
        while j < len(order):
            # the rarest phrases (at least one more) while their chunks stay under ESSENTIAL_CHUNKS
            fresh, start = [], read
            while j < len(order) and (not fresh or read + order[j].df <= start + ESSENTIAL_CHUNKS):
                fresh.append(order[j])
                read += order[j].df
                j += 1
            if read > READ_BUDGET:
                return None
            for e in fresh:  # FTS5 scores each alone: a one-phrase bm25() is that phrase's term
                for d, t in self._alone(e, w):
                    part.setdefault(d, {})[e.index] = t
                    lower[d] = lower.get(d, 0.0) + t
            rest = order[j:]
            outside = sum(q.bound for q in rest)  # a chunk holding no phrase read scores under this
            read_now = order[:j]
            upper = dict(lower)
            members: dict[int, set[int]] = {}
            for q in rest:
                members[q.index] = self._with_any(q, read_now)
                for d in members[q.index]:
                    upper[d] += q.bound
            # the k-th best lower bound: a chunk whose upper bound stays under it is out
            floor = sorted(lower.values(), reverse=True)[limit - 1] if len(lower) >= limit else 0.0
            todo = [d for d, u in upper.items() if u * (1 + MARGIN) >= floor]
            scores = self._score(todo, part, rest, members, phrases, w, avgdl)
            best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
            if not rest or (len(best) == limit and best[-1][1] > outside * (1 + MARGIN)):
                return best
        return None  # not reached: the last round leaves no rest

    def _alone(self, p: Phrase, w: list[float]):
        """(doc, p's bm25 term) for every chunk holding `p`: FTS5's bm25() of the phrase alone, whose
        score is 0.0 + that term (IDF, frequency, length and average as in the whole query)."""
        sql = (f"SELECT rowid, bm25(chunks_fts, {w[0]!r}, {w[1]!r}, {w[2]!r}) FROM chunks_fts "
               f"WHERE chunks_fts MATCH ?")
        return [(d, -s) for d, s in self.conn.execute(sql, (p.query,))]

    def _with_any(self, q: Phrase, read: list[Phrase]) -> set[int]:
        """Chunks holding `q` and any phrase of `read` (FTS5 intersects the doclists)."""
        sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"
        expr = f"({q.query}) AND ({' OR '.join(p.query for p in read)})"
        return {r[0] for r in self.conn.execute(sql, (expr,))}

    def _score(self, docs, part, rest, members, phrases, w, avgdl) -> dict[int, float]:
        """The exact bm25 score of each of `docs`: the read phrases' terms as FTS5 gave them, the
        rest computed here from their instances, summed in phrase order as bm25() sums them."""
        if not docs:
            return {}
        terms = {d: dict(part[d]) for d in docs}
        k1, b = K1, B
        need = [q for q in rest if members[q.index].intersection(docs)]
        length = self.lengths(docs) if need else {}
        for q in need:
            held = [d for d in docs if d in members[q.index]]
            counts = self.counts(q, held)
            for d, per_col in counts.items():
                f = 0.0
                for c in range(3):
                    for _ in range(per_col[c]):
                        f += w[c]
                dl = float(length.get(d, 0))
                terms[d][q.index] = q.idf * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * dl / avgdl)))
        out = {}
        for d in docs:
            t = terms[d]
            score = 0.0
            for ph in phrases:
                v = t.get(ph.index)
                if v is not None:
                    score += v
            out[d] = score
        return out
