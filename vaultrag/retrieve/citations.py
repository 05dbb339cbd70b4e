"""Live citations: the files are the truth, the index a snapshot.

Before answering, each returned hit's file is re-read (only those) and hashed. Same hash: the
stored line range is right (`fresh`). Changed: the note is re-parsed and the chunk found again by
heading path and a text fingerprint; the hit gets the current text and lines (`source_changed`).
File gone, or chunk no longer in it: the hit is dropped. No vault folder on this machine at all (a
shared PostgreSQL index searched from elsewhere): the stored text and lines, marked `stored`.
"""
from __future__ import annotations

import difflib
import hashlib
import os
from pathlib import Path

from ..store import StoredChunk

# A changed chunk is "the same chunk" if its text is at least this similar (difflib ratio) to the
# indexed one; below it the passage was rewritten and citing it would mislead.
RELOCATE_MIN_SIMILARITY = 0.6


class FileCache:
    """Reads and hashes each candidate file at most once per query."""

    def __init__(self, vault: Path, chunk_settings):
        self.vault = vault
        self.chunk_settings = chunk_settings  # called only when a file changed
        self._raw: dict[str, bytes | None] = {}
        self._chunks: dict[str, list] = {}

    def raw(self, rel: str) -> bytes | None:
        if rel not in self._raw:
            try:
                self._raw[rel] = (self.vault / rel).read_bytes()
            except OSError:
                self._raw[rel] = None
        return self._raw[rel]

    def current_chunks(self, rel: str) -> list:
        """Re-chunk the file as the indexer would (imports the parser only when a file changed)."""
        if rel not in self._chunks:
            from .. import chunker, markdown
            from ..scrubber import scrub

            raw = self.raw(rel) or b""
            text, _ = scrub(raw.decode("utf-8-sig", errors="replace"))
            self._chunks[rel] = chunker.chunk_document(markdown.parse(text, rel), self.chunk_settings())
        return self._chunks[rel]


def changed_on_disk(vault: Path, chunks: list[StoredChunk]) -> int:
    """How many distinct candidate files differ (mtime or size) from the index, or are gone."""
    seen: dict[str, bool] = {}
    for ch in chunks:
        if ch.path in seen:
            continue
        try:
            st = os.stat(vault / ch.path)
            seen[ch.path] = (st.st_mtime_ns, st.st_size) != (ch.mtime_ns, ch.size)
        except OSError:
            seen[ch.path] = True
    return sum(seen.values())


def locate(ch: StoredChunk, files: FileCache) -> tuple[str, str, int, int] | None:
    """(citation, text, line_start, line_end) for the chunk as it is on disk now, or None if gone."""
    raw = files.raw(ch.path)
    if raw is None:
        return None
    if hashlib.sha256(raw).hexdigest() == ch.file_hash:
        return "fresh", ch.text, ch.line_start, ch.line_end
    current = files.current_chunks(ch.path)
    for cur in current:  # unchanged text that moved: exact fingerprint match
        if cur.content_hash == ch.content_hash:
            return "source_changed", cur.text, cur.line_start, cur.line_end
    best, best_ratio = None, 0.0
    for cur in current:
        same_heading = " > ".join(cur.heading_path) == ch.heading_path
        ratio = difflib.SequenceMatcher(None, cur.text, ch.text, autojunk=False).quick_ratio()
        if ratio >= RELOCATE_MIN_SIMILARITY:
            ratio = difflib.SequenceMatcher(None, cur.text, ch.text, autojunk=False).ratio()
        ratio += 0.1 if same_heading else 0.0  # the heading path breaks near-ties
        if ratio > best_ratio:
            best, best_ratio = cur, ratio
    if best is None or best_ratio < RELOCATE_MIN_SIMILARITY:
        return None
    return "source_changed", best.text, best.line_start, best.line_end


def stored_copy(ch: StoredChunk) -> tuple[str, str, int, int]:
    """The chunk as the index stored it, for a searcher without the files (`citation: "stored"`)."""
    return "stored", ch.text, ch.line_start, ch.line_end
