"""The token budget of an answer: how many hits, whole or cut, fit the block a hook injects.

It measures the block as render.py lays it out, so the block's layout (headers, citations) lives
here with it and render.py imports it: retrieval never imports the renderers above it.
Token counts of chunk text come from the index (cl100k, computed at reindex); the few header
characters around them are estimated at 3 characters a token, which over-counts on purpose, so
the rendered block never exceeds the budget without loading a tokenizer on the hook path.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ..frozen import replace
from ..textutil import meta_key, strip_asset_embeds
from .types import Hit

# Claude Code truncates injected context at 10,000 characters (to a 2 KB preview): stay under.
MAX_CONTEXT_CHARS = 9500
HEADER_CHARS_PER_TOKEN = 3  # conservative estimate for headings, paths and markers
MIN_PARTIAL_TOKENS = 30  # a cut hit shorter than this is noise; stop instead
MIN_FIRST_TOKENS = 8  # ... except the first hit, kept down to this (the citation is the point)
TRUNCATION_MARKER = " [… truncated]"
BLOCK_TITLE = "## Relevant Memory Context"
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s|\n")
_HEADING_LINE = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def folder_of(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else "vault root"


def hit_header(h: Hit) -> str:
    """`### Note title > Section > Subsection (folder)`: every hit names its note (a past
    session's message: `### Session title > date role (past session)`)."""
    title = h.title or h.path.rsplit("/", 1)[-1].removesuffix(".md")
    where = title + (f" > {h.heading_path}" if h.heading_path else "")
    return f"### {where} ({'past session' if _session(h) else folder_of(h.path)})"


def _session(h: Hit) -> dict | None:
    origin = getattr(h, "origin", None)
    return origin if origin and origin.get("kind") == "session" else None


def hit_body(h: Hit) -> str:
    """The hit's text as a block shows it: without a leading heading line the header above already
    names (with the note title: `## Retention` under `### Backup plan > Retention`) and without
    asset embeds (`![[diagram.webp]]` is a file name, not content)."""
    text = strip_asset_embeds(h.text).strip()
    first, _, rest = text.partition("\n")
    m = _HEADING_LINE.match(first)
    if m and rest.strip():
        last = h.heading_path.rsplit(" > ", 1)[-1] if h.heading_path else h.title
        if meta_key(m.group(1)) in (meta_key(last), meta_key(h.title)):
            text = rest.lstrip("\n")
    return text


SESSION_ID_PREFIX = 8  # characters of a session id in a citation (a uuid's first group)


def citation(h: Hit) -> str:
    """`path:Lstart-Lend`, or for a past session's message `session <id-prefix> <timestamp> <role>`."""
    s = _session(h)
    if s:
        return f"session {str(s.get('session_id') or '')[:SESSION_ID_PREFIX]} {s.get('timestamp') or '?'} {s.get('role')}"
    return f"{h.path}:L{h.line_start}-L{h.line_end}"


def _hit_block(h: Hit) -> str:
    note = {"source_changed": " (changed since indexing)", "stored": " (index copy: file not checked)"}.get(
        h.citation, "")
    via = f" (linked from {h.graph_provenance['seed_path']})" if h.via == "graph" and h.graph_provenance else ""
    return f"{hit_header(h)}\n{hit_body(h)}\nSource: {citation(h)}{note}{via}"


def _overhead_tokens(text: str) -> int:
    return -(-len(text) // HEADER_CHARS_PER_TOKEN)


def _cost(h: Hit) -> int:
    return h.tokens + _overhead_tokens(_hit_block(replace(h, text="")))


def _cut(text: str, max_chars: int) -> str:
    if max_chars <= 0:
        return ""
    head = text[:max_chars]
    ends = [m.start() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] > max_chars // 3:
        head = head[:ends[-1]]
    elif " " in head[max_chars // 3:]:
        head = head[:head.rindex(" ")]
    return head.rstrip() + TRUNCATION_MARKER


def fit_budget(hits: Sequence[Hit], max_tokens: int, max_chars: int = MAX_CONTEXT_CHARS) -> list[Hit]:
    """The longest prefix of `hits` whose rendered block fits `max_tokens` and `max_chars`; the
    first hit that does not fit is cut at a sentence or line (visibly marked) if enough room is
    left (less for the very first hit), and nothing after it is included. Only a budget
    smaller than the block title and one citation leaves no hit at all."""
    used_tokens = _overhead_tokens(BLOCK_TITLE) + 1
    used_chars = len(BLOCK_TITLE) + 2
    out: list[Hit] = []
    for h in hits:
        cost, size = _cost(h), len(_hit_block(h)) + 2
        if used_tokens + cost <= max_tokens and used_chars + size <= max_chars:
            out.append(h)
            used_tokens += cost
            used_chars += size
            continue
        room_tokens = max_tokens - used_tokens - (cost - h.tokens) - _overhead_tokens(TRUNCATION_MARKER)
        body = hit_body(h)
        room_chars = max_chars - used_chars - (size - len(body)) - len(TRUNCATION_MARKER)
        # The first hit is kept even cut short: its citation still points the way.
        if room_tokens >= (MIN_PARTIAL_TOKENS if out else MIN_FIRST_TOKENS) and room_chars > 0:
            chars_per_token = len(h.text) / max(1, h.tokens)
            text = _cut(body, min(room_chars, int(room_tokens * chars_per_token)))
            if text != TRUNCATION_MARKER:
                tokens = max(1, int(len(text) / chars_per_token) + _overhead_tokens(TRUNCATION_MARKER))
                out.append(replace(h, text=text, tokens=tokens))
        break
    return out
