"""The SQLite store: one file, FTS5 + sqlite-vec. Rows leave it as the frozen dataclasses of store/base.py."""
from __future__ import annotations

import json
import math
import os
import struct
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ...errors import OUTDATED_SIGN, IndexCorrupt, IndexLocked, IndexMissing, damaged_index, fix_command, index_failure
from ...textutil import fts_text
from ..base import FileRecord, FileWrite, IndexMeta, LinkOut, Store, StoredChunk, Term, meta_from_strings, meta_to_strings
from . import fts, resident, schema
from .bm25 import Bm25
from .connection import busy_timeout_ms, connect, load_vec
from .vocab import VocabMixin
from .vectors import VEC_CANDIDATE_FACTOR, padded_dim, query_int8, quantize_int8_batch


def fts_row(text: str, search_text: str | None, heading_path: str, context: str, lang: str | None,
            form=None) -> tuple[str, str, str]:
    """(text, heading, context) of one chunk as FTS5 stores them: what its insert wrote and its
    contentless delete must give again. `form`: fts_text of `lang` for heading and context (memoised
    by fts_forms)."""
    if form is None:
        def form(value: str) -> str:
            return fts_text(value, lang=lang)
    return fts_text(search_text or text, lang=lang), form(heading_path), form(context)


def fts_forms(fw: FileWrite) -> tuple[tuple[str, str, str], ...]:
    """(text, heading, context) as FTS5 stores them, for every chunk of `fw`: what `write_file`
    inserts. Pure, so index_pool's workers compute it (issue 18: ~6% of the writer's CPU on SciFact)
    and hand it over as `FileWrite.search_forms`. A file's chunks share their context and mostly their
    headings, so each distinct one is analysed once."""
    memo: dict[str, str] = {}

    def form(value: str) -> str:
        out = memo.get(value)
        if out is None:
            out = memo[value] = fts_text(value, lang=fw.lang)
        return out

    return tuple(fts_row(ch.text, ch.search_text, ch.heading_path, ch.context, fw.lang, form) for ch in fw.chunks)


def pack_vectors(matrix, vector_type: str) -> list[bytes | None]:
    """Embedded vectors (a matrix, one a row) as vec0 blobs: float32 as is; int8 rotated and
    scaled as store/sqlite/vectors.py explains (None for an all-zero vector, which gets no row).
    Each row's blob depends on that row alone, so index_pool's workers pack what they embed
    (`precompute_vectors`) and the writer receives blobs a quarter the size of float32 rows."""
    import numpy as np

    m = np.asarray(matrix, dtype=np.float32)
    if vector_type != "int8":
        return [row.astype("<f4").tobytes() for row in m]
    return quantize_int8_batch(m)


def pack_text(text: str, dict_id: int = 0, primed=None) -> str | bytes:
    """Chunk text as stored: a BLOB (dictionary id byte, then raw deflate; `primed` is a compressor
    already fed dictionary `dict_id`) when long enough and smaller, else the text itself."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) < schema.COMPRESS_MIN_BYTES:
        return text
    z = primed.copy() if primed is not None else zlib.compressobj(schema.COMPRESS_LEVEL, zlib.DEFLATED, -15)
    packed = bytes((dict_id if primed is not None else 0,)) + z.compress(raw) + z.flush()
    return packed if len(packed) < len(raw) else text


def unpack_text(value: str | bytes, zdict: bytes | None = None) -> str:
    """Stored chunk text back as text; `zdict`: the dictionary its first byte names (when not 0)."""
    if isinstance(value, str):
        return value
    if value[0] == 0:
        return zlib.decompress(value[1:], -15).decode("utf-8", "surrogatepass")
    if zdict is None:
        raise ValueError(f"chunk text needs deflate dictionary {value[0]}, which the index lacks")
    z = zlib.decompressobj(-15, zdict=zdict)
    return (z.decompress(value[1:]) + z.flush()).decode("utf-8", "surrogatepass")


def _hash_bytes(hex_digest: str) -> bytes:
    return bytes.fromhex(hex_digest)


def index_error(exc: BaseException, path: Path, *, opening: bool = False) -> Exception | None:
    """The IndexCorrupt or IndexLocked a driver error means for the index at `path`, or None when it
    says nothing about the file (an SQL mistake, an interrupted query...). By SQLite's result code
    where the driver gives it (Python 3.11+), else by the message; `opening`: any database error
    while opening means the file cannot be used as an index."""
    if not any(c.__name__ == "DatabaseError" for c in type(exc).__mro__):
        return None
    msg = str(exc)
    code = getattr(exc, "sqlite_errorname", None) or ""
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or (not code and index_failure(msg) == "locked"):
        return IndexLocked(f"index {path} is locked by another process that is writing to it ({msg}; waited "
                           f"{busy_timeout_ms() / 1000:.1f} s): let it finish, or close the program holding it "
                           f"(a sqlite3 shell, a database browser, a backup), then retry")
    if code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or index_failure(msg) == "corrupt" or opening:
        return damaged_index(path, msg)
    return None


def page_damage(conn, path: Path) -> str | None:
    """None when every b-tree page of the database reads as what it claims to be, else SQLite's
    first complaint (a damaged page can also make the walk itself fail: that message). `PRAGMA
    quick_check` one real table at a time walks every page of the tables and their indexes, FTS5's
    and sqlite-vec's shadow tables included; the whole-database form also runs FTS5's own
    consistency check of its terms, 70% of its cost (tldr, 38k chunks: 430 -> 115 ms; BENCHMARKS.md,
    Stop 19 robust8). A lock raises IndexLocked: it says nothing about the pages."""
    try:
        for (table,) in conn.execute(schema.REAL_TABLES).fetchall():
            rows = conn.execute("PRAGMA quick_check('%s')" % table.replace("'", "''")).fetchall()
            if rows != [("ok",)]:  # "*** in database main ***\nTree 28 page 28 cell 0: invalid page number ..."
                lines = [ln for r in rows for ln in str(r[0]).splitlines() if ln and not ln.startswith("***")]
                return "; ".join(lines[:3]) or "quick_check failed"
    except Exception as exc:
        err = index_error(exc, path)
        if isinstance(err, IndexCorrupt):
            return str(exc)
        if err is None:
            raise
        raise err from exc
    return None


def damage_at(path: Path) -> str | None:
    """Why the vaultrag index at `path` cannot be updated in place (its pages are damaged), or None:
    no file, a sound one, or a file that is not recognisably a vaultrag index (whose header or
    table list does not read: a rebuild must not replace what may be another file; opening it
    for writing then says what to do)."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    conn = connect(path, readonly=True)
    try:
        try:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except Exception as exc:
            err = index_error(exc, path)
            if isinstance(err, IndexLocked):
                raise err from exc
            return None
        if not {"meta", "files", "chunks"} <= names:
            return None
        return page_damage(conn, path)
    finally:
        conn.close()


def _translate(exc: Exception, path: Path) -> Exception:
    return index_error(exc, path, opening=True) or exc


# Threads that deflate chunk text when a whole index is (re)packed (train_text_dict): zlib releases
# the GIL, so a second core halves that pass (38k tldr chunks: ~1.4 s of CPU).
PACK_THREADS = 2

# 'optimize' rewrites the FTS index and frees the old segments: on a fresh tldr build that left 4.7 MB
# (7%) of free pages. VACUUM (0.3-0.5 s at 45 MB) returns them when they are at least this share.
VACUUM_FREE_SHARE = 0.05


class _StoreBase:
    """Lifecycle, schema and the write side of `SqliteStore`."""

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False, with_vec: bool = True):
        self.path = Path(path)
        if readonly and not self.path.exists():
            raise IndexMissing(f"no index at {self.path}; build it with: {fix_command('reindex --vault PATH')}")
        self.readonly = readonly
        try:
            st = os.stat(self.path)
            self.file_id: tuple[int, int] | None = (st.st_dev, st.st_ino)  # the file this store opens
        except OSError:
            self.file_id = None  # a writer creating it
        try:
            self.conn = connect(self.path, readonly=readonly)
            self.vec_error = load_vec(self.conn) if with_vec else "vectors not requested"
            self.rebuilt_from: int | None = None  # schema version of an index this open replaced
            self._last_query: tuple[bytes | None, bytes | None] = (None, None)  # see _query_form
            self._dicts: dict[int, bytes] = {}  # text_dicts rows read so far (append only)
            self._primed: tuple[int, object] | None = None  # (dict id, compressor fed it) for writes
            self._vec_sql: str | None = None  # the vec0 insert for this index's vector type (see _vec_insert_sql)
            # Issue 18: a shadow copy being built (files.SqliteRebuild) stores chunk text as TEXT and
            # deflates it once, at its closing optimize(), with the dictionary trained there; without
            # this every chunk was deflated twice (once alone, once with the dictionary).
            self.defer_packing = False
            if not readonly:
                self._migrate(with_vec)
            else:
                version = self.schema_version()  # fail early and clearly on a foreign or corrupt file
                if 0 < version < schema.BASE_VERSION:
                    raise IndexCorrupt(f"index {self.path} {OUTDATED_SIGN} (schema {version}, this "
                                       f"one reads {schema.SCHEMA_VERSION}); rebuild it with: {fix_command('reindex')}")
        except IndexMissing:
            raise
        except Exception as exc:
            if getattr(self, "conn", None) is not None:
                self.conn.close()
            if isinstance(exc, (IndexCorrupt, IndexLocked)):
                raise
            if type(exc).__name__ in ("DatabaseError", "OperationalError"):
                raise _translate(exc, self.path) from None
            raise

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        self.conn.close()

    def translate(self, exc: BaseException) -> Exception | None:
        """See Store.translate: by SQLite's result code or message (`index_error`)."""
        return index_error(exc, self.path)

    def check(self) -> str | None:
        """None when every page of the index reads as what it claims to be, else SQLite's first
        complaint (see `page_damage`)."""
        return page_damage(self.conn, self.path)

    def open_reader(self) -> "SqliteStore":
        """A read-only store on the same file, for another thread (WAL: it reads the committed rows
        while this connection writes)."""
        return type(self)(self.path, readonly=True)

    @property
    def location(self) -> str:
        return str(self.path)

    def schema_version(self) -> int:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except Exception as exc:
            if "no such table" in str(exc):
                return 0
            raise _translate(exc, self.path) from None
        return int(row[0]) if row else 0

    def _migrate(self, with_vec: bool) -> None:
        version = self.schema_version()
        if version > schema.SCHEMA_VERSION:
            raise IndexCorrupt(f"index {self.path} has schema {version}, newer than this vaultrag "
                               f"({schema.SCHEMA_VERSION}); upgrade vaultrag, or rebuild it with: {fix_command('reindex --full')}")
        if 0 < version < schema.BASE_VERSION:
            # Older than any migration: the index is a cache of the vault, so start it again (see schema.py).
            import logging  # lazy: off the read path (importing it costs a hook ~6 ms)

            logging.getLogger(__name__).warning("index %s has schema %d, older than %d: rebuilding it from the vault", self.path, version,
                        schema.BASE_VERSION)
            self.conn.close()
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(str(self.path) + suffix)
                except FileNotFoundError:
                    pass
            self.conn = connect(self.path)
            self.vec_error = load_vec(self.conn) if with_vec else "vectors not requested"
            self.rebuilt_from, version = version, 0
        if version == 0:
            with self.transaction():
                for sql in schema.BASE:
                    self.conn.execute(sql)
                self.set_meta("schema_version", str(schema.BASE_VERSION))
            version = schema.BASE_VERSION
        for number, statements in enumerate(schema.MIGRATIONS[version - schema.BASE_VERSION:], start=version + 1):
            with self.transaction():
                for sql in statements:
                    self.conn.execute(sql)
                self.set_meta("schema_version", str(number))

    class _Tx:
        def __init__(self, conn):
            self.conn = conn

        def __enter__(self):
            self.conn.execute("BEGIN IMMEDIATE")
            return self.conn

        def __exit__(self, exc_type, exc, tb):
            self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
            return False

    def transaction(self):
        return _StoreBase._Tx(self.conn)

    # -- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = :key", {"key": key}).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO meta(key, value) VALUES (:key, :value) "
                          "ON CONFLICT(key) DO UPDATE SET value = excluded.value", {"key": key, "value": value})

    def all_meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def meta(self) -> IndexMeta:
        return meta_from_strings(self.all_meta())

    def update_meta(self, **changes) -> None:
        for key, value in meta_to_strings(changes).items():
            if value is None:
                self.conn.execute("DELETE FROM meta WHERE key = :key", {"key": key})
            else:
                self.set_meta(key, value)

    # -- chunk text --------------------------------------------------------------------------
    def unpack(self, value: str | bytes) -> str:
        """A stored `chunks.text` as text (dictionaries read once, on first need)."""
        if isinstance(value, str) or value[0] == 0:
            return unpack_text(value)
        zdict = self._dicts.get(value[0])
        if zdict is None:  # a dictionary added since (another writer): read them again
            self._dicts = dict(self.conn.execute("SELECT id, dict FROM text_dicts"))
            zdict = self._dicts.get(value[0])
        return unpack_text(value, zdict)

    def _pack(self, text: str) -> str | bytes:
        if self.defer_packing and self._primed is None:
            return text  # optimize() packs it (train_text_dict / pack_deferred)
        if self._primed is None:
            row = self.conn.execute("SELECT id, dict FROM text_dicts ORDER BY id DESC LIMIT 1").fetchone()
            self._primed = (0, None) if row is None else (row[0], _primed_compressor(row[1]))
        return pack_text(text, *self._primed)

    def train_text_dict(self) -> bool:
        """Give the index its deflate dictionary (schema.TEXT_DICT_*) and re-deflate every chunk with
        it, once it holds enough chunks and has none. True when it did. Outside a transaction."""
        if self.conn.execute("SELECT 1 FROM text_dicts").fetchone() is not None:
            return False
        if self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] < schema.TEXT_DICT_MIN_CHUNKS:
            return False
        sample = self.conn.execute("SELECT text FROM chunks ORDER BY (id * 2654435761) % 4294967296, id LIMIT ?",
                                   (schema.TEXT_DICT_SAMPLE,)).fetchall()
        zdict = "\n".join(self.unpack(t) for (t,) in sample).encode("utf-8", "surrogatepass")[-schema.TEXT_DICT_BYTES:]
        with self.transaction():
            dict_id = self.conn.execute("INSERT INTO text_dicts (dict) VALUES (?)", (zdict,)).lastrowid
        self._dicts[dict_id] = zdict
        self._primed = (dict_id, _primed_compressor(zdict))
        self._repack_all()
        return True

    def pack_deferred(self) -> None:
        """Deflate (without a dictionary) the chunk text a shadow copy kept as TEXT when it ended too
        small for one (`defer_packing`). Outside a transaction."""
        if self.defer_packing and self._primed is None:
            self._primed = (0, None)
            self._repack_all()

    def _repack_all(self) -> None:
        """Store every chunk's text as `_pack` now would, TEXT_DICT_BATCH rows a transaction (each
        row readable in either form). The deflate runs on PACK_THREADS threads: zlib releases the GIL."""
        from concurrent.futures import ThreadPoolExecutor

        last = 0
        with ThreadPoolExecutor(PACK_THREADS) as pool:
            while True:
                rows = self.conn.execute("SELECT id, text FROM chunks WHERE id > ? ORDER BY id LIMIT ?",
                                         (last, schema.TEXT_DICT_BATCH)).fetchall()
                if not rows:
                    return
                step = -(-len(rows) // PACK_THREADS)
                parts = [rows[i:i + step] for i in range(0, len(rows), step)]
                texts = [[self.unpack(value) for _cid, value in part] for part in parts]
                packed = [v for part in pool.map(self._pack_texts, texts) for v in part]
                with self.transaction():
                    self.conn.executemany("UPDATE chunks SET text = ? WHERE id = ?",
                                          [(new, cid) for (cid, old), new in zip(rows, packed) if new != old])
                last = rows[-1][0]

    def _pack_texts(self, texts: list[str]) -> list:
        dict_id, primed = self._primed
        return [pack_text(text, dict_id, primed) for text in texts]

    # -- files -------------------------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        rows = self.conn.execute("SELECT id, path, mtime_ns, size, hash FROM files")
        return {r[1]: FileRecord(r[0], r[1], r[2], r[3], r[4].hex()) for r in rows}

    def file_stats(self) -> dict[str, tuple[int, int]]:
        return {p: (m, s) for p, m, s in self.conn.execute("SELECT path, mtime_ns, size FROM files")}

    files_snapshot = True  # schema.BASE: triggers on `files` drop the snapshot row
    precompute_forms = staticmethod(fts_forms)  # index_pool's workers fill FileWrite.search_forms with it
    precompute_vectors = staticmethod(pack_vectors)  # ... and pack the vectors they embed with it

    def files_at(self, paths: Sequence[str], folders: Sequence[str] = ()) -> dict[str, FileRecord]:
        """`Store.files_at` through the UNIQUE index on files.path: exact paths, then one range a folder."""
        out: dict[str, FileRecord] = {}
        sql = "SELECT id, path, mtime_ns, size, hash FROM files WHERE "
        paths = list(dict.fromkeys(paths))
        for i in range(0, len(paths), 500):
            part = paths[i:i + 500]
            rows = self.conn.execute(sql + f"path IN ({','.join('?' * len(part))})", part).fetchall()
            out.update((r[1], FileRecord(r[0], r[1], r[2], r[3], r[4].hex())) for r in rows)
        for folder in dict.fromkeys(folders):
            lo = folder.rstrip("/") + "/"
            hi = lo[:-1] + chr(ord("/") + 1)  # every path starting with `lo` sorts in [lo, hi)
            rows = self.conn.execute(sql + "path >= :lo AND path < :hi", {"lo": lo, "hi": hi}).fetchall()
            out.update((r[1], FileRecord(r[0], r[1], r[2], r[3], r[4].hex())) for r in rows)
        return out

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        self.conn.execute("UPDATE files SET mtime_ns = :m, size = :s WHERE path = :p",
                          {"m": mtime_ns, "s": size, "p": path})

    def delete_file(self, path: str) -> bool:
        row = self.conn.execute("SELECT id, lang FROM files WHERE path = :p", {"p": path}).fetchone()
        if row is None:
            return False
        file_id, lang = row
        has_vec = self.has_vec_table()
        for cid, text, search_text, heading, context in self.conn.execute(schema.FILE_CHUNKS, {"file_id": file_id}).fetchall():
            self.conn.execute(schema.DELETE_FTS, (cid, *fts_row(self.unpack(text), search_text, heading, context, lang)))
            if has_vec:
                self.conn.execute(f"DELETE FROM {schema.VEC_TABLE} WHERE rowid = :id", {"id": cid})
        self.conn.execute("DELETE FROM files WHERE id = :id", {"id": file_id})  # cascades chunks, links, keys
        return True

    def write_file(self, fw: FileWrite, vectors: Sequence[bytes | None] | None) -> int:
        """Replace everything stored for `fw.path`. Call inside `transaction()`. Returns chunk count."""
        return self.write_files([(fw, vectors)])[0]

    def write_files(self, batch: Sequence[tuple[FileWrite, Sequence[bytes | None] | None]]) -> list[int]:
        """`write_file` for each (file, vectors) of `batch`, in order; chunk counts. Call inside
        `transaction()`. The `files` rows go first, then every file's chunks: a write to `files` runs
        its snapshot trigger, whose statement transaction makes FTS5 flush its pending terms to a new
        segment (and now and then merge segments), so writing file by file flushed once a file
        (issue 18: INSERT INTO files 0.07 ms a row with spikes to 30 ms, against 0.018 ms batched)."""
        file_ids = []
        for fw, _vectors in batch:
            self.delete_file(fw.path)
            file_ids.append(self.conn.execute(schema.INSERT_FILE, {
                "path": fw.path, "mtime_ns": fw.mtime_ns, "size": fw.size, "hash": _hash_bytes(fw.hash),
                "title": fw.title, "note_type": fw.note_type, "stem_key": fw.stem_key, "lang": fw.lang}).lastrowid)
        return [self._write_rows(fw, vectors, file_id) for (fw, vectors), file_id in zip(batch, file_ids)]

    def _write_rows(self, fw: FileWrite, vectors: Sequence[bytes | None] | None, file_id: int) -> int:
        """The chunks (with their FTS and vector rows), links and keys of a file whose row is `file_id`."""
        execute = self.conn.execute
        ids: list[int] = []
        for ch in fw.chunks:
            values = {**ch.__dict__, "file_id": file_id, "text": self._pack(ch.text),
                      "content_hash": _hash_bytes(ch.content_hash), "embed_hash": _hash_bytes(ch.embed_hash)}
            ids.append(execute(schema.INSERT_CHUNK, values).lastrowid)
        forms = fw.search_forms if fw.search_forms is not None else fts_forms(fw)
        self.conn.executemany(schema.INSERT_FTS, [(cid, *f) for cid, f in zip(ids, forms)])
        if vectors is not None:
            self.conn.executemany(self._vec_insert_sql(), [(cid, v) for cid, v in zip(ids, vectors) if v is not None])
        if fw.links:
            self.conn.executemany(schema.INSERT_LINK, [
                (file_id, ids[ln.chunk_pos] if ln.chunk_pos is not None else None, ln.target, ln.target_key,
                 ln.anchor, ln.kind, ln.text, ln.line) for ln in fw.links])
        keys = []
        for key, kind, pos in fw.keys:
            bit = schema.KEY_KIND_BIT.get(kind)
            if bit is None:
                raise ValueError(f"unknown metadata key kind {kind!r} for {fw.path!r}; known: {', '.join(schema.KEY_KINDS)}")
            keys.append((file_id, key, ids[pos] if pos is not None else 0, bit))
        self.conn.executemany(schema.INSERT_KEY, keys)
        return len(ids)

    # -- origins (issue 17) ---------------------------------------------------------------------
    def put_origins(self, path: str, scope: str, origins: Sequence[str]) -> None:
        ids = [r[0] for r in self.conn.execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = :p ORDER BY c.id", {"p": path})]
        if len(ids) != len(origins):
            raise ValueError(f"{len(origins)} origins for the {len(ids)} chunks stored for {path!r}")
        self.conn.executemany("INSERT OR REPLACE INTO chunk_origins (chunk_id, scope, origin) VALUES (?, ?, ?)",
                              [(cid, scope, o) for cid, o in zip(ids, origins)])

    # -- vectors -----------------------------------------------------------------------------
    def has_vec_table(self) -> bool:
        row = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = :n", {"n": schema.VEC_TABLE}).fetchone()
        return row is not None and self.vec_error is None

    has_vectors = has_vec_table

    def pack_vectors(self, matrix, vector_type: str) -> list[bytes | None]:
        return pack_vectors(matrix, vector_type)

    def vector_type(self) -> str:
        return self.get_meta("vector_type", "int8") or "int8"

    def _vec_insert_sql(self) -> str:
        """The vec0 insert (rowid, blob) for this index's vector type, read from meta once (a
        write_file used to read it again for every file); reset_vectors changes it."""
        if self._vec_sql is None:
            fn = "vec_int8" if self.vector_type() == "int8" else "vec_f32"
            self._vec_sql = f"INSERT INTO {schema.VEC_TABLE} (rowid, embedding) VALUES (?, {fn}(?))"
        return self._vec_sql

    def reset_vectors(self, dim: int, vector_type: str) -> None:
        """Drop and recreate the vector table (a model change): call inside a transaction."""
        if self.vec_error is not None:
            raise RuntimeError(self.vec_error)
        self.conn.execute(f"DROP TABLE IF EXISTS {schema.VEC_TABLE}")
        self.conn.execute(schema.vec_table_sql(dim, vector_type))
        self.set_meta("vector_type", vector_type)
        self.set_meta("vector_dim", str(dim))
        self._vec_sql = None

    def drop_vectors(self) -> None:
        if self.vec_error is None:
            self.conn.execute(f"DROP TABLE IF EXISTS {schema.VEC_TABLE}")
        elif self.get_meta("vector_dim") is not None:  # can't touch vec0 without the extension
            self.set_meta("vectors_invalid", "1")  # the next run with vectors rebuilds them

    def vectors_by_embed_hash(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """Stored vectors for chunks whose embedded input hash is in `hashes` (to skip re-embedding)."""
        if not self.has_vec_table():
            return {}
        out: dict[str, bytes] = {}
        hashes = [_hash_bytes(h) for h in dict.fromkeys(hashes)]
        for i in range(0, len(hashes), 500):
            part = hashes[i:i + 500]
            marks = ",".join("?" * len(part))
            sql = (f"SELECT c.embed_hash, v.embedding FROM chunks c JOIN {schema.VEC_TABLE} v ON v.rowid = c.id "
                   f"WHERE c.embed_hash IN ({marks})")
            for h, blob in self.conn.execute(sql, part):
                out.setdefault(h.hex(), blob)
        return out

    def chunks_without_vectors(self) -> Iterator[tuple[int, str, str, str]]:
        """(chunk id, embed input parts) for every chunk lacking a vector: used after a model change."""
        sql = (f"SELECT c.id, f.title, c.heading_path, c.text FROM chunks c JOIN files f ON f.id = c.file_id "
               f"WHERE NOT EXISTS (SELECT 1 FROM {schema.VEC_TABLE} v WHERE v.rowid = c.id) ORDER BY c.id")
        for cid, title, heading, text in self.conn.execute(sql).fetchall():
            yield cid, title, heading, self.unpack(text)

    def put_vector(self, chunk_id: int, blob: bytes) -> None:
        self.conn.execute(f"DELETE FROM {schema.VEC_TABLE} WHERE rowid = :id", {"id": chunk_id})
        self.conn.execute(self._vec_insert_sql(), (chunk_id, blob))

    # -- maintenance and stats ---------------------------------------------------------------
    def pack_chunk_text(self) -> None:
        """The chunk-text part of `optimize()` (done once: later calls find nothing to do): the
        dictionary trained and every chunk re-deflated with it when due (`train_text_dict`), or a
        shadow copy's deferred text deflated (`pack_deferred`). Outside a transaction."""
        if not self.readonly:
            self.train_text_dict()
            self.pack_deferred()

    def optimize(self, *, compact: bool = False) -> None:
        """Merge the FTS segments, then give back the pages that freed if they are a large share.
        `compact` rewrites the file in any case (after a full build: b-trees filled in key order,
        no free pages)."""
        self.pack_chunk_text()
        self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        free = self.conn.execute("PRAGMA freelist_count").fetchone()[0]
        if compact or (pages and free / pages >= VACUUM_FREE_SHARE):
            self.conn.execute("VACUUM")

    def size_bytes(self) -> int | None:
        return sum(p.stat().st_size for p in (self.path, Path(str(self.path) + "-wal")) if p.exists())

    def counts(self) -> dict[str, int]:
        q = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        out = {"files": q("SELECT count(*) FROM files"), "chunks": q("SELECT count(*) FROM chunks"),
               "links": q("SELECT count(*) FROM links")}
        out["vectors"] = q(f"SELECT count(*) FROM {schema.VEC_TABLE}") if self.has_vec_table() else 0
        return out

    def fts_vocabulary(self) -> list[tuple[str, str, int, int]]:
        """(term, column, doc count, occurrences) of the FTS index, for consistency checks."""
        self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_vocab USING fts5vocab(main, chunks_fts, col)")
        return [tuple(r) for r in self.conn.execute("SELECT term, col, doc, cnt FROM temp.fts_vocab ORDER BY term, col")]

    def meta_json(self, key: str) -> dict:
        raw = self.get_meta(key)
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return {}


_CHUNK_COLS = ("c.id, c.file_id, f.path, f.title, f.hash, f.mtime_ns, f.size, c.section_index, c.chunk_index, "
               "c.heading_path, c.context, c.text, c.line_start, c.line_end, c.content_hash, c.tokens, c.block_ids")


def _primed_compressor(zdict: bytes):
    return zlib.compressobj(schema.COMPRESS_LEVEL, zlib.DEFLATED, -15, zdict=zdict)


def _stored_chunk(r, unpack) -> StoredChunk:
    """A row of `_CHUNK_COLS` as the retriever sees it: hashes as hex, text inflated (`unpack`)."""
    return StoredChunk(r[0], r[1], r[2], r[3], r[4].hex(), r[5], r[6], r[7], r[8], r[9], r[10], unpack(r[11]),
                       r[12], r[13], r[14].hex(), r[15], r[16])


def _in_clause(values: Sequence) -> str:
    return ",".join("?" * len(values))


class QueryMixin:
    """Read-side queries used by vaultrag.retrieve (kept here so SQL stays in store/)."""

    # -- the seam's lexical and vector queries: Terms and float vectors in, (id, score) out
    def lexical(self, terms: Sequence[Term], limit: int, weights: tuple[float, float, float]) -> list[tuple[int, float]]:
        match = fts.match_any(terms)
        if not match:
            return []
        top = self._bm25().top(terms, limit, weights)  # bm25.py: the same answer, fewer chunks scored
        if top is not None:
            return top
        # bm25() is negative (lower is better); the seam's scores are larger-is-better.
        return [(cid, -score) for cid, score in self.fts_search(match, limit, weights)]

    def _bm25(self) -> Bm25:
        b = getattr(self, "_bm25_top", None)
        if b is None:
            b = self._bm25_top = Bm25(self.conn, cache=self.readonly)
        return b

    def doc_freq(self, term: Term, cap: int) -> int:
        query = fts.expression(term)
        known = self._bm25().cached_df(query)  # counted by the last lexical() (no alternatives: one phrase)
        return min(known, cap) if known is not None else self.fts_doc_count(query, cap)

    def contains(self, terms: Sequence[Term], ids: Sequence[int]) -> set[int]:
        return self.fts_contains(fts.match_any(terms), ids) if terms else set()

    def knn(self, vector: Sequence[float], k: int) -> list[tuple[int, float]]:
        blob = _pack_query(vector)
        return _similarity(self.vec_search(blob, k, self.vector_type())) if blob else []

    def similarities(self, vector: Sequence[float], ids: Sequence[int]) -> dict[int, float]:
        blob = _pack_query(vector)
        return dict(_similarity(self.vec_distances(blob, ids, self.vector_type()).items())) if blob else {}

    conn: object

    def note_languages(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT lang, count(*) FROM files WHERE lang IS NOT NULL GROUP BY lang"))

    def note_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM files").fetchone()[0]

    def chunk_count(self) -> int:
        """Chunks in the index, cached until another connection commits (a long-lived Store
        sees reindexes: `PRAGMA data_version` changes)."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if getattr(self, "_chunk_count", None) is None or self._count_version != version:
            self._chunk_count = self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            self._count_version = version
        return self._chunk_count

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, StoredChunk]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        sql = f"SELECT {_CHUNK_COLS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({_in_clause(ids)})"
        return {r[0]: _stored_chunk(r, self.unpack) for r in self.conn.execute(sql, ids)}

    def chunks_of_files(self, file_ids: Sequence[int]) -> list[StoredChunk]:
        if not file_ids:
            return []
        sql = (f"SELECT {_CHUNK_COLS} FROM chunks c JOIN files f ON f.id = c.file_id "
               f"WHERE c.file_id IN ({_in_clause(file_ids)}) ORDER BY c.file_id, c.section_index, c.chunk_index")
        return [_stored_chunk(r, self.unpack) for r in self.conn.execute(sql, list(file_ids))]

    def origins(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        sql = f"SELECT chunk_id, scope, origin FROM chunk_origins WHERE chunk_id IN ({_in_clause(ids)})"
        try:
            return {r[0]: (r[1], r[2]) for r in self.conn.execute(sql, ids)}
        except Exception as exc:  # an index of schema 2 opened read-only: no origins yet
            if "no such table" in str(exc):
                return {}
            raise

    def lead_chunks(self, file_ids: Sequence[int]) -> dict[int, int]:
        """file id -> id of its first chunk (the note's lead / summary)."""
        if not file_ids:
            return {}
        sql = (f"SELECT file_id, id FROM chunks WHERE file_id IN ({_in_clause(file_ids)}) "
               f"ORDER BY file_id, section_index, chunk_index")
        out: dict[int, int] = {}
        for fid, cid in self.conn.execute(sql, list(file_ids)):
            out.setdefault(fid, cid)
        return out

    def match_keys(self, keys: Sequence[str]) -> list[tuple[str, str, int, int | None]]:
        """(key, kind, file id, chunk id or None) for every stored metadata key in `keys`."""
        if not keys:
            return []
        sql = f"SELECT key, kinds, file_id, chunk_id FROM keys WHERE key IN ({_in_clause(keys)})"
        out = [(key, kind, fid, cid) for key, kinds, fid, cid in self.conn.execute(sql, list(keys))
               for kind, bit in schema.KEY_KIND_BIT.items() if kinds & bit]
        out.sort(key=lambda r: (r[0], r[2], r[1], r[3]))  # by key, file, kind, chunk: as the index gave it
        return [(key, kind, fid, cid or None) for key, kind, fid, cid in out]

    # -- FTS5 and vec0 in their own syntax (store/sqlite/fts.py builds the MATCH strings)
    def fts_doc_count(self, phrase: str, cap: int) -> int:
        """How many chunks contain `phrase` (an FTS5 string), counting at most `cap`."""
        sql = "SELECT count(*) FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH :q LIMIT :cap)"
        return self.conn.execute(sql, {"q": phrase, "cap": cap}).fetchone()[0]

    def fts_search(self, match: str, limit: int, weights: tuple[float, float, float]) -> list[tuple[int, float]]:
        """(chunk id, bm25 score; lower is better) for an FTS5 MATCH expression."""
        sql = (f"SELECT rowid, bm25(chunks_fts, {float(weights[0])}, {float(weights[1])}, {float(weights[2])}) AS s "
               f"FROM chunks_fts WHERE chunks_fts MATCH :q ORDER BY s, rowid LIMIT :n")
        return [(r[0], r[1]) for r in self.conn.execute(sql, {"q": match, "n": limit})]

    def fts_contains(self, phrase: str, ids: Sequence[int]) -> set[int]:
        """Which of `ids` contain the FTS5 `phrase` (same stemming as the index)."""
        if not ids:
            return set()
        sql = f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({_in_clause(ids)})"
        return {r[0] for r in self.conn.execute(sql, [phrase, *ids])}

    def _query_form(self, blob: bytes, vector_type: str) -> tuple[str, bytes | None]:
        """(vec0 constructor, the query as the index stores vectors). int8 quantising runs in
        Python (~0.4 ms), so the last query's form is kept: KNN and re-scoring share it."""
        if vector_type != "int8":
            return "vec_f32", blob
        if self._last_query[0] != blob:
            self._last_query = (blob, query_int8(blob, int(self.get_meta("vector_dim") or 0)))
        return "vec_int8", self._last_query[1]

    def vec_search(self, blob: bytes, k: int, vector_type: str, *,
                   candidate_factor: float = VEC_CANDIDATE_FACTOR) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the k nearest chunks, nearest first.

        `blob` is the query as float32 (or, for int8 indexes, as a per-vector-scaled int8 blob).
        int8: `candidate_factor * k` candidates by L1 over the rotated vectors, re-ranked by their
        exact cosine distance (see store/vectors.py); float32: exact cosine KNN.
        """
        if k <= 0:
            return []
        _, q = self._query_form(blob, vector_type)
        if q is None:
            return []
        if vector_type == "int8":
            held = self._resident(counting=True)
            if held is not None:
                return held.top(q, k)  # the exact int8 top k, from memory (store/sqlite/resident.py)
            kc = max(k, round(k * candidate_factor))
            rows = self.conn.execute(schema.VEC_SEARCH_INT8, {"v": q, "k": kc}).fetchall()
            self._remember_distances(q, rows)
        else:
            rows = self.conn.execute(schema.VEC_SEARCH_F32, {"v": q, "k": k}).fetchall()
        return sorted(((r[0], r[1]) for r in rows), key=lambda r: (r[1], r[0]))[:k]  # deterministic ties

    def vec_distances(self, blob: bytes, ids: Sequence[int], vector_type: str) -> dict[int, float]:
        """Cosine distance of the query vector to each of `ids` that has a vector."""
        fn, q = self._query_form(blob, vector_type)
        if not ids or q is None:
            return {}
        # One point lookup per id: vec0 scans the whole table for `rowid IN (...)` (7 ms at 38k
        # chunks) but answers `rowid = ?` directly (30 lookups 0.6 ms). Ids the KNN just ranked
        # for this query already have their distance (the same expression on the same rows).
        held = self._resident(counting=False) if fn == "vec_int8" else None
        if held is not None:
            return held.lookup(q, ids)  # the rows the KNN ranked: the same distances
        known = self._known_distances(q) if fn == "vec_int8" else {}
        sql = f"SELECT vec_distance_cosine(embedding, {fn}(?)) FROM {schema.VEC_TABLE} WHERE rowid = ?"
        out = {}
        for cid in ids:
            if cid in known:
                out[cid] = known[cid]
                continue
            row = self.conn.execute(sql, (q, cid)).fetchone()
            if row is not None:
                out[cid] = row[0]
        return out

    # Issue 18 (warm query): the int8 KNN's candidate rows carry exactly the cosine distance
    # vec_distances would look up again for the lexical candidates (a third of them, typically).
    # Read-only stores only: `PRAGMA data_version` sees other connections' commits, not this one's.
    def _remember_distances(self, q: bytes, rows) -> None:
        if self.readonly:
            self._knn_distances = (q, self._data_version(), {r[0]: r[1] for r in rows})

    def _known_distances(self, q: bytes) -> dict[int, float]:
        last = getattr(self, "_knn_distances", None)
        if last is None or last[0] != q or last[1] != self._data_version():
            return {}  # another query, or another connection committed since (a reindex)
        return last[2]

    def _data_version(self) -> int:
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    # Issue 18 (warm query): a long-lived read-only store answers int8 KNN from the vectors held in
    # memory once this process has asked enough queries of the index (resident.py says when and why).
    # `resident_vectors`: None decides so; False keeps vec0 (benchmarks); True loads from the first query.
    resident_vectors: bool | None = None

    def _resident(self, *, counting: bool) -> resident.Resident | None:
        if not self.readonly or self.resident_vectors is False:
            return None
        version = self._data_version()
        last = getattr(self, "_held", None)
        if last is not None and last[0] == version:
            return last[1]  # decided for what this connection sees (no commit by another since)
        if not counting or not resident.due(self.path, now=bool(self.resident_vectors)):
            return None
        dim = padded_dim(int(self.get_meta("vector_dim") or 0))
        self._held = (version, resident.held(self.conn, self.path, self.file_id, dim) if dim else None)
        return self._held[1]

    def links_from(self, file_ids: Sequence[int]) -> list[LinkOut]:
        if not file_ids:
            return []
        sql = (f"SELECT file_id, chunk_id, target_key, anchor, kind, text, line FROM links "
               f"WHERE file_id IN ({_in_clause(file_ids)}) ORDER BY file_id, line")
        return [LinkOut(*r) for r in self.conn.execute(sql, list(file_ids))]

    def files_by_stem(self, stem_keys: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        """stem key -> [(file id, path)] sorted by path (several notes may share a name)."""
        if not stem_keys:
            return {}
        out: dict[str, list[tuple[int, str]]] = {}
        sql = f"SELECT stem_key, id, path FROM files WHERE stem_key IN ({_in_clause(stem_keys)}) ORDER BY path"
        for key, fid, path in self.conn.execute(sql, list(stem_keys)):
            out.setdefault(key, []).append((fid, path))
        return out


def _pack_query(vec: Sequence[float]) -> bytes | None:
    """A query vector as float32; `vec_search` quantises it for int8 indexes exactly as the
    chunks were (store/sqlite/vectors.py): packing it as int8 here would round it twice."""
    if not any(vec):
        return None
    return struct.pack(f"<{len(vec)}f", *vec)


def _similarity(distances) -> list[tuple[int, float]]:
    """Cosine distances as similarities (1 - distance): larger is stronger, like the other channels."""
    return [(cid, 1.0 - dist) for cid, dist in distances if not math.isnan(dist)]


class SqliteStore(VocabMixin, QueryMixin, _StoreBase, Store):
    """A vault index in one SQLite file. Writers use `transaction()` around each file."""
