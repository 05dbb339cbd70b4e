"""The evidence gate's two errors in one language at a time (issue 20).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/lang_gate.py [--sets xquad-th,xquad-ar,...] [--max-queries N]

benchmarks/eval.py measures abstention on answerable questions, and off-topic answers only for
en/de/ru/zh question sets against the obsidian-help vaults. This measures both errors in the
language of every BEIR set: the corpus is cut in two halves (file order, which keeps an XQuAD
article's paragraphs together), the first half is the vault; questions about the first half are
answerable (share abstained), questions about the second half only are off-topic in the same
language and script (share answered: the gate's false positives). Reads ../shared/eval at run
time; prints a Markdown table.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import eval as ev  # noqa: E402  (benchmarks/eval.py: its BEIR loading and library glue)

SETS = "xquad-en,xquad-de,xquad-es,xquad-ru,xquad-zh,xquad-ar,xquad-th"


def run(name: str, max_q: int, work: Path) -> dict:
    corpus, queries, qrels = ev.load_beir(name)
    half = len(corpus) // 2
    inside = {str(d["_id"]) for d in corpus[:half]}
    vault = work / name / "vault"
    ev.build_beir_vault(corpus[:half], vault)
    cfg = ev.make_cfg(vault, work / name / "index.db")
    ev.index(cfg)
    store = ev.open_store(cfg)
    channels, graph = ev.ABLATIONS[ev.DEFAULT]
    answerable = ev.subsample([q for q, rel in qrels.items() if q in queries and set(rel) <= inside], max_q)
    offtopic = ev.subsample([q for q, rel in qrels.items() if q in queries and not set(rel) & inside], max_q)
    abstained = sum(ev.ranked_paths(queries[q], cfg, store, channels, graph)[1] == "no_evidence" for q in answerable)
    answered = sum(ev.ranked_paths(queries[q], cfg, store, channels, graph)[1] != "no_evidence" for q in offtopic)
    return {"set": name, "answerable": len(answerable), "abstained": round(abstained / max(1, len(answerable)), 4),
            "offtopic": len(offtopic), "answered": round(answered / max(1, len(offtopic)), 4)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=SETS)
    ap.add_argument("--max-queries", type=int, default=0, help="cap per side (fixed-seed subsample); 0 = all")
    a = ap.parse_args()
    if not ev.EVAL.is_dir():
        print(f"eval data not found at {ev.EVAL}; nothing to do", file=sys.stderr)
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="vaultrag-langgate-") as tmp:
        for name in [s for s in a.sets.split(",") if s]:
            if (ev.EVAL / "beir" / name).is_dir():
                rows.append(run(name, a.max_queries, Path(tmp)))
                print(rows[-1], file=sys.stderr, flush=True)
    print("| set (vault: first half) | answerable | abstained | off-topic, same language | answered |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['answerable']} | {r['abstained']:.3f} | {r['offtopic']} | {r['answered']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
