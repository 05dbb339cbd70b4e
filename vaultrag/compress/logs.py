"""Whether a text is a log, judged by its shape, and what each of its records says.

A file printed by `cat`, `tail` or `less` is content (an "error" word in source code or prose is
data, not an event), but a file whose lines have the shape of log records (a timestamp, a level, a
component) is a log wherever it comes from: a script, `journalctl`, `docker logs` or `cat x.log`.
A log gets the events of a status output (its error and warning records, the traceback lines that
follow an error record) and, for the rest, a fair spread: a round over its (level, component) keys
in turn, each key's lines taken spread over the output, so that 6,000 characters of a 3,000-line
log are not 50 lines of its chattiest component.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

# Prefixes a file's lines get from `cat -n`, Read numbering, `grep -n` (with or without a file
# name) and `docker compose logs` (`web-1  | `), then the record's own start.
_PREFIX = r"(?:[ \t]*\d+(?:\t|\u2192)|(?:[^\t\n: ]+:)?\d+[:-](?=\S))?(?:[\w.-]+[ \t]+\|[ \t]+)?"
_LEVELS_UPPER = "TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL|SEVERE|PANIC"
RECORD_RE = re.compile(
    "^(?P<prefix>" + _PREFIX + r")(?:"
    r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d"  # ISO 8601 (Python, Rust, Java, most JSON-less loggers)
    r"|\[?\d{4}/\d\d/\d\d[ T]\d\d:\d\d"  # Go's log, nginx's error log
    r"|\[?[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d"  # syslog, journalctl
    r"|\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?[ \t]"  # time of day first
    r"|[IWEF]\d{4} \d\d:\d\d:\d\d"  # glog / klog
    r"|\[?(?:" + _LEVELS_UPPER + r")\]?(?::|[ \t])"  # a level first (Python's `ERROR:root:`)
    r"|(?:time|ts|timestamp|level|lvl|severity)=\S"  # logfmt
    r"|\{\"(?:@?timestamp|time|ts|level|lvl|severity|msg|message|logger)\"[ \t]*:"  # JSON lines
    r"|\d{1,3}(?:\.\d{1,3}){3} \S+ \S+ \[\d\d/[A-Z][a-z]{2}/\d{4}:"  # access logs (CLF)
    r")",
    re.M,
)
# A text is a log when at least this share of its non-blank lines start a record (a traceback or
# a multi-line message in between lowers it), and it has at least LOG_MIN_RECORDS of them.
LOG_MIN_SHARE = 0.5
LOG_MIN_RECORDS = 10
LOG_SAMPLE_LINES = 400  # lines judged (spread over the text): the verdict costs the same at any size
# Lines after an error record that start no record of their own (a traceback, a stack trace, a
# multi-line message) belong to it, up to this many.
CONTINUATION_LINES = 40
# Where a record's level is looked for: its first tokens after the timestamp (the level comes
# before the message in every common format; a token ending in ":" is the component, after which
# the message begins), else a `level=` / `"level":` field (logfmt, JSON lines).
LEVEL_TOKENS = 3
_LEVEL_NAMES = {
    "error": "error err eror fatal ftl crit critical severe panic alert emerg emergency",
    "warn": "warn warning wrn",
    "": "trace trc debug dbg verbose info inf information notice",
}
LEVEL_OF = {name: level for level, names in _LEVEL_NAMES.items() for name in names.split()}
_GLOG_LEVEL = {"E": "error", "F": "error", "W": "warn", "I": ""}  # glog / klog: `E0314 02:00:00.123 ...`
_TIMESTAMP_RE = re.compile(
    r"[\[(]?(?:\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[ ]?[+-]\d\d:?\d\d|[ ]?UTC)?"
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:[.,]\d+)?"
    r"|\d\d:\d\d:\d\d(?:[.,]\d+)?)[\])]?[ \t]*"
)


def _field_re(names: str, value: str) -> re.Pattern:
    """A named field of a logfmt (`level=error`) or JSON (`"level": "error"`) record."""
    return re.compile(rf"""(?:\b(?:{names})|"(?:{names})")[ \t]*[=:][ \t]*["']?({value})""", re.I)


_FIELD_RE = {"level": _field_re("level|lvl|severity|levelname", r"\w+"),
             "component": _field_re("logger|component|module|source|service|svc|app|name", r"[\w./-]+")}
_STRIP = "[]<>()|,;\"'"
_NUMBER_RE = re.compile(r"\d+")
_SEPARATORS = frozenset("- -- | || : :: > >> \u2014 \u2013 \u2022 \u00b7".split())


@dataclass(frozen=True)
class LogShape:
    """Per unit of a log: whether it starts a record, its level ("error", "warn" or ""), and its key
    (level name and component, numbers masked) for the spread."""

    start: list[bool]
    level: list[str]
    key: list[str]


def is_log(texts: list[str], blank: list[bool]) -> bool:
    """Whether most non-blank lines of a text (a spread sample of them) start a log record."""
    lines = [t for t, b in zip(texts, blank) if not b]
    if len(lines) < LOG_MIN_RECORDS:
        return False
    sample = lines[:: max(1, len(lines) // LOG_SAMPLE_LINES)]
    records = sum(1 for t in sample if RECORD_RE.match(t))
    return records >= min(LOG_MIN_RECORDS, len(sample)) and records >= LOG_MIN_SHARE * len(sample)


def shape(texts: list[str], joined: str, starts: list[int]) -> LogShape:
    """Record starts, levels and keys of a log's units."""
    n = len(texts)
    start = [False] * n
    level, key = [""] * n, [""] * n
    components: dict[str, str] = {}
    for m in RECORD_RE.finditer(joined):
        u = bisect_right(starts, m.start()) - 1
        start[u] = True
        level[u], named, component = _level_and_component(texts[u], m.end("prefix") - starts[u])
        part = components.get(component)
        if part is None:
            part = components[component] = _NUMBER_RE.sub("#", " ".join(
                c.strip(_STRIP + ":").split(":", 1)[0] for c in component.split(" ")))
        key[u] = f"{named}|{part}"
    return LogShape(start, level, key)


def _level_and_component(line: str, at: int) -> tuple[str, str, str]:
    rest = line[at:]
    named = level = component = ""
    if rest[:1] in _GLOG_LEVEL and rest[1:5].isdigit():
        named, level, rest = rest[0], _GLOG_LEVEL[rest[0]], rest[5:]
    m = _TIMESTAMP_RE.match(rest)
    if m:
        rest = rest[m.end():]
    # punctuation between fields (`asctime - name - levelname`) is skipped
    tokens = [t for t in rest.split(None, 2 * LEVEL_TOKENS)[:2 * LEVEL_TOKENS] if t not in _SEPARATORS]
    tokens = tokens[:LEVEL_TOKENS]
    for i, tok in enumerate(tokens):
        parts = tok.strip(_STRIP).split(":")
        name = parts[0].lower()
        if not named and name in LEVEL_OF:
            named, level = name, LEVEL_OF[name]
            component = parts[1] if len(parts) > 1 and parts[1] else (tokens[i + 1] if i + 1 < len(tokens) else "")
            if i:  # a field before the level (`asctime - name - levelname`, `[thread] LEVEL logger`)
                component = f"{tokens[i - 1]} {component}"
            break
        if tok.endswith(":"):
            component = tok  # the component (`unit[123]:`): the message begins after it
            break
    else:
        component = tokens[0] if tokens else ""
    if rest[:1] == "{" or "=" in (tokens[0] if tokens else ""):  # JSON lines, logfmt: named fields
        if not named:
            f = _FIELD_RE["level"].search(line)
            if f:
                named = f.group(1).lower()
                level = LEVEL_OF.get(named, "")
        f = _FIELD_RE["component"].search(line)
        if f:
            component = f.group(1)
    return level, named, component


def continuation(u: int, log: LogShape) -> list[int]:
    """The units after record u up to the next record start (its traceback), at most CONTINUATION_LINES."""
    n, out, v = len(log.start), [], u + 1
    while v < n and not log.start[v] and len(out) < CONTINUATION_LINES:
        out.append(v)
        v += 1
    return out


def spread_rounds(units: list[int], key: list[str]) -> dict[int, int]:
    """For each unit, its round in a fair spread: round 0 takes one line of every key, round 1 one
    more of each, and so on; a key's lines are taken in an order that spreads them over the output
    (its first, its middle, its quarters...: a bit-reversal permutation of their positions)."""
    groups: dict[str, list[int]] = {}
    for u in units:
        groups.setdefault(key[u], []).append(u)
    rounds = {}
    for members in groups.values():
        for r, i in enumerate(_bit_reversed(len(members))):
            rounds[members[i]] = r
    return rounds


def _bit_reversed(k: int) -> list[int]:
    if k <= 1:
        return list(range(k))
    bits = (k - 1).bit_length()
    order = [int(format(i, f"0{bits}b")[::-1], 2) for i in range(1 << bits)]
    return [i for i in order if i < k]
