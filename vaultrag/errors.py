"""One exception hierarchy. Every message says what happened and what to do next."""
from __future__ import annotations


class VaultragError(Exception):
    """Base class for every error vaultrag raises on purpose."""


class ConfigError(VaultragError):
    """A configuration key is unknown or has a bad value."""


class VaultNotFound(VaultragError):
    """The configured vault folder does not exist."""


class IndexMissing(VaultragError):
    """No index database exists yet for this vault."""


class IndexCorrupt(VaultragError):
    """The index database cannot be read; it is disposable and can be rebuilt."""


class IndexUnwritable(VaultragError):
    """The index folder or file cannot be written (permissions, read-only disk); it is not corrupt."""


class IndexLocked(VaultragError):
    """Another process holds the index (a reindex is running)."""


class ModelMismatch(VaultragError):
    """The index was built with another embedding model than the one configured."""


class DependencyMissing(VaultragError):
    """An optional heavy dependency is not installed."""


class StoreUnavailable(VaultragError):
    """The configured store (a PostgreSQL server) cannot be reached or lacks what vaultrag needs."""


def cli_command() -> str:
    """The `vaultrag` command spelt so that it runs this vaultrag: the `vaultrag` executable beside
    the running interpreter (a venv's or pipx's bin/), else this interpreter with `-m vaultrag`.
    Messages used to say `python -m vaultrag...`, which runs whatever `python` the user's shell
    finds first (a pyenv shim, the system's), often one without vaultrag."""
    import os
    import sys

    exe = os.path.join(os.path.dirname(sys.executable), "vaultrag")
    if sys.executable and os.path.isfile(exe) and os.access(exe, os.X_OK):
        return exe
    return f"{sys.executable or 'python3'} -m vaultrag"


def fix_command(args: str) -> str:
    """`vaultrag ARGS` as `cli_command` spells it: the command a message tells the user to run."""
    return f"{cli_command()} {args}"


# How SQLite reports an index it cannot use, by the driver's message (what a hook logs): pages that
# are not what they claim (SQLITE_CORRUPT "database disk image is malformed", SQLITE_NOTADB "file is
# not a database"; sqlite-vec reading damaged shadow tables says "vectors blob read error for N",
# "Could not find a row with rowid N" or "Could not fetch vector data for N"), or another connection
# holding the write lock (SQLITE_BUSY, SQLITE_LOCKED).
CORRUPT_SIGNS = ("malformed", "not a database", "blob read error", "Could not find a row with rowid",
                 "Could not fetch vector data", "IndexCorrupt")
LOCKED_SIGNS = ("database is locked", "database table is locked", "IndexLocked")


def damaged_index(location, why: str) -> IndexCorrupt:
    """The error for an index whose pages do not read (SQLite's complaint in `why`)."""
    return IndexCorrupt(f"index {location} is damaged and cannot be read ({why}); it is a copy of the vault, "
                        f"rebuild it with: {fix_command('reindex --full')}")


def index_failure(text: str) -> str | None:
    """"corrupt", "locked" or None: what an error message (or a hook log line) says about the index."""
    if any(sign in text for sign in CORRUPT_SIGNS):
        return "corrupt"
    if any(sign in text for sign in LOCKED_SIGNS):
        return "locked"
    return None
