"""The SQLite store's exact BM25 top-k (store/sqlite/bm25.py) against FTS5's bm25() over every match:
the same answers and hook decisions, and what the lexical pass costs each way. With --vectors: the
int8 KNN from vectors held in memory (store/sqlite/resident.py, exact) against vec0's two-stage KNN,
counting the answers that change, and what the vector pass (Store.knn + similarities) costs each way.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/answer_diff.py --vault /tmp/tldr --db /tmp/tldr.sqlite [--queries 300] [--vectors]

Queries: the English example descriptions of the tldr pages in --vault ("- Download a file over
HTTP:"), a fixed-seed sample; --prompts FILE takes one a line instead. Each query runs through
inject.hook_answer (search() plus the hook's injection decision) on one open read-only Store, once
with the pruned top-k and once with it switched off (Bm25.top answering None: bm25() in SQL), in
alternating order. Counted: identical answers (Answer.to_dict() without timings: hits, scores,
evidence) and identical decisions. Timed (CPU of this thread, so a loaded machine counts less):
Store.lexical each way, and the whole hook_answer. Prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def tldr_queries(vault: Path, n: int, seed: int) -> list[str]:
    """Example descriptions of the English tldr pages: '- List files sorted by size:' -> the words."""
    out = []
    for folder in sorted((vault / "pages").glob("*")):
        for page in sorted(folder.glob("*.md")):
            for line in page.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("- ") and line.rstrip().endswith(":"):
                    q = re.sub(r"[`{}\[\]]", "", line[2:].rstrip()[:-1]).strip()
                    if q:
                        out.append(q)
    out = sorted(set(out))
    random.Random(seed).shuffle(out)
    return out[:n]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--db", type=Path, required=True, help="an index of --vault built by this tree")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--prompts", type=Path, help="a UTF-8 file of queries, one a line")
    ap.add_argument("--vectors", action="store_true", help="resident int8 vectors against vec0 (not bm25)")
    args = ap.parse_args()
    if args.vectors:
        return vectors_diff(args)
    from vaultrag.retrieve.inject import hook_answer
    from vaultrag.store.sqlite import bm25

    queries, cfg, store = _setup(args)
    pruned_top = bm25.Bm25.top
    lexical = type(store).lexical
    spent = {"pruned": [], "sql": []}
    state = {"mode": "pruned", "fallback": 0}

    def timed_lexical(self, terms, limit, weights):
        t = time.thread_time()
        out = lexical(self, terms, limit, weights)
        spent[state["mode"]].append((time.thread_time() - t) * 1000)
        return out

    def top(self, terms, limit, weights):
        if state["mode"] == "sql":
            return None
        out = pruned_top(self, terms, limit, weights)
        state["fallback"] += out is None
        return out

    type(store).lexical = timed_lexical
    bm25.Bm25.top = top
    hook_answer("warm up the page cache and the encoder", cfg, store=store)
    spent = {"pruned": [], "sql": []}
    state["fallback"] = 0
    same_answer = same_decision = 0
    whole = {"pruned": [], "sql": []}
    differ = []
    for i, q in enumerate(queries):
        got = {}
        for mode in (("pruned", "sql") if i % 2 == 0 else ("sql", "pruned")):
            state["mode"] = mode
            t = time.thread_time()
            ans = hook_answer(q, cfg, store=store)
            whole[mode].append((time.thread_time() - t) * 1000)
            got[mode] = ans
        a, b = (json.dumps(got[m].to_dict(), sort_keys=True, default=str) for m in ("pruned", "sql"))
        same_answer += a == b
        decisions = [got[m].evidence.get("inject") for m in ("pruned", "sql")]
        same_decision += decisions[0] == decisions[1]
        if a != b and len(differ) < 10:
            differ.append(q)
    n = len(queries)
    lex = {m: sum(v) for m, v in spent.items()}
    out = {"db": str(args.db), "queries": n, "identical_answers": same_answer, "identical_decisions": same_decision,
           "differing": differ, "pruned_fell_back_to_sql": state["fallback"],
           "lexical_cpu_ms_total": {m: round(v, 1) for m, v in lex.items()},
           "lexical_cpu_ms_p50": {m: round(statistics.median(v), 3) for m, v in spent.items() if v},
           "lexical_cpu_ms_p95": {m: round(sorted(v)[int(0.95 * (len(v) - 1))], 3) for m, v in spent.items() if v},
           "lexical_cpu_ms_max": {m: round(max(v), 3) for m, v in spent.items() if v},
           "lexical_ratio_pruned_over_sql": round(lex["pruned"] / lex["sql"], 3) if lex["sql"] else None,
           "hook_answer_cpu_ms_p50": {m: round(statistics.median(v), 2) for m, v in whole.items() if v},
           "hook_answer_cpu_ms_total": {m: round(sum(v), 1) for m, v in whole.items()}}
    print(json.dumps(out, indent=1))
    store.close()
    return 0 if same_answer == n else 1


def _setup(args):
    """(queries, config, read-only store) for the index and vault the arguments name."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["VAULTRAG_DB"] = str(args.db)
    os.environ["VAULTRAG_VAULT"] = str(args.vault)
    os.environ.setdefault("VAULTRAG_MODEL", "bundled")
    from vaultrag.config import load_config
    from vaultrag.store import open_store

    queries = ([ln.strip() for ln in args.prompts.read_text(encoding="utf-8").splitlines() if ln.strip()]
               if args.prompts else tldr_queries(args.vault, args.queries, args.seed))
    cfg = load_config()
    return queries, cfg, open_store(cfg, readonly=True)


def vectors_diff(args) -> int:
    from vaultrag.retrieve.inject import hook_answer

    queries, cfg, store = _setup(args)
    cls = type(store)
    spent = {"resident": [], "vec0": []}
    state = {"mode": "resident"}
    originals = {name: getattr(cls, name) for name in ("knn", "similarities")}

    def timed(name):
        def call(self, *a):
            t = time.thread_time()
            out = originals[name](self, *a)
            spent[state["mode"]].append((time.thread_time() - t) * 1000)
            return out
        return call

    for name in originals:
        setattr(cls, name, timed(name))
    store.resident_vectors = True
    hook_answer("warm up the page cache and the encoder", cfg, store=store)  # loads the matrix
    spent = {"resident": [], "vec0": []}
    whole = {"resident": [], "vec0": []}
    same_answer = same_decision = same_hits = 0
    differ = []
    for i, q in enumerate(queries):
        got = {}
        for mode in (("resident", "vec0") if i % 2 == 0 else ("vec0", "resident")):
            state["mode"] = mode
            store.resident_vectors = mode == "resident"
            t = time.thread_time()
            got[mode] = hook_answer(q, cfg, store=store)
            whole[mode].append((time.thread_time() - t) * 1000)
        a, b = (json.dumps(got[m].to_dict(), sort_keys=True, default=str) for m in ("resident", "vec0"))
        same_answer += a == b
        same_hits += [h.chunk_id for h in got["resident"].hits] == [h.chunk_id for h in got["vec0"].hits]
        same_decision += got["resident"].evidence.get("inject") == got["vec0"].evidence.get("inject")
        if a != b and len(differ) < 10:
            differ.append(q)
    vec = {m: sum(v) for m, v in spent.items()}
    out = {"db": str(args.db), "queries": len(queries), "identical_answers": same_answer,
           "identical_hit_lists": same_hits, "identical_decisions": same_decision, "differing": differ,
           "vector_cpu_ms_total": {m: round(v, 1) for m, v in vec.items()},
           "vector_ratio_resident_over_vec0": round(vec["resident"] / vec["vec0"], 3) if vec["vec0"] else None,
           "hook_answer_cpu_ms_p50": {m: round(statistics.median(v), 2) for m, v in whole.items() if v},
           "hook_answer_cpu_ms_total": {m: round(sum(v), 1) for m, v in whole.items()}}
    print(json.dumps(out, indent=1))
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
