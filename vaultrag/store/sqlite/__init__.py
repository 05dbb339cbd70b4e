"""The embedded backend: one SQLite file with FTS5 and sqlite-vec."""
from .files import ReindexLock, SqliteBackend
from .store import SqliteStore

__all__ = ["SqliteStore", "SqliteBackend", "ReindexLock"]
