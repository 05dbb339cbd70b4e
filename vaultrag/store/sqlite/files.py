"""The SQLite index as files: where it lives, the writer lock beside it, and the rebuild that
writes a new database beside the old one and swaps it in atomically (a failed or interrupted
rebuild never loses the existing index; readers keep the old file open until they close it)."""
from __future__ import annotations

import os
import time
from pathlib import Path

from ...errors import IndexLocked, IndexUnwritable
from ...leftovers import REBUILD_INFIX, remove_stale_rebuilds
from ..base import Backend, Rebuild
from .store import SqliteStore, damage_at

# SQLite's companion files: the write-ahead log, its shared-memory index, a rollback journal.
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")


def remove_db(path: Path, keep_main: bool = False) -> None:
    """Delete a database file and its companions (or only the companions)."""
    for suffix in COMPANION_SUFFIXES + (() if keep_main else ("",)):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass


class ReindexLock:
    """An exclusive lock file beside the database so two reindexes never interleave."""

    def __init__(self, db: Path, wait_s: float):
        self.path = db.with_name(db.name + ".lock")
        self.wait_s = wait_s
        self.fd: int | None = None
        self.exclusive = False  # True once an flock is held (not on Windows)

    def __enter__(self) -> "ReindexLock":
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        except OSError as exc:  # a read-only data folder: say so (it used to surface as a corrupt index)
            raise IndexUnwritable(f"cannot write beside the index in {self.path.parent} ({exc.strerror}); make the "
                                  f"folder writable (chmod u+w), or choose another place with --db / `db:`") from None
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; SQLite's own locking still protects the file
            return self
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(self.fd, 32, 0).decode(errors="replace").strip() or "unknown"
                    os.close(self.fd)
                    self.fd = None
                    raise IndexLocked(f"another reindex (pid {holder}) holds {self.path}; waited "
                                      f"{self.wait_s:.0f} s. Let it finish, or retry later.") from None
                time.sleep(0.2)
        self.exclusive = True
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock


class SqliteRebuild(Rebuild):
    """Build `<db>.rebuild-<pid>`, then `os.replace` it over the database."""

    def __init__(self, db: Path):
        self.db = db
        self.target = db.with_name(db.name + f"{REBUILD_INFIX}{os.getpid()}")
        self.store: SqliteStore | None = None

    def __enter__(self) -> "SqliteRebuild":
        remove_db(self.target)
        self.store = SqliteStore(self.target)
        self.store.defer_packing = True  # deflated once, by the closing optimize() (store.py)
        return self

    def publish(self) -> None:
        self.store.close()
        remove_db(self.db, keep_main=True)
        os.replace(self.target, self.db)

    def __exit__(self, *exc) -> None:
        try:
            self.store.close()  # closing twice is harmless
        finally:
            remove_db(self.target)


class SqliteBackend(Backend):
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    @property
    def location(self) -> str:
        return str(self.path)

    def open(self, *, readonly: bool = False) -> SqliteStore:
        return SqliteStore(self.path, readonly=readonly)

    def lock(self, wait_s: float) -> ReindexLock:
        return ReindexLock(self.path, wait_s)

    def rebuild(self) -> SqliteRebuild:
        return SqliteRebuild(self.path)

    def damage(self) -> str | None:
        """Why the index's pages are damaged (an incremental reindex then rebuilds it), or None."""
        return damage_at(self.path)

    def remove_leftovers(self, lock) -> tuple[int, int]:
        return remove_stale_rebuilds(self.path, getattr(lock, "exclusive", False))
