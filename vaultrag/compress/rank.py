"""Stage 3, rank: how well each line answers the request.

Two signals. BM25 over lines against the tool input and the user's words, tokenised like the index
(vaultrag.textutil), orders the lines that compete for the budget. `intent_matches` picks the
lines a search or listing output must keep: those carrying the distinctive words of the stated
intent (the latest prompt, the Bash `description`) and the tool input (pattern, glob, path),
matched on word pieces so `ch21-web-server/` answers "chapter 21 web server" and
`processor/conversation/` answers "conversation processors".
"""
from __future__ import annotations

import math
import re
from bisect import bisect_right

from vaultrag.textutil import query_terms

from .clean import offsets
from .rules import CODE_RE, DOCS_TESTS_RE, GENERATED_RE, PATH_RE

# BM25 (Robertson/Sparck Jones) over lines; b=0.75 because line lengths vary by 100x.
BM25_K1 = 1.2
BM25_B = 0.75
PROMPT_WEIGHT = 1.0  # the user's own words say what matters
INPUT_WEIGHT = 0.5  # the tool input (command, pattern, path) partly repeats in every line
MAX_QUERY_TERMS = 40  # a pasted stack trace as a prompt must not turn into 500 scans
_TOKEN_CHARS = re.compile(r"[^\W]", re.UNICODE)

def weighted_terms(query: str, prompt: str = "") -> dict[str, float]:
    """Query terms with weights; numbers count only from the prompt ("chapter 12"), since in a
    command they are mostly flags and counts (`-n 2`)."""
    terms: dict[str, float] = {}
    for text, weight, digits in ((query, INPUT_WEIGHT, False), (prompt, PROMPT_WEIGHT, True)):
        for term in query_terms(text or "")[:MAX_QUERY_TERMS]:
            if len(term) > 1 and (digits or not term.isdigit()):
                terms[term] = max(terms.get(term, 0.0), weight)
    return terms


def bm25(norm_lines: list[str], terms: dict[str, float]) -> list[float]:
    """BM25 of every line against weighted query terms, tokenised as vaultrag.textutil does.

    Term frequencies come from a whole-text substring scan with word-boundary checks (C speed);
    line length is counted in characters, proportional to tokens for ranking purposes.
    """
    n = len(norm_lines)
    scores = [0.0] * n
    if not terms or not n:
        return scores
    joined = "\n".join(norm_lines)
    starts = offsets(norm_lines)
    avg_len = max(len(joined) / n, 1.0)
    for term, weight in terms.items():
        needle = term.replace(" ", "")  # CJK bigrams are stored as "中 国"
        cjk = needle != term
        tf: dict[int, int] = {}
        i = joined.find(needle)
        while i != -1:
            end = i + len(needle)
            if cjk or (
                (i == 0 or not _TOKEN_CHARS.match(joined[i - 1]))
                and (end >= len(joined) or not _TOKEN_CHARS.match(joined[end]))
            ):
                idx = bisect_right(starts, i) - 1
                tf[idx] = tf.get(idx, 0) + 1
            i = joined.find(needle, end)
        if not tf:
            continue
        idf = math.log(1.0 + (n - len(tf) + 0.5) / (len(tf) + 0.5))
        for idx, f in tf.items():
            norm = BM25_K1 * (1 - BM25_B + BM25_B * len(norm_lines[idx]) / avg_len)
            scores[idx] += weight * idf * f * (BM25_K1 + 1) / (f + norm)
    return scores


def path_prior(line: str) -> int:
    """1 for a source-code path, -1 for a lock file or generated output, else 0."""
    m = PATH_RE.search(line)
    if not m:
        return 0
    path = m.group(0)
    if GENERATED_RE.search(path):
        return -1
    if DOCS_TESTS_RE.search(path):
        return 0
    return 1 if CODE_RE.search(path) else 0



# --------------------------------------------------------------------------------- intent matches
# Words that say what kind of thing is wanted, not which one: in a listing every line is a file,
# in a grep every line a match. (Generic words the output itself is full of are also dropped by
# MAX_TERM_SHARE below; this list covers the ones it happens not to contain.)
INTENT_GENERIC = frozenset(
    "file files line lines source sources code list lists listed find finds locate located search "
    "searched look looking see check show shows which what where whether defined define defines "
    "definition definitions function functions method methods class classes module modules "
    "output outputs result results match matches matching usage used uses call calls called e.g "
    "especially particular mention mentions mentioned repo repository project directory directories "
    "folder folders path paths name names implement implemented implementation work works understand "
    "learn read see happen happens happening does happen want wants try trying part parts".split()
)
MIN_TERM_CHARS = 3  # "db", "io" are too ambiguous as word pieces; digits are exempt ("chapter 21")
STEM_KEEP = 4  # a word over this length also matches its forms: its first len-2 chars (at least 4)
MAX_TERM_SHARE = 0.25  # a term on over a quarter of the lines describes the output, not a part of it
MATCH_FRACTION = 0.5  # a line scoring at least half the best line's score answers the intent
ACRONYM_WORD_CHARS = 4  # "the llm package" is no acronym; "command line interface" is
# A path the person names ("under llm/", "src/python/txtai/ann"): a line under it answers the intent
# however many lines are, so it is exempt from MAX_TERM_SHARE and matched as a path, not pieces.
_PATH_MENTION_RE = re.compile(r"(?<![\w/.:-])((?:\./)?[\w.-]+/(?:[\w.-]+/?)*)")
PATH_TERM = "path:"
_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def intent_terms(intent: str, tool_input: str) -> dict[str, float]:
    """Word pieces of the stated intent (weight 1; numbers too) and of the tool input (weight
    0.5; numbers there are flags and counts), stopwords and generic words left out."""
    from vaultrag.textutil import is_stopword

    terms: dict[str, float] = {}
    for text, weight, digits in ((tool_input, INPUT_WEIGHT, False), (intent, PROMPT_WEIGHT, True)):
        for piece in _WORD_RE.findall(text or "")[: MAX_QUERY_TERMS * 3]:
            word = piece.lower()
            if word.isdigit():
                if not digits or len(word.lstrip("0")) < 2:  # "v2", "-n 3": too common to say which
                    continue
                word = str(int(word))
            elif len(word) < MIN_TERM_CHARS or is_stopword(word) or word in INTENT_GENERIC:
                continue
            terms[word] = max(terms.get(word, 0.0), weight)
        for acronym in _acronyms(text or "") if digits else ():  # a person's words, not a command's
            terms.setdefault(acronym, weight)
        for mention in _PATH_MENTION_RE.findall(text or "") if digits else ():
            terms[PATH_TERM + mention.lstrip("./").lower()] = weight
    return dict(sorted(terms.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_QUERY_TERMS])


def _acronyms(text: str) -> list[str]:
    """Initials of three consecutive long words ("approximate nearest neighbour" -> ann, "command
    line interface" -> cli): paths abbreviate what a person writes out."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)][: MAX_QUERY_TERMS * 2]
    return ["".join(w[0] for w in words[i:i + 3]) for i in range(len(words) - 2)
            if all(len(w) >= ACRONYM_WORD_CHARS and w not in _SMALL_WORDS for w in words[i:i + 3])]


_SMALL_WORDS = frozenset("a an and the of to in on for or is are be by with at as it its".split())


def _piece_start(text: str, i: int) -> bool:
    if i == 0:
        return True
    a, b = text[i - 1], text[i]
    return not a.isalnum() or (a.isdigit() != b.isdigit()) or (a.islower() and b.isupper())


def _piece_end(text: str, j: int) -> bool:
    if j >= len(text):
        return True
    a, b = text[j - 1], text[j]
    return not b.isalnum() or (a.isdigit() != b.isdigit()) or (a.islower() and b.isupper())


def intent_matches(lines: list[str], terms: dict[str, float], named: dict[int, str] | None = None
                   ) -> tuple[set[int], list[float]]:
    """(lines that answer the intent, every line's score). A line's score is the sum of weight x
    idf of the distinct terms it carries as word pieces (`ch21` holds `21`; `listings` holds
    `listing`); the lines scoring at least MATCH_FRACTION of the best are the matches. `named`
    maps definition lines to the name they define: a name made of a term's pieces (`invoke`,
    `test_invoke`) scores as if the term were on that line only, however common it is elsewhere."""
    n = len(lines)
    scores = [0.0] * n
    if not terms or not n:
        return set(), scores
    joined = "\n".join(lines)
    lower = joined.lower()
    if len(lower) != len(joined):  # a case mapping changed lengths: judge boundaries on the lower form
        joined = lower
    starts = offsets(lines)
    for term, weight in terms.items():
        if term.startswith(PATH_TERM):
            _path_scores(lower, starts, term[len(PATH_TERM):], weight, scores)
            continue
        short = term.isdigit() or len(term) <= STEM_KEEP
        needle = term if short else term[: max(STEM_KEEP, len(term) - 2)]
        hit: dict[int, int] = {}
        i = lower.find(needle)
        while i != -1:
            j = i + len(needle)
            if _piece_start(joined, i) and (not short or _piece_end(joined, j)
                                            or (lower[j:j + 1] == "s" and _piece_end(joined, j + 1))):
                u = bisect_right(starts, i) - 1
                hit[u] = hit.get(u, 0) + 1
            i = lower.find(needle, i + 1)
        if not hit or len(hit) > MAX_TERM_SHARE * n:
            continue
        idf = math.log(1.0 + (n - len(hit) + 0.5) / (len(hit) + 0.5))
        for u, tf in hit.items():  # saturating: `ch12/listing-12-01` says 12 more than `listing-05-12`
            scores[u] += weight * idf * tf * (BM25_K1 + 1) / (tf + BM25_K1)
    for u, name in (named or {}).items():
        pieces = {p.lower() for p in _WORD_RE.findall(name)}
        weight = max((w for t, w in terms.items() if _same_word(t, pieces)), default=0.0)
        scores[u] += weight * math.log(1.0 + (n - 0.5) / 1.5)
    best = max(scores)
    if best <= 0:
        return set(), scores
    return {u for u in range(n) if scores[u] >= MATCH_FRACTION * best}, scores


def _path_scores(lower: str, starts: list[int], path: str, weight: float, scores: list[float]) -> None:
    """Add weight x idf to the lines holding `path` at a path boundary (`./llm/x.py`, `/repo/llm/`)."""
    if not path:
        return
    n = len(starts)
    hit: set[int] = set()
    i = lower.find(path)
    while i != -1:
        j = i + len(path)
        if (i == 0 or lower[i - 1] in "/\n \t'\"") and (path.endswith("/") or j >= len(lower) or lower[j] in "/:.\n \t"):
            hit.add(bisect_right(starts, i) - 1)
        i = lower.find(path, i + 1)
    if hit:
        idf = math.log(1.0 + (n - len(hit) + 0.5) / (len(hit) + 0.5))
        for u in hit:
            scores[u] += weight * max(idf, 0.1)


def _same_word(term: str, pieces: set[str]) -> bool:
    if term in pieces:
        return True
    if len(term) <= STEM_KEEP or term.isdigit():
        return False
    stem = term[: max(STEM_KEEP, len(term) - 2)]
    return any(p.startswith(stem) for p in pieces)


def defined_names(body: list[str], definitions: set[int]) -> dict[int, str]:
    """The name each definition line defines (`def invoke(` -> invoke)."""
    out = {}
    for u in definitions:
        m = _DEF_NAME_RE.search(body[u])
        if m:
            out[u] = m.group(1)
    return out


_DEF_NAME_RE = re.compile(
    r"\b(?:class|def|fn|func|function|struct|enum|trait|impl|interface|type|module|object|macro_rules!)[ \t]+(\w+)")
