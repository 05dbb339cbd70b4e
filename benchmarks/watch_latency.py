"""`serve --watch` save -> searchable latency, in process, this tree (issue 16's watch target).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/watch_latency.py --vault DIR --db FILE [--edits 50]

Starts the real `Watcher` (watchfiles events) over an indexed vault with a `Service`, then --edits
times appends a fresh word to a random note and polls `Service.search` every 20 ms until the note
is among the top 3 hits for that word. Prints p50 / p95 / max and misses (not found within 30 s) as JSON.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

POLL_S = 0.02
GIVE_UP_S = 30.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--edits", type=int, default=50)
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args()
    from vaultrag.api import Service
    from vaultrag.config import load_config
    from vaultrag.serve.watch import Watcher

    svc = Service(load_config(vault=args.vault, db=args.db, model="bundled"))
    done = []
    w = Watcher(svc, poll=False, on_reindex=done.append)
    w.start()
    while not done:  # the catch-up reindex
        time.sleep(0.1)
    time.sleep(1.0)
    files = sorted(Path(args.vault).rglob("*.md"))
    rng = random.Random(args.seed)
    lat, missed = [], 0
    for i in range(args.edits):
        p = rng.choice(files)
        rel = p.relative_to(args.vault).as_posix()
        word = f"zq{rng.randrange(16**8):08x}wx"
        t = time.perf_counter()
        with p.open("a", encoding="utf-8") as fh:
            fh.write(f"\n- watch edit {word}\n")
        while time.perf_counter() - t < GIVE_UP_S:
            ans = svc.search(word, k=3)
            if any(h.path == rel for h in ans.hits):
                lat.append((time.perf_counter() - t) * 1000)
                break
            time.sleep(POLL_S)
        else:
            missed += 1
    w.stop()
    lat.sort()
    print(json.dumps({"edits": args.edits, "p50_ms": statistics.median(lat) if lat else None,
                      "p95_ms": lat[int(0.95 * (len(lat) - 1))] if lat else None, "max_ms": max(lat) if lat else None,
                      "missed": missed, "reindexes": len(done)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
