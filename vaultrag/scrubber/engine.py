"""Run the rules: gate by trigger literals, collect spans, pick non-overlapping ones, redact."""
from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Optional

from . import generic, keys, labels, shapes, vendors  # noqa: F401  (they fill the registry)
from . import commands, cookies  # noqa: F401,E402  (after them: a tie keeps the older rule's name)
from . import digits  # noqa: F401,E402  (last: a tie with the rules above keeps their name)
from .rules import REGISTRY, _is_word, in_template

log = logging.getLogger("vaultrag.scrubber")

MAX_PASSES = 3           # re-scan after redaction until stable; real text settles in one pass
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # everything str.splitlines() breaks on
# Every vendor token holds a run of 20+ [A-Za-z0-9_-]; ~12% of tldr pages do. Searching for one run
# first (~130 MB/s) lets most text skip the vendor triggers altogether.
_LONG_RUN_RE = re.compile(r"[A-Za-z0-9_-]{20}")
# In a large text, the triggers of vendor tokens are looked up only near random-looking runs: a
# 20+ run of token characters with a digit or a capital (snake_case words have neither), plus the
# TOKEN_REACH characters before it where a prefix such as `dp.st.` or `sk-ant-api03-` starts. On
# tool output that is ~9% of the text, so ~200 substring scans of it stay cheap.
_WINDOW_CLASS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"
# Runs are found in a copy of the text where each run character is "a" and everything else a space
# (`encode("ascii", "replace")` keeps one byte per character, so offsets stay those of the text):
# then a run is where `str.find` sees 20 "a"s, ~5x faster than a regex for the run itself.
_WINDOW_TABLE = bytes(0x61 if c in _WINDOW_CLASS else 0x20 for c in range(256))
_WINDOW_MIN = b"a" * 20
_MIXED_RE = re.compile(r"[0-9A-Z]")  # a separate test: folding it into _WINDOW_RE is 1.5-2x slower
# (an all-lowercase run is a window too when it holds x-filler: `ghp_xxxx...` is redacted as a shape)
MIN_IN_RUNS_CHARS = 32  # the in-runs rules' shortest value (quoted high-entropy 32, AWS secret 40)
# chars; the longest prefix before a 20-char body run: `sk-ant-admin01-`, `dp.st.x.`, and SendGrid's
# `SG.` + 22 + `.` (26) or Harness's `pat.` + 22 + `.` (27) when that first part is all lower case
# (then not a window itself: only the second part is)
TOKEN_REACH = 27
# Numbers have no literal: `digit_masks` rules (PINs, card numbers) search only the lines where a
# copy of the text with "0" for each digit and " " for each space or dash holds one of their masks
# (`0000`, `0000 0000 0000 0000`): one translate of the bytes the runs are found in (~1 GB/s) and a
# find per line, where PIN and card labels would cost ~10 literal scans of every text.
_DIGIT_TABLE = bytes(0x30 if 0x30 <= c <= 0x39 else 0x20 if c in b" -" else 0x78 for c in range(256))


@dataclass(frozen=True)
class Finding:
    rule: str
    line: int  # 1-based line of the secret's first character


_RULES = tuple(sorted(REGISTRY, key=lambda r: r.priority))  # stable: registration order within a tier
RULES: tuple[str, ...] = tuple(dict.fromkeys(n for r in _RULES for n in r.names))
VENDOR_RULES: tuple[str, ...] = tuple(dict.fromkeys(n for r in _RULES if r.vendor for n in r.names))
GENERIC_RULES: tuple[str, ...] = tuple(n for n in RULES if n not in VENDOR_RULES)
# Each distinct trigger is looked up once per text (vendor ones only if a long run exists) and
# selects the rules it gates.
_SHORT_TRIGGERS = tuple(dict.fromkeys(t for r in _RULES if not r.needs_long and not r.in_token
                                      and not r.non_ascii and not r.digit_masks for t in r.triggers))
# A trigger that gates only anchored rules needs no lookup of its own: those rules search for their
# triggers with str.find anyway, which costs what the `in` test would (14 of ~50 whole-text scans).
_SELF_GATED = frozenset(t for t in _SHORT_TRIGGERS
                        if all(r.anchored and not r.requires and not r.needs_long
                               for r in _RULES if t in r.triggers))
# Below this size a text's lookups cost less than starting the anchored rules it would skip.
SELF_GATE_MIN_CHARS = 8192
_LONG_TRIGGERS = tuple(dict.fromkeys(t for r in _RULES if r.needs_long and not r.in_token
                                     for t in r.triggers if t not in _SHORT_TRIGGERS))
_TOKEN_TRIGGERS = tuple(dict.fromkeys(t for r in _RULES if r.needs_long and r.in_token for t in r.triggers
                                      if t not in _SHORT_TRIGGERS and t not in _LONG_TRIGGERS))
_TOKEN_ANY_TRIGGERS = tuple(dict.fromkeys(t for r in _RULES if not r.needs_long and r.in_token
                                          for t in r.triggers))
_GATED: dict[str, list[int]] = {}
for _i, _r in enumerate(_RULES):
    for _t in () if _r.non_ascii or _r.digit_masks else _r.triggers:  # looked up in _find
        _GATED.setdefault(_t, []).append(_i)
_UNGATED = [i for i, r in enumerate(_RULES)
            if not r.triggers and not r.in_runs and not r.non_ascii and not r.digit_masks]
_IN_DIGIT_MASKS = tuple(i for i, r in enumerate(_RULES) if r.digit_masks)
# One of these is inside every digit mask: a text without 4 digits in a row, or 4 single digits
# spaced (`1 9 8 4`), skips them all.
MASK_FLOORS = (b"0000", b"0 0 0 0")
if not all(any(f in n for f in MASK_FLOORS) for i in _IN_DIGIT_MASKS for n in _RULES[i].digit_masks):
    raise ValueError("every digit mask must hold one of MASK_FLOORS")
_NON_ASCII = tuple(i for i, r in enumerate(_RULES) if r.non_ascii)
# Their gates: each distinct lowered trigger once (a rule spells case variants out for the lines it
# searches, `Код` beside `код`; the lowered text holds the lowered one wherever the text holds either).
_NON_ASCII_GATES = {t: tuple(o for o in _NON_ASCII if t in {x.lower() for x in _RULES[o].triggers})
                    for t in dict.fromkeys(t.lower() for o in _NON_ASCII for t in _RULES[o].triggers)}
_UNGATED_LARGE = _UNGATED + [i for i, r in enumerate(_RULES)
                             if any(t in _SELF_GATED for t in r.triggers)]  # anchored: find their own
_IN_RUNS = [i for i, r in enumerate(_RULES) if r.in_runs]


def _runs(text: str, raw: bytes) -> list[tuple[int, int]]:
    """(start, end) of every maximal 20+ run of token characters with a digit, a capital or x-filler
    (`raw`: the text encoded one byte per character)."""
    flat = raw.translate(_WINDOW_TABLE)
    spans, find, mixed = [], flat.find, _MIXED_RE.search
    a = find(_WINDOW_MIN)
    while a >= 0:  # the first 20 "a"s start a run: the character before is a space or nothing
        b = find(b" ", a + 20)
        if b < 0:
            b = len(flat)
        if mixed(text, a, b) or text.find("xxxx", a, b) >= 0:
            spans.append((a, b))
        a = find(_WINDOW_MIN, b)
    return spans


def _positions(low: str, first: Optional[dict], present: list, planned: frozenset):
    """A per-text cache of every index of a literal in `low`, so a literal several rules start at
    is scanned for once. A literal in `planned` was looked up (or ruled out) already: if it is not
    `present` it is absent; `first` (large texts) holds where each present one first occurs."""
    every: dict[str, list] = {}

    def positions(literal: str) -> list:
        out = every.get(literal)
        if out is None:
            if first is not None and literal in first:
                i = first[literal]
            elif literal in planned and literal not in present:
                i = -1
            else:
                i = low.find(literal)
            out = []
            while i >= 0:
                out.append(i)
                i = low.find(literal, i + 1)
            every[literal] = out
        return out
    return positions


# Trigger lookup plan: a trigger is looked up only if the longest other literal inside it was found
# ("private key" under "private", "credential" under "cred"), and a literal inside no other under its
# rarest character, looked up first (a one-character find is a memchr). Small texts lack most rare
# characters and most keywords, and skip ~60% of the substring scans with them; exact, because a
# text holding a literal holds every part of it.
_CHAR_RARITY = "~!^|$@#%&;\\`?*+={}[]<>zqjx9876543210kvwy\"'_bfgphmcudl/(),sn.:rioate- "
# Parts several triggers share, looked up as gates only (never a trigger themselves).
_SHARED_PARTS = ("private", "config", "hook", "http", "sql", "code")


def _plan(triggers: tuple) -> tuple:
    """Nodes (literal, is_trigger, leaf triggers under it, inner nodes under it), roots by character."""
    rank = {c: i for i, c in enumerate(_CHAR_RARITY)}
    parts = [p for p in _SHARED_PARTS if p not in triggers and sum(p in t for t in triggers) >= 2]
    literals = list(triggers) + parts
    children: dict[str, list] = {}
    single = [lit for lit in literals if len(lit) == 1]  # a one-character literal is its own root
    for lit in literals:
        if len(lit) == 1:
            continue
        inside = [o for o in literals if o != lit and o in lit]
        parent = max(inside, key=len) if inside else min(lit, key=lambda c: rank.get(c, -1))
        children.setdefault(parent, []).append(lit)

    def node(lit: str) -> tuple:
        kids = children.get(lit, ())
        leaves = tuple(k for k in kids if k not in children and k in triggers)
        inner = tuple(node(k) for k in kids if k in children)
        return lit, lit in triggers, leaves, inner
    roots = dict.fromkeys([p for p in children if p not in literals] + single)  # characters, first-seen order
    return tuple(node(c) for c in roots)




@dataclass(frozen=True)
class _Plans:
    """Lookup plans, built on first use (~2 ms: hook processes that import the scrubber and never
    call it do not pay for them)."""
    short: tuple
    long: tuple
    token: tuple   # token triggers without a "/": looked up in the windows' distinct "/"-parts
    slash: tuple   # (paths repeat their folders on every line: `ls -R`, globs, tracebacks)
    token_any: tuple
    non_ascii: tuple  # the non-ASCII rules' lowered triggers, looked up in the lowered text itself


@lru_cache(maxsize=None)
def _plans() -> _Plans:
    return _Plans(_plan(_SHORT_TRIGGERS), _plan(_LONG_TRIGGERS),
                  _plan(tuple(t for t in _TOKEN_TRIGGERS if "/" not in t)),
                  _plan(tuple(t for t in _TOKEN_TRIGGERS if "/" in t)), _plan(_TOKEN_ANY_TRIGGERS),
                  _plan(tuple(_NON_ASCII_GATES)))
_PLANNED_SHORT = frozenset(_SHORT_TRIGGERS)
_PLANNED_SHORT_LONG = _PLANNED_SHORT | frozenset(_LONG_TRIGGERS)


def _lookup_source(plan: tuple, depth: int = 1) -> list[str]:
    """Nested `if literal in low:` statements for `plan` (see _present)."""
    lines, pad = [], "    " * depth
    for literal, is_trigger, leaves, inner in plan:
        lines.append(f"{pad}if {literal!r} in low:")
        lines += [f"{pad}    add({literal!r})"] if is_trigger else []
        lines += [f"{pad}    if {t!r} in low: add({t!r})" for t in leaves]
        lines += _lookup_source(inner, depth + 1)
    return lines


_LOOKUPS: dict[int, Callable] = {}


def _present(low: str, plan: tuple, out: list) -> list:
    """Append the triggers of `plan` that occur in `low` to `out`. Each plan runs as a function of
    nested `if literal in low` tests, generated on first use: a loop over the plan's tuples costs
    more than the ~24 scans a small text needs (measured 17 vs 11 us per tldr page)."""
    lookup = _LOOKUPS.get(id(plan))
    if lookup is None:
        source = "def lookup(low, add):\n" + "\n".join(_lookup_source(plan) or ["    pass"])
        namespace: dict = {}
        exec(compile(source, f"<scrubber trigger lookup {len(_LOOKUPS)}>", "exec"), namespace)
        lookup = _LOOKUPS[id(plan)] = namespace["lookup"]
    lookup(low, out.append)
    return out


def _present_at(low: str, plan: tuple, out: list, first: dict) -> list:
    """`_present` that also records each found trigger's first index (large texts: the anchored
    rules then start their scans there, and skip absent triggers without one)."""
    for literal, is_trigger, leaves, inner in plan:
        i = low.find(literal)
        if i >= 0:
            if is_trigger:
                out.append(literal)
                first[literal] = i
            for t in leaves:
                j = low.find(t)
                if j >= 0:
                    out.append(t)
                    first[t] = j
            if inner:
                _present_at(low, inner, out, first)
    return out


# (present triggers, large, has_long) -> rule orders to run; texts of one kind share few combinations
_ACTIVE_CACHE: dict[tuple, tuple] = {}
MAX_ACTIVE_CACHE = 4096  # entries (a few hundred bytes each); cleared whole when full


def _active(present: tuple, large: bool, has_long: bool) -> tuple:
    key = (present, large, has_long)
    orders = _ACTIVE_CACHE.get(key)
    if orders is None:
        active = set(_UNGATED_LARGE if large else _UNGATED).union(*(_GATED[t] for t in present))
        orders = tuple(o for o in sorted(active) if has_long or not _RULES[o].needs_long)
        if len(_ACTIVE_CACHE) >= MAX_ACTIVE_CACHE:
            _ACTIVE_CACHE.clear()
        _ACTIVE_CACHE[key] = orders
    return orders


# Every literal looked up is ASCII without "?", so it occurs in a lowered text exactly where it
# occurs in that text's ASCII copy with "?" for every other character: same length, same offsets,
# and scans of one byte per character instead of two or four (git diffs, logs with emoji).
if not all(t.isascii() and "?" not in t for r in _RULES if not r.non_ascii for t in r.triggers + r.requires):
    raise ValueError("scrubber triggers must be ASCII without '?' (see _ascii)")


def _ascii(low: str) -> str:
    return low if low.isascii() else low.encode("ascii", "replace").decode("ascii")


def _find(text: str) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, rule) spans: earliest first, then longest, then rule order."""
    lowered = text.lower()
    low = _ascii(lowered)
    large = len(text) >= SELF_GATE_MIN_CHARS
    first: dict[str, int] = {}
    plans = _plans()
    present = _present_at(low, plans.short, [], first) if large else _present(low, plans.short, [])
    # One pass finds the runs vendor tokens sit in; most prose has none and skips ~180 lookups.
    raw = text.encode("ascii", "replace")  # one byte per character: offsets are the text's
    runs = _runs(text, raw)
    candidates: list = []
    has_long = False
    if runs:
        has_long = any(_LONG_RUN_RE.search(text, a, b) for a, b in runs)
        windows = _ascii(" ".join(text[max(0, a - TOKEN_REACH):b] for a, b in runs).lower())
        _present(windows, plans.token_any, present)
        if has_long:
            _present("/".join(dict.fromkeys(windows.split("/"))), plans.token, present)
            _present(windows, plans.slash, present)
            if large:
                _present_at(low, plans.long, present, first)
            else:
                _present(low, plans.long, present)
        long_runs = [run for run in runs if run[1] - run[0] >= MIN_IN_RUNS_CHARS]
        if long_runs:
            _match_in_runs(text, long_runs, candidates)
    lookups = (first if large else None, present, _PLANNED_SHORT_LONG if has_long else _PLANNED_SHORT)
    _match_rules(text, low, _active(tuple(present), large, has_long), candidates, lookups)
    if _IN_DIGIT_MASKS:
        _match_digit_masks(text, low, raw.translate(_DIGIT_TABLE), candidates)
    if _NON_ASCII and not text.isascii():
        # their literals are not ASCII: looked up in the lowered text itself, not in its ASCII copy
        # (through a plan as the ASCII triggers are: a label is looked up only if the label inside it
        # or its first non-ASCII letter was found, so `ключ` gates `ключ восстановления` and a text
        # with no `ü` skips every label spelt with one)
        found = _present(lowered, plans.non_ascii, [])
        orders = tuple(sorted({o for t in found for o in _NON_ASCII_GATES[t]}))
        if orders:
            _match_rules(text, text, orders, candidates, (None, [], frozenset()))
    if not candidates:
        return candidates
    candidates.sort()
    chosen, end = [], -1
    for start, neg_end, _, name in candidates:
        if start >= end:
            chosen.append((start, -neg_end, name))
            end = -neg_end
    return _with_repeats(text, chosen)


def _checked(text: str, order: int, rule, m: re.Match, candidates: list) -> None:
    """Add the candidate the rule's check makes of match `m` (one span; not in a template)."""
    span = rule.check(m)
    if span and span[1] > span[0] and not in_template(text, span[0]):
        candidates.append((span[0], -span[1], order, span[2] if len(span) > 2 else rule.name))


def _match_in_runs(text: str, long_runs: list, candidates: list) -> None:
    for order in _IN_RUNS:
        rule = _RULES[order]
        for a, b in long_runs:  # endpos one past the run: a lookahead may need the closing quote
            for m in rule.run_matches(text, a, b + 1):
                _checked(text, order, rule, m, candidates)


def _mask_lines(text: str, mask: bytes, needle: bytes) -> list:
    """(start, end) of each line where `mask` holds `needle`."""
    lines, i = [], mask.find(needle)
    while i >= 0:
        end = text.find("\n", i) % (len(text) + 1)  # -1 -> len(text)
        lines.append((text.rfind("\n", 0, i) + 1, end))
        i = mask.find(needle, end + 1)
    return lines


def _match_digit_masks(text: str, low: str, mask: bytes, candidates: list) -> None:
    """The digit_masks rules. Without triggers (card numbers), each is searched only on the lines
    where `mask` holds one of its masks: their matches lie on one line and hold one, so they are
    those of a whole-text search. With triggers (PIN labels, anchored), the same in a small text
    (its label literals cost more than a search of the few lines with 4 digits in a row); a large
    one (tool output: many such lines) whose mask holds one runs the rule at its triggers."""
    if all(mask.find(floor) < 0 for floor in MASK_FLOORS):
        return
    found: dict = {}
    for order in _IN_DIGIT_MASKS:
        rule = _RULES[order]
        if rule.triggers and len(text) >= SELF_GATE_MIN_CHARS:
            if any(mask.find(n) >= 0 for n in rule.digit_masks):  # its triggers: found by the rule
                _match_rules(text, low, (order,), candidates, (None, [], frozenset()))
            continue
        lines = set()
        for needle in rule.digit_masks:
            if needle not in found:
                found[needle] = _mask_lines(text, mask, needle)
            lines.update(found[needle])
        for a, b in sorted(lines):
            for m in rule.run_matches(text, a, b):
                if not (rule.word_start and m.start() and _is_word(text[m.start() - 1])):
                    _checked(text, order, rule, m, candidates)


_REGEXES: list = [None] * len(_RULES)  # by rule order, compiled on first use (import stays light)


def _match_rules(text: str, low: str, orders: tuple, candidates: list, lookups: tuple) -> None:
    """Run the rules `orders` over the text; `lookups`: what _positions needs for anchored rules."""
    positions = None
    anchored_ok = len(low) == len(text)  # lower() may change length ("İ"): then no anchoring
    for order in orders:
        rule = _RULES[order]
        if rule.requires and not any(r in low for r in rule.requires):
            continue
        if (rule.anchored or rule.one_line) and anchored_ok:
            if positions is None:
                positions = _positions(low, *lookups)
            found = rule.matches(text, low, positions)
        else:  # what Rule.matches does here, without a generator per rule and text
            regex = _REGEXES[order]
            if regex is None:
                regex = _REGEXES[order] = rule.regex()
            found = regex.finditer(text)
            if rule.word_start:
                found = [m for m in found if not (m.start() and _is_word(text[m.start() - 1]))]
        for m in found:
            span = rule.check(m)
            if not span:
                continue
            for span in (span if isinstance(span, list) else (span,)):  # a table: one span per row
                if span[1] > span[0] and (rule.vendor or not in_template(text, span[0])):
                    candidates.append((span[0], -span[1], order, span[2] if len(span) > 2 else rule.name))


MIN_REPEAT_CHARS = 12  # a found secret seen again elsewhere in the text (a later curl line, a second
                       # key that names it as an id) is redacted there too; shorter values are words


def _with_repeats(text: str, chosen: list) -> list:
    """Add every other occurrence of each redacted value, where it overlaps no chosen span."""
    extra = []
    for start, end, name in chosen:
        value = text[start:end]
        if end - start < MIN_REPEAT_CHARS or "\n" in value:
            continue
        i = text.find(value)
        while i >= 0:
            if i != start:
                extra.append((i, i + len(value), name))
            i = text.find(value, i + 1)
    if not extra:
        return chosen
    spans, end = [], -1
    for start, stop, name in sorted(chosen + extra, key=lambda s: (s[0], -s[1])):
        if start >= end:
            spans.append((start, stop, name))
            end = stop
    return spans


def scrub(text: str) -> tuple[str, tuple[Finding, ...]]:
    """Replace every secret in `text` with `[REDACTED:rule]`, keeping every line break in place."""
    findings: list[Finding] = []
    for _ in range(MAX_PASSES):
        spans = _find(text)
        if not spans:
            break
        out, pos, line = [], 0, 1
        for start, end, name in spans:
            line += text.count("\n", pos, start)
            findings.append(Finding(name, line))
            secret = text[start:end]
            out += (text[pos:start], f"[REDACTED:{name}]", "".join(c for c in secret if c in _BREAKS))
            line += secret.count("\n")
            pos = end
        out.append(text[pos:])
        text = "".join(out)
    if findings:
        findings.sort(key=lambda f: (f.line, f.rule))
        log.info("scrubbed %d secret(s): %s", len(findings),
                 ", ".join(f"{k}={v}" for k, v in summarize(findings).items()))
    return text, tuple(findings)


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    """Count findings by rule name, sorted by name (for reports and logs; never the secret)."""
    return dict(sorted(Counter(f.rule for f in findings).items()))
