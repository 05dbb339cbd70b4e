"""The one place that opens a store from configuration: a path -> SQLite, a `postgresql://` URL ->
PostgreSQL. Precedence (config.py): `--store` > `VAULTRAG_STORE` > `store:` in the config file >
`--db`/`db:` > one SQLite file per vault under the data folder. The PostgreSQL driver is imported
only when the location is a PostgreSQL URL (the SQLite and hook paths never load it)."""
from __future__ import annotations

import os
from pathlib import Path

from .base import Backend, Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(location) -> bool:
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


def backend_class(location) -> type[Store]:
    """The Store class for a location (what `Store(location, ...)` instantiates)."""
    if is_postgres(location):
        from .postgres import PgStore

        return PgStore
    from .sqlite import SqliteStore

    return SqliteStore


def store_location(cfg) -> str | Path:
    """The configured store: a PostgreSQL URL, or the SQLite file's path."""
    loc = getattr(cfg, "store", None)
    if loc and not is_postgres(str(loc)):
        return Path(os.path.expanduser(str(loc)))
    return str(loc) if loc else cfg.db_path()


def collection_names(cfg) -> tuple[str, ...]:
    """Collections a configuration names (`--collection a,b`); default: the vault folder's name."""
    raw = getattr(cfg, "collection", None)
    if raw:
        names = tuple(dict.fromkeys(n.strip() for n in str(raw).split(",") if n.strip()))
        if names:
            return names
    if cfg.vault is not None:
        return (Path(cfg.vault).name or "vault",)
    return ("default",)


def backend_for(cfg) -> Backend:
    """Where the configured index lives (writers: lock, rebuild, open). One collection only."""
    loc = store_location(cfg)
    if is_postgres(loc):
        from ..errors import ConfigError
        from .postgres import PgBackend

        names = collection_names(cfg)
        if len(names) != 1:
            raise ConfigError(f"reindex writes one collection at a time, got {', '.join(names)}; "
                              f"pass a single --collection NAME")
        return PgBackend(loc, names[0])
    from .sqlite import SqliteBackend

    return SqliteBackend(loc)


def open_store(cfg, *, readonly: bool = True) -> Store:
    """Open the configured index for searching (readonly) or writing."""
    loc = store_location(cfg)
    if is_postgres(loc):
        from .postgres import PgStore

        return PgStore(loc, collection=collection_names(cfg), readonly=readonly)
    from .sqlite import SqliteStore

    return SqliteStore(loc, readonly=readonly)
