"""The int8 vectors of a long-lived read-only store, held in memory (issue 18: the warm query).

vec0 answers the int8 KNN by scanning every stored vector in C without SIMD (L1 candidates, then
exact cosine on twice k of them: store/sqlite/vectors.py). A process that keeps one index open and
asks many queries (`vaultrag serve`, the MCP server, a library user holding a Store) can instead
hold the same int8 vectors as a float32 matrix and rank all of them by their exact cosine: one BLAS
matrix-vector product (the int8 dot products are integers below 2**24, so float32 sums them
exactly in any order) and the distance in double precision, rounded to float32, as vec0's
`vec_distance_cosine` computes it (the same bits: a test compares them). That is the exact int8
top k (vec0's two-stage KNN keeps 0.956 / 0.960 of it at k = 30 / 10 on tldr), and `similarities()`
for the lexical candidates reads the same distances.

When: only after `RESIDENT_AFTER` vector queries on one index in this process (a hook or a CLI
search asks one, and must stay free of numpy: tests/test_cold_path.py), only read-only int8 stores,
only while the matrix stays under `RESIDENT_MAX_BYTES`, and only with one BLAS thread
(`_one_blas_thread`). It is reloaded when another connection changed the vectors: each store
checks `PRAGMA data_version` (its own connection's view of other commits) per query and, when it
moved, the vector table's fingerprint. Stores of one process on
the same file share one matrix (serve keeps a store per worker thread).
"""
from __future__ import annotations

import os
import sys
import _thread  # built in: `threading` and `weakref` would cost the one-query hook ~2-3 ms to import

from .schema import VEC_TABLE

ROWIDS_TABLE = f"{VEC_TABLE}_rowids"  # vec0's own table: one row per stored vector

# Vector queries on one index in this process before its vectors are loaded: ski rental, the
# one-off cost over the saving per query. tldr (38k chunks, 2 shared cores): importing numpy ~45 ms
# CPU and reading the vec0 table into the matrix 120-180 ms, against 0.7-2 ms of CPU saved per query
# (BENCHMARKS.md, "Stop 20 -- warm9"): a process that asks fewer than ~200 queries never pays it.
RESIDENT_AFTER = 200
# float32 matrix, 4 bytes per coordinate: 256 dimensions cost 1 KB a chunk, so 38k chunks 39 MB
# and a 400k-chunk vault 410 MB, which a background service should not hold; above this vec0 is kept.
RESIDENT_MAX_BYTES = 160 << 20

_LOCK = _thread.allocate_lock()
_QUERIES: dict[str, int] = {}  # index path -> vector queries seen in this process
# (index path, file identity) -> the latest matrix loaded, while a store uses it (stores hold it)
_HELD: dict = {}  # a weakref.WeakValueDictionary once a matrix is loaded (_held_map)


def _held_map():
    global _HELD
    if type(_HELD) is dict:
        import weakref

        _HELD = weakref.WeakValueDictionary()
    return _HELD


def fingerprint(conn) -> tuple:
    """What changes whenever the stored vectors of one file change, read through `conn`: the vector
    table's row count and insert counter (vec0 keeps an AUTOINCREMENT rowid table: every insert
    moves it, a delete lowers the count) and the model and type the meta table records (a model
    change drops and recreates the table)."""
    seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = :t", {"t": ROWIDS_TABLE}).fetchone()
    count = conn.execute(f"SELECT count(*) FROM {ROWIDS_TABLE}").fetchone()[0]
    meta = tuple(conn.execute("SELECT key, value FROM meta WHERE key IN "
                              "('model_fingerprint', 'vector_type', 'vector_dim') ORDER BY key"))
    return (seq[0] if seq else 0, count, meta)


class Resident:
    """The vectors of one index version: ids ascending, the float32 matrix, each row's norm."""

    def __init__(self, key: tuple, ids, matrix, norms):
        self.key, self.ids, self.matrix, self.norms = key, ids, matrix, norms
        self._last: tuple[bytes, object] | None = None  # (query, its distances to every row)

    @classmethod
    def load(cls, conn, key: tuple, dim: int) -> "Resident":
        import numpy as np

        rows = conn.execute(f"SELECT rowid, embedding FROM {VEC_TABLE}").fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        order = np.argsort(ids, kind="stable")
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.int8).reshape(len(rows), dim)
        ids, matrix = ids[order], matrix[order].astype(np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64))
        return cls(key, ids, matrix, norms)

    def distances(self, q: bytes):
        """Cosine distance of the int8 query `q` to every row, as vec0's vec_distance_cosine gives
        it: 1 - dot / (sqrt(|a|^2) * sqrt(|q|^2)) in double, returned as float32."""
        last = self._last
        if last is not None and last[0] == q:
            return last[1]
        import numpy as np

        v = np.frombuffer(q, dtype=np.int8).astype(np.float32)
        dots = self.matrix @ v
        qn = float(np.sqrt(np.dot(v.astype(np.float64), v)))
        d = (1.0 - dots.astype(np.float64) / (self.norms * qn)).astype(np.float32)
        self._last = (q, d)
        return d

    def top(self, q: bytes, k: int) -> list[tuple[int, float]]:
        """(chunk id, distance) of the k nearest rows, nearest first, ties by id (as vec_search)."""
        import numpy as np

        d = self.distances(q)
        if k < len(d):
            kth = np.partition(d, k - 1)[k - 1]
            pick = np.flatnonzero(d <= kth)  # every row tied with the k-th, so ties go by id
        else:
            pick = np.arange(len(d))
        order = pick[np.lexsort((self.ids[pick], d[pick]))][:k]
        return [(int(i), float(x)) for i, x in zip(self.ids[order].tolist(), d[order].tolist())]

    def lookup(self, q: bytes, ids) -> dict[int, float]:
        """Distance of `q` to each of `ids` that has a vector."""
        import numpy as np

        if not len(self.ids):
            return {}
        want = np.asarray(list(ids), dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.ids, want), len(self.ids) - 1)
        found = self.ids[pos] == want
        d = self.distances(q)
        return {int(i): float(x) for i, x in zip(want[found].tolist(), d[pos[found]].tolist())}


def _one_blas_thread() -> bool:
    """numpy importable, and its BLAS told to run one thread. One matrix-vector product a query is too
    small to share: OpenBLAS's helper threads spin for the next one, and on 2 busy cores the warm
    query cost 1.6x the CPU of vec0's (BENCHMARKS.md, "Stop 20 -- warm9"). When numpy is not loaded
    yet we load it so (unless OPENBLAS_NUM_THREADS is set); when someone else loaded it without
    that setting, their BLAS threads are theirs and vec0 answers."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        try:
            import numpy  # noqa: F401
        except ImportError:
            return False
    return os.environ.get("OPENBLAS_NUM_THREADS") == "1"


def due(path: os.PathLike | str, *, now: bool = False) -> bool:
    """Count one vector query on the index at `path`; True once RESIDENT_AFTER were asked (or `now`)."""
    key = str(path)
    with _LOCK:
        count = _QUERIES[key] = _QUERIES.get(key, 0) + 1
    return now or count >= RESIDENT_AFTER


def held(conn, path: os.PathLike | str, file_id, dim: int) -> Resident | None:
    """The vectors of the index at `path` as `conn` sees them now: the matrix this process already
    holds when its fingerprint still matches, else loaded (and shared). `file_id`: (st_dev, st_ino)
    of the file `conn` opened (a full rebuild renames a new file over it; older stores keep reading
    the old one). None: keep vec0 (over the size cap, no numpy, or BLAS threads)."""
    key = (str(path), file_id)
    with _LOCK:
        fp = fingerprint(conn)
        current = _held_map().get(key)
        if current is not None and current.key == fp:
            return current
        if fp[1] * dim * 4 > RESIDENT_MAX_BYTES:
            return None
        if not _one_blas_thread():
            return None
        own = not conn.in_transaction  # the fingerprint and the rows from one snapshot
        if own:
            conn.execute("BEGIN")
        try:
            loaded = Resident.load(conn, fingerprint(conn), dim)
        finally:
            if own:
                conn.execute("COMMIT")
        _HELD[key] = loaded
        return loaded


def forget(path: os.PathLike | str | None = None) -> None:
    """Drop the query counts and the shared matrices (of one index, or all); stores keep theirs."""
    with _LOCK:
        if path is None:
            _QUERIES.clear()
            _HELD.clear()
            return
        _QUERIES.pop(str(path), None)
        for key in [k for k in list(_HELD.keys()) if k[0] == str(path)]:
            _HELD.pop(key, None)
