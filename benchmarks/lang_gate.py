"""The evidence gate's two errors in one language at a time (issue 20).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/lang_gate.py [--sets xquad-th,xquad-ar,...] [--max-queries N]

benchmarks/eval.py measures abstention on answerable questions, and off-topic answers only for
en/de/ru/zh question sets against the obsidian-help vaults. This measures both errors in the
language of every BEIR set: the corpus is cut in two halves (file order, which keeps an XQuAD
article's paragraphs together), the first half is the vault; questions about the first half are
answerable (share abstained), questions about the second half only are off-topic in the same
language and script (share answered: the gate's false positives). Reads ../shared/eval at run
time; prints a Markdown table.

`--scale 1.0,1.2,1.4` measures the gate's trade-off curve: the lexical route's coverage thresholds
(pipeline.GATE_MIN_TERM_COVERAGE, GATE_SURE_COVERAGE, GATE_RARE_COVERAGE) multiplied by each factor
(capped at 1), on one index per set. It answers "is a lower off-topic figure a better gate or only a
stricter one": compare gates at equal abstention, not at their own operating points.

`--vault-docs 2,5,20` measures the same two errors on tiny vaults (a new user's first notes): each
vault is a run of N consecutive documents (`--blocks` of them, spread over the corpus), its own
questions answerable, questions about documents at least `FAR` places away in file order (another
XQuAD article) off-topic. The gate was calibrated on vaults of 240 chunks and more.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import eval as ev  # noqa: E402  (benchmarks/eval.py: its BEIR loading and library glue)

SETS = "xquad-en,xquad-de,xquad-es,xquad-ru,xquad-zh,xquad-ar,xquad-th"


def run(name: str, max_q: int, work: Path, scales: list[float]) -> list[dict]:
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
    rows = []
    for scale in scales:
        with coverage_scaled(scale):
            abstained = sum(ev.ranked_paths(queries[q], cfg, store, channels, graph)[1] == "no_evidence"
                            for q in answerable)
            answered = sum(ev.ranked_paths(queries[q], cfg, store, channels, graph)[1] != "no_evidence"
                           for q in offtopic)
        rows.append({"set": name, "scale": scale, "answerable": len(answerable),
                     "abstained": round(abstained / max(1, len(answerable)), 4),
                     "offtopic": len(offtopic), "answered": round(answered / max(1, len(offtopic)), 4)})
    return rows


FAR = 10  # file-order distance past which a document belongs to another article (XQuAD: ~5 each)


def run_small(name: str, docs: int, blocks: int, max_q: int, work: Path) -> dict:
    """Both errors summed over `blocks` vaults of `docs` consecutive documents each."""
    corpus, queries, qrels = ev.load_beir(name)
    pos = {str(d["_id"]): i for i, d in enumerate(corpus)}
    channels, graph = ev.ABLATIONS[ev.DEFAULT]
    n_ans = n_abst = n_off = n_answ = 0
    step = max(docs, (len(corpus) - docs) // max(1, blocks - 1)) if blocks > 1 else docs
    for b in range(blocks):
        lo = b * step
        if lo + docs > len(corpus):
            break
        hi = lo + docs
        vault = work / f"{name}-{docs}-{b}" / "vault"
        ev.build_beir_vault(corpus[lo:hi], vault)
        cfg = ev.make_cfg(vault, work / f"{name}-{docs}-{b}" / "index.db")
        ev.index(cfg)
        store = ev.open_store(cfg)
        rel = {q: [pos[d] for d in r if d in pos] for q, r in qrels.items() if q in queries}
        answerable = [q for q, ps in rel.items() if ps and all(lo <= p < hi for p in ps)]
        offtopic = ev.subsample([q for q, ps in rel.items() if ps and all(p < lo - FAR or p >= hi + FAR for p in ps)],
                                max_q, seed=b)
        n_ans += len(answerable)
        n_abst += sum(ev.ranked_paths(queries[q], cfg, store, channels, graph)[1] == "no_evidence" for q in answerable)
        n_off += len(offtopic)
        n_answ += sum(ev.ranked_paths(queries[q], cfg, store, channels, graph)[1] != "no_evidence" for q in offtopic)
        store.close()
    return {"set": name, "docs": docs, "answerable": n_ans, "abstained": round(n_abst / max(1, n_ans), 4),
            "offtopic": n_off, "answered": round(n_answ / max(1, n_off), 4)}


COVERAGE = ("GATE_MIN_TERM_COVERAGE", "GATE_SURE_COVERAGE", "GATE_RARE_COVERAGE")


@contextlib.contextmanager
def coverage_scaled(scale: float):
    """The gate's coverage thresholds times `scale` (capped at 1) while inside; 1.0 changes nothing."""
    from vaultrag.retrieve import pipeline
    saved = {n: getattr(pipeline, n) for n in COVERAGE if hasattr(pipeline, n)}  # an older tree has fewer
    try:
        for n, v in saved.items():
            setattr(pipeline, n, min(1.0, v * scale))
        yield
    finally:
        for n, v in saved.items():
            setattr(pipeline, n, v)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=SETS)
    ap.add_argument("--max-queries", type=int, default=0, help="cap per side (fixed-seed subsample); 0 = all")
    ap.add_argument("--scale", default="1.0", help="comma-separated factors for the gate's coverage thresholds")
    ap.add_argument("--vault-docs", default="", help="comma-separated tiny-vault sizes (documents) instead")
    ap.add_argument("--blocks", type=int, default=10, help="with --vault-docs: vaults per size")
    a = ap.parse_args()
    if not ev.EVAL.is_dir():
        print(f"eval data not found at {ev.EVAL}; nothing to do", file=sys.stderr)
        return 0
    if a.vault_docs:
        return small_table(a)
    rows = []
    with tempfile.TemporaryDirectory(prefix="vaultrag-langgate-") as tmp:
        for name in [s for s in a.sets.split(",") if s]:
            if (ev.EVAL / "beir" / name).is_dir():
                rows += run(name, a.max_queries, Path(tmp), [float(x) for x in a.scale.split(",")])
                print(rows[-1], file=sys.stderr, flush=True)
    print("| set (vault: first half) | coverage x | answerable | abstained | off-topic, same language | answered |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['scale']:.2f} | {r['answerable']} | {r['abstained']:.3f} | {r['offtopic']} "
              f"| {r['answered']:.3f} |")
    return 0


def small_table(a) -> int:
    rows = []
    with tempfile.TemporaryDirectory(prefix="vaultrag-langgate-") as tmp:
        for name in [s for s in a.sets.split(",") if s]:
            if (ev.EVAL / "beir" / name).is_dir():
                for docs in [int(x) for x in a.vault_docs.split(",")]:
                    for scale in [float(x) for x in a.scale.split(",")]:
                        with coverage_scaled(scale):
                            rows.append(run_small(name, docs, a.blocks, a.max_queries or 40, Path(tmp)))
                        rows[-1]["scale"] = scale
                        print(rows[-1], file=sys.stderr, flush=True)
    print(f"| set | vault (documents) x {a.blocks} | coverage x | answerable | abstained | off-topic, same language "
          "| answered |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['docs']} | {r['scale']:.2f} | {r['answerable']} | {r['abstained']:.3f} "
              f"| {r['offtopic']} | {r['answered']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
