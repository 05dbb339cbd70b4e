"""Read results: left alone, or one contiguous window whose numbering stays Claude Code's.

The agent edits what it reads, so a Read is sacred: below READ_INTACT_CHARS it is never altered
(the hook returns nothing and the client shows its own bytes). Above it, the content becomes one
contiguous run of the file's own lines, without any line numbers inside it: Claude Code numbers
`content` from `startLine`, so `startLine`/`numLines` are set to the window and `totalLines` is
kept. What was left out is named in a note (PostToolUse `additionalContext`) with the exact Read
arguments that show it (`offset` is a 1-based line number, `limit` a line count), plus the lines
outside the window that match the request or outline the file, each with its true number. A log
(by its lines' shape) has its window where its error records are, and the note names the error and
warning records outside it by line number (read_log.py).

Secrets: a Read that holds a secret identified by its own shape (a provider token such as `ghp_...`
or `AKIA...`, a private key block, a JWT: `READ_REDACT_RULES`) comes back with only that span
replaced by `[REDACTED:rule]` (the scrubber keeps every other byte and every line break), and the
note says so. Nothing secret of that kind reaches the model (the project's invariant), numbering is
unchanged, an Edit elsewhere still matches, and an Edit quoting the placeholder fails to match
instead of writing it into the file; the note asks the agent never to write the placeholder back.
The scrubber's context rules (a value after `password =`, a long string near "token", `user:pass@`
in a URL) are not applied to a Read: in source code they fire on variables and documented examples
(`username, password = value`; 20 of the 2,813 site-packages files below the threshold, every one
a false positive) and would alter the very lines an agent edits.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from vaultrag.scrubber import VENDOR_RULES

from . import rules
from .clean import scrub_text
from .rank import defined_names, intent_matches, intent_terms
from .read_log import log_events, record_note, window_phrase, window_scores

# Data (benchmarks/compress_bench.py, its "file sizes" line: the .py/.pyi/.md/.rst files of the
# project venv's site-packages, 2,917 files): median 4.8 KB, p90 33 KB, p95 53 KB, 96.4% below
# 64 KB, 98.1% below 100 KB. Claude Code's own Read stops at 2,000 lines and a token cap
# (auto-paginated, `truncatedByTokenCap`) around 25k tokens, so a Read over 64 KB is rare and
# already costs over 16k tokens; below it nothing is ever changed.
READ_INTACT_CHARS = 64_000
# The window kept of a larger Read (~6k tokens): a whole class or a few functions, with the rest
# one Read call away.
READ_WINDOW_CHARS = 24_000
# Rules whose match is a secret by its shape alone, applied to what a Read shows (see above).
READ_REDACT_RULES = frozenset(VENDOR_RULES) | {"pem-private-key", "putty-private-key", "jwt"}
_PLACEHOLDER_RE = re.compile(r"\[REDACTED:([\w-]+)\]")
WINDOW_LEAD_LINES = 20  # lines kept above the first match: its decorator, docstring, heading
OUTLINE_LINES = 12  # lines matching the request named in the note from outside the window
# The outline (headings, top-level definitions) outside the window is listed after them, the top
# levels first, up to this many lines and characters (~40 headings of a long Markdown file, ~700
# tokens); whatever is left is counted in the note, never dropped silently.
OUTLINE_MAX_LINES = 40
OUTLINE_NOTE_CHARS = 2800
OUTLINE_LINE_CHARS = 120
_HEADING_RE = re.compile(r"^(#{1,6}) \S", re.M)


def compress_read(tool_input: dict, response: dict, prompt: str) -> tuple[dict, str | None] | None:
    file = response.get("file")
    if response.get("type") != "text" or not isinstance(file, dict) or not isinstance(file.get("content"), str):
        return None
    content = file["content"]
    start = file.get("startLine")
    start = start if isinstance(start, int) and not isinstance(start, bool) and start >= 1 else 1
    path = str(file.get("filePath") or tool_input.get("file_path") or "")
    chose_window = isinstance(tool_input.get("limit"), int)  # the agent asked for exactly this
    if len(content) <= READ_INTACT_CHARS or chose_window:
        clean = redact(content)
        if clean == content:
            return None
        return {**response, "file": {**file, "content": clean}}, _redaction_note(content, clean, start, path)
    lines = content.split("\n")
    scores, outline = _scores(lines, prompt, path)
    events = log_events(lines)  # a log by its lines' shape: the window goes to its error records
    a, b = _window(lines, window_scores(scores, events) if events else scores)
    window = redact("\n".join(lines[a:b]))
    new_file = {**file, "content": window, "startLine": start + a, "numLines": b - a,
                "truncatedByTokenCap": True}
    if not isinstance(file.get("totalLines"), int):
        new_file["totalLines"] = start + len(lines) - 1
    return {**response, "file": new_file}, _window_note(lines, a, b, start, path, scores, outline, events)


def redact(text: str) -> str:
    """`text` with the secrets of READ_REDACT_RULES replaced, every other line byte-identical."""
    clean, found = scrub_text(text)
    if not found:
        return text
    before, after = text.split("\n"), clean.split("\n")
    if len(before) != len(after):  # the scrubber keeps line breaks; if not, hide everything it found
        return clean
    out = []
    for x, y in zip(before, after):
        names = _PLACEHOLDER_RE.findall(y) if x != y else []
        out.append(x if names and not READ_REDACT_RULES.intersection(names) else y)
    return "\n".join(out)


def _scores(lines: list[str], prompt: str, path: str) -> tuple[list[float], dict[int, int]]:
    """Each line's match with the request (its words, the file name; a definition of a name the
    request uses first), and the outline lines (top-level definitions, Markdown headings) with
    their depth (a heading's level; 1 for a definition)."""
    joined = "\n".join(lines)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    definitions, outline = set(), {}
    for m in rules.DEF_RE.finditer(joined):
        u = bisect_right(starts, m.start()) - 1
        definitions.add(u)
        if not m.group(1):
            outline[u] = 1
    for m in _HEADING_RE.finditer(joined):  # every level: `### Day 1` too (a banner in tool output)
        outline[bisect_right(starts, m.start()) - 1] = len(m.group(1))
    matches, scores = intent_matches(lines, intent_terms(prompt, path.rsplit("/", 1)[-1]),
                                     defined_names(lines, definitions))
    return [s if u in matches else 0.0 for u, s in enumerate(scores)], outline


def _window(lines: list[str], scores: list[float]) -> tuple[int, int]:
    """The window [a, b) of at most READ_WINDOW_CHARS holding the most match score; the head
    when nothing matches (ties go to the earlier window)."""
    chars, score = [0], [0.0]
    for line, s in zip(lines, scores):
        chars.append(chars[-1] + len(line) + 1)
        score.append(score[-1] + s)

    def fit(a: int) -> int:  # lines [a, b) within the window size, at least one line
        return max(bisect_right(chars, chars[a] + READ_WINDOW_CHARS) - 1, a + 1)

    b = fit(0)
    best = (score[b], 0, b)
    for u, s in enumerate(scores):
        if s > 0:
            a = max(0, u - WINDOW_LEAD_LINES)
            b = fit(a)
            if score[b] - score[a] > best[0]:
                best = (score[b] - score[a], a, b)
    _, a, b = best
    if b == len(lines):  # near the end: the window reaches back to fill its size (it held 21 lines of 3,000)
        a = min(a, bisect_left(chars, chars[-1] - READ_WINDOW_CHARS))
    return a, b


def _ranges(a: int, b: int, n: int, start: int) -> list[tuple[int, int]]:
    """The (offset, limit) Read arguments of the parts of lines [0, n) outside [a, b)."""
    out = []
    if a > 0:
        out.append((start, a))
    if b < n:
        out.append((start + b, n - b))
    return out


def _window_note(lines, a, b, start, path, scores, outline, events=None) -> str:
    n = len(lines)
    parts = [f"Read offset={off} limit={lim} (lines {off}-{off + lim - 1})" for off, lim in _ranges(a, b, n, start)]
    why = window_phrase(a, b, events) if events else ""
    why = why or (" (the part matching the request)" if any(scores[a:b]) else "")
    note = [f"vaultrag: this Read of {path} was shortened to lines {start + a}-{start + b - 1} of "
            f"{start}-{start + n - 1}{why}; line numbers are the file's own. Not shown: {'; '.join(parts)}."]
    records, listed = record_note(lines, a, b, start, events) if events else ([], set())
    note += records
    outside = [u for u in range(n) if (u < a or u >= b) and u not in listed]
    matching = sorted((u for u in outside if scores[u] > 0), key=lambda u: (-scores[u], u))
    picks = matching[:OUTLINE_LINES]
    rest = [u for u in outside if u in outline and u not in picks]
    used = 0
    for u in sorted(rest, key=lambda u: (outline[u], u)):  # the top levels first, while it stays short
        if len(picks) >= OUTLINE_MAX_LINES or used + min(len(lines[u]), OUTLINE_LINE_CHARS) > OUTLINE_NOTE_CHARS:
            break
        picks.append(u)
        used += min(len(lines[u]), OUTLINE_LINE_CHARS)
    if picks:
        note.append("Lines outside the window that match the request or outline the file:")
        for u in sorted(picks):
            text = lines[u] if len(lines[u]) <= OUTLINE_LINE_CHARS else lines[u][:OUTLINE_LINE_CHARS] + " ..."
            note.append(f"{start + u:>6}\t{text}")
    unlisted = sorted((set(matching) | set(rest)) - set(picks))
    if unlisted:  # never a silently cut outline: say how much is missing, where, and how to list it
        headings = all(lines[u].startswith("#") for u in unlisted)
        how = f"; Grep `^#{{1,6}} ` in {path} lists every heading" if headings and path else ""
        note.append(f"[... {len(unlisted)} more such line{'s' if len(unlisted) != 1 else ''} not listed, "
                    f"between lines {start + unlisted[0]} and {start + unlisted[-1]}{how} ...]")
    return scrub_text("\n".join(note))[0]


def _redaction_note(before: str, after: str, start: int, path: str) -> str:
    a, b = before.split("\n"), after.split("\n")
    changed = [start + i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    where = ", ".join(str(i) for i in changed[:10]) + (" ..." if len(changed) > 10 else "")
    return (f"vaultrag: a secret in {path} (line{'s' if len(changed) != 1 else ''} {where}) is shown as "
            f"[REDACTED:<rule>]; every other byte is the file's own. The file on disk still holds the "
            f"secret: edit around it and never write the placeholder back.")
