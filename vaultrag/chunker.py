"""Split a parsed note (`markdown.Document`) into heading-aware chunks for FTS5 and vectors.
Standard library only at import (pyyaml is imported lazily for YAML fences).

Every chunk is one contiguous span of the file: `text` is `"\\n".join(doc.lines)[a:b]`, so
`"\\n".join(doc.lines[line_start-1:line_end])` always contains it, and equals it when the chunk is
whole lines (all cuts except sentence/word/hard splits inside a line). Choices:

- Sections: the lead (before the first section heading, index 0), then one per H2 in order. An H1 is
  also a section heading, except the title H1 (the first H1, before any H2, whose text is the note
  title): notes that use H1 for every section get sections too. Skipped sections DO consume an index,
  so `section_index` n is always the n-th section heading of the file (stable for re-location).
- Skipped: a section whose heading, folded (case, punctuation, emoji, '**'), is in `skip_sections`
  ("## See also:" matches "see also"); everything up to the next section heading goes with it.
- A section up to max_chars is one chunk. Longer: split at H3 (each H3 part its own chunk), then a
  part over the max is cut into blocks (paragraphs at blank lines outside fences; a fence is one block;
  a heading line starts a block), packed greedily up to max_chars. A block over the max is cut into
  sentences ('.', '!', '?', '…' before a blank, or CJK '。！？') and before list items, table rows,
  quotes and headings (so long lists split per item); a sentence over the max into words; a word over
  the max (base64) into max_chars slices. A fence over the max is cut at line boundaries only.
- Chunks under min_chars are merged into the next chunk of their section (a heading line goes with what
  follows), else the previous one, as long as the result stays within max_chars + min_chars; else kept.
  A section that is small as a whole stays a chunk: sections are never merged, no text is dropped.
  Bound: len(text) <= max_chars + min_chars + overlap_chars, always.
- The lead is dropped when it holds only the title H1 and the note has other chunks (the title is in
  every chunk's `context`). A note whose every section is skipped is chunked with nothing skipped, and a
  note with no body text gets one chunk of its frontmatter lines (inside the '---'), so every note with
  any content has a chunk to cite. An empty note (or empty frontmatter only) has none.
- heading_path: headings in effect at the chunk's own first line (its heading, if it starts with one),
  all levels, without the title H1. Overlap never changes it.
- Overlap (overlap_chars > 0): each chunk after the first in a section starts up to overlap_chars
  earlier, at a word start inside the previous chunk; line_start covers it; hashes include it.
- search_text = text, plus for each JSON/YAML fence wholly inside the chunk its nested key paths
  (`review.threshold: 3`, `steps[0].name: x`); depth-1 keys are left out, the text already has them.
  Fences split across chunks get none. block_ids: ids defined inside the chunk's own span.
"""
from __future__ import annotations

import bisect
import hashlib
import json
import re
from dataclasses import dataclass

from .markdown import Document

__all__ = ["ChunkSettings", "Chunk", "chunk_document", "settings_for", "CHUNKER_VERSION"]

# Bump whenever the parse or the chunks change for the same input: the index records it in its settings
# (indexer.settings_fingerprint) and the next reindex re-reads every note. 2: template fields are no titles.
CHUNKER_VERSION = 2
HASH_HEX_CHARS = 16  # 64 bits: collisions within one vault are negligible; half the storage of full hex
FLAT_FENCE_LANGS = frozenset({"json", "jsonc", "json5", "yaml", "yml"})
MAX_FLAT_ENTRIES = 200  # bounds search_text growth for a fence of many short keys
MAX_FLAT_VALUE_CHARS = 80  # long values are already in the text; the key path is what is new
MAX_FLAT_DEPTH = 32  # anchors can make YAML self-referencing

_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[」』”’）]*")
_BLOCK_START = re.compile(r"\n(?=[ \t]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|[|>#]))")
_WORD = re.compile(r"\S+")
_NEWLINE = re.compile("\n")
_WORD_START = re.compile(r"(?<=\s)\S")
_FOLD = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class ChunkSettings:
    min_chars: int = 30
    max_chars: int = 2000
    overlap_chars: int = 0
    skip_sections: tuple[str, ...] = ("related", "see also", "links", "references")

    def __post_init__(self) -> None:
        if self.max_chars < 1 or self.min_chars < 0 or self.overlap_chars < 0:
            raise ValueError(f"chunk settings need max_chars >= 1 and min_chars, overlap_chars >= 0; got {self}")


def settings_for(cfg) -> ChunkSettings:
    """The chunk settings of a Config (the chunker reads the config, not the other way round)."""
    return ChunkSettings(min_chars=cfg.min_chars, max_chars=cfg.max_chars, overlap_chars=cfg.overlap_chars,
                         skip_sections=tuple(s.casefold() for s in cfg.skip_sections))


@dataclass(frozen=True)
class Chunk:
    path: str
    heading_path: tuple[str, ...]
    text: str
    line_start: int
    line_end: int
    section_index: int
    chunk_index: int
    context: str
    content_hash: str
    search_text: str
    block_ids: tuple[str, ...] = ()


def _fold(text: str) -> str:
    return " ".join(_FOLD.sub(" ", text.casefold()).split())


class _Text:
    """The file as one string with O(log n) offset <-> line mapping and span tidying."""

    def __init__(self, lines: tuple[str, ...]):
        self.full = "\n".join(lines)
        self.starts: list[int] = []
        self.first: list[int] = []  # offset of the first non-blank character (line end if blank)
        self.last: list[int] = []  # offset just after the last non-blank character
        pos = 0
        for line in lines:
            self.starts.append(pos)
            self.first.append(pos + len(line) - len(line.lstrip()))
            self.last.append(pos + len(line.rstrip()))
            pos += len(line) + 1

    def line_of(self, offset: int) -> int:  # 1-based
        return bisect.bisect_right(self.starts, offset)

    def end_of(self, line: int) -> int:  # offset just after the line's last character
        return self.starts[line] - 1 if line < len(self.starts) else len(self.full)

    def tidy(self, s: int, e: int) -> tuple[int, int] | None:
        """Trim blank edges; a span reaching a line's first/last non-blank char takes the whole line."""
        full = self.full
        while s < e and full[s].isspace():
            s += 1
        while e > s and full[e - 1].isspace():
            e -= 1
        if s == e:
            return None
        ls = self.line_of(s)
        if s == self.first[ls - 1]:
            s = self.starts[ls - 1]
        le = self.line_of(e - 1)
        if e == self.last[le - 1]:
            e = self.end_of(le)
        return s, e

    def lines_span(self, a: int, b: int) -> tuple[int, int] | None:
        return self.tidy(self.starts[a - 1], self.end_of(b)) if a <= b else None


class _Splitter:
    def __init__(self, doc: Document, t: _Text, settings: ChunkSettings):
        self.t, self.max = t, settings.max_chars
        self.fence_end = {f.start: f.end for f in doc.fences}
        self.heading_lines = {h.line for h in doc.headings}

    def section(self, a: int, b: int, h3: list[int]) -> list[tuple[int, int]]:
        span = self.t.lines_span(a, b)
        if span is None:
            return []
        if span[1] - span[0] <= self.max:
            return [span]
        cuts = [a] + [x for x in h3 if a < x <= b] + [b + 1]
        out: list[tuple[int, int]] = []
        for x, y in zip(cuts, cuts[1:]):
            part = self.t.lines_span(x, y - 1)
            if part is None:
                continue
            if part[1] - part[0] <= self.max:
                out.append(part)
            else:
                out.extend(self.pack([atom for blk in self.blocks(x, y - 1) for atom in self.block_atoms(*blk)]))
        return out

    def blocks(self, a: int, b: int) -> list[tuple[int, int, bool]]:
        """(start offset, end offset, is_fence) of paragraphs/fences in lines a..b."""
        out: list[tuple[int, int, bool]] = []
        start = None
        no = a
        while no <= b:
            is_blank = self.t.first[no - 1] >= self.t.last[no - 1]
            if no in self.fence_end or is_blank or no in self.heading_lines:
                if start is not None:
                    out.append((self.t.starts[start - 1], self.t.end_of(no - 1), False))
                    start = None
            if no in self.fence_end:
                end = min(self.fence_end[no], b)
                out.append((self.t.starts[no - 1], self.t.end_of(end), True))
                no = end + 1
                continue
            if not is_blank and start is None:
                start = no
            no += 1
        if start is not None:
            out.append((self.t.starts[start - 1], self.t.end_of(b), False))
        return out

    def block_atoms(self, s: int, e: int, fence: bool) -> list[tuple[int, int]]:
        span = self.t.tidy(s, e)
        if span is None:
            return []
        if span[1] - span[0] <= self.max:
            return [span]
        if fence:  # line boundaries only
            cuts = [s] + [m.end() for m in _NEWLINE.finditer(self.t.full, s, e)]
        else:
            text = self.t.full
            cuts = [s] + sorted({m.end() for m in _SENTENCE_END.finditer(text, s, e)}
                                | {m.start() + 1 for m in _BLOCK_START.finditer(text, s, e)})
        cuts.append(e)
        out: list[tuple[int, int]] = []
        for x, y in zip(cuts, cuts[1:]):
            piece = self.t.tidy(x, y)
            if piece is not None:
                out.extend([piece] if piece[1] - piece[0] <= self.max else self.word_atoms(*piece))
        return out

    def word_atoms(self, s: int, e: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        first = True
        for m in _WORD.finditer(self.t.full, s, e):
            we = m.end()
            # keep the indentation the tidied span starts with, unless that alone would break the max
            ws = s if first and we - s <= self.max else m.start()
            first = False
            while we - ws > self.max:
                out.append((ws, ws + self.max))
                ws += self.max
            out.append((ws, we))
        return out

    def pack(self, atoms: list[tuple[int, int]]) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for a in atoms:
            if out and a[1] - out[-1][0] <= self.max:
                out[-1] = (out[-1][0], a[1])
            else:
                out.append(a)
        return out


def _merge_small(spans: list[tuple[int, int]], min_chars: int, limit: int) -> list[tuple[int, int]]:
    spans = list(spans)
    i = 0
    while i < len(spans) and len(spans) > 1:
        s, e = spans[i]
        if e - s >= min_chars:
            i += 1
        elif i + 1 < len(spans) and spans[i + 1][1] - s <= limit:
            spans[i : i + 2] = [(s, spans[i + 1][1])]
        elif i > 0 and e - spans[i - 1][0] <= limit:
            spans[i - 1 : i + 1] = [(spans[i - 1][0], e)]
        else:
            i += 1
    return spans


def _flatten(value: object, prefix: str, out: list[str], depth: int) -> None:
    if len(out) >= MAX_FLAT_ENTRIES or depth > MAX_FLAT_DEPTH:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", out, depth + 1)
    elif depth >= 2:
        s = "null" if value is None else json.dumps(value) if isinstance(value, bool) else str(value)
        out.append(f"{prefix}: {' '.join(s.split())[:MAX_FLAT_VALUE_CHARS]}")


def _fence_keys(lang: str, body: str) -> list[str]:
    try:
        if lang.startswith("json"):
            data = json.loads(body)
        else:
            import yaml  # lazy: only the indexer chunks

            data = yaml.safe_load(body)
    except Exception:  # invalid JSON/YAML is just text; RecursionError on deep nesting too
        return []
    out: list[str] = []
    _flatten(data, "", out, 0)
    return out


def _title_heading(doc: Document) -> int | None:
    for h in doc.headings:
        if h.level == 2:
            return None
        if h.level == 1:
            return h.line if _fold(h.text) == _fold(doc.title) else None
    return None


def chunk_document(doc: Document, settings: ChunkSettings = ChunkSettings()) -> list[Chunk]:
    """Chunks of one note in file order (see the module docstring for every rule)."""
    if not doc.lines:
        return []
    t = _Text(doc.lines)
    n = len(doc.lines)
    title_line = _title_heading(doc)
    body = [h for h in doc.headings if h.line >= doc.body_start]
    starts = [h for h in body if h.level <= 2 and h.line != title_line]
    h3 = [h.line for h in body if h.level == 3]
    skip = {_fold(s) for s in settings.skip_sections}
    splitter = _Splitter(doc, t, settings)
    limit = settings.max_chars + settings.min_chars

    bounds = [doc.body_start] + [h.line for h in starts] + [n + 1]
    sections = []  # (index, first line, last line, skipped)
    for i, (a, nxt) in enumerate(zip(bounds, bounds[1:])):
        sections.append((i, a, nxt - 1, i > 0 and _fold(starts[i - 1].text) in skip))

    def build(use_skip: bool, drop_title_lead: bool) -> list[tuple[int, list[tuple[int, int]]]]:
        out = []
        for i, a, b, skipped in sections:
            if skipped and use_skip:
                continue
            if i == 0 and drop_title_lead and title_line is not None:
                rest = [x for x in range(a, b + 1) if x != title_line and t.first[x - 1] < t.last[x - 1]]
                if not rest:
                    continue
            spans = _merge_small(splitter.section(a, b, h3), settings.min_chars, limit)
            if spans:
                out.append((i, spans))
        return out

    per_section = build(True, True) or build(False, False)
    if not per_section and doc.body_start > 1:  # no body text: index the frontmatter lines
        fm = _merge_small(splitter.section(2, doc.body_start - 2, []), settings.min_chars, limit)
        per_section = [(0, fm)] if fm else []

    stack_lines: list[int] = []
    stacks: list[tuple[str, ...]] = []
    stack: list = []
    for h in body:
        if h.line == title_line:
            continue
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        stack_lines.append(h.line)
        stacks.append(tuple(x.text for x in stack))
    fence_info = [(f.start, f.end, f.lang) for f in doc.fences if f.closed and f.lang in FLAT_FENCE_LANGS]
    tags = " ".join("#" + tag for tag in doc.tags)
    context = " | ".join(p for p in (doc.title, doc.note_type or "", tags) if p)

    chunks: list[Chunk] = []
    for index, spans in per_section:
        for ci, (s, e) in enumerate(spans):
            own_first = t.line_of(s)
            if ci and settings.overlap_chars:
                ps = spans[ci - 1][0]
                lo = max(ps, s - settings.overlap_chars)
                m = _WORD_START.search(t.full, lo, s) if lo > ps else None
                s = ps if lo == ps else (m.start() if m else s)
            text = t.full[s:e]
            first, last = t.line_of(s), t.line_of(e - 1)
            own_text = t.full[t.starts[own_first - 1]:e]
            keys: list[str] = []
            for fs, fe, lang in fence_info:
                if own_first <= fs and fe <= last:
                    keys.extend(_fence_keys(lang, "\n".join(doc.lines[fs:fe - 1])))
            pos = bisect.bisect_right(stack_lines, own_first) - 1
            chunks.append(Chunk(
                path=doc.path, heading_path=stacks[pos] if pos >= 0 else (), text=text,
                line_start=first, line_end=last, section_index=index, chunk_index=ci, context=context,
                content_hash=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_HEX_CHARS],
                search_text=text + "\n\n" + "\n".join(keys[:MAX_FLAT_ENTRIES]) if keys else text,
                block_ids=tuple(bid for bid, ln in doc.block_ids if own_first <= ln <= last and bid in own_text),
            ))
    return chunks
