"""Issue 19, second round: the bundled models side by side on the dev sets (ranking, gate off).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/model_probe.py --model bundled --set xquad-de --set scifact
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/model_probe.py --model bundled:e5-small-static-256 --set obs-ru \
        --vec-rerank 0.3,0.6,1.0 [--max-queries 300]

Indexes each set once per model (cached under $TMPDIR/vaultrag-model-probe/<model>/<set>/) and ranks every
query (or a fixed-seed subsample) with: BM25 alone, names + BM25 (no vectors), vectors alone, and the
default fusion at each `--vec-rerank` weight (the config's `retrieval.vec_rerank`; the weight is scaled
by the query's known-word share as the pipeline does). Reports the share of (answerable) queries the
evidence gate abstains on, nDCG@10 for BEIR sets, MRR@10 per query
type for the obsidian-help vaults, plus index time and database size per chunk. Prints one JSON line per
(set, variant). Data: ../shared/eval at run time, nothing of it copied (see benchmarks/eval.py).
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
WORK = Path(tempfile.gettempdir()) / "vaultrag-model-probe"


def _eval_module():
    spec = importlib.util.spec_from_file_location("vaultrag_eval", ROOT / "benchmarks" / "eval.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def prepare(ev, name: str, model: str):
    """(config, [(query, qrels, type)], path -> doc id or None, index facts) of a set, indexed once."""
    from vaultrag.config import load_config

    work = WORK / model.replace(":", "_").replace("/", "_") / name
    work.mkdir(parents=True, exist_ok=True)
    db = work / "index.db"
    facts_file = work / "index.json"
    if name.startswith("obs-"):
        lang = name[4:]
        cfg = load_config(vault=str(ev.EVAL / "vaults" / "obsidian-help" / lang), db=str(db), model=model)
        rows = ev.read_jsonl(ev.EVAL / "vault-queries" / "obsidian-help" / f"{lang}.jsonl")
        items, mapping = [(q["text"], {q["note"]: 1}, q["type"]) for q in rows], None
    else:
        corpus, queries, qrels = ev.load_beir(name)
        vault, map_file = work / "vault", work / "path2id.json"
        if not map_file.exists():
            map_file.write_text(json.dumps(ev.build_beir_vault(corpus, vault)), encoding="utf-8")
        cfg = load_config(vault=str(vault), db=str(db), model=model)
        items = [(queries[q], qrels[q], "query") for q in qrels if q in queries]
        mapping = json.loads(map_file.read_text(encoding="utf-8"))
    if not facts_file.exists():
        facts = ev.index(cfg)
        facts["db_bytes"] = sum(p.stat().st_size for p in work.glob("index.db*"))
        facts_file.write_text(json.dumps(facts), encoding="utf-8")
    return cfg, items, mapping, json.loads(facts_file.read_text(encoding="utf-8"))


def measure(ev, cfg, items, mapping, channels, store) -> dict:
    sums, counts = defaultdict(float), defaultdict(int)
    for text, rels, typ in items:
        paths, status = ev.ranked_paths(text, cfg, store, channels, True)
        ranked = [mapping.get(p, p) for p in paths] if mapping is not None else paths
        key = "ndcg@10" if mapping is not None else f"{typ} mrr@10"
        sums[key] += ev.ndcg(ranked, rels) if mapping is not None else ev.mrr(ranked, rels)
        counts[key] += 1
        sums["abstained"] += status == "no_evidence"  # the evidence gate's refusals (answerable queries)
        counts["abstained"] += 1
    return {k: round(sums[k] / counts[k], 4) for k in sorted(sums)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled")
    ap.add_argument("--set", action="append", required=True, dest="sets")
    ap.add_argument("--vec-rerank", default="0.3", help="comma-separated weights of the default fusion")
    ap.add_argument("--max-queries", type=int, default=0, help="fixed-seed subsample per set (0 = all)")
    ap.add_argument("--skip-baselines", action="store_true", help="only the default fusion variants")
    ap.add_argument("--over", action="append", default=[], metavar="FIELD=VALUE",
                    help="config fields for an extra default-fusion variant (e.g. note_agg=0.3,vec_rerank=0.6)")
    args = ap.parse_args(argv)
    ev = _eval_module()
    from vaultrag.store import Store

    for name in args.sets:
        t0 = time.monotonic()
        cfg, items, mapping, facts = prepare(ev, name, args.model)
        if args.max_queries:
            items = ev.subsample(items, args.max_queries)
        store = Store(cfg.db_path(), readonly=True)
        variants = [] if args.skip_baselines else [
            ("bm25 only", ["bm25"], {}), ("names+bm25", ["meta", "bm25"], {}), ("vec only", ["vec"], {})]
        variants += [(f"default vec_rerank {w}", ["meta", "bm25", "vec"], {"vec_rerank": float(w)})
                     for w in args.vec_rerank.split(",")]
        for spec in args.over:
            over = {k: type(getattr(cfg, k))(v) for k, v in (kv.split("=", 1) for kv in spec.split(","))}
            variants.append((f"default {spec}", ["meta", "bm25", "vec"], over))
        for label, channels, over in variants:
            got = measure(ev, dataclasses.replace(cfg, **over), items, mapping, channels, store)
            print(json.dumps({"model": args.model, "set": name, "variant": label, "queries": len(items), **got,
                              "index": facts}), flush=True)
        store.close()
        print(f"# {name}: {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
