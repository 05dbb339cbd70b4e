"""Parse one Obsidian/Markdown note into a `Document`: frontmatter, title, aliases, tags, note type,
heading tree with line numbers, code fences, links and block ids. Standard library only at import;
pyyaml is imported inside `_load_yaml` so the hook path never pays for it.

`parse` never raises on any `str`. Choices, each pinned by a test in tests/test_markdown.py:

- Lines: a leading BOM is dropped, CRLF and lone CR become LF, and text is split on '\\n' only
  (`str.splitlines` also splits on \\x0b, \\x1c, \\u2028 ... and would disagree with an editor's line
  numbers). A final newline does not add an empty line. `split_lines` is the one implementation.
- Frontmatter: only when line 1 is '---' (trailing blanks allowed), up to the next '---' line.
  Unclosed, malformed YAML, or YAML that is not a mapping (a note opening with a '---' rule): the block
  stays body text, `frontmatter` is {}, and a warning says why. YAML indented with tabs is retried with
  each tab as two spaces (warning kept). The mapping is made JSON-safe: string keys, dates as ISO
  strings, NaN/inf and other scalars as strings, sets sorted, anchors bounded (billion laughs, `&a [*a]`).
- Title: frontmatter `title` (a non-empty scalar) > first H1 outside fences > file name without .md.
- Aliases: `aliases` or legacy `alias`; a string is ONE alias (not split at commas: "Smith, John").
- Tags: frontmatter `tags`/`tag` (a string is split at commas and blanks, as Obsidian does), then inline
  tags in body order; '#' and edge '/' stripped, deduped case-insensitively keeping the first spelling.
  Inline tag: '#' at line start or after whitespace, then letters/digits/'_'/'-'/'/' of any script,
  with one non-digit at least (`#123` is not a tag); never in fences or inline code; `# Heading` is a
  heading; URLs (`/#frag`) never match because '#' must follow whitespace; hex colours are not tags:
  3, 6 or 8 hex digits (`#fff`, `#a1b2c3`, so also `#add`, `#facade`), or 4 with a digit.
  Numbers/dates in frontmatter lists become strings; None, booleans and mappings are skipped.
- note_type: the first non-empty scalar of frontmatter `type`, then `kind`, then `category`.
- Headings: ATX only, outside fences, closing '#'s dropped. Setext is not read: a '---' under a line is
  far more often a rule than an H2 in real vaults. Headings in quotes/callouts are text.
- Fences: ``` or ~~~ (3+), after any indentation or '>' quote markers (fences in lists and callouts),
  closed by the same character at least as long. An unclosed fence runs to the end of the file, as in
  CommonMark, with a warning. Indented (4-space) code blocks are not detected.
- Inline code: backtick runs matched by length per line (a span across lines is not masked).
- Links: `[[T]]`, `[[T#H]]`, `[[T#^id]]`, `[[T|shown]]`, `[[T\\|shown]]` (tables), `![[...]]`.
  `[[#H]]` links this note: target is its own file stem. `[[T#A#B]]` gives anchor 'B' (the heading
  linked). Kind 'asset' for any wikilink or embed whose target has a non-note file extension
  (`.png`, `.pdf`, `.canvas`: never followed), else 'embed' for `![[..]]`, else 'link'. Markdown
  links count only to a relative `.md` path (URL-decoded, `<...>` allowed); `![..](x.md)` is 'embed'.
- Block ids: `^id` ([A-Za-z0-9-]) at the end of a line (or alone on a line), outside fences.
- `%%comments%%` and callouts are ordinary text.
"""
from __future__ import annotations

import datetime
import math
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ["Heading", "Link", "CodeFence", "Document", "parse", "link_key", "split_lines"]

# JSON-safe copy of frontmatter: YAML anchors can make 1 KB expand exponentially ("billion laughs")
# and `&a [*a]` is self-referencing; these bound the copy (a real properties block has < 100 nodes).
MAX_FRONTMATTER_NODES = 10_000
MAX_FRONTMATTER_DEPTH = 32
YAML_TAB_SPACES = 2  # what a tab in YAML indentation is read as when retrying a tab-indented block
NOTE_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int  # 1-based line in the file


@dataclass(frozen=True)
class Link:
    target: str  # note name or relative path as written, without '#anchor' and '|shown'
    anchor: str | None  # heading text, '^blockid', or None
    kind: str  # 'link' | 'embed' (a note embed) | 'asset' (non-note file: never followed)
    text: str | None  # shown text after '|' or the Markdown link text
    line: int


@dataclass(frozen=True)
class CodeFence:
    start: int  # 1-based line of the opening fence
    end: int  # 1-based line of the closing fence (last line of the file when unclosed)
    info: str  # info string after the fence characters, stripped ('json', 'python title=x', '')
    closed: bool

    @property
    def lang(self) -> str:
        return self.info.split()[0].casefold() if self.info.split() else ""


@dataclass(frozen=True)
class Document:
    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    note_type: str | None
    frontmatter: dict
    lines: tuple[str, ...]
    body_start: int
    headings: tuple[Heading, ...]
    links: tuple[Link, ...]
    block_ids: tuple[tuple[str, int], ...]
    warnings: tuple[str, ...]
    fences: tuple[CodeFence, ...] = ()  # added: code fences in the body, for the chunker


_FM_DELIM = re.compile(r"---[ \t]*\Z")
_FENCE_OPEN = re.compile(r"(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})(.*)\Z")
_FENCE_CLOSE = re.compile(r"(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})[ \t]*\Z")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*))?\Z")
_HEADING_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*\Z")
_BLOCK_ID = re.compile(r"(?:^|\s)(\^[A-Za-z0-9-]+)[ \t]*\Z")
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# Text and target exclude brackets/parens so every scan stops at the next one: linear on any line.
_MD_LINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\((<[^<>\n]+>|[^()\[\]\s]+)(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?[ \t]*\)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_TAG_STOP = "\\s\\x00-\\x1f\\x7f!\"#$%&'()*+,.:;<=>?@\\[\\\\\\]^`{|}~，。！？、；：「」『』（）【】《》…"
_TAG = re.compile(f"(?<!\\S)#([^{_TAG_STOP}]+)")
_HEX_COLOUR = re.compile(r"[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8}|(?=[a-fA-F]*[0-9])[0-9a-fA-F]{4}")
_ASSET_SUFFIX = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,7})\Z")
_BACKTICKS = re.compile(r"`+")


def split_lines(text: str) -> tuple[str, ...]:
    """The file's lines as `Document.lines` holds them (see the module docstring)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return ()
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return tuple(lines)


def _strip_note_suffix(name: str) -> str:
    low = name.casefold()
    for suffix in NOTE_SUFFIXES:
        if low.endswith(suffix):
            return name[: -len(suffix)]
    return name


def link_key(target: str) -> str:
    """Key that resolves a link target or a note path to a note: NFC, casefolded file stem.

    'Folder/My Note.md', 'my note' and 'MY NOTE' all give 'my note'.
    """
    name = target.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return unicodedata.normalize("NFC", _strip_note_suffix(name)).strip().casefold()


def _file_stem(path: str) -> str:
    return _strip_note_suffix(path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])


# -- frontmatter -------------------------------------------------------------------------------
def _load_yaml(raw: str) -> tuple[object, str | None]:
    """(data, None) or (None, first line of the error). Any exception is an error, never raised."""
    try:
        import yaml  # lazy: the hook path must not import yaml
    except ImportError:
        return None, "pyyaml is not installed (pip install pyyaml)"
    try:
        return yaml.safe_load(raw), None
    except Exception as exc:  # YAMLError, RecursionError on deep nesting, ValueError on odd scalars
        lines = str(exc).strip().splitlines()
        return None, lines[0] if lines else type(exc).__name__


def _json_safe(data: object) -> object:
    budget = [MAX_FRONTMATTER_NODES]

    def conv(v: object, depth: int) -> object:
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_FRONTMATTER_DEPTH:
            return None
        if isinstance(v, dict):
            return {_scalar_str(k): conv(x, depth + 1) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [conv(x, depth + 1) for x in v]
        if isinstance(v, (set, frozenset)):
            return [conv(x, depth + 1) for x in sorted(v, key=str)]
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else str(v)
        return _scalar_str(v)

    return conv(data, 0)


def _scalar_str(v: object) -> str:
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def _frontmatter(lines: tuple[str, ...], warnings: list[str]) -> tuple[dict, int]:
    """(mapping, body_start). A block that cannot be read stays in the body (body_start 1)."""
    if not lines or not _FM_DELIM.match(lines[0]):
        return {}, 1
    end = next((i for i in range(1, len(lines)) if _FM_DELIM.match(lines[i])), None)
    if end is None:
        warnings.append("unclosed frontmatter: no closing '---' line; read as body text")
        return {}, 1
    raw = "\n".join(lines[1:end])
    data, err = _load_yaml(raw)
    if err and "\t" in raw:
        spaced = re.sub(r"(?m)^[ \t]+", lambda m: m.group(0).replace("\t", " " * YAML_TAB_SPACES), raw)
        data2, err2 = _load_yaml(spaced)
        if err2 is None:
            data, err = data2, None
            warnings.append("frontmatter indented with tabs; read each tab as two spaces")
    if err:
        warnings.append(f"malformed frontmatter: {err}")
        return {}, 1
    if data is None:
        return {}, end + 2
    if not isinstance(data, dict):
        warnings.append(f"frontmatter is not a mapping ({type(data).__name__}); read as body text")
        return {}, 1
    safe = _json_safe(data)
    return (safe if isinstance(safe, dict) else {}), end + 2


def _strings(v: object, split: bool, out: list[str], depth: int = 0) -> None:
    """Flatten a frontmatter value into strings: lists recursed, numbers/dates coerced."""
    if depth > MAX_FRONTMATTER_DEPTH or v is None or isinstance(v, (bool, dict)):
        return
    if isinstance(v, (list, tuple)):
        for x in v:
            _strings(x, split, out, depth + 1)
        return
    s = _scalar_str(v)
    out.extend(p for p in (re.split(r"[,\s]+", s) if split else [s.strip()]) if p)


# A template's fields, filled in when a note is made from it (Obsidian core templates "{{title}}",
# "{{date:YYYY-MM-DD}}"; Templater "<% tp.file.title %>"): a title or alias holding one names no note,
# so a template note is titled by its file name ("Meeting template"), and a query for "title" or "date"
# does not meet every template's alias.
_TEMPLATE_FIELD = re.compile(r"\{\{[^{}\n]*\}\}|<%[^\n]*?%>")


def _first_scalar(fm: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        v = fm.get(key)
        if isinstance(v, list) and len(v) == 1:
            v = v[0]
        if v is None or isinstance(v, (bool, dict, list)):
            continue
        s = _scalar_str(v).strip()
        if s:
            return s
    return None


def _clean_tag(tag: str) -> str | None:
    tag = tag.strip().lstrip("#").strip("/")
    if not tag or all(c.isdigit() or c == "/" for c in tag):
        return None
    return tag


# -- body --------------------------------------------------------------------------------------
def _mask_code_spans(line: str) -> str:
    """The line with inline code spans (`x`, ``x ` y``) replaced by spaces, columns kept."""
    if "`" not in line:
        return line
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    by_len: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(runs):
        by_len.setdefault(b - a, []).append(i)
    cursor = {n: 0 for n in by_len}
    out: list[str] = []
    pos = i = 0
    while i < len(runs):
        a, b = runs[i]
        same = by_len[b - a]
        while cursor[b - a] < len(same) and same[cursor[b - a]] <= i:
            cursor[b - a] += 1
        if cursor[b - a] == len(same):
            i += 1  # no closing run of this length: literal backticks
            continue
        j = same[cursor[b - a]]
        end = runs[j][1]
        out.append(line[pos:a])
        out.append(" " * (end - a))
        pos, i = end, j + 1
    out.append(line[pos:])
    return "".join(out)


def _wikilink(m: re.Match, line_no: int, own_stem: str) -> Link | None:
    inner = m.group(2).replace("\\|", "|")
    target, _, shown = inner.partition("|")
    target, _, anchor = target.partition("#")
    target, anchor = target.strip(), anchor.split("#")[-1].strip() or None
    if not target:
        if anchor is None:
            return None
        target = own_stem
    embed = m.group(1) == "!"
    suffix = _ASSET_SUFFIX.search(target.rsplit("/", 1)[-1])
    if suffix and suffix.group(1).casefold() not in ("md", "markdown"):
        kind = "asset"
    else:
        kind = "embed" if embed else "link"
    return Link(target, anchor, kind, shown.strip() or None, line_no)


def _md_link(m: re.Match, line_no: int) -> Link | None:
    raw = m.group(3)
    if raw.startswith("<"):
        raw = raw[1:-1]
    if _SCHEME.match(raw):
        return None
    path, _, anchor = raw.partition("#")
    path = unquote(path).strip()
    if not path.casefold().endswith(".md"):
        return None
    anchor = unquote(anchor).strip() or None
    return Link(path, anchor, "embed" if m.group(1) == "!" else "link", m.group(2).strip() or None, line_no)


def parse(text: str, path: str) -> Document:
    """Parse a note's text. Never raises on any `str`; problems become `warnings`."""
    lines = split_lines(text)
    warnings: list[str] = []
    fm, body_start = _frontmatter(lines, warnings)
    own_stem = _file_stem(path)
    headings: list[Heading] = []
    links: list[Link] = []
    block_ids: list[tuple[str, int]] = []
    fences: list[CodeFence] = []
    inline_tags: list[str] = []
    fence: tuple[str, int, int, str] | None = None  # (char, length, start line, info)
    for idx in range(body_start - 1, len(lines)):
        line, no = lines[idx], idx + 1
        if fence is not None:
            m = _FENCE_CLOSE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1]:
                fences.append(CodeFence(fence[2], no, fence[3], True))
                fence = None
            continue
        m = _FENCE_OPEN.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)), no, m.group(2).strip())
            continue
        h = _HEADING.match(line)
        if h:
            headings.append(Heading(len(h.group(1)), _HEADING_CLOSE.sub("", h.group(2) or "").strip(), no))
        masked = _mask_code_spans(line)
        b = _BLOCK_ID.search(masked)
        if b:
            block_ids.append((b.group(1), no))
        if "[[" in masked:
            for wm in _WIKILINK.finditer(masked):
                link = _wikilink(wm, no, own_stem)
                if link:
                    links.append(link)
            masked = _WIKILINK.sub(lambda wm: " " * len(wm.group(0)), masked)
        if "](" in masked:
            for mm in _MD_LINK.finditer(masked):
                link = _md_link(mm, no)
                if link:
                    links.append(link)
        if "#" in masked:
            for tm in _TAG.finditer(masked):
                tag = _clean_tag(tm.group(1))
                if tag and not _HEX_COLOUR.fullmatch(tag):
                    inline_tags.append(tag)
    if fence is not None:
        fences.append(CodeFence(fence[2], len(lines), fence[3], False))
        warnings.append(f"unclosed code fence opened at line {fence[2]}; read to the end of the file")

    fm_tags: list[str] = []
    _strings(fm.get("tags", fm.get("tag")), True, fm_tags)
    tags: dict[str, str] = {}
    for t in fm_tags + inline_tags:
        t2 = _clean_tag(t)
        if t2:
            tags.setdefault(t2.casefold(), t2)
    aliases: list[str] = []
    _strings(fm.get("aliases", fm.get("alias")), False, aliases)
    aliases = [a for a in aliases if not _TEMPLATE_FIELD.search(a)]
    title = _first_scalar(fm, ("title",))
    if title is None or _TEMPLATE_FIELD.search(title):
        title = next((h.text for h in headings if h.level == 1 and h.text and not _TEMPLATE_FIELD.search(h.text)),
                     None) or own_stem
    return Document(
        path=path, title=title, aliases=tuple(dict.fromkeys(aliases)), tags=tuple(tags.values()),
        note_type=_first_scalar(fm, ("type", "kind", "category")), frontmatter=fm, lines=lines,
        body_start=body_start, headings=tuple(headings), links=tuple(links), block_ids=tuple(block_ids),
        warnings=tuple(warnings), fences=tuple(fences),
    )
