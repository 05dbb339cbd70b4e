"""Storage behind one seam (store/base.py): the indexer and retriever never see SQL or rows.

`Store` is the protocol; `store/sqlite/` (the embedded default) and `store/postgres/` implement
it; `open_store(cfg)` / `backend_for(cfg)` (store/open.py) pick one from the configuration, and
`Store(location, ...)` opens the backend a location names.
"""
from .base import (Backend, ChunkRow, FileRecord, FileWrite, IndexMeta, LinkOut, LinkRow, Rebuild, Store,
                   StoredChunk, Term)
from .open import backend_for, collection_names, is_postgres, open_store, store_location
from .sqlite import SqliteBackend, SqliteStore
from .sqlite.connection import connect, load_vec, sqlite_module, vec_extension_path

__all__ = ["Store", "SqliteStore", "SqliteBackend", "Backend", "Rebuild", "StoredChunk", "LinkOut", "FileRecord",
           "FileWrite", "ChunkRow", "LinkRow", "IndexMeta", "Term", "open_store", "backend_for", "store_location",
           "collection_names", "is_postgres", "connect", "load_vec", "sqlite_module", "vec_extension_path"]
