"""Recall of the stored int8 vectors and of the two-stage int8 search against exact float32 cosine.

    HF_HUB_OFFLINE=1 python benchmarks/int8_recall.py [--set scifact]     # ../shared/eval/beir/<set>
    HF_HUB_OFFLINE=1 python benchmarks/int8_recall.py --tldr [--queries 200]   # tldr-pages, tldr_bench's queries

Builds a float32 and an int8 index of the same corpus with the bundled model, embeds each query once
with the query-path encoder, and compares top-k chunk sets (k = 10 and 30; chunks matched by path,
section and chunk index) of:
  - float32: exact cosine KNN (the ground truth),
  - old int8: per-vector scaling to +-127, no rotation, exact cosine (what schema 1 stored; computed
    with numpy from the float32 vectors),
  - int8 exact: the stored rotated int8 vectors, brute-force cosine in SQL,
  - int8 two-stage (vec0, the product for a short-lived process): L1 candidates x factor, cosine
    re-rank, for several factors, with median latency per query, and once more through the
    retriever's `vec_channel`,
  - int8 resident (a long-lived read-only store, store/sqlite/resident.py): the exact int8 cosine
    from the vectors held in memory, median latency (wall and this thread's CPU).
Vector channel only. Exits cleanly if the corpus is absent.
"""
import argparse
import json
import statistics
import struct
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.retrieve.channels import encoder_for, vec_channel
from vaultrag.store import Store

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "beir"
TLDR = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "tldr-pages.tar.gz"
FACTORS = (1.0, 1.5, 2.0, 3.0, 4.0)


def chunk_keys(s: Store) -> dict[int, tuple]:
    rows = s.conn.execute("SELECT c.id, f.path, c.section_index, c.chunk_index FROM chunks c "
                          "JOIN files f ON f.id = c.file_id").fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def recall(got: list[set], truth: list[set]) -> float:
    return sum(len(g & t) / max(1, len(t)) for g, t in zip(got, truth)) / max(1, len(truth))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--set", default="scifact")
    p.add_argument("--tldr", action="store_true", help="tldr-pages corpus and tldr_bench queries instead")
    p.add_argument("--queries", type=int, default=300)
    a = p.parse_args()
    work = Path(tempfile.mkdtemp())
    vault = work / "vault"
    vault.mkdir()
    if a.tldr:
        if not TLDR.exists():
            print(f"{TLDR} not found; nothing measured")
            return 0
        with tarfile.open(TLDR) as tf:
            tf.extractall(vault, filter="data")
        sys.path.insert(0, str(Path(__file__).parent))
        from tldr_bench import make_queries
        queries = list(dict.fromkeys(q for seed in (7, 8, 9, 10, 11, 12) for q in make_queries(vault, 50, seed)))
        queries = queries[:a.queries]
        name = "tldr"
    else:
        d = EVAL / a.set
        if not d.exists():
            print(f"{d} not found; nothing measured")
            return 0
        for i, line in enumerate(open(d / "corpus.jsonl", encoding="utf-8")):
            doc = json.loads(line)
            (vault / f"{i}.md").write_text(f"# {doc.get('title') or doc['_id']}\n\n{doc['text']}\n", encoding="utf-8")
        queries = [json.loads(x)["text"] for x in open(d / "queries.jsonl", encoding="utf-8")][:a.queries]
        name = a.set
    stores, keys, sizes = {}, {}, {}
    for vt in ("float32", "int8"):
        cfg = load_config(vault=str(vault), db=str(work / f"{vt}.sqlite"), model="bundled", vector_type=vt)
        reindex(cfg)
        s = Store(cfg.db_path(), readonly=True)
        stores[vt], keys[vt] = s, chunk_keys(s)
        sizes[vt] = s.conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'chunks_vec%'").fetchone()[0]
    f32, i8 = stores["float32"], stores["int8"]
    i8.resident_vectors = False  # the two-stage rows measure vec0
    held = Store(i8.path, readonly=True)
    held.resident_vectors = True
    enc = encoder_for(f32.get_meta("model_path"))
    qvecs_all = [list(enc.encode(q)) for q in queries]
    qvecs = [v for v in qvecs_all if any(v)]
    dim = len(qvecs[0])
    blobs = [struct.pack(f"<{dim}f", *v) for v in qvecs]

    # old int8 (schema 1): per-vector scaling, exact cosine, from the float32 vectors
    ids, mats = [], []
    for rid, emb in f32.conn.execute("SELECT rowid, embedding FROM chunks_vec"):
        ids.append(rid)
        mats.append(np.frombuffer(emb, dtype="<f4"))
    ids = np.array(ids)
    def per_vector_q8(m):
        m = np.atleast_2d(m)
        return np.clip(np.rint(m * 127.0 / np.abs(m).max(axis=1, keepdims=True)), -127, 127)
    old = per_vector_q8(np.stack(mats))
    old /= np.linalg.norm(old, axis=1, keepdims=True)

    out = {"corpus": name, "queries": len(blobs), "chunks": len(ids),
           "vec_mb": {vt: round(sizes[vt] / 1e6, 2) for vt in sizes}}
    exact_sql = ("SELECT rowid, vec_distance_cosine(embedding, vec_int8(:v)) d FROM chunks_vec "
                 "ORDER BY d, rowid LIMIT :k")
    from vaultrag.store.sqlite.vectors import query_int8
    for k in (10, 30):
        truth = [{keys["float32"][c] for c, _ in f32.vec_search(b, k, "float32")} for b in blobs]
        oldq = per_vector_q8(np.array(qvecs))
        oldq /= np.linalg.norm(oldq, axis=1, keepdims=True)
        old_top = [{keys["float32"][int(ids[j])] for j in np.argsort(-(old @ q), kind="stable")[:k]} for q in oldq]
        exact8 = [{keys["int8"][r[0]] for r in i8.conn.execute(exact_sql, {"v": query_int8(b, dim), "k": k})}
                  for b in blobs]
        row = {"old_int8_vs_float": round(recall(old_top, truth), 3),
               "int8_exact_vs_float": round(recall(exact8, truth), 3)}
        for f in FACTORS:
            got, ms = [], []
            for b in blobs:
                t = time.perf_counter()
                hits = i8.vec_search(b, k, "int8", candidate_factor=f)
                ms.append((time.perf_counter() - t) * 1000)
                got.append({keys["int8"][c] for c, _ in hits})
            row[f"two_stage_x{f:g}"] = {"vs_float": round(recall(got, truth), 3),
                                        "vs_int8_exact": round(recall(got, exact8), 3),
                                        "median_ms": round(statistics.median(ms), 2)}
        got, ms, cpu = [], [], []
        held.vec_search(blobs[0], k, "int8")  # loads the matrix (not timed)
        for b in blobs:
            t, c = time.perf_counter(), time.thread_time()
            hits = held.vec_search(b, k, "int8")
            ms.append((time.perf_counter() - t) * 1000)
            cpu.append((time.thread_time() - c) * 1000)
            got.append({keys["int8"][c] for c, _ in hits})
        row["resident"] = {"vs_float": round(recall(got, truth), 3), "vs_int8_exact": round(recall(got, exact8), 3),
                           "median_ms": round(statistics.median(ms), 2), "median_cpu_ms": round(statistics.median(cpu), 2)}
        # the product path: the retriever's vec_channel (its own query packing) on the int8 index
        got = [{keys["int8"][c] for c, _ in vec_channel(i8, q, k)[0]} for q, v in zip(queries, qvecs_all) if any(v)]
        row["vec_channel_vs_float"] = round(recall(got, truth), 3)
        ms = []
        for b in blobs:
            t = time.perf_counter()
            i8.conn.execute(exact_sql, {"v": query_int8(b, dim), "k": k}).fetchall()
            ms.append((time.perf_counter() - t) * 1000)
        row["int8_exact_median_ms"] = round(statistics.median(ms), 2)
        ms = []
        for b in blobs:
            t = time.perf_counter()
            f32.vec_search(b, k, "float32")
            ms.append((time.perf_counter() - t) * 1000)
        row["float32_exact_median_ms"] = round(statistics.median(ms), 2)
        out[f"k={k}"] = row
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
