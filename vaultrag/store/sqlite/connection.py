"""Open SQLite with FTS5 and, when possible, the sqlite-vec extension. Standard library only.

Two traps this module exists for (see BENCHMARKS.md / performance notes):
- pyenv and macOS system Pythons build `sqlite3` without `enable_load_extension`, so vec0 cannot
  load. We then use `sqlean` (the `sqlean-py` wheel: SQLite 3.50 with FTS5 and extension loading).
- `import sqlite_vec` imports numpy (130-210 ms). We locate its `vec0` library by path with
  `importlib.util.find_spec` and load it directly, which costs ~1 ms.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

# Wait this long for a writer's lock before failing (reindex commits one file at a time).
BUSY_TIMEOUT_MS = 5000
# Read-only connections read pages through a memory map: a fresh one (every hook process, every
# library search() without an open Store) then reads the OS page cache directly instead of copying
# pages into its own empty cache (tldr scale: search() opening the index 11.0 -> 8.4 ms). Writers
# do without: mapped pages count in their RSS (full tldr index peak 162 -> 206 MB).
MMAP_BYTES = 1 << 30


def sqlite_module() -> ModuleType:
    """The DB-API module to use: stdlib `sqlite3` if it can load extensions, else `sqlean`.

    `VAULTRAG_SQLITE=stdlib|sqlean` forces one (used by tests and for debugging).
    """
    forced = os.environ.get("VAULTRAG_SQLITE", "")
    if forced != "sqlean":
        import sqlite3

        if forced == "stdlib" or hasattr(sqlite3.Connection, "enable_load_extension"):
            return sqlite3
    try:
        import sqlean  # type: ignore[import-not-found]

        return sqlean
    except ImportError:
        import sqlite3

        return sqlite3


def vec_extension_path() -> str | None:
    """Path of the sqlite-vec loadable library (without importing sqlite_vec), or None."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    for name in ("vec0.so", "vec0.dylib", "vec0.dll"):
        if (folder / name).is_file():
            return str(folder / name)
    return None


def load_vec(conn) -> str | None:
    """Load vec0 into `conn`. Returns None on success, else the reason it is unavailable."""
    path = vec_extension_path()
    if path is None:
        return "sqlite-vec is not installed (pip install sqlite-vec)"
    if not hasattr(conn, "enable_load_extension"):
        return "this Python's sqlite3 cannot load extensions and sqlean-py is not installed (pip install sqlean-py)"
    try:
        conn.enable_load_extension(True)
        try:
            conn.load_extension(str(Path(path).with_suffix("")))
        finally:
            conn.enable_load_extension(False)
    except Exception as exc:  # the driver's OperationalError, whichever module it is
        return f"loading sqlite-vec failed: {exc}"
    return None


def connect(path: str | os.PathLike, *, readonly: bool = False):
    """Connect with WAL, a busy timeout and foreign keys on. Read-only opens never create the file."""
    mod = sqlite_module()
    if readonly:
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        conn = mod.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           isolation_level=None)
    else:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.exists():  # create with 0600: the index holds the text of private notes
            os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o600))
        conn = mod.connect(str(p), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           isolation_level=None)  # we issue BEGIN/COMMIT ourselves
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    if readonly:
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    return conn
