"""Issue 19: the evidence gate's vector floor for a model, by the gate's two error rates.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/vec_floor.py --model bundled --model /path/to/folder \
        [--set xquad-de ...] [--max-queries 400] [--floors 0.5,0.6,...]

The gate (retrieve/pipeline.py) answers when the lexical evidence holds (a pinned or named note, term
coverage and specificity pass pipeline.lexical_evidence) or when the nearest chunk's cosine reaches GATE_MIN_VEC_SIMILARITY for
a query the model can read (known-word share >= GATE_MIN_VEC_KNOWN). A model whose cosines sit elsewhere
(a centred one) needs its own floor and share (declared in its config.json: channels.model_vec_gate). This runs every query once with the gate off, keeps the evidence,
and prints, per set, floor and known-word share: the share of answerable queries the gate abstains on (the dev sets, all
queries unless --max-queries) and the share of unanswerable ones it answers (eval.py's GATE_PAIRS: question
sets against obsidian-help vaults, --max-queries each). Answerable sets are indexed as model_probe.py does
(its cache); the obsidian-help vaults for the unanswerable pairs under the same cache. One JSON line per
(model, set, floor, share); --dump FILE also writes the raw evidence.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
ANSWERABLE = ("xquad-en", "xquad-de", "xquad-es", "xquad-ru", "xquad-zh", "scifact", "obs-en", "obs-de", "obs-ru",
              "obs-zh")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"vaultrag_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def evidence_of(query: str, cfg, store) -> dict:
    from vaultrag.retrieve.pipeline import lexical_evidence, search

    ans = search(query, cfg, store=store, k=10, max_tokens=0, gate=False)
    ev = ans.evidence or {}
    lexical = bool(ev.get("pinned") or ev.get("named") or ("term_coverage" in ev and lexical_evidence(ev)))
    return {"hits": ans.status == "ok", "lexical": lexical, "vec": ev.get("vec_similarity") or 0.0,
            "known": ev.get("vec_known") or 0.0}


def passed(e: dict, floor: float, known: float) -> bool:
    return e["hits"] and (e["lexical"] or (e["known"] >= known and e["vec"] >= floor))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, dest="models")
    ap.add_argument("--set", action="append", dest="sets", help=f"answerable sets (default: {' '.join(ANSWERABLE)})")
    ap.add_argument("--max-queries", type=int, default=400, help="per unanswerable pair (and per answerable set "
                    "with --cap-answerable); 0 = all")
    ap.add_argument("--cap-answerable", action="store_true")
    ap.add_argument("--floors", default="0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,0.97,1.01")
    ap.add_argument("--known", default="0.5,0.75,0.9", help="known-word shares the gate's vector route wants")
    ap.add_argument("--no-unanswerable", action="store_true")
    ap.add_argument("--dump", type=Path)
    args = ap.parse_args(argv)
    ev, probe = _load("eval"), _load("model_probe")
    from vaultrag.config import load_config
    from vaultrag.store import Store

    floors = [float(f) for f in args.floors.split(",")]
    knowns = [float(k) for k in args.known.split(",")]
    dump = args.dump.open("w", encoding="utf-8") if args.dump else None
    for model in args.models:
        groups: list[tuple[str, str, list[str], object]] = []  # (kind, name, queries, cfg)
        for name in args.sets or ANSWERABLE:
            cfg, items, _mapping, _facts = probe.prepare(ev, name, model)
            if args.cap_answerable and args.max_queries:
                items = ev.subsample(items, args.max_queries)
            groups.append(("answerable", name, [t for t, _r, _y in items], cfg))
        if not args.no_unanswerable:
            for qset, lang in ev.GATE_PAIRS:
                work = probe.WORK / model.replace(":", "_").replace("/", "_") / f"gate-{lang}"
                work.mkdir(parents=True, exist_ok=True)
                cfg = load_config(vault=str(ev.EVAL / "vaults" / "obsidian-help" / lang), db=str(work / "index.db"),
                                  model=model)
                if not (work / "done").exists():
                    ev.index(cfg)
                    (work / "done").write_text("1")
                qs = [q["text"] for q in ev.read_jsonl(ev.EVAL / "beir" / qset / "queries.jsonl")]
                groups.append(("unanswerable", f"{qset} -> obs-{lang}", ev.subsample(qs, args.max_queries), cfg))
        for kind, name, queries, cfg in groups:
            store = Store(cfg.db_path(), readonly=True)
            evs = [evidence_of(q, cfg, store) for q in queries]
            store.close()
            if dump:
                for q, e in zip(queries, evs):
                    dump.write(json.dumps({"model": model, "kind": kind, "set": name, "q": q, **e}) + "\n")
            for f in floors:
                for kn in knowns:
                    share = sum(passed(e, f, kn) for e in evs) / max(1, len(evs))
                    key = "abstained" if kind == "answerable" else "answered"
                    print(json.dumps({"model": model, "kind": kind, "set": name, "floor": f, "known": kn,
                                      "queries": len(evs), key: round(1 - share if kind == "answerable" else share, 4)}),
                          flush=True)
            print(f"# {model} {name} done", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
