"""Issue 17: past sessions as a source. Two measurements over *generated* transcripts
(tests/session_corpus.py; never real ones):

  eval  questions about past sessions (what was decided, which command fixed X) over a
        multi-session corpus beside a vault: recall@5 and MRR of the message that states the
        answer (its uuid), with --scope sessions and with the default scope (all).
  cost  reindex cost of N transcripts of ~S bytes (default 1,000 x 200 KB = ~200 MB): the first
        run, a run with nothing changed, and a run after appending one turn to 10 transcripts;
        plus the index size.

Run from the repo root:
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/sessions_eval.py eval [--sessions 24] [--vault DIR]
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/sessions_eval.py cost [--n 1000] [--bytes 200000] [--no-embed]
Prints JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from session_corpus import bulk_corpus, eval_corpus, new_transcript  # noqa: E402


def _isolate(tmp: Path) -> None:
    os.environ["HOME"] = str(tmp / "home")
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        os.environ[var] = str(tmp / "home" / var.lower())
    os.environ.setdefault("VAULTRAG_MODEL", "bundled")


def run_eval(args) -> dict:
    from vaultrag.config import load_config
    from vaultrag.indexer import reindex
    from vaultrag.retrieve import search

    tmp = Path(tempfile.mkdtemp(prefix="vr17-eval-"))
    _isolate(tmp)
    questions = eval_corpus(tmp / "projects", n_sessions=args.sessions)
    vault = args.vault or str(REPO / "vaultrag" / "example_vault")
    cfg = load_config(vault=vault, db=str(tmp / "idx.sqlite"), sessions=str(tmp / "projects"))
    rep = reindex(cfg)
    out: dict = {"questions": len(questions), "sessions": rep.sessions["sessions_indexed"],
                 "chunks": rep.chunks_total, "vault": vault, "by_scope": {}}
    for scope in ("sessions", "all"):
        ranks, answered, ms = [], 0, []
        per_kind: dict[str, list[int]] = {}
        for q in questions:
            t = time.perf_counter()
            ans = search(q["question"], cfg, k=5, scope=scope, gate=False)
            ms.append((time.perf_counter() - t) * 1000)
            gated = search(q["question"], cfg, k=5, scope=scope)
            answered += gated.status == "ok"
            uuids = [(h.origin or {}).get("message_uuid") for h in ans.hits]
            rank = uuids.index(q["message_uuid"]) + 1 if q["message_uuid"] in uuids else 0
            ranks.append(rank)
            per_kind.setdefault(q["kind"], []).append(rank)
        out["by_scope"][scope] = {
            "recall@5": round(sum(r > 0 for r in ranks) / len(ranks), 3),
            "mrr@5": round(sum(1 / r for r in ranks if r) / len(ranks), 3),
            "answered_by_gate": round(answered / len(ranks), 3),
            "recall@5_by_kind": {k: round(sum(r > 0 for r in v) / len(v), 3) for k, v in per_kind.items()},
            "median_ms": round(statistics.median(ms), 2)}
    return out


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def run_cost(args) -> dict:
    from vaultrag.config import load_config
    from vaultrag.indexer import reindex

    tmp = Path(tempfile.mkdtemp(prefix="vr17-cost-"))
    _isolate(tmp)
    t = time.perf_counter()
    total = bulk_corpus(tmp / "projects", n=args.n, target_bytes=args.bytes)
    gen_s = time.perf_counter() - t
    vault = tmp / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# Note\n\nA vault of one note: the cost measured is the sessions'.\n")
    db = tmp / "idx.sqlite"
    cfg = load_config(vault=str(vault), db=str(db), sessions=str(tmp / "projects"))
    embed = not args.no_embed
    runs = {}
    t = time.perf_counter()
    r = reindex(cfg, embed=embed)
    runs["first"] = {"seconds": round(time.perf_counter() - t, 2), "chunks": r.chunks_total,
                     "messages": r.sessions["messages"], "left_out": r.sessions["left_out"]}
    runs["index_bytes"] = _du(db)
    t = time.perf_counter()
    r = reindex(cfg, embed=embed)
    runs["unchanged"] = {"seconds": round(time.perf_counter() - t, 3), "unchanged": r.sessions["unchanged"]}
    files = sorted((tmp / "projects").glob("*/*.jsonl"))[:10]
    for i, f in enumerate(files):
        tr = new_transcript(900_000 + i)
        tr.user(f"Appended turn {i}: remember the wobblefrost setting")
        with open(f, "a", encoding="utf-8") as fh:
            fh.write("\n".join(tr.lines) + "\n")
    t = time.perf_counter()
    r = reindex(cfg, embed=embed)
    runs["append_10"] = {"seconds": round(time.perf_counter() - t, 3), "segments_written": r.sessions["segments_written"]}
    return {"transcripts": args.n, "bytes": total, "generate_s": round(gen_s, 1), "embed": embed, **runs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("eval")
    e.add_argument("--sessions", type=int, default=24)
    e.add_argument("--vault", help="vault beside the sessions (default: the example vault)")
    c = sub.add_parser("cost")
    c.add_argument("--n", type=int, default=1000)
    c.add_argument("--bytes", type=int, default=200_000)
    c.add_argument("--no-embed", action="store_true")
    args = ap.parse_args()
    print(json.dumps(run_eval(args) if args.cmd == "eval" else run_cost(args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
