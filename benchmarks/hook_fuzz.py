"""Fuzz the three hook scripts with malformed input (issue 14): types, sizes, special files, bad JSON.

Run from the repo root:  HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/hook_fuzz.py [--random 150] [--seed 14]

Each case runs the real script (`python -I hooks/<event>.py`, as hooks.json registers it) against
a small real index of the example vault, with its default 1.5 s deadline. A case passes when the
process exits 0 within the timeout settings.snippet/hooks.json gives that event (5 s, 5 s, 10 s),
under 256 MB peak RSS (wait4 rusage of that process alone, started by a tiny spawner so the
fuzzer's own memory is not counted), and prints nothing or one JSON line.
Cases: every input field set to each wrong type; `transcript_path` as /dev/zero, /dev/urandom, a
FIFO without a writer, a folder, a 2 GB sparse file, a symlink loop, /dev/stdin, /proc/self/fd/1;
stdin as invalid, truncated, deeply nested, huge (up to and past the 32 MB cap), binary or empty
JSON; huge prompts and tool outputs; then `--random` payloads mixing all of these. Prints a JSON
summary (worst time and memory per script, every failure) on stdout.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = str(REPO / ".venv" / "bin" / "python")
if not Path(PY).exists():
    PY = sys.executable
sys.path.insert(0, str(REPO))

SCRIPTS = {"UserPromptSubmit": ("user_prompt_submit.py", 5), "PreToolUse": ("pre_tool_use.py", 5),
           "PostToolUse": ("post_tool_use.py", 10)}
MAX_RSS_MB = 256
FIELDS = ("session_id", "transcript_path", "cwd", "hook_event_name", "prompt", "source", "tool_name", "tool_input",
          "tool_response", "permission_mode", "tool_use_id")
WRONG = [1, 0, -1, 2, True, False, None, 1.5, 1e308, [], [1, "a"], {}, {"a": {"b": []}}, "", "\x00", "x" * 100_000,
         "\ud800", "../../../../etc/passwd", "/dev/zero"]


def base(event: str) -> dict:
    d = {"session_id": "fuzz", "transcript_path": "", "cwd": "/tmp", "hook_event_name": event,
         "permission_mode": "default"}
    if event == "UserPromptSubmit":
        d["prompt"] = "how long are daily snapshots kept"
    elif event == "PreToolUse":
        d.update(tool_name="Grep", tool_input={"pattern": "snapshot retention"}, tool_use_id="t1")
    else:
        big = "\n".join(f"line {i}: compiling module_{i}.c" for i in range(4000))
        d.update(tool_name="Bash", tool_input={"command": "make"}, tool_use_id="t1",
                 tool_response={"stdout": big, "stderr": "", "interrupted": False, "isImage": False})
    return d


def special_files(tmp: Path) -> dict[str, str]:
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    (tmp / "folder").mkdir()
    sparse = tmp / "sparse.jsonl"
    with open(sparse, "wb") as fh:
        fh.seek(2 * 1024 ** 3)
        fh.write(b"\n")
    loop = tmp / "loop"
    os.symlink(loop, loop)
    return {"dev_zero": "/dev/zero", "dev_urandom": "/dev/urandom", "fifo": str(fifo), "folder": str(tmp / "folder"),
            "sparse_2GB": str(sparse), "symlink_loop": str(loop), "dev_stdin": "/dev/stdin",
            "proc_fd1": "/proc/self/fd/1", "missing": str(tmp / "missing.jsonl")}


def cases(tmp: Path, n_random: int, rng: random.Random):
    """Yields (event, case name, stdin bytes); big inputs are built one at a time."""
    specials = special_files(tmp)
    for event in SCRIPTS:
        for field in FIELDS:
            for value in WRONG:
                d = base(event)
                d[field] = value
                yield event, f"{field}={str(value)[:20]!r}", json.dumps(d).encode()
        for name, path in specials.items():
            d = base(event)
            d["transcript_path"] = path
            yield event, f"transcript_path={name}", json.dumps(d).encode()
        d = base(event)
        for name, make in {
            "empty": lambda: b"", "not_json": lambda: b"hello", "truncated": lambda: json.dumps(d).encode()[:-5],
            "binary": lambda: os.urandom(4096), "array": lambda: b"[1,2,3]", "null": lambda: b"null",
            "bom": lambda: b"\xef\xbb\xbf" + json.dumps(d).encode(), "utf16": lambda: json.dumps(d).encode("utf-16"),
            "nested_200k": lambda: b"[" * 200_000 + b"]" * 200_000,
            "nested_obj_100k": lambda: b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
            "array_4M": lambda: b"[" + b"0," * 4_000_000 + b"0]",
            "array_at_cap_16M": lambda: b"[" + b"0," * 15_900_000 + b"0]",
            "dicts_at_cap_10M": lambda: b"[" + b"{}," * 10_600_000 + b"{}]",
            "floats_at_cap": lambda: b"[" + b"1e5," * 7_900_000 + b"1]",
            "strings_31MB": lambda: json.dumps(dict(d, junk=["y" * 1000] * 31_000)).encode(),
            "over_cap_40MB": lambda: b'{"a":"' + b"z" * 40_000_000 + b'"}',
            "huge_prompt_10MB": lambda: json.dumps(dict(d, prompt="snapshot retention " * 550_000)).encode(),
            "huge_stdout_25MB": lambda: json.dumps(dict(d, tool_response={
                "stdout": "error: x\n" * 2_800_000, "stderr": "", "interrupted": False, "isImage": False})).encode(),
            "wide_tool_input": lambda: json.dumps(dict(d, tool_input={f"k{i}": "v" * 10 for i in range(200_000)})).encode(),
        }.items():
            yield event, f"stdin={name}", make()
    pool = WRONG + list(specials.values())
    for i in range(n_random):
        event = rng.choice(list(SCRIPTS))
        d = base(event)
        for field in rng.sample(FIELDS, rng.randint(1, 4)):
            d[field] = rng.choice(pool)
        yield event, f"random-{i}", json.dumps(d).encode()


# A child's ru_maxrss starts at its parent's RSS at fork (Linux keeps the high-water mark across
# exec), so a hook started by a big process would report that process's memory. A tiny spawner
# process starts the hook instead and reports the hook's own wait4 rusage.
SPAWNER = r"""
import json, os, subprocess, sys, threading, time
args, timeout = json.loads(sys.argv[1]), float(sys.argv[3])
with open(sys.argv[2], "rb") as stdin:
    t = time.perf_counter()
    p = subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
timer = threading.Timer(timeout, p.kill)
timer.start()
out = p.stdout.read()
_, status, usage = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
timer.cancel()
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "s": wall, "rss_mb": usage.ru_maxrss / 1024,
                  "killed": wall >= timeout, "out": out.decode("utf-8", "replace")}))
"""


def run_case(script: str, stdin: bytes, env: dict, timeout: float, tmp: Path) -> dict:
    """Run one case through the spawner: stdin comes from a file (it holds the case's bytes)."""
    case = tmp / "stdin.bin"
    case.write_bytes(stdin)
    args = [PY, "-I", str(REPO / "hooks" / script)]
    p = subprocess.run([PY, "-I", "-S", "-c", SPAWNER, json.dumps(args), str(case), str(timeout * 3)], env=env,
                       capture_output=True, timeout=timeout * 3 + 60)
    r = json.loads(p.stdout)
    text = r.pop("out")
    one_line = not text.strip() or (text.count("\n") <= 1 and _is_json(text))
    return {**r, "one_line": one_line, "output": bool(text.strip())}


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--random", type=int, default=150, help="random mixed payloads after the fixed cases")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--only", default="", help="run only cases whose name contains this (debugging)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="hook-fuzz-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, HF_HUB_OFFLINE="1", VAULTRAG_MODEL="bundled", HOME=str(tmp),
                   XDG_STATE_HOME=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "config"),
                   XDG_CACHE_HOME=str(tmp / "cache"), XDG_DATA_HOME=str(tmp / "data"))
        vault = tmp / "vault"
        shutil.copytree(REPO / "vaultrag" / "example_vault", vault)
        db = tmp / "index.sqlite"
        subprocess.run([PY, "-m", "vaultrag", "reindex", "--vault", str(vault), "--db", str(db)], env=env,
                       check=True, capture_output=True, cwd=str(REPO))
        env.update(VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(db))
        (tmp / "specials").mkdir()
        summary = {s: {"runs": 0, "worst_s": 0.0, "worst_s_case": "", "peak_rss_mb": 0.0, "peak_rss_case": "",
                       "median_s": 0.0, "with_output": 0} for s in SCRIPTS}
        failures, times = [], {s: [] for s in SCRIPTS}
        t0 = time.perf_counter()
        n_cases = 0
        for event, name, raw in cases(tmp / "specials", args.random, rng):
            if args.only not in name:
                continue
            n_cases += 1
            script, timeout = SCRIPTS[event]
            r = run_case(script, raw, env, timeout, tmp)
            s = summary[event]
            s["runs"] += 1
            s["with_output"] += r["output"]
            times[event].append(r["s"])
            if r["s"] > s["worst_s"]:
                s["worst_s"], s["worst_s_case"] = round(r["s"], 3), name
            if r["rss_mb"] > s["peak_rss_mb"]:
                s["peak_rss_mb"], s["peak_rss_case"] = round(r["rss_mb"], 1), name
            bad = [why for why, ok in (("exit code", r["rc"] == 0), ("timeout", r["s"] < timeout and not r["killed"]),
                                       ("memory", r["rss_mb"] < MAX_RSS_MB), ("output", r["one_line"])) if not ok]
            if bad:
                failures.append({"event": event, "case": name, "why": bad, **{k: r[k] for k in ("rc", "s", "rss_mb")}})
            if n_cases % 50 == 0:
                print(f"{n_cases} cases, {len(failures)} failures", file=sys.stderr, flush=True)
        for event, ts in times.items():
            ts.sort()
            summary[event]["median_s"] = round(ts[len(ts) // 2], 3) if ts else 0.0
        result = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cases": n_cases,
                  "seconds": round(time.perf_counter() - t0, 1), "limits": {"rss_mb": MAX_RSS_MB,
                  "timeout_s": {e: t for e, (_, t) in SCRIPTS.items()}}, "per_script": summary,
                  "failures": failures}
    print(json.dumps(result, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
