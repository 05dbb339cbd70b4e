"""Backend-neutral query terms as FTS5 MATCH strings: the one place that writes FTS5 syntax.

Every term is quoted, so `-`, `:`, `*`, `AND`, parentheses and quotes in user text are plain text,
never syntax (sqlite-utils `quote_fts`); a prefix term gets FTS5's `*`; terms are OR-ed and BM25
rewards chunks matching more of them. A CJK bigram ("中 国") is a quoted two-token phrase, which
FTS5 matches only where the characters stand next to each other (they are indexed one a token,
textutil.fts_text). FTS5 runs its tokenizer (porter stemming, diacritics folded) over the quoted
text of prefix terms too: `"templates"*` searches `templat*`.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..base import Term


def phrase(text: str) -> str:
    """Quote text as an FTS5 string: the only escaping FTS5 needs is doubling `"`."""
    return '"' + text.replace('"', '""') + '"'


def expression(term: Term) -> str:
    """One term as an FTS5 expression (with typo alternatives: `("word" OR "near"* ...)`)."""
    word = phrase(term.text) + ("*" if term.prefix else "")
    if not term.alternatives:
        return word
    return "(" + " OR ".join([word] + [phrase(a) + "*" for a in term.alternatives]) + ")"


def match_any(terms: Sequence[Term]) -> str:
    """An FTS5 MATCH string for chunks holding any of `terms` ('' for none)."""
    return " OR ".join(expression(t) for t in terms)
