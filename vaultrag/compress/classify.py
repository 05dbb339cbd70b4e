"""Stage 2, classify: what each line (unit) of an output is. The lowest class number wins.

  summary   how a run ended (`=== 3 failed in 4s ===`, `test result:`, `Successfully installed`)
  match     (search/listing content) a line carrying the stated intent's distinctive words
  edge      the first and last non-blank lines: what ran and how it ended
  error     error/failure lines, a pytest raising `>` line, file:line diagnostics
  context   the lines after an error (message, location, expected/got), pytest `-l` locals,
            the first/last header of each outline kind, the largest files of `ls -l`
  warn      warnings, deprecations, XFAIL/XPASS
  header    outline: commits, diff headers, banners, headings, directory headers, definitions
  relevant  anything the request's words match (set by the rank stage)
  rest      everything else

In file or search content (a read, grep, listing, git log) an "error" word is data, not an event,
so the error and warning classes are off there, unless the text is a log by its shape (logs.py):
then its error and warning records are events, and the lines an error record carries (a traceback)
are its context.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from . import rules
from .clean import Units, offsets
from .logs import LogShape, continuation

(C_SUMMARY, C_MATCH, C_EDGE, C_ERROR, C_CONTEXT, C_WARN, C_HEADER, C_RELEVANT, C_REST) = range(9)
# The first and last non-blank lines say what ran and how it ended (summary, root cause).
HEAD_LINES = 4
TAIL_LINES = 6
# Lines kept after each error line: message, location, expected / received (pytest E-lines, jest,
# rustc "-->" and notes, terraform boxes).
ERROR_CONTEXT_LINES = 3
# How far below its `commit` line git prints a commit's subject (Author:, Merge:, Date:, the
# committer lines of --format=fuller, a blank line): past this the header has no subject.
SUBJECT_SEARCH_LINES = 8


@dataclass(frozen=True)
class View:
    """One output as the stages see it: unit texts, and the same without content prefixes
    (`cat -n`, `grep -n`, `git blame` columns) for judging what a line says."""

    texts: list[str]
    joined: str
    starts: list[int]
    body: list[str]
    body_joined: str
    body_starts: list[int]
    blank: list[bool]
    content: bool

    @classmethod
    def of(cls, units: Units, content: bool) -> "View":
        texts = list(units.texts)
        joined = "\n".join(texts)
        starts = offsets(texts)
        body, body_joined, body_starts = texts, joined, starts
        if content:
            body_joined = rules.CONTENT_PREFIX_RE.sub("", joined)
            body = body_joined.split("\n")
            if len(body) != len(texts):
                body = [rules.CONTENT_PREFIX_RE.sub("", t) for t in texts]
                body_joined = "\n".join(body)
            body_starts = offsets(body)
        return cls(texts, joined, starts, body, body_joined, body_starts, [not t.strip() for t in texts], content)


@dataclass
class Classes:
    cls: list[int]
    kind: list[str]
    definitions: set[int]
    later: set[int]  # context lines 2.. after an error (the first one after each comes first)
    section: list[int]  # size in lines of a header's section
    ids: set[int]  # failure id lines (pytest FAILED/ERROR summary, cargo "... FAILED", rustc error[E..])
    follows: dict[int, int] = field(default_factory=dict)  # a line -> the header it goes with (a commit's subject)
    # pytest's key lines -> (failure number, role): each FAILED/ERROR summary line (role 0), and in
    # each failure's section the first E line of its last E block (0: the exception that ended it),
    # its last E line (1) and its first E line (2: a chain's original exception). select.py takes
    # them before any other error line, failure by failure; lead_text puts them with the ids.
    keys: dict[int, tuple[int, int]] = field(default_factory=dict)

    def promote(self, hits, c: int, k: str = "") -> None:
        for u in hits:
            if c < self.cls[u]:
                self.cls[u] = c
                self.kind[u] = k


def classify(view: View, units: Units, log: LogShape | None = None) -> Classes:
    """Every unit's class. `log` (the text is a log) turns the events on even in content."""
    n = len(view.texts)
    out = Classes([C_REST] * n, [""] * n, set(), set(), [0] * n, set())
    headers = _headers(view)
    if view.content:
        out.definitions, headers["def0"] = _definitions(view)
    for name, hits in headers.items():
        # A "header" on over a third of the lines is the texture of the output, not its outline.
        if hits and len(hits) <= max(3, n // 3):
            # file:line: diagnostics and lint codes are the findings of a status output
            out.promote(hits, C_ERROR if name == "diag" else C_HEADER, name)
    if not view.content or log is not None:
        _events(view, out, log)
    if not view.content:
        _pytest(view, out)
    sizes = [(int(m.group(1)), bisect_right(view.starts, m.start()) - 1) for m in rules.LS_LONG_RE.finditer(view.joined)]
    if len(sizes) >= 2 * rules.LS_LARGEST:
        out.promote({u for _, u in sorted(sizes, key=lambda p: (-p[0], p[1]))[: rules.LS_LARGEST]}, C_CONTEXT)
    summary = rules.SUMMARY.lines(view.joined, view.starts, view.texts)
    stats = {u for u in summary if rules.FILES_CHANGED_RE.match(view.texts[u])}
    if len(stats) > 1:  # each commit's stat line: the outline's first and last, like its headers
        summary -= stats
        out.promote({min(stats), max(stats)}, C_CONTEXT)
    out.promote(summary, C_SUMMARY)
    nonblank = [u for u in range(n) if not view.blank[u]]
    # pytest's key lines at the end (the last FAILED lines) keep their failure-by-failure order
    out.promote(set(nonblank[:HEAD_LINES] + nonblank[-TAIL_LINES:]) - out.keys.keys(), C_EDGE)
    _sections(out, units, n)
    _subjects(view, out, headers.get("commit", set()), n)
    return out


def _headers(view: View) -> dict[str, set[int]]:
    headers: dict[str, set[int]] = {}
    for m in rules.HEADER_RE.finditer(view.body_joined):
        if view.content and m.lastgroup == "diag":
            continue  # grep -n output is all file:line lines
        headers.setdefault(m.lastgroup, set()).add(bisect_right(view.body_starts, m.start()) - 1)
    return headers


def _definitions(view: View) -> tuple[set[int], set[int]]:
    definitions, top = set(), set()
    for m in rules.DEF_RE.finditer(view.body_joined):
        u = bisect_right(view.body_starts, m.start()) - 1
        definitions.add(u)
        if not m.group(1):
            top.add(u)
    return definitions, top


def _events(view: View, out: Classes, log: LogShape | None = None) -> None:
    """Errors (and the lines after each) and warnings of a status output or a log."""
    n = len(view.texts)
    for c, rule, level in ((C_ERROR, rules.ERROR, "error"), (C_WARN, rules.WARN, "warn")):
        hits = {u for u in rule.lines(view.joined, view.starts, view.texts) if not rules.PASSING_RE.match(view.texts[u])}
        if log is not None:  # a record's level says it too (`level=error`, `[error]`, `FATAL`, glog's `E0314`)
            hits.update(u for u in range(n) if log.level[u] == level)
        if len(hits) > max(8, n // 3):  # not discriminative here: let relevance decide
            continue
        out.promote(hits, c)
        if c == C_ERROR:  # the lines after an error carry its message, location, expected/got
            after = [_after(u, n, view.blank) for u in hits]
            right_after = {vs[0] for vs in after if vs}
            further = {v for vs in after for v in vs[1:]} - right_after
            if log is not None:  # ... and in a log, every line of the record (its traceback)
                further.update(v for u in hits for v in continuation(u, log))
                further -= right_after
            out.promote(right_after | further, C_CONTEXT)
            out.later.update(further)  # ... but the line right after each error comes first
    for u in rules.FAILURE_ID_RE.finditer(view.joined):
        i = bisect_right(view.starts, u.start()) - 1
        if out.cls[i] == C_ERROR:
            out.ids.add(i)


def _pytest(view: View, out: Classes) -> None:
    """Inside pytest's FAILURES / ERRORS sections: the raising `>` line of each frame is an error
    line and `--showlocals` locals are its context (`E` lines are errors already); each failure's
    key E lines and the short summary's FAILED/ERROR lines are error lines whatever their number
    (`_events` turns errors off when they are over a third of the lines) and noted in `keys`."""
    spans, summaries, begin = [], [], None
    for m in rules.PYTEST_SECTION_RE.finditer(view.joined):
        if begin is not None:
            (spans if begin[1] else summaries).append((begin[0], m.start()))
        begin = (m.end(), True) if m.group(1) else (m.end(), False) if m.group(2) == "short test summary info" else None
    if begin is not None:
        (spans if begin[1] else summaries).append((begin[0], len(view.joined)))
    for lo, hi in spans:
        for rule, c, k in ((rules.PYTEST_RAISE_RE, C_ERROR, "raise"), (rules.PYTEST_LOCAL_RE, C_CONTEXT, "local")):
            for m in rule.finditer(view.joined, lo, hi):
                u = bisect_right(view.starts, m.start()) - 1
                if out.cls[u] > c or (out.cls[u] == c and not out.kind[u]):
                    out.cls[u], out.kind[u] = c, k
                    out.later.discard(u)
    def unit(m) -> int:
        return bisect_right(view.starts, m.start()) - 1

    sections = []  # per failure section, its E-line units
    for lo, hi in spans:
        heads = [unit(m) for m in rules.PYTEST_FAILURE_HEAD_RE.finditer(view.joined, lo, hi)]
        e_lines = [unit(m) for m in rules.PYTEST_E_LINE_RE.finditer(view.joined, lo, hi)]
        for a, b in zip(heads, heads[1:] + [len(view.texts)]):
            sections.append([u for u in e_lines if a < u < b])
    for i, es in enumerate(sections):
        if not es:
            continue
        block = len(es) - 1
        while block > 0 and es[block - 1] == es[block] - 1:
            block -= 1
        for role, u in enumerate((es[block], es[-1], es[0])):
            out.keys.setdefault(u, (i, role))
    for lo, hi in summaries:
        for i, m in enumerate(rules.PYTEST_SHORT_FAILURE_RE.finditer(view.joined, lo, hi)):
            u = unit(m)
            out.keys.setdefault(u, (i, 0))
            out.ids.add(u)
    out.promote(out.keys, C_ERROR)
    for u in out.keys:
        if out.cls[u] == C_ERROR:
            out.later.discard(u)


def _sections(out: Classes, units: Units, n: int) -> None:
    """First and last header of each outline kind kept, and each header's section size noted."""
    by_kind: dict[str, list[int]] = {}
    for u in range(n):
        if out.cls[u] == C_HEADER:
            by_kind.setdefault(out.kind[u], []).append(u)
    for k, hs in by_kind.items():
        for a, b in zip(hs, hs[1:] + [n]):
            out.section[a] = units.first[b] - units.first[a] if b < n else units.n_lines - units.first[a]
        if k in rules.HEADER_ENDS:
            out.promote({hs[0], hs[-1]}, C_CONTEXT)


def _subjects(view: View, out: Classes, commits: set[int], n: int) -> None:
    """A kept `commit` line without its message says nothing: each commit header's subject (the
    first line git indents by four spaces below it) joins the header's class and follows it in
    the priority order (select.priority_order)."""
    for u in sorted(commits):
        if out.cls[u] > C_HEADER:  # too many to be an outline (classify)
            continue
        for v in range(u + 1, min(n, u + 1 + SUBJECT_SEARCH_LINES)):
            line = view.body[v]
            if line.startswith("    ") and line.strip():
                if out.cls[v] >= out.cls[u]:  # a subject that matters on its own stays free
                    out.cls[v], out.kind[v] = out.cls[u], "subject"
                    out.follows[v] = u
                break
            if line.startswith("commit ") or line.startswith("diff "):
                break


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

