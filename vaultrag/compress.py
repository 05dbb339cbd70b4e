"""Shrink a large tool output for a PostToolUse hook, keeping what an agent needs from it.

`compress_tool_output` takes the hook's `tool_name`, `tool_input` and `tool_response` and returns a
replacement `tool_response` in exactly the tool's Output shape (Claude Code silently ignores any other
shape, see reference/claude-code-hooks.md §2.5), or None when nothing should change. The text
pipeline (`compress_text`) is:

  clean      strip ANSI escapes, resolve carriage-return overwrites, drop control bytes, drop
             pytest-xdist `[gw0] [ 12%]` prefixes, cut very long lines in the middle
  collapse   consecutive lines equal after noise masking (timestamps, durations, addresses, counters)
             become one line plus `[... previous line repeated N times ...]`
  classify   summary lines, error/failure lines (+ up to 3 lines after each), structural headers (commit,
             diff, section banners, directory headers, top-level entries/definitions), warnings
  rank       the rest by BM25 over lines against the tool input and the user's prompt, tokenised like
             the index (vaultrag.textutil); a line whose shape (digits, quotes, brackets masked) was
             already chosen is demoted, so the budget buys variety before repetition
  select     greedily by class, then by shape rank, then score, each class within a share of the
             budget so that no class starves the others; gap markers are paid for as they appear.
             A status output (test run, build) keeps only lines that match the request well; file
             or search content (Read, Grep, Glob, `cat`, `rg`, `git log/diff/blame`) fills the
             budget, and there an "error" word is data, so the error classes are off
  render     kept lines in original order, every gap marked `[... 412 lines omitted ...]` (Read:
             `[... lines 120-531 omitted ...]`, kept lines numbered like `cat -n`)

Read: the hook gets the file's raw lines, and Claude Code numbers whatever content it is given
from `startLine`, so after a gap its numbers would be wrong. Kept lines therefore carry their true
number in `cat -n` form (`   857\tdef invoke(`), gaps say `[... lines 120-531 omitted ...]`, and
`numLines` counts the new content; the model may see two columns of numbers, the inner one true.

Kept text is verbatim apart from cleaning: noise is masked only in the comparison keys, so summary
lines such as `=== 3 failed, 10 passed in 4.21s ===` survive byte for byte. Same input, same bytes out:
nothing depends on time, hashing or set order, and ties break on (shape key, position).

Secrets: every returned text goes through `vaultrag.scrubber.scrub`. A short output is passed through
untouched (None) unless the scrubber finds a secret in it; then a scrubbed copy in the same shape is
returned, since hiding a secret is worth more than leaving the output alone. A long output is
scrubbed after selection (scrubbing 1 MB costs ~70 ms, the kept 6 KB well under 1 ms); lines cut
in the middle are scrubbed before the cut, and a text holding a `-----BEGIN` armour is scrubbed
whole first, so a gap can never leave half a secret unrecognisable.

Standard library only, imported by a fresh hook process per tool call: keep imports cheap.
"""
from __future__ import annotations

import math
import re
from bisect import bisect_right

from vaultrag.textutil import normalize, query_terms

from vaultrag.scrubber import scrub as _scrub  # required: never return unscrubbed text

__all__ = ["compress_tool_output", "compress_text", "BUDGET_CHARS", "THRESHOLD_CHARS"]

# ---------------------------------------------------------------------------------------------
# Tunables
# Hook output strings over 10,000 characters become a 2 KB preview (reference §2.6); 6,000 leaves
# room for JSON escaping and the hookSpecificOutput wrapper, and is ~1,500 tokens.
BUDGET_CHARS = 6000
# Below this there is little to gain and every omission risks losing context: pass through.
THRESHOLD_CHARS = 8000
# A line longer than this is cut in the middle (minified JSON, base64, long SQL). Raised to
# budget/lines when an output has few lines, so one huge line still uses the budget.
MAX_LINE_CHARS = 600
LONG_LINE_TAIL = 120  # of a cut line, keep the end too: error text often trails a long prefix
# The first and last non-blank lines say what ran and how it ended (summary, root cause).
HEAD_LINES = 4
TAIL_LINES = 6
# Lines kept after each error line: message, location, expected / received (pytest E-lines, jest,
# rustc "-->" and notes, terraform boxes).
ERROR_CONTEXT_LINES = 3
# BM25 (Robertson/Sparck Jones) over lines; b=0.75 because line lengths vary by 100x.
BM25_K1 = 1.2
BM25_B = 0.75
PROMPT_WEIGHT = 1.0  # the user's own words say what matters
INPUT_WEIGHT = 0.5  # the tool input (command, pattern, path) partly repeats in every line
DEFINITION_BOOST = 2.0  # in file/search content, a definition matching the query is the answer
SHAPE_DECAY = 0.5  # relevance divisor per earlier pick of the same line shape: variety first
STATUS_RELEVANCE_FLOOR = 0.3  # of the best line's score; below it a status line is filler
NOISE_FACTOR = 0.5  # PASSED / ok lines are the bulk of a green run, rarely the point
MAX_QUERY_TERMS = 40  # a pasted stack trace as a prompt must not turn into 500 scans
MIN_BUDGET = 200  # below this not even the summary and a marker fit
# Share of the budget each class may take before every other class had its turn (first pass);
# the second pass fills what is left in the same priority order without shares.
CLASS_SHARES = (0.30, 0.15, 0.50, 0.20, 0.15, 0.35, 0.40, 1.0)
# In file/search content the outline (definitions, files, commits) is what a reader scans first.
CONTENT_SHARES = (0.30, 0.15, 0.50, 0.20, 0.15, 0.50, 0.30, 1.0)
(C_SUMMARY, C_EDGE, C_ERROR, C_CONTEXT, C_WARN, C_HEADER, C_RELEVANT, C_REST) = range(8)
MARKER_COST = 30  # approximate length of a gap marker line, paid when a new gap opens

# Tools whose output is file or search content rather than a process reporting its status: there
# an "error" word is data, not an event, so error/warning classes are off and definitions count.
_CONTENT_PROGRAMS = frozenset(
    "grep egrep fgrep rg ag ack find fd ls tree cat bat nl head tail less more sed awk jq yq "
    "du wc sort uniq cut column xxd hexdump od strings".split()
)
_GIT_CONTENT = frozenset("log show diff blame grep ls-files ls-tree shortlog reflog".split())

# ---------------------------------------------------------------------------------------------
# Cleaning
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_CTRL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_XDIST_RE = re.compile(r"^\[gw\d+\] (?:\[ *\d+%\] )?", re.M)

# Run-to-run noise, masked in comparison keys only (never in kept text). Patterns avoid \s so
# that they never cross a line break when applied to a whole text.
# One alternation (longest forms first) so a line is masked in one pass: timestamps, clock times,
# UUIDs, hex addresses and hashes, durations, percentages, progress bars.
_NOISE_SUBS = [
    (re.compile(
        r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"
        r"|\b\d{1,2}:\d\d:\d\d(?:[.,]\d+)?\b"
        r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        r"|\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{12,64}\b"
        r"|\b\d+(?:\.\d+)?[ \t]?(?:ms|µs|us|ns|s|sec|secs|seconds|m|min|h)\b"
        r"|\d+(?:\.\d+)?[ \t]?%"
        r"|[#=\-█▉▊▋▌▍▎▏━─░▒▓>]{6,}"
    ), "\x00"),
    (re.compile(r"[ \t]+"), " "),
]
# A line's shape: what is left once the parts that vary between siblings are masked.
_SHAPE_SUBS = [
    (re.compile(r"\[[^\]\n]*\]"), "[]"),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "''"),
]
_DIGITS = str.maketrans("0123456789", "##########")
_NOISE_DIGITS = str.maketrans("", "", "0123456789abcdef.:")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")


class _Rule:
    """Lines matching a line-start regex, or containing a literal (optionally confirmed by a
    regex on that line). Python's regex engine is fast for one anchored pattern or one literal
    but slow for a long unanchored alternation (236 ms per MB), hence the split."""

    def __init__(self, anchored: str, literals=()):
        self.anchored = re.compile(r"^(?:" + anchored + ")", re.M) if anchored else None
        self.literals = [(lit, re.compile(conf) if conf else None) for lit, conf in literals]

    def lines(self, joined: str, starts: list[int], texts: list[str]) -> set[int]:
        hits = set()
        if self.anchored is not None:
            hits.update(bisect_right(starts, m.start()) - 1 for m in self.anchored.finditer(joined))
        for lit, confirm in self.literals:
            i = joined.find(lit)
            while i != -1:
                u = bisect_right(starts, i) - 1
                if u not in hits and (confirm is None or confirm.search(texts[u])):
                    hits.add(u)
                nxt = starts[u + 1] if u + 1 < len(starts) else len(joined)
                i = joined.find(lit, max(nxt, i + 1))
    
        return hits


# ---------------------------------------------------------------------------------------------
# Line classes (patterns use [ \t], not \s, so a whole-text scan never crosses a line).
_SUMMARY = _Rule(
    r"=+ .*\b(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|no tests ran)\b.*=+$"
    r"|(?:OK|FAILED) \((?:failures|errors|skipped)="
    r"|[ \t]*(?:test result:"
    r"|(?:Test Files|Tests|Test Suites|Snapshots)(?::|[ \t]{2,})[ \t]*\d"
    r"|Found \d+ (?:errors?|warnings?|problems?|issues?|vulnerabilit)"
    r"|\[\*\] \d+ fixable"
    r"|\u2716? ?\d+ problems? \("
    r"|Successfully (?:installed|built|tagged|uninstalled|created)"
    r"|(?:added|removed|changed|updated|audited) \d+ packages?"
    r"|found \d+ vulnerabilit"
    r"|\d+ files? changed"
    r"|\d+ director(?:y|ies), \d+ files?"
    r"|(?:Finished|Compiled successfully|Build succeeded|BUILD (?:SUCCESSFUL|FAILED))\b"
    r"|error: could not compile"
    r"|Ran \d+ tests? in "
    r"|\d+ (?:passing|failing|pending)\b"
    r"|\d+ (?:tests?|examples?), \d+ failures?)",
    [
        ("Interrupted: ", r"Interrupted: \d+ errors? during"),
        ("istening on", None),
        ("erver started", None),
        ("hutting down", None),
        ("erver exit", None),
        ("xited with code", None),
        ("xit code", r"[Ee]xit code[: =]+\d"),
        ("xit status", r"[Ee]xit status[: =]+\d"),
    ],
)
_ERROR = _Rule(
    r"E {2,}\S"
    r"|Traceback \(most recent call last\)"
    r"|[ \t]*(?:[\u2502\u2503|][ \t]*)?(?:FAILED|FAIL|FAILURE|ERROR|ERR!|FATAL|PANIC|CRITICAL|Error|Exception)\b"
    r"|[ \t]*\u25cf "  # jest: "● Suite › test"
    r"|[ \t]*\d+:\d+[ \t]+error[ \t]"  # eslint stylish: "  14:9  error  message  rule"
    r"|[ \t]*(?:[\w./-]+ )?(?:error|fatal|panic)(?:\[\w+\])?:"
    r"|[ \t]*npm (?:ERR!|error)"
    r"|[ \t]*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failure|Fault|Interrupt|Exit)\b(?::|$)"
    r"|[ \t]*[\u00d7\u2717\u2718\u2716\u274c] ",
    [(" FAILED", None), (" FAIL", r" FAIL(?:[ \t:]|$)"), (" ERROR", r" ERROR(?:ED)?(?:[ \t:]|$)"),
     (" FAILURE", None), ("panicked at", None),
     ("Error: ", r"[A-Z]\w*Error: \S"), ("Exception: ", r"[A-Z]\w*Exception: \S"),
     ("Unhandled ", r"Unhandled (?:Rejection|Exception|Error|promise)"), ("Serialized Error", None),
     ("HTTP/", r"HTTP/\d(?:\.\d)? [45]\d\d")]
    + [(f"{m} /", rf"\b{m} /\S* [45]\d\d\b") for m in "GET POST PUT PATCH DELETE HEAD OPTIONS".split()]
    + [('"error', r"\"errors?\"[ \t]*:"), ('"message"', r"\"message\"[ \t]*:"),
       ("Segmentation fault", None), ("core dumped", None), ("Out of memory", None),
       ("Killed", r"\bKilled\b"), ("Aborted", r"\bAborted\b"),
       ("No such file or directory", None), ("Permission denied", None), ("command not found", None),
       ("annot find", r"[Cc]annot find"), ("ould not ", r"[Cc]ould not "), ("nable to ", r"[Uu]nable to "),
       ("ailed to ", r"[Ff]ailed to "), ("imed out", r"[Tt]imed out"), ("onnection refused", None),
       ("incompatible", r"\bincompatible\b"), ("onflict", r"\b[Cc]onflict(?:s|ing)? (?:with|between|for|in|detected)\b|\b(?:dependency|version|merge) conflict"),
       ("CONFLICT", r"\bCONFLICT\b"), ("EBADENGINE", None),
       ("ERESOLVE", None), ("ResolutionImpossible", None)]
    + [(status, None) for status in ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "OOMKilled",
                                     "CreateContainerConfigError")],
)
_WARN = _Rule(
    r"[ \t]*(?:npm )?(?:warning|warn|WARNING|WARN)\b",
    [("Warning", r"[A-Z]\w*Warning\b"), ("eprecat", r"\b[Dd]eprecat(?:ed|ion)\b"), ("XFAIL", r"\bXFAIL\b"),
     ("XPASS", r"\bXPASS\b")],
)
_NOISE = _Rule(r"[ \t]*(?:PASSED|ok|\u2713|\u2714|\u221a)\b", [("PASSED", r"\bPASSED\b"), ("... ok", r"\.\.\. ok$")])
# Structural headers, one scan with a named group per kind; kinds in _HEADER_ENDS keep their first
# and last line at high priority (they bound the output: first and last commit, file, section).
_HEADER_RE = re.compile(
    r"^(?:(?P<commit>commit [0-9a-f]{7,40}\b)"
    r"|(?P<diff>diff (?:--git|-r|-u|-N) )"
    r"|(?P<banner>(?:={3,}|-{3,}(?! (?:a/|b/|/dev/null))|_{3,}|\*{3,}|#{3,}|>{3,})[ \t]*\S)"
    r"|(?P<mdhead>#{1,6} \S)"
    r"|(?P<dirhead>\.{0,2}/?[\w.@+-]+(?:/[\w.@+ -]+)*:$)"
    r"|(?P<tree0>(?:├──|└──|\|--|`--) \S)"
    r"|(?P<diag>[A-Z]{1,4}\d{2,5}\b|[^ \t\n:]+\.\w+:\d+(?::\d+)?: )"
    r"|(?P<hunk>@@ [^\n]* @@))",
    re.M,
)
_HEADER_ENDS = frozenset({"commit", "diff", "banner", "mdhead", "dirhead", "tree0", "def0"})
# Kinds whose bigger sections come first when not all fit (the files with the most changes, the
# largest directories); other kinds (diagnostics, banners) go in output order.
_BY_SECTION = frozenset({"commit", "diff", "mdhead", "dirhead", "tree0", "def0"})
# A path's prior: code first, then docs/tests/config, then lock files and generated output.
_PATH_RE = re.compile(r"[\w.@+-]*(?:/[\w.@+-]+)+|[\w@+-]+\.[A-Za-z]\w{0,4}\b")
_GENERATED_RE = re.compile(
    r"\.lock\b|-lock\.|lock\.json|\.min\.|\.map$|\.snap$|\.svg$|_pb2|\.pb\.|(?:^|/)(?:vendor|node_modules|dist)/"
)
_DOCS_TESTS_RE = re.compile(
    r"(?:^|/)(?:docs?|tests?|spec|__tests__|examples?|\.github)/|(?:^|/)test_|_test\.|\.test\.|\.spec\.|\.(?:md|rst|txt|adoc)$"
)
_CODE_RE = re.compile(
    r"\.(?:py|pyi|rs|ts|tsx|js|jsx|mjs|go|java|kt|c|cc|cpp|h|hpp|cs|rb|php|swift|scala|sh|sql|lua|zig|ex|exs|hs|ml|vue|svelte)$"
)
# Prefixes put in front of file lines by cat -n, grep -n and git blame; stripped to see the code.
_CONTENT_PREFIX_RE = re.compile(
    r"^(?:[ \t]*\d+(?:\t|→| \| )"
    r"|\^?[0-9a-f]{7,40} (?:[^\n(]*)?\([^\n)]*? \d+\) "
    r"|[^\t\n: ]+?:\d+[:-])",
    re.M,
)
_DEF_RE = re.compile(
    r"^([ \t]*)(?:export |pub(?:\([\w:]+\))? |public |private |protected |static |async |default )*"
    r"(?:class|def|fn|func|function|struct|enum|trait|impl|interface|type|module|object|macro_rules!)"
    r"[ \t]+[\w<(]",
    re.M,
)
# `ls -l` lines: the size column lets the largest files stand out (an outlier is news).
_LS_LONG_RE = re.compile(r"^-[rwxsStT-]{9}[.@+]?[ \t]+\d+[ \t]+\S+[ \t]+\S+[ \t]+(\d+) ", re.M)
LS_LARGEST = 5
# Set to a list to receive the last ranking, for explaining a selection while tuning:
# (unit index, class, header kind, shape rank, BM25 score, text) in priority order.
_EXPLAIN: list | None = None
_TOKEN_CHARS = re.compile(r"[^\W]", re.UNICODE)


def _scrub_text(text: str) -> tuple[str, bool]:
    """Scrubbed text and whether anything was found. A failing scrubber raises: the caller then
    returns nothing (fails closed), so unscrubbed text never goes out."""
    if not text:
        return text, False
    clean, findings = _scrub(text)
    return clean, bool(findings) or clean != text


def _clean(text: str) -> str:
    """ANSI, carriage returns, control bytes, xdist prefixes and trailing blanks removed."""
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:  # a progress line overwritten in place: the terminal shows the last state
            out = []
            for line in text.split("\n"):
                if "\r" in line:
                    parts = [p for p in line.split("\r") if p.strip()]
                    line = parts[-1] if parts else ""
                out.append(line)
            text = "\n".join(out)
    text = _CTRL_RE.sub("", text)
    if "[gw" in text:
        text = _XDIST_RE.sub("", text)
    # trailing blank lines only: leading ones still count for line numbers
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")


def _cut_line(line: str, limit: int) -> str:
    if len(line) <= limit:
        return line
    tail = min(LONG_LINE_TAIL, limit // 4)
    head = max(limit - tail - 40, 0)
    return f"{line[:head]} [... {len(line) - head - tail} chars omitted ...] {line[len(line) - tail:]}"


def _mask(text: str, subs) -> str:
    for pattern, repl in subs:
        text = pattern.sub(repl, text)
    return text


def _offsets(lines: list[str]) -> list[int]:
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    return starts


def _weighted_terms(query: str, prompt: str = "") -> dict[str, float]:
    """Query terms with weights; numbers count only from the prompt ("chapter 12"), since in a
    command they are mostly flags and counts (`-n 2`)."""
    terms: dict[str, float] = {}
    for text, weight, digits in ((query, INPUT_WEIGHT, False), (prompt, PROMPT_WEIGHT, True)):
        for term in query_terms(text or "")[:MAX_QUERY_TERMS]:
            if len(term) > 1 and (digits or not term.isdigit()):
                terms[term] = max(terms.get(term, 0.0), weight)
    return terms


def _bm25(norm_lines: list[str], terms: dict[str, float]) -> list[float]:
    """BM25 of every line against weighted query terms, tokenised as vaultrag.textutil does.

    Term frequencies come from a whole-text substring scan with word-boundary checks (C speed);
    line length is counted in characters, proportional to tokens for ranking purposes.
    """
    n = len(norm_lines)
    scores = [0.0] * n
    if not terms or not n:
        return scores
    joined = "\n".join(norm_lines)
    starts = _offsets(norm_lines)
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


def _path_prior(line: str) -> int:
    """1 for a source-code path, -1 for a lock file or generated output, else 0."""
    m = _PATH_RE.search(line)
    if not m:
        return 0
    path = m.group(0)
    if _GENERATED_RE.search(path):
        return -1
    if _DOCS_TESTS_RE.search(path):
        return 0
    return 1 if _CODE_RE.search(path) else 0


def _noise_equal(a: str, b: str, cache: dict) -> bool:
    """Whether two lines differ only in run-to-run noise (times, durations, addresses...).
    `cache` keeps the masked form of recent lines: each line is masked at most once."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 12 or a[:1] != b[:1]:
        return False
    if a.translate(_NOISE_DIGITS) != b.translate(_NOISE_DIGITS):  # cheap necessary condition
        return False
    # Where the lines first differ: a number glued to a name (test_case_12, module7) is identity,
    # not noise, and most sibling lines differ exactly there; skip the masking for them.
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # common prefix by bisection on C-level slice compares
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    while lo > 0 and a[lo - 1] in _HEX_CHARS:
        lo -= 1
    if lo > 0 and (a[lo - 1] == "_" or a[lo - 1].isalpha()) and a[max(lo - 2, 0):lo] not in ("0x", "0X"):
        return False
    ka = cache.get(a)
    if ka is None:
        ka = _mask(a, _NOISE_SUBS)
    kb = cache.get(b)
    if kb is None:
        kb = _mask(b, _NOISE_SUBS)
    cache.clear()
    cache[a] = ka
    cache[b] = kb
    return ka == kb


def _after(u: int, n: int, blank: list[bool]) -> list[int]:
    """Up to ERROR_CONTEXT_LINES non-blank lines after line u, across at most one blank line each
    (jest and rustc put a blank line between a failure's header and its details)."""
    out, v = [], u + 1
    while v < n and len(out) < ERROR_CONTEXT_LINES:
        if blank[v]:
            if v + 1 >= n or blank[v + 1]:
                break
        else:
            out.append(v)
        v += 1
    return out


def compress_text(
    text: str,
    *,
    query: str = "",
    budget_chars: int = BUDGET_CHARS,
    prompt: str = "",
    content: bool = False,
    first_line: int | None = None,
) -> str:
    """`text` cut to at most `budget_chars` characters, keeping its important lines in order.

    `query` is what the tool was asked (command, pattern, path) and `prompt` the user's request;
    both steer the relevance ranking. `content=True` says the text is file or search content (a
    read, a grep, a listing), not a process reporting its status. `first_line` (Read) numbers the
    kept lines with their real line numbers, `cat -n` style, and marks gaps by line range.
    Text that fits the budget comes back cleaned (ANSI, carriage returns) but otherwise whole.
    """
    if not isinstance(text, str):
        return ""
    budget = max(int(budget_chars), MIN_BUDGET)
    cleaned = _clean(text)
    if "-----BEGIN" in cleaned:  # a key block may be cut by a gap: scrub it while whole
        cleaned = _scrub_text(cleaned)[0]
    if len(cleaned) <= budget:
        return _scrub_text(cleaned)[0]
    raw = cleaned.split("\n")
    n_lines = len(raw)
    limit = max(MAX_LINE_CHARS, budget // max(1, min(n_lines, 40)) - 10)
    limit = min(limit, budget - 2 * MARKER_COST)
    if any(len(line) > limit for line in raw):  # scrub before cutting, or half a key survives
        raw = [_cut_line(_scrub_text(line)[0], limit) if len(line) > limit else line for line in raw]
    numbered = first_line is not None
    if numbered:
        width = max(6, len(str(first_line + n_lines)))
        raw = [f"{first_line + i:>{width}}\t{line}" for i, line in enumerate(raw)]

    # Units: a line, or a run of consecutive lines equal up to noise (not for numbered reads).
    texts: list[str] = []
    first: list[int] = []  # index of the unit's first original line
    count: list[int] = []
    same: list[bool] = []  # the run's lines are byte-identical (else only "similar")
    masked: dict[str, str] = {}
    for i, line in enumerate(raw):
        if texts and not numbered and line.strip() and _noise_equal(line, texts[-1], masked):
            count[-1] += 1
            same[-1] = same[-1] and line == texts[-1]
            continue
        texts.append(line)
        first.append(i)
        count.append(1)
        same.append(True)
    n = len(texts)

    def unit_text(u: int) -> str:
        if count[u] == 1:
            return texts[u]
        if same[u]:
            return f"{texts[u]}\n[... previous line repeated {count[u] - 1} times ...]"
        return f"{texts[u]}\n[... {count[u] - 1} similar lines omitted ...]"

    cost = [len(unit_text(u)) + 1 for u in range(n)]
    blank = [not t.strip() for t in texts]
    joined = "\n".join(texts)
    starts = _offsets(texts)
    # Content lines are judged without their cat -n / grep -n / blame prefixes.
    if numbered or content:
        body_joined = _CONTENT_PREFIX_RE.sub("", joined)
        body = body_joined.split("\n")
        if len(body) != n:
            body = [_CONTENT_PREFIX_RE.sub("", t) for t in texts]
            body_joined = "\n".join(body)
        body_starts = _offsets(body)
    else:
        body, body_joined, body_starts = texts, joined, starts

    # Classify: the lowest class number wins.
    cls = [C_REST] * n
    kind = [""] * n

    def promote(hits, c: int, k: str = "") -> None:
        for u in hits:
            if c < cls[u]:
                cls[u] = c
                kind[u] = k

    later: set[int] = set()  # context lines 2.. after an error
    headers: dict[str, set[int]] = {}
    for m in _HEADER_RE.finditer(body_joined):
        if content and m.lastgroup == "diag":
            continue  # grep -n output is all file:line lines
        headers.setdefault(m.lastgroup, set()).add(bisect_right(body_starts, m.start()) - 1)
    definitions: set[int] = set()
    if content or numbered:
        top: set[int] = set()
        for m in _DEF_RE.finditer(body_joined):
            u = bisect_right(body_starts, m.start()) - 1
            definitions.add(u)
            if not m.group(1):
                top.add(u)
        headers["def0"] = top
    for name, hits in headers.items():
        # A "header" on over a third of the lines is the texture of the output, not its outline.
        if hits and len(hits) <= max(3, n // 3):
            # file:line: diagnostics and lint codes are the findings of a status output
            promote(hits, C_ERROR if name == "diag" else C_HEADER, name)
    if not content:
        for c, rule in ((C_ERROR, _ERROR), (C_WARN, _WARN)):
            hits = rule.lines(joined, starts, texts)
            if len(hits) > max(8, n // 3):  # not discriminative here: let relevance decide
                continue
            promote(hits, c)
            if c == C_ERROR:  # the lines after an error carry its message, location, expected/got
                after = [_after(u, n, blank) for u in hits]
                right_after = {vs[0] for vs in after if vs}
                further = {v for vs in after for v in vs[1:]} - right_after
                promote(right_after | further, C_CONTEXT)
                later.update(further)  # ... but the line right after each error comes first
    sizes = [(int(m.group(1)), bisect_right(starts, m.start()) - 1) for m in _LS_LONG_RE.finditer(joined)]
    if len(sizes) >= 2 * LS_LARGEST:
        promote({u for _, u in sorted(sizes, key=lambda p: (-p[0], p[1]))[:LS_LARGEST]}, C_CONTEXT)
    promote(_SUMMARY.lines(joined, starts, texts), C_SUMMARY)
    nonblank = [u for u in range(n) if not blank[u]]
    promote(set(nonblank[:HEAD_LINES] + nonblank[-TAIL_LINES:]), C_EDGE)
    # First and last header of each outline kind, and the size of each header's section.
    section = [0] * n
    by_kind: dict[str, list[int]] = {}
    for u in range(n):
        if cls[u] == C_HEADER:
            by_kind.setdefault(kind[u], []).append(u)
    for k, units in by_kind.items():
        for a, b in zip(units, units[1:] + [n]):
            section[a] = first[b] - first[a] if b < n else n_lines - first[a]
        if k in _HEADER_ENDS:
            promote({units[0], units[-1]}, C_CONTEXT)

    # Relevance.
    terms = _weighted_terms(query, prompt)
    scores = [0.0] * n
    if terms:
        norm = normalize(body_joined).split("\n")
        if len(norm) != n:
            norm = [normalize(b) for b in body]
        scores = _bm25(norm, terms)
        for u in definitions:
            scores[u] *= DEFINITION_BOOST
        for u in _NOISE.lines(joined, starts, texts):
            scores[u] *= NOISE_FACTOR
    if content or numbered:  # a definition of something asked about is an outline entry
        promote({u for u in definitions if scores[u] > 0 and len(definitions) <= max(3, n // 3)}, C_HEADER, "def")
    prior = [0] * n
    for u in range(n):
        if cls[u] == C_HEADER or (content and scores[u] > 0):
            prior[u] = _path_prior(body[u])
            if prior[u] < 0:
                scores[u] *= NOISE_FACTOR
        if cls[u] == C_REST and scores[u] > 0:
            cls[u] = C_RELEVANT
    # A status output (test run, build, install) is read for its outcome: lines that match the
    # request only faintly, or not at all, are left out rather than used as filler.
    floor = STATUS_RELEVANCE_FLOOR * max(scores) if not content and scores else 0.0
    candidates = [u for u in range(n) if not blank[u] and (content or cls[u] < C_RELEVANT or scores[u] >= floor > 0)]

    # Shape ranks: how many units of the same class and shape come before it in priority order.
    shapes = _mask(joined, _SHAPE_SUBS).translate(_DIGITS).split("\n")
    if len(shapes) != n:
        shapes = [_mask(t, _SHAPE_SUBS).translate(_DIGITS) for t in texts]
    if numbered:  # the line number is not part of the shape
        shapes = [s.lstrip("# \t") for s in shapes]
    by_score = sorted(
        candidates,
        key=lambda u: (cls[u], -scores[u] if cls[u] >= C_RELEVANT else -section[u], shapes[u], u),
    )
    seen: dict[tuple[int, str], int] = {}
    rank = [0] * n
    for u in by_score:
        if kind[u] in ("def", "def0"):
            continue  # same-looking definitions (overloads, methods of sibling classes) all count
        k = (cls[u], shapes[u])
        rank[u] = seen.get(k, 0)
        seen[k] = rank[u] + 1

    def priority(u: int):
        if cls[u] >= C_RELEVANT:
            return (cls[u], -scores[u] / (1.0 + SHAPE_DECAY * rank[u]), shapes[u], u)
        size = section[u] if kind[u] in _BY_SECTION else 0
        return (cls[u], cls[u] == C_CONTEXT and u in later, rank[u], -prior[u], scores[u] <= 0, -size, -scores[u], u)

    order = sorted(by_score, key=priority)
    if _EXPLAIN is not None:
        _EXPLAIN[:] = [(u, cls[u], kind[u], rank[u], round(scores[u], 3), texts[u][:100]) for u in order]

    # Select within the budget; a unit opening a new gap pays for its marker.
    chosen = [False] * n
    used = 0
    gaps = 1  # nothing chosen: everything is one gap

    def try_add(u: int) -> bool:
        nonlocal used, gaps
        # u sits in a run of unchosen units: taking it removes, shrinks or splits that run.
        at_start = u == 0 or chosen[u - 1]
        at_end = u == n - 1 or chosen[u + 1]
        delta = -1 if at_start and at_end else (0 if at_start or at_end else 1)
        if used + cost[u] + (gaps + delta) * MARKER_COST > budget:
            return False
        chosen[u] = True
        used += cost[u]
        gaps += delta
        return True

    class_used = [0] * len(CLASS_SHARES)
    deferred = []
    shares = CONTENT_SHARES if content else CLASS_SHARES
    for u in order:
        c = cls[u]
        if class_used[c] + cost[u] > shares[c] * budget:
            deferred.append(u)
        elif try_add(u):
            class_used[c] += cost[u]
    for u in deferred:
        try_add(u)

    def render() -> str:
        return _render(texts, first, count, chosen, unit_text, first_line, n_lines)

    out = render()
    # Marker lengths vary around MARKER_COST: drop the least important units until it fits.
    for u in reversed(order):
        if len(out) <= budget:
            break
        if chosen[u]:
            chosen[u] = False
            out = render()
    return _scrub_text(out)[0][:budget]


def _render(texts, first, count, chosen, unit_text, first_line, n_lines) -> str:
    out: list[str] = []
    n = len(texts)
    u = 0
    while u < n:
        if chosen[u]:
            out.append(unit_text(u))
            u += 1
            continue
        v = u
        while v < n and not chosen[v]:
            v += 1
        omitted = sum(count[u:v])
        if all(not texts[w].strip() for w in range(u, v)):
            if 0 < u and v < n:
                out.append("")  # blank lines between kept lines are not worth a marker
        elif v - u == 1 and count[u] == 1 and len(texts[u]) <= MARKER_COST:
            out.append(texts[u])  # cheaper than its marker
        elif first_line is not None:
            lo = first_line + first[u]
            hi = first_line + (first[v] if v < n else n_lines) - 1
            out.append(f"[... lines {lo}-{hi} omitted ...]" if hi > lo else f"[... line {lo} omitted ...]")
        else:
            out.append(f"[... {omitted} line{'s' if omitted != 1 else ''} omitted ...]")
        u = v
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Tool shapes
_SEGMENT_RE = re.compile(r"&&|\|\||;|\n")
_WRAPPERS = frozenset("sudo time command nice nohup env exec xargs timeout stdbuf".split())


def _is_content_command(command: str) -> bool:
    """Whether a Bash command's output is file/search content (grep, cat, git log...), judged by
    the first program of the last pipeline: `. venv/bin/activate && pytest` is a test run."""
    segments = [s.strip() for s in _SEGMENT_RE.split(command) if s.strip()]
    if not segments:
        return False
    words = segments[-1].split("|")[0].replace("(", " ").split()
    i = 0
    while i < len(words) and ("=" in words[i] or words[i] in _WRAPPERS or words[i].startswith("-")):
        i += 1
    if i >= len(words):
        return False
    program = words[i].rsplit("/", 1)[-1]
    if program == "git":
        rest = [w for w in words[i + 1 :] if not w.startswith("-")]
        return bool(rest) and rest[0] in _GIT_CONTENT
    return program in _CONTENT_PROGRAMS


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _shares(lengths: list[int], budget: int) -> list[int]:
    """Split a budget over several text fields: small fields whole, the rest by size."""
    shares = [0] * len(lengths)
    left = budget
    big = []
    for i, size in sorted(enumerate(lengths), key=lambda p: (p[1], p[0])):
        if size <= left // max(1, len(lengths) - i) // 2 or size <= budget // 8:
            shares[i] = size
            left -= size
        else:
            big.append(i)
    total = sum(lengths[i] for i in big) or 1
    for i in big:
        shares[i] = max(int(left * lengths[i] / total), min(lengths[i], budget // 4))
    excess = sum(shares) - budget
    if excess > 0 and big:  # the floors overshot: the largest field gives it back
        largest = max(big, key=lambda i: (shares[i], -i))
        shares[largest] = max(shares[largest] - excess, MIN_BUDGET)
    return shares


def _compress_list(items: list, budget: int, **kw) -> list:
    """A list of short strings (file names) compressed like lines; markers become entries."""
    text = "\n".join(str(x).replace("\n", " ") for x in items)
    kw = {k: v for k, v in kw.items() if k not in ("content", "first_line")}
    return compress_text(text, budget_chars=budget, content=True, **kw).split("\n")


def _scrub_value(value):
    """(scrubbed value, found) for a str or a list of str; other values pass unchanged."""
    if isinstance(value, str):
        return _scrub_text(value)
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        found = False
        out = []
        for x in value:
            clean, hit = _scrub_text(x)
            out.append(clean)
            found = found or hit
        return out, found
    return value, False


def compress_tool_output(
    tool_name: str,
    tool_input: dict,
    tool_response: object,
    *,
    prompt: str | None = None,
    budget_chars: int = BUDGET_CHARS,
    threshold_chars: int = THRESHOLD_CHARS,
) -> dict | None:
    """A replacement `tool_response` for a PostToolUse hook's `updatedToolOutput`, or None.

    The result has the original's keys and types with only text fields shortened (Bash `stdout` /
    `stderr`, Read `file.content`, Grep `content` / `filenames`, Glob `filenames`, WebFetch
    `result`). None when the output is at most `threshold_chars` characters and holds no secret,
    when the tool or shape is unknown, or on anything unexpected: the caller fails open.
    """
    try:
        return _compress(tool_name, tool_input, tool_response, prompt or "", budget_chars, threshold_chars)
    except Exception:  # never break a tool call over a compression problem
        return None


def _compress(tool_name, tool_input, response, prompt, budget, threshold):
    if not isinstance(response, dict) or not isinstance(tool_name, str):
        return None
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    budget = max(int(budget), 200)
    kw = {"prompt": prompt}
    if tool_name == "Bash":
        if response.get("isImage") or not isinstance(response.get("stdout"), str):
            return None
        fields = [k for k in ("stdout", "stderr") if isinstance(response.get(k), str)]
        command = _text(tool_input.get("command"))
        kw.update(query=f"{command} {_text(tool_input.get('description'))}",
                  content=_is_content_command(command))
        return _rewrite(response, fields, budget, threshold, kw)
    if tool_name == "Read":
        file = response.get("file")
        if response.get("type") != "text" or not isinstance(file, dict):
            return None
        if not isinstance(file.get("content"), str):
            return None
        start = file.get("startLine")
        kw.update(query=_text(tool_input.get("file_path")), content=True,
                  first_line=start if isinstance(start, int) and not isinstance(start, bool) else 1)
        new_file = _rewrite(file, ["content"], budget, threshold, kw)
        if new_file is None:
            return None
        if isinstance(file.get("numLines"), int) and new_file["content"] != file["content"]:
            new_file["numLines"] = new_file["content"].count("\n") + 1
        return {**response, "file": new_file}
    if tool_name in ("Grep", "Glob"):
        fields = [k for k in ("content", "filenames") if k in response]
        if not fields:
            return None
        query = " ".join(_text(tool_input.get(k)) for k in ("pattern", "path", "glob", "type"))
        kw.update(query=query, content=True)
        out = _rewrite(response, fields, budget, threshold, kw)
        if out is not None and tool_name == "Glob" and isinstance(response.get("truncated"), bool):
            if len(out.get("filenames") or []) != len(response.get("filenames") or []):
                out["truncated"] = True
        return out
    if tool_name == "WebFetch":
        if not isinstance(response.get("result"), str):
            return None
        kw.update(query=f"{_text(tool_input.get('url'))} {_text(tool_input.get('prompt'))}", content=True)
        return _rewrite(response, ["result"], budget, threshold, kw)
    return None


def _size(value) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(len(x) + 1 for x in value if isinstance(x, str))
    return 0


def _rewrite(obj: dict, fields: list[str], budget: int, threshold: int, kw: dict):
    """`obj` with its text `fields` compressed (or only scrubbed when small), or None if unchanged."""
    values = {k: obj[k] for k in fields if isinstance(obj.get(k), (str, list))}
    for k, v in values.items():
        if isinstance(v, list) and not all(isinstance(x, str) for x in v):
            return None  # a shape we do not know: leave it alone
    sizes = [_size(v) for v in values.values()]
    out = dict(obj)
    changed = False
    if sum(sizes) <= threshold:
        for k, v in values.items():
            clean, found = _scrub_value(v)
            if found:
                out[k] = clean
                changed = True
        return out if changed else None
    for (k, v), share in zip(values.items(), _shares(sizes, budget)):
        if _size(v) > share:
            v = _compress_list(v, share, **kw) if isinstance(v, list) else compress_text(v, budget_chars=share, **kw)
        clean, _ = _scrub_value(v)
        if clean != obj[k]:
            out[k] = clean
            changed = True
    return out if changed else None
