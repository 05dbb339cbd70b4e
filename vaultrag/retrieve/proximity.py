"""How specific a chunk's match is where the prompt's words stand together.

The evidence gate's `specificity` (pipeline.term_evidence) asks how unlikely the query terms a
chunk holds are to meet in one chunk by chance. A long chunk can hold two rare words far apart,
about different things: "what is my home wifi password" against an Android help section that
says "Works on your Home Screen" and, seventy words on, "toggles like Wi-Fi" (trial finding: a
block on Quick Settings tiles). `near_specificity` counts the same sum over the best window of
NEAR_WINDOW words instead of the whole chunk; the words of the note's title, its heading path
and its context (tags, type) label every line of the section and count in every window.

Only unsolicited injection weighs it (inject.score); search results and the gate are unchanged.
Fails open: a term the chunk's words do not show (a stem, a form this tokenizer splits otherwise)
counts in every window, so the figure is never below what the chunk's located words support.
Standard library only (hook path)."""
from __future__ import annotations

import math
import unicodedata

from ..store import StoredChunk, Term
from ..textutil import fold, words, word_prefix

# Words of the chunk a window spans: about two sentences. "home" and "Wi-Fi" above stand ~70 apart.
NEAR_WINDOW = 40


def _plain(word: str) -> str:
    """`word` as FTS5 compares it: folded, lowered (as `words` does), without diacritics."""
    word = fold(word).lower()
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def _forms(term: Term) -> list[tuple[tuple[str, ...], bool]]:
    """The word sequences `term` matches, each with whether its last word is a prefix: the term
    itself, its looser prefix (the gate's), its alternatives (typos, the other writing of a
    compound: 'wi fi')."""
    out = []
    for text, prefix in [(term.text, term.prefix)] + [(a, True) for a in term.alternatives]:
        parts = tuple(_plain(p) for p in text.split())
        if parts:
            out.append((parts, prefix))
            if len(parts) == 1 and not prefix:
                loose = word_prefix(parts[0], stems=True)
                if loose:
                    out.append(((loose,), True))
    return out


def positions(term: Term, tokens: list[str], at: dict[str, list[int]] | None = None) -> list[int]:
    """Where `term` starts among `tokens` (plain forms); `at`: each token's positions, if built."""
    if at is None:
        at = _index(tokens)
    found: set[int] = set()
    for parts, prefix in _forms(term):
        last = parts[-1]
        ends = [i for w, ps in at.items() if w.startswith(last) for i in ps] if prefix else at.get(last, ())
        k = len(parts) - 1
        for end in ends:  # a phrase: its earlier words stand right before its last
            if end >= k and all(tokens[end - k + j] == parts[j] for j in range(k)):
                found.add(end - k)
    return sorted(found)


def _index(tokens: list[str]) -> dict[str, list[int]]:
    at: dict[str, list[int]] = {}
    for i, w in enumerate(tokens):
        at.setdefault(w, []).append(i)
    return at


def near_specificity(chunk: StoredChunk | None, held: list[tuple[Term, float]], n: int,
                     window: int = NEAR_WINDOW) -> float | None:
    """The largest sum of ln(N/df) (each held term's `weight`) of the terms inside one window of
    `window` words of the chunk's text, terms of its title / headings / context in every window,
    minus ln N, at least 0. None when it cannot say (no chunk, fewer than two terms)."""
    if chunk is None or len(held) < 2:
        return None
    tokens = [_plain(w) for w in words(chunk.text)]  # (`words` stems a stemmed script's words, as the query's)
    label = [_plain(w) for w in words(" ".join((chunk.title or "", chunk.heading_path or "", chunk.context or "")))]
    at, label_at = _index(tokens), _index(label)
    everywhere = 0.0
    events: list[tuple[int, int]] = []  # (position, term index)
    for k, (term, _) in enumerate(held):
        found = positions(term, tokens, at)
        if not found or positions(term, label, label_at):
            everywhere += held[k][1]
        else:
            events += [(p, k) for p in found]
    events.sort()
    best, count, inside, lo = 0.0, {}, 0.0, 0
    for p, k in events:  # sliding window over the located terms' positions
        count[k] = count.get(k, 0) + 1
        if count[k] == 1:
            inside += held[k][1]
        while events[lo][0] <= p - window:
            q = events[lo][1]
            count[q] -= 1
            if not count[q]:
                inside -= held[q][1]
            lo += 1
        best = max(best, inside)
    return round(max(0.0, everywhere + best - math.log(max(n, 1))), 3)
