"""Issue 18 (warm query): a long-lived read-only store ranks the int8 vectors it holds in memory
(store/sqlite/resident.py). Checked on real SQLite indexes against an exact cosine computed here,
in plain Python from the stored bytes, and against vec0's own SQL."""
from __future__ import annotations

import math
import struct

import pytest

from vaultrag.indexer import reindex
from vaultrag.retrieve.channels import encoder_for
from vaultrag.store import Store
from vaultrag.store.sqlite import resident
from vaultrag.store.sqlite.vectors import query_int8

QUERIES = ["daily snapshots retention", "how do I restore a backup", "meeting notes from last week",
           "python virtual environment", "zzz unrelated words here"]
EXACT_SQL = ("SELECT rowid, vec_distance_cosine(embedding, vec_int8(:v)) AS d FROM chunks_vec "
             "ORDER BY d, rowid LIMIT :k")


@pytest.fixture(autouse=True)
def fresh_counts(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")  # numpy is loaded here: say its BLAS runs one thread
    resident.forget()
    yield
    resident.forget()


@pytest.fixture
def index(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg)
    with Store(cfg.db_path(), readonly=True) as probe:
        if probe.vec_error or not probe.has_vectors() or probe.vector_type() != "int8":
            pytest.skip(f"no int8 vectors: {probe.vec_error}")
        model_path = probe.meta().model_path
    return cfg, encoder_for(model_path)


def _blob(vec) -> bytes:
    return struct.pack(f"<{len(vec)}f", *vec)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def exact_by_hand(store, q: bytes, k: int) -> list[tuple[int, float]]:
    """The exact int8 cosine top k in plain Python: every stored vector, 1 - dot / (|a| |q|)."""
    qv = struct.unpack(f"{len(q)}b", q)
    qn = math.sqrt(sum(x * x for x in qv))
    out = []
    for rowid, emb in store.conn.execute("SELECT rowid, embedding FROM chunks_vec"):
        v = struct.unpack(f"{len(emb)}b", emb)
        dot = sum(a * b for a, b in zip(v, qv))
        out.append((rowid, _f32(1.0 - dot / (math.sqrt(sum(a * a for a in v)) * qn))))
    out.sort(key=lambda r: (r[1], r[0]))
    return out[:k]


def test_resident_top_k_equals_an_exact_cosine_computed_by_hand(index):
    cfg, enc = index
    with Store(cfg.db_path(), readonly=True) as held:
        held.resident_vectors = True
        dim = int(held.get_meta("vector_dim"))
        rows = held.counts()["vectors"]
        for text in QUERIES:
            blob = _blob(enc.encode(text))
            q = query_int8(blob, dim)
            for k in (1, 5, rows, rows + 3):
                got = held.vec_search(blob, k, "int8")
                assert got == exact_by_hand(held, q, k)
                assert got == [tuple(r) for r in held.conn.execute(EXACT_SQL, {"v": q, "k": k})]
        assert held._held[1] is not None and len(held._held[1].ids) == rows  # it did answer from memory


def test_similarities_from_memory_equal_vec0_lookups(index):
    """The lexical candidates' similarities come from the same rows: bit-equal to vec0's own."""
    cfg, enc = index
    with Store(cfg.db_path(), readonly=True) as held, Store(cfg.db_path(), readonly=True) as plain:
        held.resident_vectors, plain.resident_vectors = True, False
        for text in QUERIES:
            vec = enc.encode(text)
            near = held.knn(vec, 5)
            assert near == plain.knn(vec, 5)  # few chunks: the two-stage KNN is exact here too
            ids = [cid for cid, _ in near] + list(range(1, 60)) + [10**9]  # some without a vector
            got = held.similarities(vec, ids)
            assert got == plain.similarities(vec, ids)
            assert 10**9 not in got and set(dict(near)) <= set(got)
        assert held._held[1] is not None and plain._resident(counting=False) is None


def test_used_after_enough_queries_only_and_shared_between_stores(index, monkeypatch):
    cfg, enc = index
    monkeypatch.setattr(resident, "RESIDENT_AFTER", 3)
    blob = _blob(enc.encode(QUERIES[0]))
    with Store(cfg.db_path(), readonly=True) as a, Store(cfg.db_path(), readonly=True) as b:
        a.vec_search(blob, 5, "int8")
        b.vec_search(blob, 5, "int8")
        assert getattr(a, "_held", None) is None and getattr(b, "_held", None) is None  # 2 of 3 queries
        a.vec_search(blob, 5, "int8")
        b.vec_search(blob, 5, "int8")
        assert a._held[1] is not None and a._held[1] is b._held[1]  # one matrix for the process


def test_a_writer_store_never_holds_vectors(index):
    cfg, enc = index
    with Store(cfg.db_path()) as writer:
        writer.resident_vectors = True
        writer.knn(enc.encode(QUERIES[0]), 5)
        assert writer._resident(counting=True) is None


def test_reloaded_after_another_connection_reindexes(index, vault):
    cfg, enc = index
    text = "Zebra migration across the Serengeti plains in the dry season"
    with Store(cfg.db_path(), readonly=True) as held:
        held.resident_vectors = True
        blob = _blob(enc.encode(text))
        before = held.vec_search(blob, 3, "int8")
        old = held._held[1]
        (vault / "zebra.md").write_text(f"# Zebras\n\n{text}.\n", encoding="utf-8")
        reindex(cfg)  # its own connection commits
        after = held.vec_search(blob, 3, "int8")
        assert held._held[1] is not old and len(held._held[1].ids) == len(old.ids) + 1
        dim = int(held.get_meta("vector_dim"))
        assert after == exact_by_hand(held, query_int8(blob, dim), 3) and after != before
        zebra = held.conn.execute("SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id "
                                  "WHERE f.path = 'zebra.md'").fetchone()[0]
        assert after[0][0] == zebra

        (vault / "zebra.md").unlink()
        reindex(cfg)  # a delete: fewer rows, the same insert counter
        gone = held.vec_search(blob, 3, "int8")
        assert zebra not in dict(gone) and len(held._held[1].ids) == len(old.ids)
        assert held.similarities(enc.encode(text), [zebra]) == {}


def test_over_the_size_cap_vec0_answers(index, monkeypatch):
    cfg, enc = index
    with Store(cfg.db_path(), readonly=True) as probe:
        rows, dim = probe.counts()["vectors"], int(probe.get_meta("vector_dim"))
    monkeypatch.setattr(resident, "RESIDENT_MAX_BYTES", rows * dim * 4 - 1)  # one byte short
    with Store(cfg.db_path(), readonly=True) as capped, Store(cfg.db_path(), readonly=True) as plain:
        capped.resident_vectors, plain.resident_vectors = True, False
        vec = enc.encode(QUERIES[1])
        assert capped.knn(vec, 5) == plain.knn(vec, 5)
        assert capped._held == (capped._data_version(), None)  # decided: vec0, until the index changes
    monkeypatch.setattr(resident, "RESIDENT_MAX_BYTES", rows * dim * 4)
    with Store(cfg.db_path(), readonly=True) as fits:
        fits.resident_vectors = True
        fits.knn(enc.encode(QUERIES[1]), 5)
        assert fits._held[1] is not None


def test_distances_bit_equal_to_vec0_on_every_row(index):
    """Every row's distance, not only the top: vec0's vec_distance_cosine for int8 in double, as float32."""
    cfg, enc = index
    with Store(cfg.db_path(), readonly=True) as held:
        held.resident_vectors = True
        dim = int(held.get_meta("vector_dim"))
        for text in QUERIES[:3]:
            blob = _blob(enc.encode(text))
            held.vec_search(blob, 1, "int8")
            q = query_int8(blob, dim)
            mine = held._held[1].lookup(q, [r[0] for r in held.conn.execute("SELECT rowid FROM chunks_vec")])
            sql = dict(held.conn.execute("SELECT rowid, vec_distance_cosine(embedding, vec_int8(:v)) FROM chunks_vec",
                                         {"v": q}))
            assert mine == sql


def test_query_quantised_with_numpy_gives_the_same_bytes(index):
    """Where numpy is loaded, quantize_int8 runs on arrays: byte for byte the pure-Python form."""
    import random

    import numpy as np

    from vaultrag.store.sqlite.vectors import _quantize_int8_np, _quantize_int8_py

    cfg, enc = index
    rng = random.Random(18)
    vecs = [list(enc.encode(t)) for t in QUERIES]
    vecs += [[rng.gauss(0, 1) * (12 if i % 41 == 0 else 1) for i in range(256)] for _ in range(400)]
    vecs += [[struct.unpack("<f", struct.pack("<f", x))[0] for x in v] for v in vecs[5:105]]  # float32 inputs
    vecs += [[0.0] * 256, [0.0] * 255 + [1.0], [1e-30] * 256, [rng.gauss(0, 1) for _ in range(300)], [0.5] * 10]
    got = [_quantize_int8_np(v, np) for v in vecs]
    assert got == [_quantize_int8_py(v) for v in vecs]
    assert got[-5] is None and got[0] is not None and len(got[-2]) == 512


def test_vec0_answers_when_numpy_was_loaded_with_blas_threads(index, monkeypatch):
    """Someone else imported numpy without OPENBLAS_NUM_THREADS=1: their threads would spin on every
    query's product, so the store keeps vec0."""
    cfg, enc = index
    for setting in ("4", None):
        if setting is None:
            monkeypatch.delenv("OPENBLAS_NUM_THREADS")
        else:
            monkeypatch.setenv("OPENBLAS_NUM_THREADS", setting)
        resident.forget()
        with Store(cfg.db_path(), readonly=True) as s:
            s.resident_vectors = True
            s.knn(enc.encode(QUERIES[0]), 5)
            assert s._held[1] is None


def test_a_fresh_process_loads_numpy_only_when_due_and_with_one_blas_thread(index):
    import json
    import os
    import subprocess
    import sys

    cfg, _ = index
    code = ("import json, os, sys\n"
            "from vaultrag.store import Store\n"
            "from vaultrag.store.sqlite import resident\n"
            "resident.RESIDENT_AFTER = 5\n"
            "s = Store(sys.argv[1], readonly=True)\n"
            "vec = [((i * 7919) % 13 - 6) / 6.0 for i in range(256)]\n"
            "seen = []\n"
            "for i in range(6):\n"
            "    s.knn(vec, 5)\n"
            "    seen.append('numpy' in sys.modules)\n"
            "print(json.dumps([seen, os.environ.get('OPENBLAS_NUM_THREADS'), s._held[1] is not None]))\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    p = subprocess.run([sys.executable, "-c", code, str(cfg.db_path())], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    seen, threads, held = json.loads(p.stdout.strip().splitlines()[-1])
    assert seen == [False, False, False, False, True, True] and threads == "1" and held


def test_a_full_rebuild_new_file_gets_its_own_matrix(index, vault):
    """`reindex --full` renames a new file over the index: a store opened before keeps reading the
    old file (and its matrix), one opened after reads the new file's vectors, not the old matrix."""
    cfg, enc = index
    text = "Otters hold hands while they sleep so they do not drift apart"
    blob = _blob(enc.encode(text))
    with Store(cfg.db_path(), readonly=True) as before:
        before.resident_vectors = True
        old_top = before.vec_search(blob, 3, "int8")
        chunks = before.counts()["vectors"]
        (vault / "People" / "Ada.md").write_text(f"# Ada\n\n{text}.\n", encoding="utf-8")  # same chunk count
        reindex(cfg, full=True)
        with Store(cfg.db_path(), readonly=True) as after:
            after.resident_vectors = True
            new_top = after.vec_search(blob, 3, "int8")
            assert after.counts()["vectors"] == chunks  # so only the file tells the two matrices apart
            assert after.file_id != before.file_id and after._held[1] is not before._held[1]
            dim = int(after.get_meta("vector_dim"))
            assert new_top == exact_by_hand(after, query_int8(blob, dim), 3)
            assert before.vec_search(blob, 3, "int8") == old_top == exact_by_hand(before, query_int8(blob, dim), 3)
