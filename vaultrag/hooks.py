"""Claude Code hook handlers. The scripts in hooks/ only call `main(<event>)`.

Contract (see README, "Hooks"): read one JSON object from stdin, print at most one JSON object on
one line, exit 0. Hooks fail open: any error, a missing or corrupt index, garbage on stdin or a
blown deadline means exit 0 with no output and one line in a bounded log file
(`$XDG_STATE_HOME/vaultrag/hooks.log`). Standard library only: no numpy, model2vec, tiktoken or
yaml on this path (a test checks `sys.modules`).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

# `json` and `signal` are imported where used: a hook answered by a running server (serve_client)
# never needs them (issue 16: the forwarded hook is interpreter start plus a socket round trip).

MAX_STDIN_BYTES = 32 * 1024 * 1024  # PostToolUse payloads carry whole tool outputs; beyond this, give up
# json.loads runs in C, where the deadline's SIGALRM cannot stop it, at ~0.2-0.45 us per value: 32 MB
# of "0,0,0..." took 6.9 s. Counting ',' and ':' (an upper bound on the values; ~10 ms at 32 MB)
# refuses such input before parsing. Commas inside strings count too, so a tool output with over a
# million of them (a 20 MB CSV dump) is skipped as well: it fails open, uncompressed.
MAX_JSON_SEPARATORS = 1_000_000
LOG_MAX_BYTES = 256 * 1024  # the log keeps its newest half when it grows past this
LOG_LINE_CHARS = 500  # one log line at most; the rest of a message is cut, but not its fix command (errors.shorten)
LOG_SCRUB_CHARS = 20_000  # scrubbed before the cut, so a secret is never cut into an undetectable piece
TRANSCRIPT_TAIL_BYTES = 256 * 1024  # the latest user prompt is near the end of the transcript
# RLIMIT_DATA of a hook process (heap and anonymous maps; not the read-only mmap of the index or
# shared libraries): peak RSS stays under 256 MB with the interpreter's ~25 MB of code and stack.
# The largest real payloads seen (a 25 MB Bash output at the stdin cap) peak at ~155 MB.
HOOK_MAX_DATA_BYTES = 200 * 1024 * 1024
# SQLite waits for a writer's lock this share of the hook deadline at most (then the hook gives up
# and fails open): its busy wait runs in C, where the deadline's SIGALRM cannot interrupt it.
BUSY_SHARE_OF_DEADLINE = 0.3
# Prompt sources that are not a person typing: wakeups and polls repeat, so skip them.
SKIPPED_PROMPT_SOURCES = frozenset({"system", "loop_wakeup", "schedule_wakeup", "poll_event"})
# Fields of tool_input that say what the tool is looking for (PreToolUse query).
# Paths and globs are left out: they name places, not topics, and dilute the evidence gate.
QUERY_FIELDS = ("pattern", "query", "prompt", "description", "url")


class Deadline(BaseException):
    """The hook's deadline (SIGALRM). A BaseException, so that no `except Exception` on the way
    (a channel that degrades and says so, a best-effort cache) swallows it and lets the hook run on
    past its budget: main() catches it, logs it and exits 0 with no output."""


def _state_dir() -> Path:
    from .config import xdg_dir

    return xdg_dir("state")


def log_stamp(now: float | None = None) -> str:
    """Local time to the millisecond, `2026-12-03T12:13:12.345`: doctor orders a line against the
    index file's mtime (a hook failing on a damaged index, then a rebuild, can share one second)."""
    now = time.time() if now is None else now
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"


def log_line(message: str) -> None:
    """Append one scrubbed line to the hook log (0600), keeping it bounded. Never raises.

    With no usable state folder (e.g. HOME empty), the line goes to stderr, which Claude Code
    shows in its debug output."""
    try:
        from .errors import shorten
        from .scrubber import scrub

        line = f"{log_stamp()} {shorten(scrub(shorten(message, LOG_SCRUB_CHARS))[0], LOG_LINE_CHARS)}"
        line = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                       for c in line) + "\n"
    except Exception:
        line = f"{log_stamp()} (unloggable message)\n"
    try:
        from .safe_io import append_private, private_dir, read_regular, write_private

        path = private_dir(_state_dir()) / "hooks.log"
        try:
            size = os.lstat(path).st_size
        except FileNotFoundError:
            size = 0
        if size > LOG_MAX_BYTES:
            data = read_regular(path, LOG_MAX_BYTES // 2, tail=True, follow_symlinks=False)
            write_private(path, data[data.find(b"\n") + 1:])
        append_private(path, line.encode("utf-8", "replace"))
    except Exception:
        try:
            sys.stderr.write(f"vaultrag hook: {line}")
        except Exception:
            pass


def _emit(event: str, **fields) -> str:
    import json

    return json.dumps({"hookSpecificOutput": {"hookEventName": event, **fields}}, ensure_ascii=False)


def _seen_key(hit) -> str:
    """Identity of an injected chunk: a changed chunk (new hash or place) counts as new."""
    return f"{hit.path}|{hit.content_hash}|{hit.line_start}"


def context_for(query: str, session_id: str, event: str, cfg, store=None) -> str | None:
    """The hook output for `query`, or None (no evidence, or nothing new for this session)."""
    if store is None and query.strip():  # a fresh hook process (no server answered): PostgreSQL or not
        from .store.open import is_postgres, store_location

        if is_postgres(store_location(cfg)):
            from .store.postgres.hook_policy import in_process_refusal

            why = in_process_refusal(cfg)
            if why:
                log_line(f"{event}: {why}")
                return None
    from .frozen import replace
    from .render import render_context
    from .retrieve.inject import hook_answer
    from .session_memory import claim

    if not query.strip():
        return None
    # The block a fresh session would get (search, then the stricter per-vault decision for
    # unsolicited injection); session memory may only shrink it (see session_memory).
    # Issue 17: past sessions only when `hooks.scopes` names them, and never this session's own messages.
    ans = hook_answer(query, cfg, max_tokens=cfg.hook_max_tokens, store=store, scope=",".join(cfg.hook_scopes),
                      exclude_session=session_id or None)
    if ans.status != "ok" or not ans.hits:
        return None
    try:
        hits = claim(_state_dir(), session_id, query, ans.hits, _seen_key)
    except Exception as exc:  # state unusable (locked past its wait, read-only): inject, and say so
        log_line(f"{event}: session memory unavailable ({type(exc).__name__}: {exc}); injected without it")
        hits = list(ans.hits)
    if not hits:
        return None
    block = render_context(replace(ans, hits=tuple(hits)))
    return _emit(event, additionalContext=block) if block else None


def pretool_query(tool_name: str, tool_input: dict) -> str:
    parts = [str(tool_input[f]) for f in QUERY_FIELDS if isinstance(tool_input.get(f), str)]
    return " ".join(parts)[:2000]


def latest_user_prompt(transcript_path: str, max_bytes: int = TRANSCRIPT_TAIL_BYTES) -> str:
    """The last user text in the transcript JSONL (read from its tail only; may lag a turn).

    Only a regular `.jsonl` file is read, and only its last `max_bytes`: `/dev/zero`, a FIFO, a
    directory or another kind of file gives "" at once."""
    import json

    from .safe_io import read_regular

    if not isinstance(transcript_path, str) or not transcript_path.endswith(".jsonl"):
        return ""  # Claude Code's transcripts are JSONL files; a client of `serve` names no other file
    try:
        lines = read_regular(transcript_path, max_bytes, tail=True).decode("utf-8", errors="replace").splitlines()
    except (OSError, ValueError):
        return ""
    for line in reversed(lines):
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(rec, dict) or rec.get("type") != "user":
            continue
        message = rec.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return content[:2000]
        if isinstance(content, list):
            texts = [c["text"] for c in content if isinstance(c, dict) and c.get("type") == "text"
                     and isinstance(c.get("text"), str)]
            if texts:
                return " ".join(texts)[:2000]
    return ""


def handle(payload: dict, expected: str, cfg=None, store=None) -> str | None:
    """Dispatch one hook call. Returns the single JSON line to print, or None. A resident server
    passes its warm `cfg` and open `store`; a hook process loads and opens them."""
    from .config import load_config
    from .hook_input import parse_hook_input

    inp = parse_hook_input(payload)
    if inp.rejected:
        log_line(f"{expected}: ignored input fields of the wrong type or size: {', '.join(inp.rejected)}")
    event = inp.event
    if event != expected:
        log_line(f"{expected}: ignored event {event!r}")
        return None
    if event == "SessionStart":  # before load_config: a broken config is what it reports
        from .session_start import session_message

        return session_message(payload)
    cfg = cfg or load_config()
    if event == "UserPromptSubmit":
        if inp.source in SKIPPED_PROMPT_SOURCES or inp.prompt is None:
            return None
        return context_for(inp.prompt, inp.session_id, event, cfg, store)
    if event == "PreToolUse":
        if inp.tool_name not in cfg.pretool_tools:
            return None
        return context_for(pretool_query(inp.tool_name, inp.tool_input), inp.session_id, event, cfg, store)
    if event == "PostToolUse":
        from .compress import compress_post_tool_use

        prompt = latest_user_prompt(inp.transcript_path)
        new = compress_post_tool_use(inp.tool_name, inp.tool_input, inp.tool_response, prompt=prompt,
                                     budget_chars=cfg.compress_budget_chars,
                                     threshold_chars=cfg.compress_threshold_chars,
                                     transcript_path=inp.transcript_path)
        note = {"additionalContext": new.note} if new is not None and new.note else {}
        return _emit(event, updatedToolOutput=new.tool_response, **note) if new is not None else None
    if event == "SessionEnd":  # issue 17: index the ended session in a detached process
        from .sessions.hook import session_end

        session_end(inp.transcript_path, cfg, log_line)
        return None
    if event == "PostToolUseFailure":  # a failed command's output cannot be replaced: add its digest
        from .compress import digest_tool_failure

        digest = digest_tool_failure(inp.tool_name, inp.tool_input, inp.error)
        return _emit(event, additionalContext=digest) if digest else None
    return None


def _limit_memory() -> None:
    """Cap this process's heap so no input can push it past MAX_HOOK_RSS: an allocation beyond it
    raises MemoryError, which fails open like any error. 32 MB of `[{},{},...]` on stdin would
    otherwise parse into ~700 MB of dicts (the stdin cap bounds bytes, not objects)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        want = HOOK_MAX_DATA_BYTES if hard == resource.RLIM_INFINITY else min(HOOK_MAX_DATA_BYTES, hard)
        if soft == resource.RLIM_INFINITY or soft > want:
            resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
    except (ImportError, ValueError, OSError, AttributeError):
        pass  # Windows, or a platform without RLIMIT_DATA: the stdin cap still bounds the input


def main(expected: str) -> int:
    """Entry point of a hook script: always exit 0."""
    started = time.monotonic()
    try:  # a running `vaultrag serve` answers through its Unix socket (stdlib client); else run here
        from .serve_client import forwarded

        if forwarded(expected):
            return 0
    except Exception as exc:
        log_line(f"{expected}: forwarding failed: {type(exc).__name__}")

    def on_alarm(*_):
        raise Deadline()

    import json

    try:  # the C module: `signal` itself builds three enums at import (~0.6-0.8 ms CPU a hook, issue 18)
        import _signal as signal
    except ImportError:
        import signal

    def disarm() -> None:
        """No alarm after the work: an armed timer outliving an error (or an early return) fired
        later, in the log write or at interpreter exit, where it killed the process by SIGALRM
        (exit -14, seen under load) instead of exiting 0."""
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_IGN)

    try:
        _limit_memory()
        from .config import load_config
        from .store.connection import set_deadline

        timeout_ms = int(os.environ.get("VAULTRAG_HOOK_TIMEOUT_MS") or 0) or load_config().hook_timeout_ms
        set_deadline(started + timeout_ms / 1000, busy_share=BUSY_SHARE_OF_DEADLINE)
        if hasattr(signal, "setitimer"):
            signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, timeout_ms / 1000)
        raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
        if len(raw) > MAX_STDIN_BYTES:
            log_line(f"{expected}: stdin over {MAX_STDIN_BYTES} bytes, skipped")
            return 0
        separators = raw.count(b",") + raw.count(b":")  # >= the values json.loads would build, less one
        if separators > MAX_JSON_SEPARATORS:
            log_line(f"{expected}: stdin holds up to {separators} JSON values (over {MAX_JSON_SEPARATORS}), skipped")
            return 0
        size = len(raw)
        payload = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else None
        del raw  # the parsed payload is what counts against the memory cap from here on
        if not isinstance(payload, dict):
            log_line(f"{expected}: stdin is not a JSON object ({size} bytes)")
            return 0
        out = handle(payload, expected)
        disarm()
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except Deadline:
        disarm()
        log_line(f"{expected}: gave up at the {time.monotonic() - started:.2f} s deadline")
    except BaseException as exc:  # fail open, whatever happened (KeyboardInterrupt and SystemExit too)
        disarm()
        from .store.connection import past_deadline

        # SQLite interrupted at the deadline surfaces as its own error: name the deadline, not "corrupt"
        why = "gave up at the deadline: " if past_deadline() else ""
        log_line(f"{expected}: {why}{type(exc).__name__}: {exc}")  # log_line bounds it, keeping the fix
    finally:  # the early returns above (input skipped) leave the timer armed too
        disarm()
    return 0
