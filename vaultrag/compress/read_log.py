"""A Read of a log over READ_INTACT_CHARS: its window goes where the error records are, and the
note names every error and warning record it left out, by line number.

A Read's content stays one contiguous run of the file's own lines (read.py), so a log cannot be
cut the way its Bash output is (logs.py: the error records first, then a spread). What the cut can
do the same way: a log is judged by its lines' shape (logs.is_log), the window holds the most lines
of error records (each record with its traceback, logs.continuation), and the note lists the error
and warning records outside it, then the log's last line (a run's tally), each with its true
number, so that one Read offset/limit shows any of them. Without this the window went to the head,
or to the lines matching the request (an "import finished: 2998 ok, 1 failed" tally at the end),
and the error record in between was neither shown nor named.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import logs
from .clean import offsets

# One line of an error record outweighs a whole window of request matches (each scores at most 1
# once normalised), so the window goes to the errors; a warning line counts as much as the best match.
ERROR_WEIGHT = 1000.0
WARN_WEIGHT = 1.0
# As classify.py: when over a third of the lines are error (or warning) records, the level says
# nothing about where to look, and the request alone places the window.
MAX_EVENT_SHARE = 1 / 3
# The note's list of records outside the window (~1k tokens at most); the rest are counted, and
# where they lie.
NOTE_RECORDS = 30
NOTE_CHARS = 4000
RECORD_LINE_CHARS = 200  # a record's first line, cut here in the note (its message, its ids)


@dataclass(frozen=True)
class LogEvents:
    """The error and warning records of a log (their first lines), and each line's weight."""

    errors: tuple[int, ...]
    warnings: tuple[int, ...]
    weight: tuple[float, ...]  # ERROR_WEIGHT on every line of an error record, WARN_WEIGHT on a warning's


def log_events(lines: list[str]) -> LogEvents | None:
    """The records of `lines` when they are a log by their shape, else None."""
    blank = [not t.strip() for t in lines]
    if not logs.is_log(lines, blank):
        return None
    shape = logs.shape(lines, "\n".join(lines), offsets(lines))
    n = len(lines)
    errors = [u for u in range(n) if shape.start[u] and shape.level[u] == "error"]
    warnings = [u for u in range(n) if shape.start[u] and shape.level[u] == "warn"]
    weight = [0.0] * n
    for records, w in ((warnings, WARN_WEIGHT), (errors, ERROR_WEIGHT)):
        if len(records) > max(8, n * MAX_EVENT_SHARE):
            continue
        for u in records:
            for v in [u, *(logs.continuation(u, shape) if w == ERROR_WEIGHT else ())]:
                weight[v] = max(weight[v], w)
    return LogEvents(tuple(errors), tuple(warnings), tuple(weight))


def window_scores(scores: list[float], events: LogEvents) -> list[float]:
    """The request's scores (normalised to at most 1) plus each line's record weight."""
    best = max(scores, default=0.0) or 1.0
    return [s / best + w for s, w in zip(scores, events.weight)]


def window_phrase(a: int, b: int, events: LogEvents) -> str:
    """Why the window is where it is, when error records placed it ("" otherwise)."""
    inside, total = sum(1 for u in events.errors if a <= u < b), len(events.errors)
    if not inside:
        return ""
    return (f" (a log: the part holding its error record{'s' if total > 1 else ''})" if inside == total
            else f" (a log: the part holding {inside} of its {total} error records)")


def record_note(lines: list[str], a: int, b: int, start: int, events: LogEvents) -> tuple[list[str], set[int]]:
    """The note's lines naming the records outside [a, b) (errors, then warnings, then the last
    line), and the units they list."""
    n = len(lines)
    outside = [u for u in (*events.errors, *events.warnings) if u < a or u >= b]
    if n - 1 >= b and n - 1 not in outside and lines[-1].strip():
        outside.append(n - 1)
    picks, used = [], 0
    for u in outside:
        size = min(len(lines[u]), RECORD_LINE_CHARS) + 8
        if len(picks) >= NOTE_RECORDS or used + size > NOTE_CHARS:
            break
        picks.append(u)
        used += size
    if not picks:
        return [], set()
    listed = [k for k, records in (("error", events.errors), ("warning", events.warnings))
              if any(u in records for u in picks)]
    what = [f"{' and '.join(listed)} records outside the window (their first lines)"] if listed else []
    what += ["last line"] if n - 1 in picks and not any(n - 1 in r for r in (events.errors, events.warnings)) else []
    out = [f"The log's {' and its '.join(what)}:"]
    for u in sorted(picks):
        text = lines[u] if len(lines[u]) <= RECORD_LINE_CHARS else lines[u][:RECORD_LINE_CHARS] + " ..."
        out.append(f"{start + u:>6}\t{text}")
    rest = sorted(set(outside) - set(picks))
    if rest:  # counted, never dropped silently (the Reads above show them)
        out.append(f"[... {len(rest)} more record{'s' if len(rest) != 1 else ''} not listed, between lines "
                   f"{start + rest[0]} and {start + rest[-1]} ...]")
    return out, set(picks)
