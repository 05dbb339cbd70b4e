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


def one_word_each(held: list[tuple[Term, float]], fq) -> list[tuple[tuple[Term, float], ...]]:
    """`held` as near_specificity weighs it: one entry per word of the prompt, the terms of one
    hyphenated word (fq.hyphenated: "Wi-Fi" is searched as wi, fi) together (the parts of a word
    meet by no chance: counted apart, typed "Wi-Fi" was ln N of evidence twice)."""
    group = {text: i for i, parts in enumerate(fq.hyphenated) for text in parts}
    out: list[tuple[tuple[Term, float], ...]] = []
    where: dict[int, int] = {}
    for term, weight in held:
        g = group.get(term.text)
        if g is not None and g in where:
            out[where[g]] += ((term, weight),)
            continue
        if g is not None:
            where[g] = len(out)
        out.append(((term, weight),))
    return out


def near_specificity(chunk: StoredChunk | None, held: list, n: int, window: int = NEAR_WINDOW) -> float | None:
    """The largest sum of ln(N/df) (each held term's weight) of the prompt's words inside one window
    of `window` words of the chunk's text, minus ln N, at least 0. `held`: (Term, weight) pairs, or
    entries of several (`one_word_each`: one hyphenated word), which count once: as their rarest
    part where the parts stand together as written, else as the part found. A word of the chunk's
    title / headings / context (all its parts) counts in every window. None when it cannot say
    (no chunk, fewer than two entries)."""
    entries = [e if isinstance(e[0], tuple) else (e,) for e in held]
    if chunk is None or len(entries) < 2:
        return None
    tokens = [_plain(w) for w in words(chunk.text)]  # (`words` stems a stemmed script's words, as the query's)
    label = [_plain(w) for w in words(" ".join((chunk.title or "", chunk.heading_path or "", chunk.context or "")))]
    at, label_at = _index(tokens), _index(label)
    base = [0.0] * len(entries)  # what each entry gives every window
    events: list[tuple[int, int, float]] = []  # (position, entry, weight there)
    for k, parts in enumerate(entries):
        whole = max(w for _, w in parts)
        found = {t: positions(t, tokens, at) for t, _ in parts}
        if not any(found.values()) or all(positions(t, label, label_at) for t, _ in parts):
            base[k] = whole
            continue
        together = set.intersection(*(set(p - j for p in found[t]) for j, (t, _) in enumerate(parts)))
        for j, (t, w) in enumerate(parts):
            events += [(p, k, whole if p - j in together else w) for p in found[t]]
    events.sort()
    best = sum(base)
    for i, (start, _, _) in enumerate(events):  # each window starting at a located word
        top = list(base)
        for p, k, w in events[i:]:
            if p >= start + window:
                break
            top[k] = max(top[k], w)
        best = max(best, sum(top))
    return round(max(0.0, best - math.log(max(n, 1))), 3)
