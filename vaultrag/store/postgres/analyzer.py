"""vaultrag's own lexical terms for PostgreSQL: the SQLite backend's FTS5 tokenizer, run in memory.

Results must agree with the SQLite backend, so PostgreSQL's language configurations (one language
per column, dictionaries, stop words) are not used. Each chunk goes through the very tokenizer the
SQLite index uses (`porter unicode61 remove_diacritics 2` over textutil.fts_text: English porter
stemming, diacritics folded, every CJK character its own token) in an in-memory FTS5 table, and
its tokens become a tsvector built by hand:
- every token at its position, weighted by column: A chunk text, B heading path, C context
  ('title | type | tags'), so BM25 can weigh the columns as FTS5's bm25() does;
- every pair of adjacent one-unit tokens of a script written without spaces (a CJK character, a
  Thai/Lao/Khmer/Myanmar grapheme cluster) also as one bigram lexeme ("中国"): the retriever's
  2-unit terms (FTS5 phrases "中 国") become one GIN lookup, and their frequency is the
  phrase's frequency (as a phrase of parts, PostgreSQL would count its rarest part: xquad-th
  nDCG@10 0.82 against SQLite's 0.92);
- the token count (BM25's document length, as FTS5 counts it).
Query terms go through the same tokenizer, so `"templates"*` searches `templat*` here too.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import lru_cache

from ...textutil import CJK_RE, SEG_RE, fts_text
from ..base import Term
from .bulk import tsvector_binary
from ..sqlite.connection import sqlite_module
from ..sqlite.schema import FTS_TOKENIZE_SQL

COLUMN_WEIGHTS = ("A", "B", "C")  # chunk text, heading path, context
# tsvector positions run 1..16383; each column starts at its own base so that a lexeme in two
# columns keeps both occurrences (identical positions would merge). Chunks hold at most a few
# thousand tokens (chunker max_chars 2000, plus flattened fence keys).
COLUMN_BASE = (0, 10000, 13000)
MAX_POSITION = 16383


@dataclass(frozen=True)
class Analysed:
    tsvector: bytes  # tsvector_recv's binary form (bulk.tsvector_binary), sent by COPY
    tokens: int  # document length in tokens (all columns), as FTS5 counts it


@dataclass(frozen=True)
class QueryLexemes:
    """One Term as PostgreSQL lexemes: one lexeme (maybe a prefix), or a phrase of several
    (parts in order; only when the tokenizer splits a query word, e.g. at `_`). Empty: no token."""
    parts: tuple[str, ...]
    prefix: bool


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _is_cjk_char(token: str | None) -> bool:
    """One unit of a script written without spaces, indexed as a token of its own (textutil.fts_text):
    a CJK character, or a grapheme cluster of Thai, Lao, Khmer, Myanmar... Pairs of them are the
    retriever's 2-unit phrases, stored as one bigram lexeme."""
    if not token:
        return False
    if len(token) == 1 and CJK_RE.match(token) is not None:
        return True
    return all(SEG_RE.match(c) is not None for c in token)


class _Tokenizer:
    """An in-memory FTS5 table whose `instance` vocabulary lists every token with its position."""

    def __init__(self):
        self.pid = os.getpid()  # a forked index worker makes its own (no SQLite handle across a fork)
        mod = sqlite_module()
        self.conn = mod.connect(":memory:", check_same_thread=False)
        self.conn.execute(f"CREATE VIRTUAL TABLE a USING fts5(text, heading, context, tokenize={FTS_TOKENIZE_SQL})")
        self.conn.execute("CREATE VIRTUAL TABLE av USING fts5vocab(a, instance)")
        self.lock = threading.Lock()

    def tokens(self, rows: list[tuple[str, str, str]]) -> list[list[list[str]]]:
        """For each (text, heading, context): per column, its tokens in order."""
        out: list[list[list[str]]] = [[[], [], []] for _ in rows]
        cols = {"text": 0, "heading": 1, "context": 2}
        with self.lock:
            self.conn.execute("BEGIN")
            try:
                self.conn.executemany("INSERT INTO a(rowid, text, heading, context) VALUES (?, ?, ?, ?)",
                                      [(i + 1, *r) for i, r in enumerate(rows)])
                found = self.conn.execute("SELECT doc, col, offset, term FROM av ORDER BY doc, col, offset").fetchall()
                self.conn.execute("DELETE FROM a")
            finally:
                self.conn.execute("COMMIT")
        for doc, col, _offset, term in found:
            out[doc - 1][cols[col]].append(term)
        return out


_TOKENIZER: _Tokenizer | None = None


def _tokenizer() -> _Tokenizer:
    global _TOKENIZER
    if _TOKENIZER is None or _TOKENIZER.pid != os.getpid():
        _TOKENIZER = _Tokenizer()
    return _TOKENIZER


def analyse(chunks: list[tuple[str, str, str]], lang: str | None = None) -> list[Analysed]:
    """(search text, heading path, context) of each chunk -> its tsvector and token count; `lang`:
    the note's Snowball stemmer (FileWrite.lang), as SQLite's fts_row gets it."""
    rows = [(fts_text(t, lang=lang), fts_text(h, lang=lang), fts_text(c, lang=lang)) for t, h, c in chunks]
    out = []
    for columns in _tokenizer().tokens(rows):
        positions: dict[str, list[tuple[int, str]]] = {}
        count = 0
        for col, toks in enumerate(columns):
            base, weight = COLUMN_BASE[col], COLUMN_WEIGHTS[col]
            count += len(toks)
            for off, tok in enumerate(toks):
                if not tok:  # a token FTS5 emptied (a lone combining mark, diacritics removed): counted, no lexeme
                    continue
                pos = min(MAX_POSITION, base + off + 1)
                positions.setdefault(tok, []).append((pos, weight))
                if off + 1 < len(toks) and _is_cjk_char(tok) and _is_cjk_char(toks[off + 1]):
                    positions.setdefault(tok + toks[off + 1], []).append((pos, weight))
        out.append(Analysed(tsvector_binary(positions), count))
    return out


def file_forms(fw) -> tuple[tuple[bytes, int], ...]:
    """(tsvector, token count) of every chunk of a FileWrite: what PgStore.write_file stores. Pure,
    so index_pool's workers make it (`precompute_forms`) and the one writer only sends it."""
    return tuple((a.tsvector, a.tokens) for a in analyse(
        [(ch.search_text or ch.text, ch.heading_path, ch.context) for ch in fw.chunks], lang=fw.lang))


@lru_cache(maxsize=4096)
def query_lexemes(term: Term) -> QueryLexemes:
    """A Term through the index's tokenizer (stemmed, folded); a CJK bigram as its bigram lexeme."""
    toks = [t for t in _tokenizer().tokens([(fts_text(term.text, stem=False), "", "")])[0][0] if t]
    if len(toks) == 2 and all(_is_cjk_char(t) for t in toks):
        return QueryLexemes((toks[0] + toks[1],), term.prefix)
    return QueryLexemes(tuple(toks), term.prefix)


def flatten(terms) -> list[Term]:
    """Terms with their typo alternatives as terms of their own (prefixes): OR-ed flat, which is
    what FTS5 does with `("word" OR "near"*)` too (its bm25 sums over every phrase)."""
    return [t for term in terms for t in (Term(term.text, term.prefix) if term.alternatives else term,
                                          *(Term(a, prefix=True) for a in term.alternatives))]


def tsquery(terms) -> str:
    """tsquery input syntax for chunks holding any of `terms` ('' when none has a token)."""
    parts = []
    for term in flatten(terms):
        lx = query_lexemes(term)
        if not lx.parts:
            continue
        items = [_quote(p) for p in lx.parts]
        if lx.prefix:
            items[-1] += ":*"
        parts.append(items[0] if len(items) == 1 else "(" + " <-> ".join(items) + ")")
    return " | ".join(parts)
