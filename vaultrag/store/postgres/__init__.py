"""The team backend: collections in a PostgreSQL database with pgvector (`pip install 'vaultrag[postgres]'`).

Imported only when the configured store is a `postgresql://` URL; psycopg itself is imported when
the first connection opens, with the install command in the error when it is missing.
"""
from .backend import PgBackend
from .store import PgStore, list_collections

__all__ = ["PgStore", "PgBackend", "list_collections"]
