"""Indexing side by side: this tree against another checkout, on vaults of several sizes (issue 18).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/growth.py --vault tldr=DIR [--vault 1k=DIR ...] \\
        [--tree new=. --tree main=/work/main] [--runs 1] [--noop-runs 5] [--hook-runs 10] [--queries 20] \\
        [--out FILE.json] [--only full,noop,paths,hook,query] [--workers 1,2]

Build the vaults first (evaluation data, read at run time, never committed):
    .venv/bin/python benchmarks/scale_corpus.py /tmp/g/1k --files 1000      # and --files 10000, --copies 10
    .venv/bin/python benchmarks/growth.py --make-scifact /tmp/g/scifact   # one note per SciFact doc

For every vault, every run, the trees take turns (order alternating per run) and each measure is a
fresh child process of that tree's own interpreter (TREE/.venv/bin/python, PYTHONPATH=TREE):
- full:  `reindex(full=True)` with vectors, wall time of the call, CPU seconds of the writer and of
         its worker processes and CPU ms per file (both together); chunks; database bytes (after
         a WAL checkpoint) per chunk; MB per table from `dbstat`. `--workers 1,2` measures each
         tree with 1 and 2 worker processes, interleaved (tags `new/w1`, `new/w2`);
- noop:  `reindex()` with nothing changed, median of --noop-runs calls in one process (the first one,
         which warms the page cache, is not counted);
- paths: one note edited, then the watch path: `reindex_paths([note])` where the tree has it,
         else `reindex()` (what `serve --watch` ran per batch before), median over edits;
- hook:  the UserPromptSubmit command hook as a fresh process (`python -I hooks/user_prompt_submit.py`),
         p50 of --hook-runs, with the floor `python -I -c pass` interleaved;
- query: `search()` with one open Store in a warm process, p50 over --queries queries x 3.
Prints one JSON document (and writes it to --out); progress goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EVAL = REPO.parent / "shared" / "eval"

FULL = r"""
import inspect, json, resource, sys, time
from vaultrag.config import load_config
from vaultrag.indexer import reindex
cfg = load_config(vault=sys.argv[1], db=sys.argv[2], model="bundled")
kw = {} if sys.argv[3] == "default" else {"workers": int(sys.argv[3])}
if kw and "workers" not in inspect.signature(reindex).parameters:
    raise SystemExit("this tree's reindex() takes no `workers`: measure it with --workers default")
t, c = time.perf_counter(), time.process_time()
rep = reindex(cfg, full=True, **kw)
wall, cpu = time.perf_counter() - t, time.process_time() - c
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "cpu_workers_s": kids.ru_utime + kids.ru_stime,
                  "cpu_ms_per_file": (cpu + kids.ru_utime + kids.ru_stime) * 1000 / max(1, rep.added),
                  "files": rep.added, "chunks": rep.chunks_total, "pool": getattr(rep, "workers", 0),
                  "embedded": rep.embedding.embedded, "vectors": rep.embedding.available}))
"""

NOOP = r"""
import json, statistics, sys, time
from vaultrag.config import load_config
from vaultrag.indexer import reindex
cfg = load_config(vault=sys.argv[1], db=sys.argv[2], model="bundled")
walls, cpus = [], []
for i in range(int(sys.argv[3]) + 1):
    t, c = time.perf_counter(), time.process_time()
    rep = reindex(cfg)
    walls.append(time.perf_counter() - t)
    cpus.append(time.process_time() - c)  # issue 18: CPU time, steadier than wall on a loaded machine
    assert i == 0 or rep.added + rep.updated + rep.deleted == 0, rep  # the first one catches up
print(json.dumps({"median_s": statistics.median(walls[1:]), "runs_s": walls[1:], "scanned": rep.scanned,
                  "cpu_median_s": statistics.median(cpus[1:])}))
"""

PATHS = r"""
import json, random, statistics, sys, time
from pathlib import Path
from vaultrag.config import load_config
from vaultrag import indexer
cfg = load_config(vault=sys.argv[1], db=sys.argv[2], model="bundled")
from vaultrag.api import Service
Service.keep_embedder_loaded()  # as `serve --watch` does
files = sorted(Path(sys.argv[1]).rglob("*.md"))
rng = random.Random(int(sys.argv[4]))
walls, how = [], "reindex_paths" if hasattr(indexer, "reindex_paths") else "reindex"
indexer.reindex(cfg)
for i in range(int(sys.argv[3])):
    p = rng.choice(files)
    with p.open("a", encoding="utf-8") as fh:
        fh.write(f"\n- growth edit {i} pelican{rng.randrange(10**6)}\n")
    t = time.perf_counter()
    rep = indexer.reindex_paths(cfg, [p]) if how == "reindex_paths" else indexer.reindex(cfg)
    walls.append(time.perf_counter() - t)
    assert rep.updated == 1, rep
print(json.dumps({"median_s": statistics.median(walls), "max_s": max(walls), "runs_s": walls, "how": how}))
"""

QUERY = r"""
import json, statistics, sys, time
from vaultrag.config import load_config
from vaultrag.retrieve import search
from vaultrag.store import Store
cfg = load_config(vault=sys.argv[1], db=sys.argv[2], model="bundled")
qs = json.loads(sys.argv[3])
store = Store(cfg.db_path(), readonly=True)
search(qs[0], cfg, store=store)
ms = []
for _ in range(3):
    for q in qs:
        t = time.perf_counter()
        search(q, cfg, store=store)
        ms.append((time.perf_counter() - t) * 1000)
print(json.dumps({"p50_ms": statistics.median(ms), "n": len(ms)}))
"""


def table_sizes(db: Path, py: str, tree: Path) -> dict:
    code = ("import json, sys\nfrom vaultrag.store.sqlite.connection import sqlite_module\n"
            "con = sqlite_module().connect(sys.argv[1])\n"
            "rows = con.execute('SELECT name, sum(pgsize) FROM dbstat GROUP BY name').fetchall()\n"
            "print(json.dumps(rows))")
    cp = subprocess.run([py, "-c", code, str(db)], capture_output=True, text=True, env=_env(tree))
    if cp.returncode != 0:
        return {}
    out: dict = {}
    for name, size in json.loads(cp.stdout):
        group = next((g for g in ("chunks_vec", "chunks_fts", "chunks", "files", "keys", "links") if name.startswith(g)),
                     "sqlite_autoindex_files" if name.startswith("sqlite_autoindex_files") else "other")
        out[group] = out.get(group, 0) + size
    return {k: round(v / 1e6, 2) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def db_bytes(db: Path) -> int:
    con = sqlite3.connect(str(db))
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return sum(p.stat().st_size for p in (db, Path(str(db) + "-wal")) if p.exists())


def _env(tree: Path, state: Path | None = None) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(tree))
    if state is not None:
        env["XDG_STATE_HOME"] = str(state)
    return env


def child(py: str, tree: Path, code: str, *args: str, state: Path | None = None) -> dict:
    cp = subprocess.run([py, "-c", code, *args], capture_output=True, text=True, cwd=str(tree), env=_env(tree, state))
    if cp.returncode != 0:
        raise SystemExit(f"{tree}: child failed:\n{cp.stderr[-2500:]}")
    return json.loads(cp.stdout.strip().splitlines()[-1])


def hook_and_floor(py: str, tree: Path, vault: Path, db: Path, state: Path, queries: list[str], n: int) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(db), XDG_STATE_HOME=str(state))
    env.pop("PYTHONPATH", None)
    hook, floor = [], []
    for i in range(n):
        payload = json.dumps({"session_id": f"growth-{os.getpid()}-{i}-{time.time_ns()}",
                              "hook_event_name": "UserPromptSubmit", "prompt": queries[i % len(queries)]})
        t = time.perf_counter()
        subprocess.run([py, "-I", str(tree / "hooks" / "user_prompt_submit.py")], input=payload, env=env,
                       capture_output=True, text=True, cwd=str(state))
        hook.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        subprocess.run([py, "-I", "-c", "pass"], env=env, capture_output=True)
        floor.append((time.perf_counter() - t) * 1000)
    return {"hook_p50_ms": statistics.median(hook), "floor_p50_ms": statistics.median(floor), "n": n}


def make_queries(vault: Path, n: int, seed: int = 7) -> list[str]:
    files = sorted(vault.rglob("*.md"))
    rng = random.Random(seed)
    out = []
    for p in rng.sample(files, min(n, len(files))):
        text = p.read_text(encoding="utf-8", errors="replace")
        title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), p.stem)
        out.append(title)
    return out


def make_scifact(dest: Path) -> int:
    """One note per SciFact document, as benchmarks/eval.py writes them."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from eval import build_beir_vault, load_beir

    corpus, _, _ = load_beir("scifact")
    return len(build_beir_vault(corpus, dest))


def variants(trees: list[tuple[str, Path]], workers: list[str]) -> list[tuple[str, Path, str]]:
    """(tag, tree, workers) to measure: every tree with every --workers value ("default": the
    tree's own default, what a tree without the option can run)."""
    out = []
    for tag, tree in trees:
        has_pool = (tree / "vaultrag" / "index_pool.py").exists()  # a tree before issue 18's pool: default only
        for w in workers if has_pool else ["default"]:
            out.append((tag if w == "default" or len(workers) == 1 else f"{tag}/w{w}", tree, w))
    return list(dict.fromkeys(out))


def measure(name: str, vault: Path, trees: list[tuple[str, Path, str]], args, work: Path) -> dict:
    res: dict = {tag: {} for tag, _, _ in trees}
    queries = make_queries(vault, args.queries)
    only = set(args.only.split(","))
    for run in range(args.runs):
        order = trees if run % 2 == 0 else trees[::-1]
        for tag, tree, workers in order:
            py = str(tree / ".venv" / "bin" / "python")
            db = work / f"{name}-{tag.replace('/', '-')}.sqlite"
            state = work / f"state-{tag.replace('/', '-')}"
            state.mkdir(exist_ok=True)
            r = res[tag]
            if "full" in only or not db.exists():
                full = child(py, tree, FULL, str(vault), str(db), workers)
                size = db_bytes(db)
                full.update(db_mb=round(size / 1e6, 2), kb_per_chunk=round(size / 1024 / max(1, full["chunks"]), 3))
                r.setdefault("full", []).append(full)
                print(f"{name} {tag} full: {full}", file=sys.stderr, flush=True)
            if run == 0 and "full" in only:
                r["tables_mb"] = table_sizes(db, py, tree)
            if "noop" in only:
                r.setdefault("noop", []).append(child(py, tree, NOOP, str(vault), str(db), str(args.noop_runs)))
                print(f"{name} {tag} noop: {r['noop'][-1]}", file=sys.stderr, flush=True)
            if "paths" in only:
                r.setdefault("paths", []).append(child(py, tree, PATHS, str(vault), str(db), str(args.edits), str(run)))
                print(f"{name} {tag} paths: {r['paths'][-1]}", file=sys.stderr, flush=True)
            if "hook" in only:
                r.setdefault("hook", []).append(hook_and_floor(py, tree, vault, db, state, queries, args.hook_runs))
                print(f"{name} {tag} hook: {r['hook'][-1]}", file=sys.stderr, flush=True)
            if "query" in only:
                r.setdefault("query", []).append(child(py, tree, QUERY, str(vault), str(db), json.dumps(queries)))
                print(f"{name} {tag} query: {r['query'][-1]}", file=sys.stderr, flush=True)
    summary = {}
    for tag, r in res.items():
        med = lambda key, field: statistics.median(x[field] for x in r[key]) if r.get(key) else None  # noqa: E731
        summary[tag] = {"full_s": med("full", "wall_s"), "full_cpu_s": med("full", "cpu_s"),
                        "full_cpu_workers_s": med("full", "cpu_workers_s"),
                        "full_cpu_ms_per_file": med("full", "cpu_ms_per_file"), "chunks": med("full", "chunks"), "db_mb": med("full", "db_mb"),
                        "kb_per_chunk": med("full", "kb_per_chunk"), "noop_s": med("noop", "median_s"),
                        "noop_cpu_s": med("noop", "cpu_median_s") if all("cpu_median_s" in x for x in r.get("noop", [])) else None,
                        "paths_s": med("paths", "median_s"), "hook_p50_ms": med("hook", "hook_p50_ms"),
                        "floor_p50_ms": med("hook", "floor_p50_ms"), "query_p50_ms": med("query", "p50_ms"),
                        "tables_mb": r.get("tables_mb")}
    tags = [t for t, _, _ in trees]
    for a in tags[:-1]:  # every variant against the last one (e.g. new/w2 / main)
        b = tags[-1]
        key = "ratio" if len(tags) == 2 else f"ratio {a} / {b}"
        summary[key] = {k: round(summary[a][k] / summary[b][k], 3) for k in summary[a]
                        if isinstance(summary[a][k], (int, float)) and summary[b].get(k)}
    return {"vault": str(vault), "raw": res, "summary": summary}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", action="append", default=[], help="NAME=DIR (repeatable)")
    ap.add_argument("--tree", action="append", default=[], help="TAG=CHECKOUT (repeatable; default new=this one)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--noop-runs", type=int, default=5)
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--hook-runs", type=int, default=10)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--only", default="full,noop,paths,hook,query")
    ap.add_argument("--workers", default="default",
                    help="comma-separated reindex worker counts to measure side by side, e.g. 1,2 "
                         "('default': each tree's own default; a tree without the option takes only that)")
    ap.add_argument("--work", help="folder for the databases (default: a temporary one)")
    ap.add_argument("--out")
    ap.add_argument("--make-scifact", metavar="DEST", help="write the SciFact vault to DEST and exit")
    args = ap.parse_args()
    if args.make_scifact:
        print(json.dumps({"notes": make_scifact(Path(args.make_scifact))}))
        return 0
    trees = [(t.split("=", 1)[0], Path(t.split("=", 1)[1]).resolve()) for t in args.tree] or [("new", REPO)]
    with tempfile.TemporaryDirectory(prefix="growth-") as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        out = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "load": os.getloadavg(), "cpus": os.cpu_count(),
               "trees": {t: str(p) for t, p in trees}, "vaults": {}}
        for spec in args.vault:
            name, path = spec.split("=", 1)
            out["vaults"][name] = measure(name, Path(path).resolve(), variants(trees, args.workers.split(",")),
                                          args, work)
            if args.out:
                Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
