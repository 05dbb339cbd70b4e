"""In-process query latency (p50/p95, with the channel split) against an existing index.

    python benchmarks/query_latency.py --vault DIR --db FILE
"""
import argparse
import statistics
import sys

from vaultrag.config import load_config
from vaultrag.retrieve import search
from vaultrag.store import Store

QUERIES = ["how do I extract a tar archive", "list open network ports", "git undo last commit", "tar", "ffmpeg",
           "compress a folder with zip", "show disk usage of a directory", "convert video to gif with ffmpeg",
           "find files modified today", "kill a process by name", "docker remove stopped containers",
           "create a python virtual environment", "列出目录内容", "압축 파일 풀기", "показать свободное место на диске"]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--vault", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    cfg = load_config(vault=a.vault, db=a.db)
    totals, parts = [], {}
    with Store(cfg.db_path(), readonly=True) as store:
        search(QUERIES[0], cfg, store=store)  # warm: encoder load, page cache
        for _ in range(a.repeat):
            for q in QUERIES:
                t = search(q, cfg, store=store).timings_ms
                totals.append(t["total"])
                for k, v in t.items():
                    parts.setdefault(k, []).append(v)
    totals.sort()
    print(f"{len(totals)} queries: p50 {statistics.median(totals):.1f} ms, p95 {totals[int(0.95 * len(totals)) - 1]:.1f} ms")
    print("median by stage (ms): " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in parts.items() if k != "total"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
