"""Index a folder of Claude Code transcripts: incremental by byte offset, deletions, one
transaction per segment.

A transcript's latest segment records the transcript's mtime and how far it was read (`size` =
the end offset, `hash` = sha256 of the segment's bytes). Same mtime and size on disk: unchanged,
not opened. Grown: read from the end offset on, as a new segment (only complete lines; an
unfinished last line waits for the next run). Shrunk, or the bytes of the last segment changed
(a rewritten file): every segment is dropped and the transcript indexed again. Gone (Claude Code
removes transcripts after `cleanupPeriodDays`): its segments are deleted.
"""
from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..store import FileWrite, Store
from . import FOLDER_META, SESSIONS_SCOPE, is_session_path, parse_segment_path, segment_path, session_of
from .chunking import build_segment
from .reader import read_transcript, session_title

# A transcript bigger than this is skipped (and said so): a session that long is mostly spilled
# tool output, and reading it whole would hold that much memory.
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
SUBAGENT_PREFIX = "agent-"  # sidechain transcripts (`<session>/subagents/agent-*.jsonl`) are not the conversation

Embed = Callable[[list[list[str]], list[FileWrite]], list[object]]


@dataclass
class SessionsReport:
    folder: str = ""
    transcripts: int = 0  # transcript files present
    sessions_indexed: int = 0  # transcripts with something in the index after the run
    segments_written: int = 0
    messages: int = 0
    chunks_written: int = 0
    unchanged: int = 0
    deleted: int = 0  # transcripts gone from disk, removed from the index
    reindexed: int = 0  # rewritten transcripts indexed again from the start
    pending_tails: int = 0  # transcripts ending in an unfinished line (left for the next run)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)  # entries not indexed, by kind
    secrets: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        return d


def scan_transcripts(root: Path) -> tuple[dict[str, os.stat_result], list[tuple[str, str]]]:
    """Transcripts under `root` ({path relative to root: stat}): `root/*.jsonl` and
    `root/<project>/*.jsonl`. Symlinks are not followed; subagent transcripts are left out."""
    found: dict[str, os.stat_result] = {}
    skipped: list[tuple[str, str]] = []
    for folder, prefix in [(root, "")] + [(Path(e.path), e.name + "/") for e in _entries(root, skipped)
                                          if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]:
        for e in _entries(folder, skipped):
            if not e.name.endswith(".jsonl") or e.name.startswith(SUBAGENT_PREFIX):
                continue
            rel = prefix + e.name
            if e.is_symlink():
                skipped.append((rel, "symlink not followed"))
            elif e.is_file(follow_symlinks=False):
                found[rel] = e.stat(follow_symlinks=False)
    return found, skipped


def _entries(folder: Path, skipped: list) -> list:
    try:
        return sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        skipped.append((str(folder), f"folder unreadable: {exc.strerror}"))
        return []


def indexed_segments(store: Store) -> dict[str, list[tuple[int, object]]]:
    """transcript rel path -> [(start offset, FileRecord)] of its stored segments, by offset."""
    out: dict[str, list[tuple[int, object]]] = {}
    for path, rec in store.files().items():
        if is_session_path(path):
            rel, start = parse_segment_path(path)
            out.setdefault(rel, []).append((start, rec))
    for segs in out.values():
        segs.sort(key=lambda s: s[0])
    return out


def index_sessions(store: Store, root: Path, *, max_chars: int, count_tokens: Callable[[str], int], embed: Embed,
                   only: Iterable[str] | None = None, stop: Callable[[], bool] = lambda: False) -> SessionsReport:
    """Bring the index's sessions in line with the transcripts under `root`. `only`: just these
    transcripts (paths relative to `root`; the SessionEnd hook), and nothing is deleted."""
    root = Path(root).expanduser().resolve()
    report = SessionsReport(folder=str(root))
    if not root.is_dir():
        report.skipped.append((str(root), "sessions folder does not exist or is not a folder; check `sessions:`"))
        return report
    found, skipped = scan_transcripts(root)
    report.skipped.extend(skipped)
    report.transcripts = len(found)
    segments = indexed_segments(store)
    todo = sorted(found) if only is None else sorted(set(only) & set(found))
    left_out: Counter = Counter()
    secrets: Counter = Counter()
    for rel in todo:
        if stop():
            break
        _index_one(store, root, rel, found[rel], segments.get(rel, []), report, left_out, secrets,
                   max_chars, count_tokens, embed)
    if only is None and not stop():
        for rel in sorted(set(segments) - set(found)):
            _delete(store, segments[rel])
            report.deleted += 1
    report.sessions_indexed = len(indexed_segments(store))
    with store.transaction():
        store.set_meta(FOLDER_META, str(root))
    report.left_out = dict(sorted(left_out.items()))
    report.secrets = dict(sorted(secrets.items()))
    return report


def _delete(store: Store, segs: Sequence[tuple[int, object]]) -> None:
    with store.transaction():
        for _, rec in segs:
            store.delete_file(rec.path)


def _index_one(store: Store, root: Path, rel: str, st: os.stat_result, segs: list, report: SessionsReport,
               left_out: Counter, secrets: Counter, max_chars: int, count_tokens, embed: Embed) -> None:
    from ..safe_io import read_in_vault

    last = segs[-1][1] if segs else None
    if last is not None and (last.mtime_ns, last.size) == (st.st_mtime_ns, st.st_size):
        report.unchanged += 1
        return
    if st.st_size > MAX_TRANSCRIPT_BYTES:
        report.skipped.append((rel, f"larger than {MAX_TRANSCRIPT_BYTES // 2**20} MB; not indexed"))
        return
    try:
        data = read_in_vault(root, rel, MAX_TRANSCRIPT_BYTES)
    except OSError as exc:
        report.skipped.append((rel, f"unreadable: {exc.strerror or exc}"))
        return
    start, drop = 0, []
    if last is not None:
        last_start = segs[-1][0]
        intact = last.size <= len(data) and hashlib.sha256(data[last_start:last.size]).hexdigest() == last.hash
        if intact:
            start = last.size
        else:  # rewritten or truncated: index it again from the start
            drop = list(segs)
            report.reindexed += 1
    res = read_transcript(data, start, first_line=data.count(b"\n", 0, start) + 1)
    left_out.update(res.left_out)
    report.pending_tails += res.pending_tail
    if res.end == start and not drop:
        return  # nothing complete since the last run (an unfinished line at most)
    project, session = session_of(rel)
    base = {"session_id": session, "project": project or root.name}
    title = session_title(data, res.titles)
    fw, inputs, origins, found = build_segment(segment_path(rel, start), st.st_mtime_ns, res.end,
                                               hashlib.sha256(data[start:res.end]).hexdigest(), title,
                                               res.messages, base, max_chars, count_tokens)
    secrets.update(found)
    vectors = embed([inputs], [fw])[0]
    with store.transaction():
        for _, rec in drop:
            store.delete_file(rec.path)
        report.chunks_written += store.write_file(fw, vectors)
        if origins:
            store.put_origins(fw.path, SESSIONS_SCOPE, origins)
    report.segments_written += 1
    report.messages += len(res.messages)


def transcript_files(store: Store) -> int:
    """How many transcripts the index holds something of."""
    return len(indexed_segments(store))
