"""The hook's stdin JSON, type-checked field by field before anything uses it. Standard library only.

Claude Code sends documented types (reference/claude-code-hooks.md §1), but a hook must not trust
them: `"transcript_path": 1` once became `open(1)`, the hook's own stdout, and the hook died with
exit 120 (issue 14, finding 3). Every field is checked here; a field of the wrong type counts as
absent (and is named in the hook log), never coerced with `str()`. Unknown fields are ignored.
"""
from __future__ import annotations

from .frozen import field, frozen

TYPE_CHECKING = False  # typing costs a fresh hook process ~2 ms to import (issue 18); annotations are strings
if TYPE_CHECKING:
    from typing import Any

MAX_ID_CHARS = 256  # session ids are UUIDs (36); anything much longer is not one
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux
MAX_NAME_CHARS = 256  # event, tool and source names
# PostToolUseFailure's `error`: Claude Code sends at most ~10,000 characters of a failed output.
MAX_ERROR_CHARS = 1_000_000
# A prompt longer than this is searched by its first part only: query parsing and FTS work grow
# with the text, and the hook must answer inside its deadline (a pasted log is not a question).
MAX_QUERY_CHARS = 10_000


@frozen
class HookInput:
    event: str = ""
    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    prompt: str | None = None
    source: str | None = None
    tool_name: str = ""
    tool_input: dict = field(default_factory=dict)
    tool_response: Any = None  # str, dict or list as the tool produced it; anything else is None
    error: str = ""  # PostToolUseFailure: the failed tool's (client-truncated) output
    rejected: tuple[str, ...] = ()  # fields present with the wrong type or size


def _text(payload: dict, key: str, limit: int, rejected: list[str], *, path: bool = False) -> str | None:
    value = payload.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit or (path and "\x00" in value):
        rejected.append(key)
        return None
    return value


def parse_hook_input(payload: dict) -> HookInput:
    """A HookInput from the decoded stdin object (which must be a dict)."""
    rejected: list[str] = []
    event = _text(payload, "hook_event_name", MAX_NAME_CHARS, rejected) or ""
    session = _text(payload, "session_id", MAX_ID_CHARS, rejected) or ""
    transcript = _text(payload, "transcript_path", MAX_PATH_CHARS, rejected, path=True) or ""
    cwd = _text(payload, "cwd", MAX_PATH_CHARS, rejected, path=True) or ""
    source = _text(payload, "source", MAX_NAME_CHARS, rejected)
    tool = _text(payload, "tool_name", MAX_NAME_CHARS, rejected) or ""
    error = _text(payload, "error", MAX_ERROR_CHARS, rejected) or ""
    prompt = payload.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        rejected.append("prompt")
        prompt = None
    tool_input = payload.get("tool_input")
    if tool_input is not None and not isinstance(tool_input, dict):
        rejected.append("tool_input")
    tool_response = payload.get("tool_response")
    if tool_response is not None and not isinstance(tool_response, (str, dict, list)):
        rejected.append("tool_response")
        tool_response = None
    return HookInput(event=event, session_id=session, transcript_path=transcript, cwd=cwd,
                     prompt=prompt[:MAX_QUERY_CHARS] if prompt is not None else None, source=source,
                     tool_name=tool, tool_input=tool_input if isinstance(tool_input, dict) else {},
                     tool_response=tool_response, error=error, rejected=tuple(rejected))
