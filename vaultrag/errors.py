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
