"""Claude Code hook handlers. The scripts in hooks/ only call `main(<event>)`.

Contract (see README, "Hooks"): read one JSON object from stdin, print at most one JSON object on
one line, exit 0. Hooks fail open: any error, a missing or corrupt index, garbage on stdin or a
blown deadline means exit 0 with no output and one line in a bounded log file
(`$XDG_STATE_HOME/vaultrag/hooks.log`). Standard library only: no numpy, model2vec, tiktoken or
yaml on this path (a test checks `sys.modules`).
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import time
from pathlib import Path

MAX_STDIN_BYTES = 32 * 1024 * 1024  # PostToolUse payloads carry whole tool outputs; beyond this, give up
LOG_MAX_BYTES = 256 * 1024  # the log keeps its newest half when it grows past this
SESSION_MAX_CHUNKS = 500  # per-session memory of injected chunks (oldest forgotten first)
SESSION_TTL_S = 7 * 24 * 3600  # session state files older than this are deleted
# Prompt sources that are not a person typing: wakeups and polls repeat, so skip them.
SKIPPED_PROMPT_SOURCES = frozenset({"system", "loop_wakeup", "schedule_wakeup", "poll_event"})
# Fields of tool_input that say what the tool is looking for (PreToolUse query).
# Paths and globs are left out: they name places, not topics, and dilute the evidence gate.
QUERY_FIELDS = ("pattern", "query", "prompt", "description", "url")


class Deadline(Exception):
    pass


def _state_dir() -> Path:
    from .config import xdg_dir

    return xdg_dir("state")


def log_line(message: str) -> None:
    """Append one line to the hook log, keeping it bounded. Never raises."""
    try:
        path = _state_dir() / "hooks.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            data = path.read_bytes()[-LOG_MAX_BYTES // 2:]
            path.write_bytes(data[data.find(b"\n") + 1:])
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message[:500]}\n")
    except Exception:
        pass


def _emit(event: str, **fields) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, **fields}}, ensure_ascii=False)


# -- session memory: don't inject the same chunk twice --------------------------------------------
def _session_file(session_id: str) -> Path:
    return _state_dir() / "sessions" / (hashlib.sha256(session_id.encode()).hexdigest()[:24] + ".json")


def _load_seen(session_id: str) -> list[str]:
    if not session_id:
        return []
    try:
        data = json.loads(_session_file(session_id).read_text(encoding="utf-8"))
        return [str(x) for x in data][-SESSION_MAX_CHUNKS:] if isinstance(data, list) else []
    except (OSError, ValueError):
        return []


def _save_seen(session_id: str, seen: list[str]) -> None:
    if not session_id:
        return
    path = _session_file(session_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(seen[-SESSION_MAX_CHUNKS:]), encoding="utf-8")
        os.replace(tmp, path)
        now = time.time()
        for old in path.parent.glob("*.json"):
            if now - old.stat().st_mtime > SESSION_TTL_S:
                old.unlink()
    except OSError:
        pass


def _seen_key(hit) -> str:
    """Identity of an injected chunk: a changed chunk (new hash or place) counts as new."""
    return f"{hit.path}|{hit.content_hash}|{hit.line_start}"


def context_for(query: str, session_id: str, event: str, cfg) -> str | None:
    """The hook output for `query`, or None (no evidence, or everything already injected)."""
    import dataclasses

    from .render import fit_budget, render_context
    from .retrieve.inject import hook_answer

    if not query.strip():
        return None
    # Retrieve with a generous budget first, drop what this session has seen, then fit the budget.
    # hook_answer: search, then the stricter per-vault decision for unsolicited injection.
    ans = hook_answer(query, cfg, max_tokens=cfg.hook_max_tokens * 4)
    if ans.status != "ok":
        return None
    seen = _load_seen(session_id)
    fresh = [h for h in ans.hits if _seen_key(h) not in seen]
    hits = fit_budget(fresh, cfg.hook_max_tokens)
    if not hits:
        return None
    _save_seen(session_id, seen + [_seen_key(h) for h in hits])
    block = render_context(dataclasses.replace(ans, hits=tuple(hits)))
    return _emit(event, additionalContext=block) if block else None


def pretool_query(tool_name: str, tool_input: dict) -> str:
    parts = [str(tool_input[f]) for f in QUERY_FIELDS if isinstance(tool_input.get(f), str)]
    return " ".join(parts)[:2000]


def latest_user_prompt(transcript_path: str, max_bytes: int = 256 * 1024) -> str:
    """The last user text in the transcript JSONL (read from its tail only; may lag a turn)."""
    try:
        with open(transcript_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            lines = fh.read().decode("utf-8", errors="replace").splitlines()
    except (OSError, TypeError):
        return ""
    for line in reversed(lines):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("type") != "user":
            continue
        content = (rec.get("message") or {}).get("content")
        if isinstance(content, str):
            return content[:2000]
        if isinstance(content, list):
            texts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
            if texts:
                return " ".join(texts)[:2000]
    return ""


def handle(payload: dict, expected: str) -> str | None:
    """Dispatch one hook call. Returns the single JSON line to print, or None."""
    from .config import load_config

    event = payload.get("hook_event_name")
    if event != expected:
        log_line(f"{expected}: ignored event {event!r}")
        return None
    cfg = load_config()
    session = str(payload.get("session_id") or "")
    if event == "UserPromptSubmit":
        if payload.get("source") in SKIPPED_PROMPT_SOURCES:
            return None
        prompt = payload.get("prompt")
        return context_for(prompt, session, event, cfg) if isinstance(prompt, str) else None
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    if event == "PreToolUse":
        if tool not in cfg.pretool_tools:
            return None
        return context_for(pretool_query(str(tool), tool_input), session, event, cfg)
    if event == "PostToolUse":
        from .compress import compress_tool_output

        prompt = latest_user_prompt(payload.get("transcript_path") or "")
        new = compress_tool_output(str(tool), tool_input, payload.get("tool_response"), prompt=prompt,
                                   budget_chars=cfg.compress_budget_chars,
                                   threshold_chars=cfg.compress_threshold_chars)
        return _emit(event, updatedToolOutput=new) if new is not None else None
    return None


def main(expected: str) -> int:
    """Entry point of a hook script: always exit 0."""
    started = time.monotonic()

    def on_alarm(*_):
        raise Deadline()

    try:
        from .config import load_config

        timeout_ms = int(os.environ.get("VAULTRAG_HOOK_TIMEOUT_MS") or 0) or load_config().hook_timeout_ms
        if hasattr(signal, "setitimer"):
            signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, timeout_ms / 1000)
        raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
        if len(raw) > MAX_STDIN_BYTES:
            log_line(f"{expected}: stdin over {MAX_STDIN_BYTES} bytes, skipped")
            return 0
        payload = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
        if not isinstance(payload, dict):
            log_line(f"{expected}: stdin is not a JSON object ({len(raw)} bytes)")
            return 0
        out = handle(payload, expected)
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except Deadline:
        log_line(f"{expected}: gave up at the {time.monotonic() - started:.2f} s deadline")
    except BaseException as exc:  # fail open, whatever happened (KeyboardInterrupt and SystemExit too)
        log_line(f"{expected}: {type(exc).__name__}: {str(exc)[:300]}")
    return 0
