"""Stage 1, clean: terminal noise out, long lines cut, runs of near-identical lines collapsed.

Kept text stays verbatim apart from cleaning; run-to-run noise (timestamps, durations, addresses)
is masked only in comparison keys, so a summary such as `=== 3 failed in 4.21s ===` survives byte
for byte.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from vaultrag.scrubber import scrub as _scrub  # required: never return unscrubbed text

# A line longer than this is cut in the middle (minified JSON, base64, long SQL). Raised to
# budget/lines when an output has few lines, so one huge line still uses the budget.
MAX_LINE_CHARS = 600
LONG_LINE_TAIL = 120  # of a cut line, keep the end too: error text often trails a long prefix

_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_CTRL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_XDIST_RE = re.compile(r"^\[gw\d+\] (?:\[ *\d+%\] )?", re.M)

# Run-to-run noise, one alternation (longest forms first) so a line is masked in one pass:
# timestamps, clock times, UUIDs, hex addresses and hashes, durations, percentages, progress bars.
# Patterns avoid \s so that they never cross a line break when applied to a whole text.
NOISE_SUBS = [
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
_NOISE_DIGITS = str.maketrans("", "", "0123456789abcdef.:")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")


def scrub_text(text: str) -> tuple[str, bool]:
    """Scrubbed text and whether anything was found. A failing scrubber raises: the caller then
    returns nothing (fails closed), so unscrubbed text never goes out."""
    if not text:
        return text, False
    clean, findings = _scrub(text)
    return clean, bool(findings) or clean != text


def clean(text: str) -> str:
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


def cut_line(line: str, limit: int) -> str:
    if len(line) <= limit:
        return line
    tail = min(LONG_LINE_TAIL, limit // 4)
    head = max(limit - tail - 40, 0)
    return f"{line[:head]} [... {len(line) - head - tail} chars omitted ...] {line[len(line) - tail:]}"


def mask(text: str, subs) -> str:
    for pattern, repl in subs:
        text = pattern.sub(repl, text)
    return text


def offsets(lines: list[str]) -> list[int]:
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    return starts


def noise_equal(a: str, b: str, cache: dict) -> bool:
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
        ka = mask(a, NOISE_SUBS)
    kb = cache.get(b)
    if kb is None:
        kb = mask(b, NOISE_SUBS)
    cache.clear()
    cache[a] = ka
    cache[b] = kb
    return ka == kb


@dataclass(frozen=True)
class Units:
    """The lines of an output, with runs of lines equal up to noise folded into one unit each."""

    texts: tuple[str, ...]  # the unit's first line
    first: tuple[int, ...]  # index of the unit's first original line
    count: tuple[int, ...]  # original lines in the unit
    same: tuple[bool, ...]  # the run's lines are byte-identical (else only "similar")
    n_lines: int  # original lines in the output

    def __len__(self) -> int:
        return len(self.texts)

    def text(self, u: int) -> str:
        if self.count[u] == 1:
            return self.texts[u]
        if self.same[u]:
            return f"{self.texts[u]}\n[... previous line repeated {self.count[u] - 1} times ...]"
        return f"{self.texts[u]}\n[... {self.count[u] - 1} similar lines omitted ...]"


def prepare(text: str, budget: int, marker_cost: int) -> Units:
    """Clean `text`, cut over-long lines (scrubbed first, or half a key survives) and fold runs."""
    raw = text.split("\n")
    limit = max(MAX_LINE_CHARS, budget // max(1, min(len(raw), 40)) - 10)
    limit = min(limit, budget - 2 * marker_cost)
    if any(len(line) > limit for line in raw):
        raw = [cut_line(scrub_text(line)[0], limit) if len(line) > limit else line for line in raw]
    texts: list[str] = []
    first: list[int] = []
    count: list[int] = []
    same: list[bool] = []
    masked: dict[str, str] = {}
    for i, line in enumerate(raw):
        if texts and line.strip() and noise_equal(line, texts[-1], masked):
            count[-1] += 1
            same[-1] = same[-1] and line == texts[-1]
            continue
        texts.append(line)
        first.append(i)
        count.append(1)
        same.append(True)
    return Units(tuple(texts), tuple(first), tuple(count), tuple(same), len(raw))
