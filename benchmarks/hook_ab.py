"""Hook latency of this tree against another checkout, side by side (fresh process per call).

Run from the repo root:
    git archive 703a2bf | tar -x -C /tmp/vr_base      # the revision to compare with
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/hook_ab.py --other /tmp/vr_base [--files 3000] [--rounds 15]

Builds one index of a tldr-pages subset with this tree, then alternates the two trees' hook
scripts round-robin (UserPromptSubmit with a question, PostToolUse with a 4,000-line Bash output),
each in a fresh `python -S` process with PYTHONPATH = that tree + this venv's site-packages (the
editable install's finder would otherwise always pick this tree). Every UserPromptSubmit call has
a new session id, so both do the whole search. Prints medians and their ratio as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from crash_safety import CORPUS, PY, QUERIES, build_vault  # noqa: E402

SITE = sysconfig.get_paths()["purelib"] if Path(PY).resolve() == Path(sys.executable).resolve() else \
    subprocess.run([PY, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True,
                   text=True, check=True).stdout.strip()


def call(tree: Path, script: str, payload: dict, env: dict) -> float:
    e = dict(env, PYTHONPATH=f"{tree}{os.pathsep}{SITE}")
    t = time.perf_counter()
    p = subprocess.run([PY, "-S", str(tree / "hooks" / script)], input=json.dumps(payload).encode(), env=e,
                       capture_output=True)
    dt = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        raise SystemExit(f"{tree} {script} exited {p.returncode}: {p.stderr[-500:]!r}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--other", required=True, type=Path, help="another checkout (with hooks/ and vaultrag/)")
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    trees = {"this": REPO, "other": args.other.resolve()}
    with tempfile.TemporaryDirectory(prefix="hook-ab-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, HF_HUB_OFFLINE="1", VAULTRAG_MODEL="bundled", HOME=str(tmp),
                   XDG_STATE_HOME=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "config"),
                   XDG_CACHE_HOME=str(tmp / "cache"), XDG_DATA_HOME=str(tmp / "data"))
        vault, db = tmp / "vault", tmp / "index.sqlite"
        vault.mkdir()
        build_vault(vault, args.files, 14)
        subprocess.run([PY, "-m", "vaultrag", "reindex", "--vault", str(vault), "--db", str(db)], env=env, check=True,
                       capture_output=True, cwd=str(REPO))
        env.update(VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(db))
        big = "\n".join(f"line {i}: compiling module_{i}.c" for i in range(4000)) + "\nerror: link failed\n"
        post = {"session_id": "ab", "transcript_path": "", "cwd": "/", "hook_event_name": "PostToolUse",
                "tool_name": "Bash", "tool_input": {"command": "make"},
                "tool_response": {"stdout": big, "stderr": "", "interrupted": False, "isImage": False}}
        times = {(t, h): [] for t in trees for h in ("UserPromptSubmit", "PostToolUse")}
        rng = random.Random(14)
        for r in range(args.rounds):
            order = list(trees)
            rng.shuffle(order)
            q = QUERIES[r % len(QUERIES)]
            for name in order:
                prompt = {"session_id": f"ab-{name}-{r}", "transcript_path": "", "cwd": "/",
                          "hook_event_name": "UserPromptSubmit", "prompt": q}
                times[(name, "UserPromptSubmit")].append(call(trees[name], "user_prompt_submit.py", prompt, env))
                times[(name, "PostToolUse")].append(call(trees[name], "post_tool_use.py", post, env))
        out = {"files": args.files, "rounds": args.rounds, "other": str(trees["other"])}
        for hook in ("UserPromptSubmit", "PostToolUse"):
            a = statistics.median(times[("this", hook)])
            b = statistics.median(times[("other", hook)])
            out[hook] = {"this_median_ms": round(a, 1), "other_median_ms": round(b, 1), "ratio_this_over_other":
                         round(a / b, 3), "this_min_ms": round(min(times[("this", hook)]), 1),
                         "other_min_ms": round(min(times[("other", hook)]), 1)}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
