"""What the hooks already injected in a Claude Code session, kept atomically. Standard library only.

Why a database: Claude Code runs hooks in parallel (several PreToolUse hooks for one turn, a prompt
while the previous turn's tools still run). A JSON file read, changed and replaced by each hook lost
updates: 20 hooks at once with one session lost 22-33 of ~60 keys, and one prompt sent 10 times at
once was injected 5-8 times (issue 14, finding 6). Here each decision is one short `BEGIN IMMEDIATE`
transaction in one small SQLite file in the state folder (WAL, 0600), taken *after* the search, so
hooks only queue for the few milliseconds of the decision itself.

The decision (issue 12, "never re-inject, never backfill with weaker chunks"):
1. The block a hook may inject is the one a fresh session would get for this query (the search's
   hits inside the hook token budget). Nothing from further down the ranking is ever added.
2. A query already answered in this session (same text, case and spacing aside) injects nothing.
3. If the block's top hit was already injected in this session, nothing is injected: the strongest
   evidence is in the context already and the rest of the list is weaker by construction.
4. Otherwise the block's hits not injected yet are injected (and remembered).
A chunk is known by (path, content hash, first line), so an edited chunk counts as new. Only hashes
are stored: the state file holds neither prompts nor note paths.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .digest import sha256
from .safe_io import open_private, private_dir

TYPE_CHECKING = False  # typing costs a fresh hook process ~2 ms to import (issue 18); annotations are strings
if TYPE_CHECKING:
    from typing import TypeVar
    T = TypeVar("T")

DB_NAME = "sessions.sqlite"
# The hook deadline is 1.5 s and the search comes first: a decision waits at most this long for
# another hook's transaction (each holds it ~1-3 ms), then the hook fails open (logs, injects).
BUSY_TIMEOUT_MS = 250
SESSION_MAX_CHUNKS = 500  # per session; the oldest are forgotten first
SESSION_TTL_S = 7 * 24 * 3600  # rows older than this are deleted (sessions rarely last a week)
KEY_HEX = 24  # 96 bits of sha256: no collisions among a session's few hundred keys
# No fsync (issue 18): with synchronous=NORMAL a hook's COMMIT (a new WAL) and its close (the
# checkpoint every last connection runs) waited for the disk, 17-60 ms wall per hook on this
# machine's shared disk against ~1.3 ms with OFF (CPU unchanged). WAL with OFF still survives a
# killed process (the data is in the OS by then); only an OS crash or power cut can lose the last
# decisions or damage the file, and a damaged file is started again (`_reset`): the state only
# saves re-injecting a chunk the session already has.
SYNCHRONOUS = "OFF"


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS injected (session TEXT NOT NULL, key TEXT NOT NULL, at REAL NOT NULL, "
    "PRIMARY KEY (session, key)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS injected_at ON injected(at)",
    "CREATE TABLE IF NOT EXISTS answered (session TEXT NOT NULL, query TEXT NOT NULL, at REAL NOT NULL, "
    "PRIMARY KEY (session, query)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS answered_at ON answered(at)",
)


def _digest(text: str) -> str:
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_HEX]


def normalise_query(query: str) -> str:
    return " ".join(query.casefold().split())


def state_file(state_dir: Path) -> Path:
    return state_dir / DB_NAME


def _connect(path: Path):
    # The index's own driver: when that is sqlean, the stdlib `sqlite3` would load a second SQLite
    # library into the hook process (~2-4 ms, issue 18). Both read and write the same file format.
    from .store.sqlite.connection import driver

    sqlite3 = driver()
    fresh = not path.exists()
    if fresh:
        private_dir(path.parent)
        os.close(open_private(path, os.O_CREAT | os.O_WRONLY))
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode=WAL")  # persistent; a no-op once set
        conn.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
        for sql in _SCHEMA:  # every time: a hook racing the creator must not find the file empty
            conn.execute(sql)
    except BaseException:
        conn.close()
        raise
    if fresh:
        _drop_legacy_files(path.parent)
    return conn


def _drop_legacy_files(state_dir: Path) -> None:
    """Session files of older versions (JSON, 0644, with note paths) are not read any more."""
    legacy = state_dir / "sessions"
    for old in legacy.glob("*.json") if legacy.is_dir() else ():
        try:
            old.unlink()
        except OSError:
            pass


def claim(state_dir: Path, session_id: str, query: str, block: Sequence[T], key: Callable[[T], str],
          now: float | None = None) -> list[T]:
    """The hits of `block` to inject now for `query` in `session_id`, remembered atomically.

    `block` is ranked, strongest first. Raises OSError / the SQLite driver's Error when the state cannot be
    used (the caller decides how to fail open).
    """
    if not block or not session_id:
        return list(block)
    now = time.time() if now is None else now
    session = _digest(session_id)
    asked = _digest(normalise_query(query))
    keys = [_digest(key(h)) for h in block]
    path = state_file(state_dir)
    try:
        return [block[i] for i in _claim(path, session, asked, keys, now)]
    except Exception as exc:
        if not _damaged(exc):
            raise
    _reset(path)  # a file left damaged (power cut without fsync, or not a database at all)
    return [block[i] for i in _claim(path, session, asked, keys, now)]


def _damaged(exc: Exception) -> bool:
    """The driver's error for a file SQLite cannot read as a database (not a lock or a busy wait)."""
    msg = str(exc)
    return type(exc).__name__ == "DatabaseError" and ("malformed" in msg or "not a database" in msg)


def _reset(path: Path) -> None:
    """Start the state again: the damaged file and its WAL files go (only hashes of what was injected)."""
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass


def _claim(path: Path, session: str, asked: str, keys: list[str], now: float) -> list[int]:
    conn = _connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            chosen = _decide(conn, session, asked, keys)
            if chosen:
                conn.executemany("INSERT OR REPLACE INTO injected(session, key, at) VALUES (?, ?, ?)",
                                 [(session, keys[i], now) for i in chosen])
                conn.execute("INSERT OR REPLACE INTO answered(session, query, at) VALUES (?, ?, ?)",
                             (session, asked, now))
                _prune(conn, session, now)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()
    return chosen


def _decide(conn, session: str, asked: str, keys: list[str]) -> list[int]:
    if conn.execute("SELECT 1 FROM answered WHERE session = ? AND query = ?", (session, asked)).fetchone():
        return []
    marks = ",".join("?" * len(keys))
    seen = {r[0] for r in conn.execute(f"SELECT key FROM injected WHERE session = ? AND key IN ({marks})",
                                       (session, *keys))}
    if keys[0] in seen:
        return []
    return [i for i, k in enumerate(keys) if k not in seen and k not in keys[:i]]


def _prune(conn, session: str, now: float) -> None:
    cutoff = now - SESSION_TTL_S
    conn.execute("DELETE FROM injected WHERE at < ?", (cutoff,))
    conn.execute("DELETE FROM answered WHERE at < ?", (cutoff,))
    (count,) = conn.execute("SELECT count(*) FROM injected WHERE session = ?", (session,)).fetchone()
    if count > SESSION_MAX_CHUNKS:
        conn.execute("DELETE FROM injected WHERE session = ? AND key IN (SELECT key FROM injected "
                     "WHERE session = ? ORDER BY at LIMIT ?)", (session, session, count - SESSION_MAX_CHUNKS))


def seen_count(state_dir: Path, session_id: str) -> int:
    """How many chunks are remembered for `session_id` (tests and benchmarks)."""
    path = state_file(state_dir)
    if not path.exists():
        return 0
    conn = _connect(path)
    try:
        return conn.execute("SELECT count(*) FROM injected WHERE session = ?", (_digest(session_id),)).fetchone()[0]
    finally:
        conn.close()
