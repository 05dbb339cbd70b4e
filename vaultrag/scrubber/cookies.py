"""Session cookies: whoever holds one is logged in, as with a password.

- session-cookie: each random-looking value of a cookie header or cookie option (`Cookie: a=1;
  session=X`, `Set-Cookie: sessionid=X; Path=/`, `curl --cookie 'sid=X'`, `document.cookie = "..."`),
  and a session cookie named on its own (`PHPSESSID=X`, `JSESSIONID: X`, `"sessionid": "X"`,
  `_shop_session=X`). The value must look random (16+ characters) and not be a
  UUID (a session's id in a log or a hook payload names it, it does not open it) nor a link or a
  path (`Claude-Session: https://claude.ai/code/session_...` in a commit message); cookie attributes
  (`Path=/`, `SameSite=Lax`, `Expires=...`) and preferences (`theme=dark`) stay.
"""
from __future__ import annotations

import re
from typing import Optional

from .judge import MAX_WORDINESS_VENDOR, is_placeholder, looks_random
from .rules import PRIORITY_GENERIC, add

MIN_COOKIE_VALUE = 16  # chars; session ids are 20-200, preferences and flags are short
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PAIR_RE = re.compile(r"[ \t]*(?P<n>[^\s=;,\"']{1,60})=(?P<v>[^\s;,\"']{%d,4000})" % MIN_COOKIE_VALUE)


def _session_value(value: str) -> bool:
    if "://" in value or value.startswith(("/", "~", ".")):
        return False  # a link to a session (`Claude-Session: https://...`) or a path
    return (not is_placeholder(value) and not _UUID_RE.fullmatch(value)
            and looks_random(value, MAX_WORDINESS_VENDOR))


def _header(m: re.Match) -> Optional[list]:
    """Each `name=value` of the header whose value looks like a session's."""
    a = m.start("s")
    spans = []
    for part in re.finditer(r"[^;]+", m.group("s")):
        pair = _PAIR_RE.match(part.group())
        if pair and _session_value(pair.group("v")):
            start = a + part.start() + pair.start("v")
            spans.append((start, start + len(pair.group("v"))))
    return spans or None


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
MAX_NAME_WALKBACK = 30  # chars of the name before "sess" (`ASP.NET_SessionId`, `_my_shop_session`)


def _named(m: re.Match) -> Optional[tuple]:
    """The match starts at "sess": its name starts where the identifier does (not inside `possess`,
    `assess`: a name ends "sess..." there, but the word before it is prose, and its value is judged)."""
    text, a = m.string, m.start()
    start = a
    while start > 0 and text[start - 1] in _NAME_CHARS and a - start < MAX_NAME_WALKBACK:
        start -= 1
    if start and text[start - 1] in _NAME_CHARS:
        return None  # a longer identifier than a cookie name
    return m.span("s") if _session_value(m.group("s")) else None


# `Cookie:` / `Set-Cookie:` headers (also `-H 'Cookie: ...'`), `--cookie` / `-b` of curl, `cookie = "..."`.
add("session-cookie", r"""(?<![\w-])(?i:set-cookie|cookie|--cookie)["']?(?:[ \t]*[:=][ \t]*|[ \t]+)["']?"""
    r"""(?P<s>[^\s"'=;]{1,60}=[^\n"']*)""", ["cookie"], _header, needs_long=False, vendor=False,
    anchored=False, priority=PRIORITY_GENERIC, one_line=True)
# A session cookie by its name: PHPSESSID, JSESSIONID, ASP.NET_SessionId, sessionid, _app_session,
# session (Express's connect.sid only in a cookie header: "sid" alone is in too many names).
# (the regex starts at "sess", where the engine found it; the check walks back over the name)
add("session-cookie", r"""(?i:sess)[\w-]{0,20}["']?[ \t]*(?:=|:(?!//))[ \t]*["']?(?P<s>[^\s;,"'&<>]{%d,4000})"""
    % MIN_COOKIE_VALUE, ["sess"], _named, needs_long=False, vendor=False, anchored=True, priority=PRIORITY_GENERIC,
    line_needs="=:")
