"""Words written together or apart: "rollback" / "roll back", "wifi" / "Wi-Fi", "setup" / "set up",
"login" / "log in", "dataset" / "data set". BM25 matches words, so a prompt that writes a word
one way misses every note that writes it the other (trial finding: "how do I roll back a
migration" against a note on "Rollback").

Two directions, each used only where the index holds the other form (a lookup capped at one
chunk, so a form no note writes costs one probe and changes nothing):
- joined: two words next to each other in the prompt ("roll back", "Wi-Fi", "set up") are also
  searched as the one word the vault writes ("rollback"), an alternative of each part that is a
  query term: a chunk holding the compound covers both, as the prompt's two words would. Only
  where the vault writes the compound instead: the two words stand together in no chunk, or in
  DOMINANT times fewer (as retrieve/spelling's rule). A vault that writes both ("Log in" in a
  heading, "login" elsewhere) is searched as typed: obsidian-help's "Log in with your Obsidian
  account" fell from rank 1 to 3 when "login" joined it;
- split: a word no chunk holds ("rollback" in a vault that writes "roll back") is searched as the
  two-word phrase the vault writes, the split nearest the middle first.
ASCII letters only (German and Dutch compounds are the stemmer's and the language copies'
business). Standard library only (hook path)."""
from __future__ import annotations

import re

from ..store import Store, Term
from ..textutil import is_stopword

MIN_PART = 2  # letters of each part ("wi" + "fi")
MIN_WORD = 4  # letters of the compound
MAX_JOINS = 6  # adjacent pairs looked up per prompt
MAX_SPLITS = 2  # unknown words looked up per prompt
DOMINANT = 5  # the compound joins two typed words only where the vault writes it this many times as often
JOINED_COUNT_CAP = 200
# A compound's second part may be one of these function words ("set up", "log in", "shut down",
# "check out"); otherwise neither part is one: "process is", "log as", "in files" stay apart
# (tldr holds "processis", "logas" and "infiles" in a few code lines, never as the words meant).
PARTICLES = frozenset("up in out on off down over".split())
# Two words stand next to each other when only spaces or one hyphen lie between ("Wi-Fi").
_PAIR_RE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z]+)(?=(?:\s+|-)([A-Za-z]+)(?![A-Za-z0-9_]))")


def joined_pairs(text: str) -> list[tuple[str, str]]:
    """Adjacent word pairs of `text` that could be one word, lowercased, in order, at most
    MAX_JOINS: each part MIN_PART+ letters, neither a stopword but for a particle after a word
    ("set up"; see PARTICLES)."""
    out: list[tuple[str, str]] = []
    for m in _PAIR_RE.finditer(text):
        a, b = m.group(1).lower(), m.group(2).lower()
        if len(a) < MIN_PART or len(b) < MIN_PART or len(a) + len(b) < MIN_WORD:
            continue
        if is_stopword(a) or (is_stopword(b) and b not in PARTICLES) or (a, b) in out:
            continue
        out.append((a, b))
        if len(out) >= MAX_JOINS:
            break
    return out


def splits(word: str) -> list[str]:
    """Two-word phrases `word` could be written as, the split nearest the middle first."""
    n = len(word)
    cuts = sorted(range(MIN_PART, n - MIN_PART + 1), key=lambda i: (abs(2 * i - n), i))
    return [f"{word[:i]} {word[i:]}" for i in cuts]


def _holds(store: Store, term: Term) -> bool:
    return store.doc_freq(term, 1) > 0


def compound_alternatives(store: Store, text: str, terms: list[Term], df: dict[Term, int]) -> dict[Term, Term]:
    """term -> the same term with the other writing as an alternative (searched `word OR other*`,
    one term for document counts and the gate's coverage), where the index holds that writing."""
    plain = {t.text: t for t in terms if not t.prefix and t.text.isascii() and t.text.isalpha()}
    extra: dict[Term, list[str]] = {}
    for a, b in joined_pairs(text):
        parts = [plain[w] for w in (a, b) if w in plain]
        if not parts or a + b in plain:  # "rollback" typed as well
            continue
        n = store.doc_freq(Term(a + b), JOINED_COUNT_CAP)
        # the vault writes the compound, and writes it instead: the two words as typed stand in no
        # chunk, or DOMINANT times fewer ("Log in with your account" beside "login" stays as typed)
        if not n or store.doc_freq(Term(f"{a} {b}"), n // DOMINANT + 1) * DOMINANT > n:
            continue
        for t in parts:
            extra.setdefault(t, []).append(a + b)
    looked = 0
    for w, t in plain.items():
        if looked >= MAX_SPLITS or len(w) < MIN_WORD or t.alternatives or t in extra:
            continue
        if (df[t] if t in df else store.doc_freq(t, 1)) > 0:
            continue
        looked += 1
        for p in splits(w):
            if not all(is_stopword(x) for x in p.split()) and _holds(store, Term(p)):
                extra.setdefault(t, []).append(p)
                break
    return {t: Term(t.text, t.prefix, t.alternatives + tuple(dict.fromkeys(alts))) for t, alts in extra.items()}

