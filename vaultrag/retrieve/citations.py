"""Live citations: the files are the truth, the index a snapshot.

Before answering, each returned hit's file is re-read (only those) and hashed. Same hash: the
stored line range is right (`fresh`). Changed: the note is re-parsed and the chunk found again by
heading path and a text fingerprint; the hit gets the current text and lines (`source_changed`).
File gone, or chunk no longer in it: the hit is dropped.

Only a regular file inside the vault is read, and at most `max_bytes` of it (see `safe_io`): a note
swapped for a symlink (to `/etc/passwd`, or to another note), a FIFO, a device or an oversized file
is not read. Such a hit keeps the text stored at index time and is marked `stored` ("the index's
copy; the file on disk could not be checked safely"), so nothing from outside the vault is ever
shown under a vault path. No vault folder on this machine at all (a shared PostgreSQL index
searched from elsewhere): the stored text and lines, marked `stored` too.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..config import DEFAULT_MAX_FILE_BYTES
from ..digest import sha256
from ..paths import is_tagged, resolve, shown_part
from ..safe_io import RefusedFile, lstat_in_vault, read_in_vault
from ..store import StoredChunk

# A changed chunk is "the same chunk" if its text is at least this similar (difflib ratio) to the
# indexed one; below it the passage was rewritten and citing it would mislead.
RELOCATE_MIN_SIMILARITY = 0.6
# The three values of `Hit.citation` (JSON field `citation`).
FRESH, SOURCE_CHANGED, STORED = "fresh", "source_changed", "stored"
_GONE = (errno.ENOENT, errno.ENOTDIR)


class FileCache:
    """Reads and hashes each candidate file at most once per query."""

    def __init__(self, vault: Path, chunk_settings, max_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 path_key: str | None = None):
        self.vault = vault
        self.path_key = path_key  # finds the real file of a path stored redacted (vaultrag/paths.py)
        self.chunk_settings = chunk_settings  # called only when a file changed
        self.max_bytes = max_bytes  # the indexer skips bigger files, so a bigger one is not what it indexed
        self._raw: dict[str, bytes | None] = {}
        self._refused: set[str] = set()
        self._real: dict[str, str | None] = {}
        self._chunks: dict[str, list] = {}

    def real_path(self, stored: str) -> str | None:
        """The file on disk for a stored path (itself unless its name was redacted); None: not found."""
        if not is_tagged(stored):
            return stored
        if stored not in self._real:
            self._real[stored] = resolve(self.vault, stored, self.path_key)
        return self._real[stored]

    def raw(self, rel: str) -> bytes | None:
        """The file's bytes; None when it is gone or was refused (see `refused`)."""
        if rel not in self._raw:
            real = self.real_path(rel)
            if real is None:  # a redacted name no file matches any more: gone
                self._raw[rel] = None
                return None
            try:
                self._raw[rel] = read_in_vault(self.vault, real, self.max_bytes)
            except OSError as exc:
                self._raw[rel] = None
                if isinstance(exc, RefusedFile) or exc.errno not in _GONE:
                    self._refused.add(rel)  # a link, a special file, too big, unreadable: not "gone"
        return self._raw[rel]

    def refused(self, rel: str) -> bool:
        return rel in self._refused

    def current_chunks(self, rel: str) -> list:
        """Re-chunk the file as the indexer would (imports the parser only when a file changed)."""
        if rel not in self._chunks:
            from .. import chunker, markdown
            from ..scrubber import scrub

            raw = self.raw(rel) or b""
            text, _ = scrub(raw.decode("utf-8-sig", errors="replace"))
            self._chunks[rel] = chunker.chunk_document(markdown.parse(text, shown_part(rel)), self.chunk_settings())
        return self._chunks[rel]


def changed_on_disk(vault: Path, chunks: list[StoredChunk], files: FileCache | None = None) -> int:
    """How many distinct candidate files differ (mtime or size) from the index, or are gone."""
    seen: dict[str, bool] = {}
    for ch in chunks:
        if ch.path in seen:
            continue
        real = files.real_path(ch.path) if files is not None else (None if is_tagged(ch.path) else ch.path)
        if real is None:
            seen[ch.path] = True
            continue
        try:
            st = lstat_in_vault(vault, real)
            seen[ch.path] = not stat.S_ISREG(st.st_mode) or (st.st_mtime_ns, st.st_size) != (ch.mtime_ns, ch.size)
        except OSError:
            seen[ch.path] = True
    return sum(seen.values())


def locate(ch: StoredChunk, files: FileCache) -> tuple[str, str, int, int] | None:
    """(citation, text, line_start, line_end) for the chunk as it is on disk now, or None if gone."""
    raw = files.raw(ch.path)
    if raw is None:
        return (STORED, ch.text, ch.line_start, ch.line_end) if files.refused(ch.path) else None
    if sha256(raw).hexdigest() == ch.file_hash:
        return FRESH, ch.text, ch.line_start, ch.line_end
    current = files.current_chunks(ch.path)
    for cur in current:  # unchanged text that moved: exact fingerprint match
        if cur.content_hash == ch.content_hash:
            return SOURCE_CHANGED, cur.text, cur.line_start, cur.line_end
    from difflib import SequenceMatcher  # lazy: only a changed note needs it (~2 ms of a hook's start)

    best, best_ratio = None, 0.0
    for cur in current:
        same_heading = " > ".join(cur.heading_path) == ch.heading_path
        ratio = SequenceMatcher(None, cur.text, ch.text, autojunk=False).quick_ratio()
        if ratio >= RELOCATE_MIN_SIMILARITY:
            ratio = SequenceMatcher(None, cur.text, ch.text, autojunk=False).ratio()
        ratio += 0.1 if same_heading else 0.0  # the heading path breaks near-ties
        if ratio > best_ratio:
            best, best_ratio = cur, ratio
    if best is None or best_ratio < RELOCATE_MIN_SIMILARITY:
        return None
    return SOURCE_CHANGED, best.text, best.line_start, best.line_end


def stored_copy(ch: StoredChunk) -> tuple[str, str, int, int]:
    """The chunk as the index stored it, for a searcher without the files (`citation: "stored"`)."""
    return STORED, ch.text, ch.line_start, ch.line_end


def locate_session(ch: StoredChunk, root: Path | None, origin: dict,
                   cache: dict | None = None) -> tuple[str, str, int, int] | None:
    """A transcript chunk's citation (issue 17): the segment's bytes unchanged, or its message
    found again by uuid: `fresh`; the transcript or the message gone: None (dropped); no sessions
    folder on this machine, or a transcript that may not be read (a link, too big): `stored`."""
    from ..sessions import parse_segment_path
    from ..sessions.index import MAX_TRANSCRIPT_BYTES

    if root is None or not root.is_dir():
        return stored_copy(ch)
    rel, start = parse_segment_path(ch.path)
    cache = {} if cache is None else cache
    if rel not in cache:
        try:
            cache[rel] = read_in_vault(root, rel, MAX_TRANSCRIPT_BYTES)
        except OSError as exc:
            cache[rel] = False if isinstance(exc, RefusedFile) or exc.errno not in _GONE else None
    data = cache[rel]
    if data is None:
        return None
    if data is False:  # a link, a special file, too big, unreadable: the index's copy
        return stored_copy(ch)
    if sha256(data[start:ch.size]).hexdigest() == ch.file_hash:
        return FRESH, ch.text, ch.line_start, ch.line_end
    uuid = (origin.get("message_uuid") or "").encode()
    if uuid and (b'"uuid":"' + uuid + b'"' in data or b'"uuid": "' + uuid + b'"' in data):
        return FRESH, ch.text, ch.line_start, ch.line_end
    return None
