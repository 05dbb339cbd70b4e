"""Claude Code transcript JSONL -> the conversation's messages, nothing of the mechanism.

The format is internal to Claude Code and changes between versions (shared reference,
"Transcript JSONL"), so this reader keeps to what is stable and tolerates the rest:
- kept: `user` prompts (string content or `text` blocks) and assistant `text` blocks; assistant
  stream chunks (one line per content block) are grouped by `message.id`, each block once;
  `isCompactSummary` user entries are kept and marked as summaries;
- left out: `tool_use`, `tool_result`, `thinking`, images, `isMeta`, `isSidechain` (and
  `teamName`) entries, `attachment`, `progress`, `system` and metadata entries (`summary`,
  `custom-title` and `ai-title` only name the session), slash-command and `!bash` echoes,
  `<system-reminder>` blocks; unknown types and fields are ignored;
- a last line without its newline is left for the next run unless it is already a whole JSON
  object (the file is being appended to: the writer may be half-way through it).
A prompt written twice in a row (a blocked prompt is logged twice) is kept once.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

# Content of user entries that is Claude Code talking, not the person: slash commands and their
# output, `!` shell escapes, interruption notices.
MECHANISM_PREFIXES = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
                      "<local-command-stderr>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
                      "[Request interrupted by user", "Caveat: The messages below were generated")
SYSTEM_REMINDER_RE = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
TITLE_TYPES = ("custom-title", "ai-title", "summary")  # metadata entries that name the session
MAX_LINE_BYTES = 8 * 1024 * 1024  # a longer line is a pasted dump or a spilled tool output: skipped


@dataclass(frozen=True)
class Message:
    uuid: str
    role: str  # user | assistant
    timestamp: str
    text: str
    line: int  # 1-based line of the entry the citation points at (the first text-bearing one)
    line_end: int
    summary: bool = False  # a compaction summary (Claude Code wrote it, standing in for older turns)


@dataclass
class ReadResult:
    messages: list[Message]
    end: int  # byte offset just after the last line consumed (the next run starts here)
    lines: int  # lines consumed
    titles: dict[str, str] = field(default_factory=dict)  # custom-title / ai-title / summary
    left_out: Counter = field(default_factory=Counter)  # what was skipped, by kind
    pending_tail: bool = False  # an unfinished last line was left for the next run


def _text_blocks(content, kind: str = "text") -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and b.get("type") == kind and isinstance(b.get("text"), str)]


def _clean_user(text: str) -> str:
    text = SYSTEM_REMINDER_RE.sub("", text).strip()
    return "" if text.startswith(MECHANISM_PREFIXES) else text


def _complete_lines(data: bytes, start: int) -> tuple[list[tuple[int, bytes]], int, bool]:
    """(offset, line) of each complete line from `start`, the offset after them, and whether an
    unfinished tail was left."""
    out: list[tuple[int, bytes]] = []
    pos = start
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl < 0:
            tail = data[pos:]
            try:  # a whole object without its newline is complete (the writer died, or wrote no \n)
                whole = isinstance(json.loads(tail), dict)
            except (ValueError, RecursionError):
                whole = False
            if whole:
                out.append((pos, tail))
                pos = n
            return out, pos, not whole
        out.append((pos, data[pos:nl]))
        pos = nl + 1
    return out, pos, False


def read_transcript(data: bytes, start: int = 0, first_line: int = 1) -> ReadResult:
    """The messages in `data[start:]` (complete lines only); `first_line` is the line number at
    `start`."""
    lines, end, pending = _complete_lines(data, start)
    res = ReadResult([], end, len(lines), pending_tail=pending)
    groups: dict[str, dict] = {}  # assistant message.id -> collected blocks
    order: list[tuple[str, object]] = []  # ("user", Message) | ("assistant", key) in file order
    last_user = None
    for i, (_, raw) in enumerate(lines):
        lineno = first_line + i
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE_BYTES:
            res.left_out["oversized line"] += 1
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError):
            res.left_out["unreadable line"] += 1
            continue
        if not isinstance(rec, dict):
            res.left_out["unreadable line"] += 1
            continue
        kind = rec.get("type")
        if kind in TITLE_TYPES:
            value = rec.get("customTitle") or rec.get("aiTitle") or rec.get("title") or rec.get("summary")
            if isinstance(value, str) and value.strip():
                res.titles.setdefault(kind, value.strip())
            continue
        if kind not in ("user", "assistant"):
            res.left_out[str(kind)[:40]] += 1
            continue
        if rec.get("isMeta") or rec.get("isSidechain") or rec.get("teamName"):
            res.left_out["meta" if rec.get("isMeta") else "sidechain"] += 1
            continue
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        uuid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else ""
        stamp = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else ""
        if not uuid:
            res.left_out["no uuid"] += 1
            continue
        if kind == "user":
            text = "\n\n".join(t for t in (_clean_user(t) for t in _text_blocks(msg.get("content"))) if t)
            if not text:
                res.left_out["tool result or command"] += 1
                continue
            if not rec.get("isCompactSummary") and last_user is not None and last_user.text == text:
                continue  # the same prompt logged twice in a row
            m = Message(uuid, "user", stamp, text, lineno, lineno, summary=bool(rec.get("isCompactSummary")))
            order.append(("user", m))
            last_user = m
            continue
        key = msg.get("id") if isinstance(msg.get("id"), str) else uuid
        texts = [t.strip() for t in _text_blocks(msg.get("content")) if t.strip()]
        if not texts:
            res.left_out["tool use or thinking"] += 1
            continue
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"uuid": uuid, "ts": stamp, "line": lineno, "end": lineno, "texts": []}
            order.append(("assistant", key))
        g["end"] = lineno
        for t in texts:  # a stream chunk may repeat a block already seen
            if t not in g["texts"]:
                g["texts"].append(t)
        last_user = None
    for kind, item in order:
        if kind == "user":
            res.messages.append(item)  # type: ignore[arg-type]
        else:
            g = groups[item]  # type: ignore[index]
            res.messages.append(Message(g["uuid"], "assistant", g["ts"], "\n\n".join(g["texts"]), g["line"], g["end"]))
    return res


def session_title(data: bytes, titles: dict[str, str], limit: int = 200) -> str:
    """A session's name: its custom title, else Claude Code's title or summary, else its first
    prompt (searched from the start of the file)."""
    for kind in TITLE_TYPES:
        if titles.get(kind):
            return " ".join(titles[kind].split())[:limit]
    pos = 0
    for _ in range(200):  # the first prompt is within the first lines
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        first = read_transcript(data[pos:nl + 1])
        pos = nl + 1
        for m in first.messages:
            if m.role == "user" and not m.summary:
                return " ".join(m.text.split())[:limit]
    return ""
