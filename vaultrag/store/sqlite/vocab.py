"""The SQLite index's vocabulary (FTS5 terms, stemmed as the index stems them) for typo tolerance
(issue 12): Store.stem and Store.near_terms through fts5vocab. Standard library only (hook path)."""
from __future__ import annotations

from collections.abc import Sequence

from . import schema


def _osa_distance(a: str, b: str, cap: int) -> int:
    """Optimal string alignment distance (Levenshtein plus adjacent swaps), or cap + 1 once over
    it. Only the diagonal band of width `cap` is computed: ~15 us for 10 letters at cap 2."""
    la, lb = len(a), len(b)
    if abs(la - lb) > cap:
        return cap + 1
    big = cap + 1
    prev2: list[int] | None = None
    prev = [j if j <= cap else big for j in range(lb + 1)]
    for i in range(1, la + 1):
        ca = a[i - 1]
        cur = [big] * (lb + 1)
        if i <= cap:
            cur[0] = i
        lo, hi = max(1, i - cap), min(lb, i + cap)
        row_min = cur[0]
        for j in range(lo, hi + 1):
            cb = b[j - 1]
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if prev2 is not None and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v if v < big else big
            if v < row_min:
                row_min = v
        if row_min > cap:
            return big
        prev2, prev = prev, cur
    return min(prev[lb], big)


def _within_one(a: str, b: str) -> bool:
    """OSA distance of a and b <= 1 (one substitution, insertion, deletion or adjacent swap)."""
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la < lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < lb and a[i] == b[i]:
        i += 1
    if la > lb:
        return a[i + 1:] == b[i:]
    return (a[i + 1:] == b[i + 1:]) or (i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:])


def nearest(term: str, max_distance: int, limit: int, rows) -> list[tuple[str, int, int]]:
    """(candidate, edit distance, chunk count) of `rows` (candidate, chunk count) within
    `max_distance` of `term`, nearest first, then commonest, at most `limit`: the typo rule of
    every backend (SQLite's fts5vocab rows here, PostgreSQL's lexemes table), so both propose the
    same corrections."""
    found = []
    letters = set(term)
    for cand, df in rows:
        # An edit changes the set of letters by at most two: a cheap test before the DP.
        if cand == term or len(letters.symmetric_difference(cand)) > 2 * max_distance:
            continue
        d = (1 if _within_one(term, cand) else 2) if max_distance == 1 else _osa_distance(term, cand, max_distance)
        if d <= max_distance:
            found.append((cand, d, df))
    found.sort(key=lambda r: (r[1], -r[2], r[0]))
    return found[:limit]


class VocabMixin:
    """The index's vocabulary (FTS5 terms, stemmed as the index stems them) for typo tolerance."""

    conn: object

    def stem(self, words: Sequence[str]) -> dict[str, str]:
        """word -> the term the FTS tokenizer makes of it (porter stem, folded); the tokenizer is
        SQLite's own, run over a temporary table, so query and index always agree."""
        if not words:
            return {}
        if not getattr(self, "_stem_ready", False):
            self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vr_stem USING fts5(w, tokenize="
                              f"{schema.FTS_TOKENIZE_SQL})")
            self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vr_stem_v USING fts5vocab(temp, vr_stem, instance)")
            self._stem_ready = True
        self.conn.execute("DELETE FROM temp.vr_stem")
        for i, w in enumerate(words):
            self.conn.execute("INSERT INTO temp.vr_stem(rowid, w) VALUES (?, ?)", (i, w))
        out = {}
        for doc, term in self.conn.execute("SELECT doc, term FROM temp.vr_stem_v ORDER BY doc, offset"):
            out.setdefault(words[doc], term)
        self.conn.execute("DELETE FROM temp.vr_stem")
        return out

    def near_terms(self, term: str, max_distance: int, limit: int) -> list[tuple[str, int, int]]:
        """(vocabulary term, edit distance, chunk count) of the index terms within `max_distance`
        of `term` (a stemmed term) that share its first max_distance + 1 letters; nearest first,
        then commonest.
        Scans those terms of similar length through fts5vocab (its `term` range is indexed)."""
        if not term:
            return []
        if not getattr(self, "_vocab_ready", False):
            self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vr_vocab USING fts5vocab(main, chunks_fts, row)")
            self._vocab_ready = True
        lo = term[:max_distance + 1]  # typos past the first letters: keeps the scan short
        hi = lo[:-1] + chr(ord(lo[-1]) + 1)
        sql = ("SELECT term, doc FROM temp.vr_vocab WHERE term >= :lo AND term < :hi "
               "AND length(term) BETWEEN :a AND :b")
        rows = self.conn.execute(sql, {"lo": lo, "hi": hi, "a": len(term) - max_distance,
                                       "b": len(term) + max_distance})
        return nearest(term, max_distance, limit, rows)
