"""Files a killed `reindex --full` leaves beside the index, and their removal (issue 14, finding 4).

A full rebuild writes `<db>.rebuild-<pid>` (with its -wal/-shm) and swaps it in at the end. Killed
before the swap, those files stayed forever (57 MB after two kills at tldr scale), holding the text
of notes deleted since. Every reindex now removes them first; `vaultrag status` lists them.
"""
from __future__ import annotations

import os
from pathlib import Path

from .frozen import frozen

REBUILD_INFIX = ".rebuild-"  # a full rebuild writes <db>.rebuild-<pid> (+ -wal, -shm) and swaps it in


@frozen
class RebuildLeftover:
    path: Path
    pid: int | None
    bytes: int
    alive: bool  # the process that wrote it still runs (a rebuild in progress, not a leftover)


def _pid_alive(pid: int | None) -> bool:
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, owned by someone else
    return True


def rebuild_leftovers(db: Path) -> list[RebuildLeftover]:
    """Files of full rebuilds beside `db` (a killed `--full` leaves them, with the text of notes
    deleted since), each with whether its writer still runs."""
    prefix = db.name + REBUILD_INFIX
    out: list[RebuildLeftover] = []
    try:
        entries = list(os.scandir(db.parent))
    except OSError:
        return out
    for entry in sorted(entries, key=lambda e: e.name):
        if not entry.name.startswith(prefix) or not entry.is_file(follow_symlinks=False):
            continue
        head = entry.name[len(prefix):].split("-", 1)[0]
        pid = int(head) if head.isdigit() else None
        try:
            size = entry.stat(follow_symlinks=False).st_size
        except OSError:
            size = 0
        out.append(RebuildLeftover(Path(entry.path), pid, size, pid == os.getpid() or _pid_alive(pid)))
    return out


def remove_stale_rebuilds(db: Path, lock_is_exclusive: bool) -> tuple[int, int]:
    """Delete rebuild files no running process owns. Holding the reindex lock (flock), every one
    but our own is stale, whatever its pid says (pids are reused). Returns (files, bytes)."""
    files = size = 0
    for left in rebuild_leftovers(db):
        if left.pid == os.getpid() or (left.alive and not lock_is_exclusive):
            continue
        try:
            os.unlink(left.path)
        except OSError as exc:
            import logging  # lazy: off the hook path (importing it costs a hook ~6 ms)

            logging.getLogger(__name__).warning("cannot remove stale rebuild file %s: %s", left.path, exc)
            continue
        files += 1
        size += left.bytes
    return files, size
