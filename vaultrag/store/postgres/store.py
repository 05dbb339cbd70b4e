"""The PostgreSQL store: one collection (or several, read together) of a shared database.

Readers resolve each collection's live generation when a search starts (`meta()`), so a
long-lived store sees a rebuild as soon as it is published; every query then filters on those
generations. Lexical candidates (GIN over vaultrag's own tsvector, BM25 as FTS5 computes it) and
vector candidates (HNSW) are two independent queries; fusion happens above the seam.
"""
from __future__ import annotations

import logging
import math
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

from ...errors import IndexMissing, StoreUnavailable, fix_command, redact_url
from ..base import FileRecord, FileWrite, IndexMeta, LinkOut, Store, StoredChunk, Term, meta_from_strings, meta_to_strings
from . import analyzer, bulk, lexical, schema
from .connection import connect, ensure_schema, psycopg, release, writer_needed, _ready
from ..sqlite.vocab import nearest  # the SQLite store's typo rule, shared

log = logging.getLogger(__name__)

_CHUNK_COLS = ("c.id, c.file_id, f.path, f.title, f.hash, f.mtime_ns, f.size, c.section_index, c.chunk_index, "
               "c.heading_path, c.context, c.text, c.line_start, c.line_end, c.content_hash, c.tokens, c.block_ids")
# Reading several collections at once, each chunk names its vault folder (citations re-read files there).
_ROOT_COL = ", (SELECT m.value FROM meta m WHERE m.gen = c.gen AND m.key = 'vault')"


def _stored_chunk(r) -> StoredChunk:
    return StoredChunk(r[0], r[1], r[2], r[3], bytes(r[4]).hex(), r[5], r[6], r[7], r[8], r[9], r[10], r[11],
                       r[12], r[13], bytes(r[14]).hex(), r[15], r[16], r[17] if len(r) > 17 else None)


def vector_literal(row) -> str | None:
    """A vector as pgvector's text input ('[0.1,0.2]'); None for an all-zero vector (no vector)."""
    values = [float(x) for x in row]
    if not any(values):
        return None
    return "[" + ",".join("%.5g" % x for x in values) + "]"


def _reindex_collection(name: str) -> str:
    """The arguments of the reindex that builds collection `name` (fix_command adds the --store given)."""
    import shlex

    return f"reindex --collection {shlex.quote(name)}"


class PgStore(Store):
    """Collections in a PostgreSQL database. Writers bind to one generation of one collection."""

    def __init__(self, location: str, *, collection: str | Sequence[str] | None = None, readonly: bool = False,
                 generation: int | None = None, defer_index: bool = False):
        if not collection:
            raise IndexMissing("a postgresql:// store needs a collection: pass --collection NAME (default: the vault "
                               "folder's name) or set `collection:`")
        self.url = location
        self.names: tuple[str, ...] = (collection,) if isinstance(collection, str) else tuple(collection)
        self.readonly = readonly
        self.defer_index = defer_index  # a rebuild builds the HNSW index once, after the bulk load
        self.vec_error = None
        self._meta: IndexMeta | None = None
        self._df: dict[Term, int] = {}  # term -> chunks holding it, counted by the last lexical()
        self._lexemes_stale = False  # a deferred (rebuild) writer counts the vocabulary once, in optimize()
        self._pending: list[bulk.Pending] = []  # notes written in the open transaction, sent by COPY at its end
        self._pending_paths: set[str] = set()  # their paths
        self._depth = 0  # open transaction() blocks
        self.lexical_exact = True  # False: the last lexical() hit lexical.SCAN_CAP (approximate ranking)
        self.conn = connect(location)
        try:
            version = ensure_schema(location, self.conn, create=not readonly) if location not in _ready \
                else schema.SCHEMA_VERSION
            if version == 0:
                raise IndexMissing(f"no vaultrag index in {redact_url(location)}; build one with: "
                                   f"{fix_command(_reindex_collection(self.names[0]))}")
            if version < schema.SCHEMA_VERSION:  # readers do not migrate (their role may not write)
                raise IndexMissing(f"the vaultrag schema in {redact_url(location)} is version {version}, this vaultrag "
                                   f"needs {schema.SCHEMA_VERSION}: run {fix_command(_reindex_collection(self.names[0]))} "
                                   f"once (it migrates the database)")
            self.schema_version = version
            if readonly:
                self._refresh()
            else:
                if len(self.names) != 1:
                    raise IndexMissing("a writer works on one collection; pass a single --collection NAME")
                # One transaction per note: waiting for each commit's WAL flush would cost a disk
                # sync per file. A crash loses at most the last few commits (never consistency),
                # and the next reindex redoes them: the files are the truth.
                self.conn.execute("SET synchronous_commit = off")
                try:
                    self.collection_id, live = self._ensure_collection(self.names[0])
                except psycopg().errors.InsufficientPrivilege as exc:  # a read-only role: its first write
                    raise writer_needed(location, str(exc).strip().splitlines()[0]) from None
                self.gen = generation if generation is not None else live
                self.gens = (self.gen,)
        except BaseException:
            release(location, self.conn)
            raise

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        if self.conn is not None:
            if not self.readonly:
                try:
                    self.conn.execute("RESET synchronous_commit")  # the pool hands connections to readers too
                except Exception:  # a broken connection: release() closes it
                    pass
            release(self.url, self.conn)
            self.conn = None

    def usable(self) -> bool:
        """False once the server closed this store's connection (a restart, a failover, an idle
        timeout): psycopg marks it closed or broken at the first call that finds it gone."""
        conn = self.conn
        return conn is not None and not conn.closed and not getattr(conn, "broken", False)

    def translate(self, exc: BaseException) -> Exception | None:
        """A lost connection (the server stopped or restarted) as one line naming what to check."""
        if not isinstance(exc, psycopg().OperationalError):
            return None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return StoreUnavailable(f"lost the connection to PostgreSQL at {redact_url(self.url)} ({first}); check that the "
                                f"server is running (a resident vaultrag serve reconnects on its next request)")

    @contextmanager
    def transaction(self):
        """A transaction; the notes written inside it go to the server as one COPY per table just
        before it commits (bulk.py). An error drops them with the rest of the transaction."""
        with self.conn.transaction():
            self._depth += 1
            try:
                yield
                self._flush()
            except BaseException:
                self._pending = []
                self._pending_paths = set()
                raise
            finally:
                self._depth -= 1

    def _flush(self) -> None:
        """Send the buffered notes (inside the open transaction) and account for them: the rows the
        generation held for their paths go first, in one statement for the group (one query a note,
        even finding nothing in a new generation, was most of a full rebuild's write time)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        self._pending_paths = set()
        _, old_chunks, old_tokens = self._delete_paths([p.fw.path for p in pending])
        file_ids = bulk.flush(self.conn, self.gen, pending)
        nchunks = sum(len(p.fw.chunks) for p in pending)
        with self.conn.pipeline(), self.conn.cursor() as cur:
            cur.execute("UPDATE generations SET chunks = chunks + %s, tokens = tokens + %s WHERE id = %s",
                        (nchunks - old_chunks, sum(sum(p.ntoks) for p in pending) - old_tokens, self.gen))
            if nchunks and not self.defer_index:
                cur.execute(schema.LEXEMES_ADD, {"gen": self.gen, "file_ids": file_ids})
        if self.defer_index and nchunks:
            self._lexemes_stale = True

    def _delete_paths(self, paths: Sequence[str]) -> tuple[int, int, int]:
        """Delete this generation's files at `paths` with their chunks, links and keys (and their
        share of the vocabulary); (files, chunks, tokens) deleted. The caller updates the
        generation's counts."""
        rows = self.conn.execute(
            "SELECT f.id, count(c.id), coalesce(sum(c.ntok), 0) FROM files f LEFT JOIN chunks c ON c.file_id = f.id "
            "WHERE f.gen = %s AND f.path = ANY(%s) GROUP BY f.id", (self.gen, list(paths))).fetchall()
        if not rows:
            return 0, 0, 0
        ids = [r[0] for r in rows]
        if not self.defer_index:
            self._lexemes_remove(ids)
        self.conn.execute("DELETE FROM files WHERE id = ANY(%s)", (ids,))  # cascades chunks, links, keys
        return len(rows), sum(r[1] for r in rows), sum(r[2] for r in rows)

    @property
    def location(self) -> str:
        return f"{redact_url(self.url)} (collection {','.join(self.names)})"

    def _ensure_collection(self, name: str) -> tuple[int, int]:
        """(collection id, live generation), creating the collection and a first generation."""
        with self.conn.transaction():
            self.conn.execute("INSERT INTO collections (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,))
            cid, live = self.conn.execute("SELECT id, live FROM collections WHERE name = %s FOR UPDATE",
                                          (name,)).fetchone()
            if live is None:
                live = new_generation(self.conn, cid)
                self.conn.execute("UPDATE collections SET live = %s WHERE id = %s", (live, cid))
        return cid, live

    def _refresh(self) -> None:
        """Readers: each collection's live generation and the first one's metadata, in one query."""
        rows = self.conn.execute(
            "SELECT c.name, c.live, m.key, m.value FROM collections c LEFT JOIN meta m ON m.gen = c.live "
            "WHERE c.name = ANY(%s)", (list(self.names),)).fetchall()
        live = {name: gen for name, gen, _, _ in rows}
        missing = [n for n in self.names if live.get(n) is None]
        if missing:
            raise IndexMissing(f"no collection {', '.join(missing)} in {redact_url(self.url)}; build it with: "
                               f"{fix_command(_reindex_collection(missing[0]))}")
        self.gens = tuple(live[n] for n in self.names)
        self.gen = self.gens[0]
        raw = {k: v for name, _, k, v in rows if name == self.names[0] and k is not None}
        self._meta = meta_from_strings({**raw, "schema_version": str(self.schema_version)})

    # -- metadata ----------------------------------------------------------------------------
    def meta(self) -> IndexMeta:
        self._df = {}  # a search starts here: frequencies counted for the last one may be stale
        if self.readonly:
            self._refresh()
            return self._meta
        rows = self.conn.execute("SELECT key, value FROM meta WHERE gen = %s", (self.gen,)).fetchall()
        self._meta = meta_from_strings({**dict(rows), "schema_version": str(self.schema_version)})
        return self._meta

    def update_meta(self, **changes) -> None:
        for key, value in meta_to_strings(changes).items():
            if value is None:
                self.conn.execute("DELETE FROM meta WHERE gen = %s AND key = %s", (self.gen, key))
            else:
                self.conn.execute("INSERT INTO meta (gen, key, value) VALUES (%s, %s, %s) ON CONFLICT (gen, key) "
                                  "DO UPDATE SET value = excluded.value", (self.gen, key, value))
        self._meta = None

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE gen = %s AND key = %s", (self.gen, key)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO meta (gen, key, value) VALUES (%s, %s, %s) ON CONFLICT (gen, key) "
                          "DO UPDATE SET value = excluded.value", (self.gen, key, value))
        self._meta = None

    def _cached_meta(self) -> IndexMeta:
        return self._meta if self._meta is not None else self.meta()

    # -- documents ---------------------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        self._flush()
        rows = self.conn.execute("SELECT id, path, mtime_ns, size, hash FROM files WHERE gen = ANY(%s)",
                                 (list(self.gens),))
        return {r[1]: FileRecord(r[0], r[1], r[2], r[3], bytes(r[4]).hex()) for r in rows}

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        self.conn.execute("UPDATE files SET mtime_ns = %s, size = %s WHERE gen = %s AND path = %s",
                          (mtime_ns, size, self.gen, path))

    def delete_file(self, path: str) -> bool:
        if path in self._pending_paths:  # written earlier in this transaction
            self._flush()
        files, chunks, tokens = self._delete_paths([path])
        if files:
            self.conn.execute("UPDATE generations SET chunks = chunks - %s, tokens = tokens - %s WHERE id = %s",
                              (chunks, tokens, self.gen))
        return bool(files)

    def write_file(self, fw: FileWrite, vectors: Sequence[object | None] | None) -> int:
        """Buffered until the transaction commits (one COPY per table for the whole group, after one
        delete of the rows the group's paths held); outside a transaction, written at once. The
        chunks' tsvectors come from an index worker (`precompute_forms`) when it made them."""
        if fw.path in self._pending_paths:  # the same note twice in one transaction: the last one stands
            self._flush()
        forms = fw.search_forms if fw.search_forms is not None and len(fw.search_forms) == len(fw.chunks) \
            else analyzer.file_forms(fw)
        self._pending.append(bulk.Pending(fw, vectors, tuple(f[0] for f in forms), tuple(f[1] for f in forms)))
        self._pending_paths.add(fw.path)
        if self._depth == 0:
            with self.transaction():
                pass
        return len(fw.chunks)

    # The tsvector and token count of each chunk, made by index_pool's workers (FileWrite.search_forms).
    precompute_forms = staticmethod(analyzer.file_forms)

    # -- origins (issue 17) ---------------------------------------------------------------------
    def put_origins(self, path: str, scope: str, origins: Sequence[str]) -> None:
        self._flush()
        ids = [r[0] for r in self.conn.execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.gen = %s AND f.path = %s "
            "ORDER BY c.id", (self.gen, path))]
        if len(ids) != len(origins):
            raise ValueError(f"{len(origins)} origins for the {len(ids)} chunks stored for {path!r}")
        if ids:
            with self.conn.cursor() as cur:
                cur.executemany("INSERT INTO chunk_origins (chunk_id, scope, origin) VALUES (%s, %s, %s) "
                                "ON CONFLICT (chunk_id) DO UPDATE SET scope = excluded.scope, origin = excluded.origin",
                                [(cid, scope, o) for cid, o in zip(ids, origins)])

    def origins(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        rows = self.conn.execute("SELECT chunk_id, scope, origin FROM chunk_origins WHERE chunk_id = ANY(%s)", (ids,))
        return {r[0]: (r[1], r[2]) for r in rows}

    def note_languages(self) -> dict[str, int]:
        self._flush()
        return dict(self.conn.execute("SELECT lang, count(*) FROM files WHERE gen = %s AND lang IS NOT NULL "
                                      "GROUP BY lang", (self.gen,)).fetchall())

    def note_count(self) -> int:
        self._flush()
        return self.conn.execute("SELECT count(*) FROM files WHERE gen = %s", (self.gen,)).fetchone()[0]

    def _lexemes_remove(self, file_ids: list[int]) -> None:
        """The vocabulary without these files' chunks (before they are deleted)."""
        rows = self.conn.execute(schema.LEXEMES_REMOVE, {"gen": self.gen, "file_ids": file_ids}).fetchall()
        gone = [lx for lx, df in rows if df <= 0]
        if gone:
            self.conn.execute("DELETE FROM lexemes WHERE gen = %s AND lexeme = ANY(%s) AND df <= 0", (self.gen, gone))

    def recount_lexemes(self) -> None:
        """Count this generation's vocabulary from its tsvectors (after a bulk load; a repair)."""
        with self.conn.transaction():
            self.conn.execute("DELETE FROM lexemes WHERE gen = %s", (self.gen,))
            self.conn.execute(schema.LEXEMES_RECOUNT, {"gens": [self.gen]})
        self._lexemes_stale = False

    # -- vectors (write side) ----------------------------------------------------------------
    def has_vectors(self) -> bool:
        return self._cached_meta().vector_dim is not None

    def pack_vectors(self, matrix, vector_type: str) -> list[bytes | None]:
        # `vector_type` (int8 | float32) is the SQLite file's storage choice; here vectors are halfvec,
        # packed in halfvec_recv's binary form for COPY.
        return bulk.halfvec_binary(matrix)

    def reset_vectors(self, dim: int, vector_type: str) -> None:
        self.conn.execute(f"DROP INDEX IF EXISTS {schema.hnsw_index_name(self.gen)}")
        self.conn.execute("UPDATE chunks SET embedding = NULL WHERE gen = %s AND embedding IS NOT NULL", (self.gen,))
        self.update_meta(vector_type=vector_type, vector_dim=dim)
        if not self.defer_index:
            self.conn.execute(schema.hnsw_index_sql(self.gen, dim))

    def drop_vectors(self) -> None:
        self.conn.execute(f"DROP INDEX IF EXISTS {schema.hnsw_index_name(self.gen)}")
        self.conn.execute("UPDATE chunks SET embedding = NULL WHERE gen = %s AND embedding IS NOT NULL", (self.gen,))
        self.update_meta(vector_dim=None)

    def vectors_by_embed_hash(self, hashes: Iterable[str]) -> dict[str, bytes]:
        wanted = [bytes.fromhex(h) for h in dict.fromkeys(hashes)]
        if not wanted or not self.has_vectors():
            return {}
        self._flush()
        out: dict[str, bytes] = {}
        rows = self.conn.execute("SELECT embed_hash, halfvec_send(embedding) FROM chunks WHERE gen = %s AND "
                                 "embed_hash = ANY(%s) AND embedding IS NOT NULL", (self.gen, wanted))
        for h, vec in rows:
            out.setdefault(bytes(h).hex(), bytes(vec))
        return out

    def chunks_without_vectors(self) -> Iterator[tuple[int, str, str, str]]:
        self._flush()
        rows = self.conn.execute("SELECT c.id, f.title, c.heading_path, c.text FROM chunks c JOIN files f ON "
                                 "f.id = c.file_id WHERE c.gen = %s AND c.embedding IS NULL ORDER BY c.id",
                                 (self.gen,)).fetchall()
        yield from ((r[0], r[1], r[2], r[3]) for r in rows)

    def put_vector(self, chunk_id: int, packed: object) -> None:
        text = bulk.halfvec_text(packed) if isinstance(packed, (bytes, bytearray, memoryview)) else packed
        self.conn.execute("UPDATE chunks SET embedding = %s::halfvec WHERE id = %s", (text, chunk_id))

    # -- maintenance -------------------------------------------------------------------------
    def optimize(self, *, compact: bool = False) -> None:
        """Build a deferred HNSW index and vocabulary (after a rebuild's bulk load) and refresh planner
        statistics."""
        self._flush()
        if self._lexemes_stale:
            self.recount_lexemes()
        # GIN's pending list (fast inserts) is read sequentially by every search until merged:
        # 260 pending pages made a 4-term lookup at tldr scale take 25 ms instead of 4.
        self.conn.execute("SELECT gin_clean_pending_list('chunks_tsv'::regclass)")
        dim = self.meta().vector_dim
        if dim is not None:
            self.conn.execute(schema.hnsw_index_sql(self.gen, dim))
        if compact:
            self.conn.execute("ANALYZE chunks")
            self.conn.execute("ANALYZE lexemes")

    def counts(self) -> dict[str, int]:
        self._flush()
        gens = list(self.gens)
        row = self.conn.execute(
            "SELECT (SELECT count(*) FROM files WHERE gen = ANY(%(g)s)), "
            "(SELECT count(*) FROM chunks WHERE gen = ANY(%(g)s)), "
            "(SELECT count(*) FROM links l JOIN files f ON f.id = l.file_id WHERE f.gen = ANY(%(g)s)), "
            "(SELECT count(*) FROM chunks WHERE gen = ANY(%(g)s) AND embedding IS NOT NULL)", {"g": gens}).fetchone()
        return {"files": row[0], "chunks": row[1], "links": row[2], "vectors": row[3]}

    # -- read side: documents ----------------------------------------------------------------
    def _stats(self) -> tuple[int, float]:
        """(chunks, average tokens per chunk) over the generations read: BM25's N and avgdl."""
        n, tokens = self.conn.execute("SELECT coalesce(sum(chunks), 0)::bigint, coalesce(sum(tokens), 0)::bigint FROM generations "
                                      "WHERE id = ANY(%s)", (list(self.gens),)).fetchone()
        return int(n), (float(tokens) / n if n else 1.0)

    def chunk_count(self) -> int:
        return self._stats()[0]

    def _cols(self) -> str:
        return _CHUNK_COLS + (_ROOT_COL if len(self.names) > 1 else "")

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, StoredChunk]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        sql = f"SELECT {self._cols()} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY(%s)"
        return {r[0]: _stored_chunk(r) for r in self.conn.execute(sql, (ids,))}

    def chunks_of_files(self, file_ids: Sequence[int]) -> list[StoredChunk]:
        if not file_ids:
            return []
        sql = (f"SELECT {self._cols()} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.file_id = ANY(%s) "
               f"ORDER BY c.file_id, c.section_index, c.chunk_index")
        return [_stored_chunk(r) for r in self.conn.execute(sql, (list(file_ids),))]

    def lead_chunks(self, file_ids: Sequence[int]) -> dict[int, int]:
        if not file_ids:
            return {}
        rows = self.conn.execute("SELECT DISTINCT ON (file_id) file_id, id FROM chunks WHERE file_id = ANY(%s) "
                                 "ORDER BY file_id, section_index, chunk_index", (list(file_ids),))
        return {fid: cid for fid, cid in rows}

    def match_keys(self, keys: Sequence[str]) -> list[tuple[str, str, int, int | None]]:
        if not keys:
            return []
        rows = self.conn.execute("SELECT key, kind, file_id, NULLIF(chunk_id, 0) FROM keys WHERE gen = ANY(%s) AND "
                                 "key = ANY(%s) ORDER BY file_id, key, kind, chunk_id", (list(self.gens), list(keys)))
        return [tuple(r) for r in rows]

    def links_from(self, file_ids: Sequence[int]) -> list[LinkOut]:
        if not file_ids:
            return []
        rows = self.conn.execute("SELECT file_id, chunk_id, target_key, anchor, kind, text, line FROM links "
                                 "WHERE file_id = ANY(%s) ORDER BY file_id, line, id", (list(file_ids),))
        return [LinkOut(*r) for r in rows]

    def files_by_stem(self, stem_keys: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        if not stem_keys:
            return {}
        out: dict[str, list[tuple[int, str]]] = {}
        rows = self.conn.execute("SELECT stem_key, id, path FROM files WHERE gen = ANY(%s) AND stem_key = ANY(%s) "
                                 "ORDER BY path, id", (list(self.gens), list(stem_keys)))
        for key, fid, path in rows:
            out.setdefault(key, []).append((fid, path))
        return out

    # -- read side: lexical ------------------------------------------------------------------
    def lexical(self, terms: Sequence[Term], limit: int, weights: tuple[float, float, float]) -> list[tuple[int, float]]:
        terms = analyzer.flatten(terms)  # typo alternatives score as terms of their own (as in FTS5)
        if not terms or limit <= 0:
            return []
        gens = list(self.gens)
        stats = lexical.term_stats(self.conn, gens, terms)
        for term, st in zip(terms, stats):  # for doc_freq() during this search (the evidence gate)
            self._df[term] = st.df
        nrows, avgdl = self._stats()
        ranked = lexical.bm25(self.conn, gens, terms, stats, nrows, avgdl, limit, weights)
        self.lexical_exact = ranked.exact
        if not ranked.exact:
            log.debug("lexical: candidates capped at %d a set (terms common across the collection): "
                      "approximate BM25 ranking", lexical.SCAN_CAP)
        return ranked.hits

    def doc_freq(self, term: Term, cap: int) -> int:
        if term in self._df:  # counted by lexical() in this search
            return min(self._df[term], cap)
        terms = analyzer.flatten([term])
        if len(terms) == 1:  # the vocabulary table (a prefix or phrase: counted over GIN there)
            return min(lexical.term_stats(self.conn, list(self.gens), terms)[0].df, cap)
        tq = analyzer.tsquery([term])  # a typo group: chunks holding any of its forms
        return 0 if not tq else self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM chunks WHERE gen = ANY(%s) AND tsv @@ %s::tsquery LIMIT %s) s",
            (list(self.gens), tq, cap)).fetchone()[0]

    # -- read side: vocabulary (typo tolerance), from the `lexemes` table
    def stem(self, words: Sequence[str]) -> dict[str, str]:
        out = {}
        for w in words:
            parts = analyzer.query_lexemes(Term(w)).parts
            if parts:
                out[w] = parts[0]
        return out

    def near_terms(self, term: str, max_distance: int, limit: int) -> list[tuple[str, int, int]]:
        """As the SQLite store's (vocab.py): index terms sharing the first max_distance + 1 letters,
        of similar length, within the edit distance; nearest first, then commonest."""
        if not term:
            return []
        lo = term[:max_distance + 1]
        rows = self.conn.execute(
            "SELECT lexeme, sum(df)::bigint FROM lexemes WHERE gen = ANY(%s) AND lexeme >= %s COLLATE \"C\" AND "
            "lexeme < %s COLLATE \"C\" AND length(lexeme) BETWEEN %s AND %s AND df > 0 GROUP BY lexeme",
            (list(self.gens), lo, lexical.successor(lo), len(term) - max_distance, len(term) + max_distance))
        return nearest(term, max_distance, limit, [(lx, int(df)) for lx, df in rows])  # the SQLite typo rule

    def contains(self, terms: Sequence[Term], ids: Sequence[int]) -> set[int]:
        tq = analyzer.tsquery(terms)
        if not tq or not ids:
            return set()
        # The few ids first (primary key), then the match: left to itself the planner may read a
        # common term's whole GIN posting list to test three chunks (60 ms a gate at tldr scale).
        rows = self.conn.execute("WITH c AS MATERIALIZED (SELECT id, tsv FROM chunks WHERE id = ANY(%s)) "
                                 "SELECT id FROM c WHERE tsv @@ %s::tsquery", (list(ids), tq))
        return {r[0] for r in rows}

    # -- read side: vectors ------------------------------------------------------------------
    def knn(self, vector: Sequence[float], k: int) -> list[tuple[int, float]]:
        literal = vector_literal(vector)
        dim = self._cached_meta().vector_dim
        if literal is None or k <= 0 or dim is None or dim != len(vector):
            return []
        found: list[tuple[float, int]] = []
        for gen in self.gens:  # one KNN per generation: each has its own partial HNSW index
            for cid, dist in self.conn.execute(schema.knn_sql(gen, dim), {"v": literal, "k": k}):
                if dist is not None and not math.isnan(dist):
                    found.append((dist, cid))
        found.sort()
        return [(cid, 1.0 - dist) for dist, cid in found[:k]]

    def similarities(self, vector: Sequence[float], ids: Sequence[int]) -> dict[int, float]:
        literal = vector_literal(vector)
        if literal is None or not ids:
            return {}
        rows = self.conn.execute("SELECT id, embedding <=> %s::halfvec FROM chunks WHERE id = ANY(%s) "
                                 "AND embedding IS NOT NULL", (literal, list(ids)))
        return {cid: 1.0 - d for cid, d in rows if d is not None and not math.isnan(d)}


def new_generation(conn, collection_id: int) -> int:
    return conn.execute("INSERT INTO generations (collection_id) VALUES (%s) RETURNING id",
                        (collection_id,)).fetchone()[0]


def drop_generation(conn, gen: int) -> None:
    """Delete one generation and everything in it (its vector index first: then the rows go fast)."""
    conn.execute(f"DROP INDEX IF EXISTS {schema.hnsw_index_name(gen)}")
    with conn.transaction():
        conn.execute("DELETE FROM meta WHERE gen = %s", (gen,))
        conn.execute("DELETE FROM files WHERE gen = %s", (gen,))  # cascades chunks, links, keys
        conn.execute("DELETE FROM generations WHERE id = %s", (gen,))


def list_collections(url: str) -> list[dict]:
    """Every collection in the database: name, live generation, chunks (for `status`)."""
    conn = connect(url)
    try:
        if ensure_schema(url, conn, create=False) == 0:
            return []
        rows = conn.execute("SELECT c.name, c.live, coalesce(g.chunks, 0), g.created_at FROM collections c "
                            "LEFT JOIN generations g ON g.id = c.live ORDER BY c.name").fetchall()
        return [{"name": r[0], "generation": r[1], "chunks": r[2],
                 "built_at": r[3].timestamp() if r[3] is not None else None} for r in rows]
    finally:
        release(url, conn)
