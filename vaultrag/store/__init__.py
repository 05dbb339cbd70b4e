"""Storage behind a narrow interface: the indexer and retriever never see SQL or rows.

`Store` is the SQLite implementation; a PostgreSQL backend would implement the same methods.
"""
from .connection import connect, load_vec, sqlite_module, vec_extension_path
from .sqlite import ChunkRow, FileRecord, FileWrite, LinkOut, LinkRow, Store, StoredChunk

__all__ = ["Store", "StoredChunk", "LinkOut", "FileRecord", "FileWrite", "ChunkRow", "LinkRow", "connect", "load_vec",
           "sqlite_module", "vec_extension_path"]
