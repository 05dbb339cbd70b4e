"""Load a PostgreSQL collection from a built SQLite index, through the PG store's own write path.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/pg_load.py --sqlite DB --store URL --collection NAME \
        [--follow] [--stop-file F] [--max-files N] [--json OUT]

Indexing PostgreSQL straight from a large vault repeats work the SQLite index has already done (read,
scrub, parse, chunk). Here each document stored in the SQLite file (files, chunks with their search
text, links, metadata keys, note language) becomes a `FileWrite` again and is written with
`PgStore.write_file` inside a `PgBackend.rebuild()` (a shadow generation, 128 notes a transaction,
binary COPY), so the tsvectors (analyzer.py), the vocabulary table, GIN and HNSW are built by the
real code; `publish()` runs the same `optimize()` a full reindex runs. Vectors are embedded again
with the model the SQLite index names (`embed_input` of title, heading and text, as the indexer
does), not dequantised from SQLite's int8 form, so they are what a PostgreSQL reindex would store.

--writers K: K processes write blocks of GROUP consecutive file ids into the same shadow generation
(block b goes to writer b % K), each through its own PgStore; the parent holds the collection's lock,
counts the vocabulary, builds HNSW and publishes once they are done. --follow reads a full rebuild
that is still being written (`DB.rebuild-*`, read-only snapshots), taking a block once it is
complete, until the SQLite rebuild is published or `--max-id` (or the number written in
`--stop-file` when it appears) is reached: the collection then holds exactly the SQLite files with
id <= that. Progress on stderr; a JSON summary (timings, counts) on stdout / --json.
Benchmark tooling: not part of the library.
"""
from __future__ import annotations

import argparse
import glob
import json
import sqlite3
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

GROUP = 128  # notes a transaction, as the indexer writes them
POLL_S = 20.0  # --follow: wait between looks at a rebuild that has nothing new yet


def log(*a) -> None:
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def resolve(db: str, follow: bool) -> tuple[str, bool]:
    """(file to read, still being written): the unpublished rebuild beside DB while it exists."""
    if follow:
        shadows = [p for p in glob.glob(db + ".rebuild-*") if not p.endswith(("-wal", "-shm"))]
        if shadows:
            return max(shadows, key=lambda p: Path(p).stat().st_mtime), True
    return db, False


def read_block(conn, lo: int, hi: int, dicts: dict) -> list:
    """FileWrites of the files with lo <= id <= hi (one read snapshot), with their ids."""
    from vaultrag.store.base import ChunkRow, FileWrite, LinkRow
    from vaultrag.store.sqlite.schema import KEY_KINDS
    from vaultrag.store.sqlite.store import unpack_text

    out = []
    conn.execute("BEGIN")
    try:
        files = conn.execute("SELECT id, path, mtime_ns, size, hash, title, note_type, stem_key, lang FROM files "
                             "WHERE id BETWEEN ? AND ? ORDER BY id", (lo, hi)).fetchall()
        for fid, path, mtime, size, fhash, title, ntype, stem, lang in files:
            rows = conn.execute("SELECT id, section_index, chunk_index, heading_path, context, text, search_text, "
                                "line_start, line_end, content_hash, embed_hash, tokens, block_ids FROM chunks "
                                "WHERE file_id = ? ORDER BY section_index, chunk_index, id", (fid,)).fetchall()
            pos = {r[0]: i for i, r in enumerate(rows)}
            chunks = []
            for r in rows:
                text = r[5]
                if not isinstance(text, str):
                    if text[0] and text[0] not in dicts:
                        dicts.update(conn.execute("SELECT id, dict FROM text_dicts").fetchall())
                    text = unpack_text(text, dicts.get(text[0]))
                chunks.append(ChunkRow(r[1], r[2], r[3], r[4], text, r[6], r[7], r[8], bytes(r[9]).hex(),
                                       bytes(r[10]).hex(), r[11], r[12]))
            links = tuple(LinkRow(pos.get(c), t, tk, a, k, tx, ln) for c, t, tk, a, k, tx, ln in conn.execute(
                "SELECT chunk_id, target, target_key, anchor, kind, text, line FROM links WHERE file_id = ? "
                "ORDER BY line, rowid", (fid,)))
            keys = tuple((key, kind, pos.get(cid) if cid else None)
                         for key, cid, bits in conn.execute("SELECT key, chunk_id, kinds FROM keys WHERE file_id = ?",
                                                            (fid,))
                         for i, kind in enumerate(KEY_KINDS) if bits & (1 << i))
            out.append((fid, FileWrite(path, mtime, size, bytes(fhash).hex(), title, ntype, stem, tuple(chunks), links,
                                       keys, lang)))
    finally:
        conn.execute("COMMIT")
    return out


def copy_meta(sq, store) -> dict:
    """SQLite's index metadata onto the generation (model, settings, vault, calibration...), less
    what only means something in that file."""
    from vaultrag.store.base import FILES_SNAPSHOT_META

    skip = {"schema_version", FILES_SNAPSHOT_META}
    rows = dict(sq.execute("SELECT key, value FROM meta").fetchall())
    for key, value in rows.items():
        if key not in skip:
            store.set_meta(key, value)
    return rows


def stop_id(args) -> int | None:
    """The last SQLite file id to load: --max-id, or the number in --stop-file once it exists."""
    if args.stop_file and Path(args.stop_file).exists():
        text = Path(args.stop_file).read_text().strip()
        return int(text) if text else 0
    return args.max_id


def writer(args, k: int) -> dict:
    """Writer k of --writers: every block b with b % writers == k, into generation --generation."""
    from vaultrag.embedder import load_embedder
    from vaultrag.index_vectors import embed_input
    from vaultrag.store.postgres.store import PgStore

    emb = load_embedder(args.model)
    store = PgStore(args.store, collection=args.collection, generation=args.generation, defer_index=True)
    stats = {"files": 0, "chunks": 0, "read_s": 0.0, "embed_s": 0.0, "write_s": 0.0}
    dicts: dict = {}
    block = k
    t0 = time.perf_counter()
    try:
        while True:
            lo, hi = block * GROUP + 1, (block + 1) * GROUP
            last = stop_id(args)
            if last is not None and lo > last:
                break
            path, live = resolve(args.sqlite, args.follow)
            sq = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
            try:
                try:
                    top = sq.execute("SELECT max(id) FROM files").fetchone()[0] or 0
                except sqlite3.OperationalError as exc:  # the rebuild was published (renamed) under us
                    log(f"writer {k}: {exc}; looking again")
                    time.sleep(1.0)
                    continue
                if live and top <= hi and (last is None or last > top):  # the block may still grow
                    sq.close()
                    time.sleep(POLL_S)
                    continue
                if top < lo:  # published (or stopped) and past the end
                    break
                t = time.perf_counter()
                group = read_block(sq, lo, hi if last is None else min(hi, last), dicts)
                stats["read_s"] += time.perf_counter() - t
            finally:
                sq.close()
            block += args.writers
            if not group:
                continue
            t = time.perf_counter()
            inputs = [embed_input(fw.title, ch.heading_path, ch.text) for _, fw in group for ch in fw.chunks]
            packed = store.pack_vectors(emb.encode(inputs), "int8") if inputs else []
            stats["embed_s"] += time.perf_counter() - t
            t = time.perf_counter()
            it = iter(packed)
            with store.transaction():
                for _, fw in group:
                    store.write_file(fw, [next(it) for _ in fw.chunks])
            stats["write_s"] += time.perf_counter() - t
            stats["files"] += len(group)
            stats["chunks"] += sum(len(fw.chunks) for _, fw in group)
            if (block // args.writers) % 40 == 0:
                log(f"writer {k}: {stats['files']} files, {stats['chunks']} chunks, up to id {hi}, "
                    f"{time.perf_counter() - t0:.0f} s")
    finally:
        store.close()
    return {key: round(v, 1) if isinstance(v, float) else v for key, v in stats.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sqlite", required=True, help="the SQLite index (with --follow: its path, a rebuild beside it)")
    ap.add_argument("--store", required=True, help="postgresql:// URL")
    ap.add_argument("--collection", required=True)
    ap.add_argument("--follow", action="store_true", help="read a rebuild still being written, waiting for more")
    ap.add_argument("--stop-file", help="once this file exists, load up to the SQLite file id written in it")
    ap.add_argument("--max-id", type=int, help="load the SQLite files with id <= this")
    ap.add_argument("--writers", type=int, default=1, help="processes writing blocks of files in parallel")
    ap.add_argument("--model", default="bundled", help="embedding model (default: the bundled one)")
    ap.add_argument("--json", help="also write the summary here")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)  # internal: this process is writer N
    ap.add_argument("--generation", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        print(json.dumps(writer(args, args.worker)), flush=True)
        return 0

    import subprocess

    from vaultrag.embedder import load_embedder
    from vaultrag.store.postgres.backend import PgBackend

    dim = load_embedder(args.model).dim
    backend = PgBackend(args.store, args.collection)
    out: dict = {"sqlite": args.sqlite, "collection": args.collection, "group": GROUP, "writers": args.writers}
    t0 = time.perf_counter()
    with backend.lock(60.0), backend.rebuild() as rb:
        store = rb.store
        store.reset_vectors(dim, "int8")
        base = [sys.executable, __file__, "--generation", str(rb.shadow)] + [
            a for a in sys.argv[1:] if a not in ("--json", args.json or "")]
        procs = [subprocess.Popen(base + ["--worker", str(k)], stdout=subprocess.PIPE, text=True)
                 for k in range(args.writers)]
        results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
        if any(p.returncode for p in procs):
            raise SystemExit(f"a writer failed: {[p.returncode for p in procs]}")
        out["writers_detail"] = results
        out.update(files=sum(r["files"] for r in results), chunks=sum(r["chunks"] for r in results),
                   load_s=round(time.perf_counter() - t0, 1))
        path = resolve(args.sqlite, args.follow)[0]
        sq = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        copy_meta(sq, store)
        sq.close()
        log("loaded", json.dumps(out))
        t = time.perf_counter()
        store.recount_lexemes()
        out["vocabulary_s"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        store.optimize(compact=True)  # GIN pending list merged, HNSW built, ANALYZE
        out["gin_hnsw_analyze_s"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        rb.publish()
        out["publish_s"] = round(time.perf_counter() - t, 1)
        out["counts"] = store.counts()
    out["total_s"] = round(time.perf_counter() - t0, 1)
    log("done", json.dumps(out))
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
