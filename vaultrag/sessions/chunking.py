"""Messages of one transcript segment -> the rows the store keeps, scrubbed before anything else.

One chunk is one message: a person's prompt or an assistant reply (a long reply is cut at
paragraph boundaries into pieces of at most `max_chars`, each citing the same message). The
heading context is the message's date and role (and "summary" for a compaction summary); the
context column holds the session's title and the start of the message before it, so a reply
("running it with -p no:randomly fixed it") is found by the question that led to it.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Callable

from ..scrubber import scrub
from ..store import ChunkRow, FileWrite
from .reader import Message

PREVIOUS_CONTEXT_CHARS = 200  # of the message before, in the context column (what was asked)
MIN_MESSAGE_CHARS = 8  # "ok", "yes", "thanks": nothing to find; "use pg16" is kept
EMBED_HASH_HEX = 16  # as indexer.EMBED_HASH_HEX
HASH_HEX = 16


def split_text(text: str, max_chars: int) -> list[str]:
    """`text` in pieces of at most `max_chars`, cut at paragraph, then line, then word breaks."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    rest = text
    while len(rest) > max_chars:
        window = rest[:max_chars]
        cut = max(window.rfind("\n\n"), -1)
        if cut < max_chars // 3:
            cut = window.rfind("\n")
        if cut < max_chars // 3:
            cut = window.rfind(" ")
        if cut < max_chars // 3:
            cut = max_chars
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return [p for p in pieces if p]


def _heading(m: Message) -> str:
    day = m.timestamp[:16].replace("T", " ") if m.timestamp else ""
    return " ".join(p for p in (day, m.role, "summary" if m.summary else "") if p)


def build_segment(path: str, mtime_ns: int, end: int, seg_hash: str, title: str, messages: list[Message],
                  origin_base: dict, max_chars: int, count_tokens: Callable[[str], int],
                  previous: str = "") -> tuple[FileWrite, list[str], list[str], Counter]:
    """(rows, embed inputs, origin JSON per chunk, secrets found by rule) for one segment.

    `previous` is the text of the message before the segment (context for its first message)."""
    from ..indexer import embed_input

    secrets: Counter = Counter()
    clean_title, found = scrub(title)
    secrets.update(f.rule for f in found)
    rows: list[ChunkRow] = []
    inputs: list[str] = []
    origins: list[str] = []
    prev_clean = scrub(previous[:PREVIOUS_CONTEXT_CHARS * 4])[0] if previous else ""
    for index, m in enumerate(messages):
        text, found = scrub(m.text)
        secrets.update(f.rule for f in found)
        if len(text.strip()) < MIN_MESSAGE_CHARS:
            prev_clean = text
            continue
        before = " ".join(prev_clean.split())[:PREVIOUS_CONTEXT_CHARS]
        context = " | ".join(p for p in (clean_title, before) if p)
        heading = _heading(m)
        origin = json.dumps({**origin_base, "message_uuid": m.uuid, "role": m.role, "timestamp": m.timestamp},
                            sort_keys=True)
        for piece_no, piece in enumerate(split_text(text, max_chars)):
            inp = embed_input(clean_title, heading, piece)
            rows.append(ChunkRow(
                section_index=index, chunk_index=piece_no, heading_path=heading, context=context, text=piece,
                search_text=None, line_start=m.line, line_end=m.line_end,
                content_hash=hashlib.sha256(piece.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_HEX],
                embed_hash=hashlib.sha256(inp.encode("utf-8", "surrogatepass")).hexdigest()[:EMBED_HASH_HEX],
                tokens=count_tokens(piece), block_ids=""))
            inputs.append(inp)
            origins.append(origin)
        prev_clean = text
    fw = FileWrite(path=path, mtime_ns=mtime_ns, size=end, hash=seg_hash, title=clean_title or "session",
                   note_type="session", stem_key=path, chunks=tuple(rows), links=(), keys=())
    return fw, inputs, origins, secrets
