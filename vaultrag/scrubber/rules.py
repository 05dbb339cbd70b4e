"""The rule type, its registry, and the checks that turn a regex match into a span to redact.

A rule is a regex (compiled on first use), lowercase trigger literals that gate it, and a check:
match -> (start, end) or None. `vendors.py` and `generic.py` fill the registry; `engine.py` runs it.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from .judge import MAX_WORDINESS_VENDOR, is_filled_shape, is_filler, is_placeholder, looks_random

Check = Callable[[re.Match], Optional[tuple]]
MIN_PEM_BODY = 40        # base64 chars in an unterminated block; a real key has hundreds
MIN_PEM_BODY_CLOSED = 16  # a whole BEGIN..END block needs less evidence (`MIIE...` is filler)
COMPILED: dict[str, re.Pattern] = {}

PRIORITY_ARMOUR, PRIORITY_VENDOR, PRIORITY_GENERIC = 0, 1, 2  # tie order for the same span


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str       # compiled on first use: import stays ~2 ms for hook processes
    triggers: tuple    # lowercase literals; the regex runs only if one is in the text (empty: always)
    check: Check       # match -> span to redact, or None
    needs_long: bool   # the secret contains a 20-char [A-Za-z0-9_-] run
    vendor: bool       # vendor shape; context rules (not vendor) never fire inside `{{ ... }}`
    anchored: bool     # the regex starts at one of the triggers: try it only where they occur
    word_start: bool   # a match must not follow a letter, digit or underscore
    priority: int
    names: tuple       # every name the check may report (its own first)
    in_token: bool     # (vendor) the triggers occur inside the secret's own token run, so they are
                       # looked up in the text's long runs only, not in the whole text
    requires: tuple    # lowercase literals of which one must also be in the text (empty: none)
    in_runs: bool = False  # no literal to gate on: match only inside the text's random-looking runs
    one_line: bool = False  # a match lies on one line and holds one of the triggers: given the
                            # trigger positions, the regex searches only the lines that hold one
    line_needs: str = ""   # (anchored) characters of which one must follow the match start on its
                           # line (a separator after a keyword): a keyword without one is not tried
    non_ascii: bool = False  # its triggers are not ASCII (labels in other scripts): looked up in the
                             # text itself, and only in texts that hold a non-ASCII character
    digit_masks: tuple = ()  # no literal to gate on: search only the lines whose digit mask (each
                             # digit "0", each space or dash " ", see engine) holds one of these

    def regex(self) -> re.Pattern:
        regex = COMPILED.get(self.pattern)
        if regex is None:
            regex = COMPILED[self.pattern] = re.compile(self.pattern)
        return regex

    def run_matches(self, text: str, pos: int, endpos: int) -> Iterable[re.Match]:
        """Matches inside text[pos:endpos] (lookbehinds still see the characters before pos)."""
        return self.regex().finditer(text, pos, endpos)

    def matches(self, text: str, low: str, positions: Optional[Callable[[str], list]] = None
                ) -> Iterable[re.Match]:
        """Matches in `text`; `positions(trigger)` (the engine's per-text cache) gives where each
        trigger occurs in `low`, so rules that share a keyword share one scan for it."""
        regex = self.regex()
        aligned = len(low) == len(text)  # lower() may change length ("İ"): then offsets differ
        if self.one_line and aligned and positions is not None:
            yield from self._line_matches(text, regex, positions)
            return
        if not self.anchored or not aligned:
            for m in regex.finditer(text):
                if not (self.word_start and m.start() and _is_word(text[m.start() - 1])):
                    yield m
            return
        # A case-insensitive keyword start defeats re's prefix search (every "s", "t", "k" is a
        # candidate); str.find over the lowered text is ~10x faster on code and tool output.
        match, word_start = regex.match, self.word_start
        needs = self.line_needs and _char_class(self.line_needs).search
        for trigger in self.triggers:
            need_at = line_end = -1  # next `line_needs` character and next line break, cached
            for i in (positions or _positions(low))(trigger):
                if word_start and i and _is_word(text[i - 1]):
                    continue  # (tested first: cheaper than the match it saves)
                if needs:
                    if line_end < i:
                        line_end = text.find("\n", i) % (len(text) + 1)  # -1 -> len(text)
                    if need_at < i:
                        found = needs(text, i)
                        need_at = found.start() if found else len(text) + 1
                    if need_at > line_end:
                        continue  # no separator before the line ends: the regex cannot match
                m = match(text, i)
                if m:
                    yield m

    def _line_matches(self, text: str, regex: re.Pattern, positions: Callable[[str], list]
                      ) -> Iterable[re.Match]:
        """finditer over just the lines that hold a trigger: the same matches, as none crosses a
        line break or lacks a trigger."""
        line_end = -1
        for p in sorted({p for t in self.triggers for p in positions(t)}):
            if p < line_end:
                continue  # that line was searched
            line_end = text.find("\n", p) % (len(text) + 1)
            for m in regex.finditer(text, text.rfind("\n", 0, p) + 1, line_end):
                if not (self.word_start and m.start() and _is_word(text[m.start() - 1])):
                    yield m


def _char_class(chars: str) -> re.Pattern:
    pattern = "[" + re.escape(chars) + "]"
    regex = COMPILED.get(pattern)
    if regex is None:
        regex = COMPILED[pattern] = re.compile(pattern)
    return regex


def _positions(low: str) -> Callable[[str], list]:
    """Every index where a literal occurs in `low` (overlapping occurrences too)."""
    def find_all(literal: str) -> list:
        out, i = [], low.find(literal)
        while i >= 0:
            out.append(i)
            i = low.find(literal, i + 1)
        return out
    return find_all


REGISTRY: list[Rule] = []


def add(name: str, pattern: str, triggers: Iterable[str], check: Check, *, needs_long: bool,
        vendor: bool, anchored: bool, priority: int, names: tuple = (), in_token: bool = False,
        requires: tuple = (), in_runs: bool = False, one_line: bool = False,
        line_needs: str = "", non_ascii: bool = False, digit_masks: tuple = ()) -> None:
    # A leading \b stops re from searching for the literal prefix (60 vs 3,000 MB/s): drop it
    # and test the boundary in Rule.matches instead.
    word_start = pattern.startswith(r"\b")
    REGISTRY.append(Rule(name, pattern[2:] if word_start else pattern, tuple(triggers), check,
                         needs_long, vendor, anchored, word_start, priority, (name, *names), in_token,
                         tuple(requires), in_runs, one_line, line_needs, non_ascii, tuple(digit_masks)))


# ---------------------------------------------------------------------------- checks
def target(m: re.Match) -> tuple[int, int]:
    """The span to redact: named group `s` (or `s2`...) when it took part, else the whole match."""
    for group in ("s", "s2", "s3"):
        if group in m.re.groupindex and m.start(group) >= 0:
            return m.span(group)
    return m.span()


def plain(m: re.Match) -> Optional[tuple]:
    """Vendor shapes: the prefix and exact shape decide, even with a filler tail. `AKIAZZZZZZZZZZZZZZZZ`
    or `ghp_xxxx...` of the true length is a template filled in to the letter, and users would
    rather lose a placeholder than keep a real key that happens to look like one (a random AKIA id
    can be all capitals, AWS's own `...EXAMPLE` ids are real-shaped). Template syntax (`<..>`, `${}`,
    `...`) never fits a vendor alphabet, so it stays untouched."""
    return target(m)


def literal(m: re.Match) -> Optional[tuple]:
    """Context rules (netrc, connection strings): any value but a placeholder or a bare name."""
    a, b = target(m)
    return None if is_placeholder(m.string[a:b]) else (a, b)


def random(m: re.Match) -> Optional[tuple]:
    a, b = target(m)
    value = m.string[a:b]
    return None if is_placeholder(value) or not looks_random(value) else (a, b)


def random_span(text: str, a: int, b: int) -> Optional[tuple]:
    """Vendor shape with a loose randomness test (the prefix already says "token")."""
    value = text[a:b]
    if is_filled_shape(value):
        return a, b  # the exact shape with an x/one-character tail: a filled-in template, see plain()
    return None if is_filler(value) or not looks_random(value, MAX_WORDINESS_VENDOR) else (a, b)


def random_vendor(m: re.Match) -> Optional[tuple]:
    return random_span(m.string, *target(m))


def _b64decode(s: str, urlsafe: bool) -> Optional[bytes]:
    try:
        pad = "=" * (-len(s) % 4)
        return base64.urlsafe_b64decode(s + pad) if urlsafe else base64.b64decode(s + pad, validate=True)
    except (binascii.Error, ValueError):
        return None


def jwt(m: re.Match) -> Optional[tuple]:
    decoded = _b64decode(m.group().split(".", 1)[0], urlsafe=True)
    return m.span() if decoded and (b'"alg"' in decoded or b'"typ"' in decoded) else None


def wrapped_jwt(m: re.Match) -> Optional[tuple]:
    """A JWT inside standard base64 (`ZXlK...` = base64 of `eyJ`), as Kubernetes secrets hold them."""
    decoded = _b64decode(m.group().rstrip("="), urlsafe=False)
    return m.span() if decoded and re.match(rb'eyJ[\w-]{8,}\.eyJ', decoded) else None


def wrapped_pem(m: re.Match) -> Optional[tuple]:
    """A private key inside base64 (`LS0tLS1CRUdJTi...` = base64 of `-----BEGIN`): kubeconfig
    `client-key-data`, Kubernetes secrets, CI variables."""
    value = m.group()
    decoded = _b64decode(value[:len(value) - len(value) % 4], urlsafe=False)
    return m.span() if decoded and b"PRIVATE KEY" in decoded[:80] else None


def basic(m: re.Match) -> Optional[tuple]:
    a, b = target(m)
    raw = _b64decode(m.string[a:b].rstrip("="), urlsafe=False)
    try:
        text = raw.decode() if raw else ""
    except UnicodeDecodeError:
        return None
    user, sep, pw = text.partition(":")  # "Basic authentication" is not base64 of user:password
    return (a, b) if sep and user.isprintable() and pw and not is_placeholder(pw) else None


_PEM_HEADERS_RE = re.compile(r"-----[A-Z ]+-----|\\n|^[\w-]+: .*$", re.M)  # armour, PGP headers


def pem(m: re.Match) -> Optional[tuple]:
    closed = "-----END" in m.group()
    body = _PEM_HEADERS_RE.sub("", m.group())
    if closed and ("..." in body or "\u2026" in body or (len(body) < 100 and is_filler(body.strip() or "-"))):
        return None  # `MIIEpAIBAAKCAQEA...` in documentation
    need = MIN_PEM_BODY_CLOSED if closed else MIN_PEM_BODY
    return m.span() if len(re.findall(r"[A-Za-z0-9+/]", body)) >= need else None


def around(prefix_re: re.Pattern) -> Check:
    """For regexes that start at a literal in the middle of a token (Telegram's `:`, Discord's
    first `.`): extend the span back over the part `prefix_re` matches at the end of the text."""
    def check(m: re.Match) -> Optional[tuple]:
        before = prefix_re.search(m.string, max(0, m.start() - 40), m.start())
        return random_span(m.string, before.start("p"), m.end()) if before else None
    return check


def in_template(text: str, pos: int) -> bool:
    """Inside an unclosed `{{` on the same line: a documented placeholder (`{{mysql://u:p@h}}`)."""
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    return line.rfind("{{") > line.rfind("}}")
