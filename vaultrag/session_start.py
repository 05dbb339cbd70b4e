"""SessionStart: tell the user, once per session, when the hooks are installed but cannot work.

The message goes to the user as `systemMessage` (Claude does not see it); nothing is printed when
all is well. Only the fast checks run (config, vault folder, index present and readable; no vault
scan, no subprocess), so a session start costs a few milliseconds. Standard library only.
"""
from __future__ import annotations

import json

# SessionStart sources that begin a session the user looks at. `compact` continues one that was
# already told.
TOLD_ON = frozenset({"startup", "resume", "clear", "fork"})
MAX_MESSAGE_CHARS = 1000  # a notice, not a report: the details are in `vaultrag doctor`


def session_message(payload: dict) -> str | None:
    """The hook's stdout line for a SessionStart payload, or None when there is nothing to say."""
    from .doctor import quick_problems
    from .errors import fix_command, given_location

    if payload.get("source", "startup") not in TOLD_ON:
        return None
    # A hook process checks the configured index (nothing given); `vaultrag serve --vault B --store X`,
    # answering a forwarded SessionStart, checks X, which its hooks search, and its fixes name X.
    problems = [p for p in quick_problems(given_location()) if p.severity == "error"]
    if not problems:
        return None
    return json.dumps({"systemMessage": notice(problems, fix_command("doctor"))}, ensure_ascii=False)


def notice(problems, details: str) -> str:
    """The problems in at most MAX_MESSAGE_CHARS, each fix command whole (a cut one can rebuild
    another index, or none): the first problem's message is shortened to make room, problems that
    do not fit are counted, `vaultrag doctor` always named. Only fix commands longer than the
    notice itself make it longer."""
    head = "vaultrag: the hooks are installed but will not inject notes: "
    tail = f". Details: {details}"
    room = MAX_MESSAGE_CHARS - len(head) - len(tail) - len("; and 99 more")
    kept: list[str] = []
    for p in problems:
        part = f"{p.problem} (fix: {p.fix})"
        if kept and sum(len(k) + 2 for k in kept) + len(part) > room:
            break
        if not kept and len(part) > room:
            cut = max(60, room - len(p.fix) - len(" (fix: )"))
            part = (p.problem if len(p.problem) <= cut else p.problem[:cut - 1] + "…") + f" (fix: {p.fix})"
        kept.append(part)
    more = f"; and {len(problems) - len(kept)} more" if len(kept) < len(problems) else ""
    return head + "; ".join(kept) + more + tail
