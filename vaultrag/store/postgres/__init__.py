"""The team backend: collections in a PostgreSQL database with pgvector (`pip install 'vaultrag[postgres]'`).

Imported only when the configured store is a `postgresql://` URL; psycopg itself is imported when
the first connection opens, with the install command in the error when it is missing.
"""
__all__ = ["PgStore", "PgBackend", "list_collections"]


def __getattr__(name: str):
    """The store and backend are loaded on first use (PEP 562), not with the package: a fresh hook
    process imports `hook_policy` (standard library only) to decide whether to search at all, and
    loading store.py with it cost ~0.2 s of a hook that then declines (issue 15, stop 18)."""
    if name == "PgBackend":
        from .backend import PgBackend

        return PgBackend
    if name in ("PgStore", "list_collections"):
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
