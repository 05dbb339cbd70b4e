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
import time
from pathlib import Path
from types import ModuleType

# Wait this long for a writer's lock before failing (reindex commits one file at a time).
BUSY_TIMEOUT_MS = 5000
# Read-only connections read pages through a memory map: a fresh one (every hook process, every
# library search() without an open Store) then reads the OS page cache directly instead of copying
# pages into its own empty cache (tldr scale: search() opening the index 11.0 -> 8.4 ms). Writers
# do without: mapped pages count in their RSS (full tldr index peak 162 -> 206 MB).
MMAP_BYTES = 1 << 30
# With a deadline set (a hook process), SQLite's own work checks the clock every this many virtual
# machine steps (~1 ms of work) and stops past it: its C loops never see the deadline's SIGALRM.
PROGRESS_STEPS = 20_000

_deadline: float | None = None  # time.monotonic() by which this process must be done
_busy_ms: int = BUSY_TIMEOUT_MS


def set_deadline(at: float | None, busy_share: float = 0.3) -> None:
    """Bound every later connection by a process deadline (`time.monotonic()` value, None: none).

    The busy timeout becomes at most `busy_share` of the time left (a reindex holding the lock
    kept a hook 5.03 s with the 5 s default, past Claude Code's own 5 s timeout), and a query still
    running at the deadline is interrupted (OperationalError "interrupted")."""
    global _deadline, _busy_ms
    _deadline = at
    if at is None:
        _busy_ms = BUSY_TIMEOUT_MS
    else:
        _busy_ms = max(1, min(BUSY_TIMEOUT_MS, int((at - time.monotonic()) * 1000 * busy_share)))


def busy_timeout_ms() -> int:
    return _busy_ms


def past_deadline() -> bool:
    return _deadline is not None and time.monotonic() > _deadline


def _past_deadline() -> int:  # SQLite progress handler: non-zero interrupts the statement
    return 1 if past_deadline() else 0


def sqlite_module() -> ModuleType:
    """The DB-API module to use: stdlib `sqlite3` if it can load extensions, else `sqlean`.

    `VAULTRAG_SQLITE=stdlib|sqlean` forces one (used by tests and for debugging).
    """
    name = driver_name()
    if name == "sqlean":
        try:
            import sqlean  # type: ignore[import-not-found]

            return sqlean
        except ImportError:
            pass
    import sqlite3

    return sqlite3


def driver_name() -> str:
    """"sqlite3" or "sqlean": which driver `sqlite_module()` gives, found without importing either
    package (each imports `datetime` and more; issue 18)."""
    forced = os.environ.get("VAULTRAG_SQLITE", "")
    if forced != "sqlean":
        # Ask the C module: importing `sqlite3` itself (dbapi2, datetime) costs a hook ~1-3 ms
        # that is wasted when sqlean is the one used (issue 18).
        try:
            import _sqlite3

            capable = hasattr(_sqlite3.Connection, "enable_load_extension")
        except ImportError:
            capable = False
        if forced == "stdlib" or capable:
            return "sqlite3"
    return "sqlean" if importlib.util.find_spec("sqlean") is not None else "sqlite3"


_DRIVERS: dict = {}


def driver() -> ModuleType:
    """The C module of `sqlite_module()` (`_sqlite3`, or sqlean's), for opening connections: same
    `connect`, `Connection` and exceptions, without the package's `dbapi2`, which imports
    `datetime` to register date adapters this code never uses (issue 18: `datetime` and
    `_datetime` were ~8 ms of a fresh hook's imports on a loaded machine, ~2-3 ms quiet)."""
    name = driver_name()
    lean = _DRIVERS.get(name)
    if lean is None:
        lean = _DRIVERS[name] = _c_module(name)
    return lean


def _c_module(package: str) -> ModuleType:
    """`package`'s `_sqlite3` extension, loaded (once per process, shared with a later `import
    package`) without running the package's `__init__`; the package itself when that fails."""
    import sys

    name = "_sqlite3" if package == "sqlite3" else f"{package}._sqlite3"
    if name in sys.modules:
        return sys.modules[name]
    if package == "sqlite3":
        import _sqlite3

        return _sqlite3
    try:
        import importlib.machinery

        spec = importlib.util.find_spec(package)
        folder = Path(next(iter(spec.submodule_search_locations)))
        path = next(p for suffix in importlib.machinery.EXTENSION_SUFFIXES for p in [folder / f"_sqlite3{suffix}"]
                    if p.is_file())
        ext = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(ext)
        sys.modules[name] = mod  # `from sqlean._sqlite3 import *` in the package finds this one
        try:
            ext.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        if not hasattr(mod, "connect"):
            raise ImportError(f"{name} has no connect()")
        return mod
    except Exception:  # an unusual layout: the package as a whole
        return sqlite_module()


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
        return no_extension_reason()
    try:
        conn.enable_load_extension(True)
        try:
            conn.load_extension(str(Path(path).with_suffix("")))
        finally:
            conn.enable_load_extension(False)
    except Exception as exc:  # the driver's OperationalError, whichever module it is
        return f"loading sqlite-vec failed: {exc}"
    return None


def no_extension_reason() -> str:
    """Why the vector channel is off when the connection cannot load extensions, and what to do:
    VAULTRAG_SQLITE may have asked for this sqlite3 (trial finding: forcing `stdlib` was reported
    as "sqlean-py is not installed" while it was), or sqlean-py be missing or broken."""
    forced = os.environ.get("VAULTRAG_SQLITE", "")
    has_sqlean = importlib.util.find_spec("sqlean") is not None
    off = "this Python's sqlite3, which cannot load extensions, so sqlite-vec cannot load and the vector channel is off"
    if forced == "stdlib":
        fix = ("unset VAULTRAG_SQLITE to use the installed sqlean-py, which can" if has_sqlean
               else "unset VAULTRAG_SQLITE and pip install sqlean-py")
        return f"VAULTRAG_SQLITE=stdlib selects {off}; {fix}"
    if forced == "sqlean" and not has_sqlean:
        return f"VAULTRAG_SQLITE=sqlean asks for sqlean-py, which is not installed, so vaultrag uses {off}; " \
               f"pip install sqlean-py"
    if has_sqlean:  # installed, yet sqlite_module() fell back: the package did not import
        return (f"sqlean-py is installed but failed to import, so vaultrag uses {off}; reinstall it "
                f"(pip install --force-reinstall sqlean-py)")
    return "this Python's sqlite3 cannot load extensions and sqlean-py is not installed (pip install sqlean-py)"


def library_report() -> dict:
    """Which SQLite this process uses, as `vaultrag status` reports it (doctor probes each hook's
    interpreter the same way): `library` "sqlite3" (this Python's own) or "sqlean" (the sqlean-py
    wheel, used when that one cannot load extensions: pyenv and macOS system Pythons), its SQLite
    `version`, whether it can load `extensions` and has `fts5`, and `vec`: None when sqlite-vec
    loads, else why it does not (searches then run without vectors)."""
    mod = sqlite_module()
    conn = mod.connect(":memory:")
    try:
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            fts5 = True
        except Exception:  # the driver's OperationalError: "no such module: fts5"
            fts5 = False
        vec = load_vec(conn)
    finally:
        conn.close()
    return {"library": mod.__name__, "version": mod.sqlite_version, "fts5": fts5,
            "extensions": hasattr(conn, "enable_load_extension"), "vec": vec,
            "forced": os.environ.get("VAULTRAG_SQLITE") or None}


def _check_writable(p: Path) -> None:
    """A read-only data folder or index file is not a corrupt index: say what is wrong."""
    from ...errors import IndexUnwritable

    try:
        p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise IndexUnwritable(f"cannot create the index folder {p.parent} ({exc.strerror}); make it writable "
                              f"or choose another place with --db / `db:`") from None
    if not os.access(p.parent, os.W_OK | os.X_OK):
        raise IndexUnwritable(f"the index folder {p.parent} is not writable (SQLite needs to create its "
                              f"-wal/-shm files there); make it writable (chmod u+w) or use --db elsewhere")
    if p.exists() and not os.access(p, os.R_OK | os.W_OK):
        raise IndexUnwritable(f"the index {p} is not writable; make it writable (chmod u+rw) or use --db elsewhere")


def _check_readable(p: Path) -> None:
    from ...errors import IndexUnwritable

    if p.exists() and not os.access(p, os.R_OK):
        raise IndexUnwritable(f"the index {p} is not readable by this user; fix its permissions (chmod u+r)")
    # A WAL database is read through its -shm file, which SQLite must be able to create.
    if not os.path.exists(str(p) + "-shm") and p.parent.exists() and not os.access(p.parent, os.W_OK | os.X_OK):
        raise IndexUnwritable(f"the index folder {p.parent} is read-only, and SQLite needs to create the index's "
                              f"-shm file there even to read it; make the folder writable or use --db elsewhere")


def connect(path: str | os.PathLike, *, readonly: bool = False):
    """Connect with WAL, a busy timeout and foreign keys on. Read-only opens never create the file."""
    mod = driver()
    busy = busy_timeout_ms()
    if readonly:
        _check_readable(Path(path))
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        conn = mod.connect(uri, uri=True, timeout=busy / 1000, check_same_thread=False,
                           isolation_level=None)
    else:
        p = Path(path)
        _check_writable(p)
        if not p.exists():  # create with 0600: the index holds the text of private notes
            os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o600))
        conn = mod.connect(str(p), timeout=busy / 1000, check_same_thread=False,
                           isolation_level=None)  # we issue BEGIN/COMMIT ourselves
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    if _deadline is not None:
        conn.set_progress_handler(_past_deadline, PROGRESS_STEPS)
    conn.execute(f"PRAGMA busy_timeout={busy}")
    conn.execute("PRAGMA foreign_keys=ON")
    if readonly:
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    return conn
