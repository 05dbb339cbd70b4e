"""`vaultrag serve` latency, side by side in one run, on an indexed vault (tldr-pages scale).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/serve_bench.py --vault DIR --db FILE [--runs 40]
        [--load-seconds 60] [--edits 50] [--baseline /work/main]

1. Round robin, `--runs` each, a new session id per call (so every call injects context):
   POST /hooks/UserPromptSubmit over loopback TCP (a new connection per call, as a `type: "http"`
   hook makes); the command hook forwarding through the Unix socket; the cold command hook (no
   server); a bare `python -I -c pass` (the floor of any command hook); and, with --baseline, the
   cold command hook of another checkout (what "today" is).
2. POST /search from 8 concurrent clients for --load-seconds while full reindexes run back to back:
   p50 / p99 and errors (any non-200 or exception).
3. --watch: --edits saves of a note with a fresh word; time from the write to the first search
   that finds it (polled every 20 ms).
Prints one JSON object; progress on stderr.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import pct  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PY = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv" / "bin" / "python").exists() else sys.executable
sys.path.insert(0, str(REPO))
from vaultrag.serve_client import request as unix_request  # noqa: E402

PROMPTS = ["how do I list files sorted by size", "compress a directory into a tar archive",
           "find which process is listening on a port", "undo the last git commit but keep changes",
           "convert a video to a gif", "show disk usage of a folder", "download a file over http and resume it",
           "search text recursively in files ignoring case", "create a symbolic link", "show the git log as a graph"]


def summary(xs) -> dict:
    return {"n": len(xs), "p50_ms": pct(xs, 50), "p95_ms": pct(xs, 95), "p99_ms": pct(xs, 99),
            "max_ms": round(max(xs), 2) if xs else None}


def post(port: int, path: str, body: dict, conn: http.client.HTTPConnection | None = None,
         timeout: float = 30) -> tuple[int, bytes]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        if own:
            conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(vault, db, sock, port, env) -> subprocess.Popen:
    proc = subprocess.Popen([PY, "-m", "vaultrag", "serve", "--vault", str(vault), "--store", str(db), "--port",
                             str(port), "--socket", str(sock), "--watch"], env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if os.path.exists(sock) and unix_request(str(sock), "GET", "/healthz", timeout=2)[0] == 200:
                return proc
        except OSError:
            pass
        if proc.poll() is not None:
            raise SystemExit("vaultrag serve exited")
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("vaultrag serve did not start")


def hook_latencies(port, sock, env, runs, baseline) -> dict:
    ways = {"http_hook": [], "command_forwarded": [], "command_cold": [], "python_startup_floor": []}
    if baseline:
        ways["command_cold_baseline"] = []
    outputs = {k: 0 for k in ways}
    scripts = {"command_forwarded": (PY, REPO, str(sock)), "command_cold": (PY, REPO, str(sock) + ".none")}
    if baseline:
        bpy = Path(baseline) / ".venv" / "bin" / "python"
        scripts["command_cold_baseline"] = (str(bpy if bpy.exists() else PY), Path(baseline), str(sock) + ".none")
    for i in range(runs):
        prompt = PROMPTS[i % len(PROMPTS)]
        for way in ways:
            payload = {"hook_event_name": "UserPromptSubmit", "session_id": f"{way}-{uuid.uuid4()}", "prompt": prompt}
            t = time.perf_counter()
            if way == "http_hook":
                status, out = post(port, "/hooks/UserPromptSubmit", payload)
                ok = status == 200 and out.strip() not in (b"", b"{}")
            elif way == "python_startup_floor":  # `python -I -c pass`: what no command hook can beat
                ok = subprocess.run([PY, "-I", "-c", "pass"], env=env).returncode == 0
            else:
                py, root, s = scripts[way]
                cp = subprocess.run([py, "-I", str(root / "hooks" / "user_prompt_submit.py")], input=json.dumps(payload),
                                    capture_output=True, text=True, env={**env, "VAULTRAG_SOCKET": s})
                ok = bool(cp.stdout.strip())
            ways[way].append((time.perf_counter() - t) * 1000)
            outputs[way] += ok
    return {way: {**summary(xs), "with_output": outputs[way]} for way, xs in ways.items()}


def load_test(port, seconds, clients=8) -> dict:
    lat, errors, stop = [], [], threading.Event()
    reindexes = {"n": 0, "statuses": []}
    lock = threading.Lock()

    def client(i):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        j = 0
        while not stop.is_set():
            t = time.perf_counter()
            try:
                status, _ = post(port, "/search", {"query": PROMPTS[(i + j) % len(PROMPTS)], "k": 5}, conn)
                if status != 200:
                    with lock:
                        errors.append(status)
            except Exception as exc:  # noqa: BLE001 - counted, then a fresh connection
                with lock:
                    errors.append(type(exc).__name__)
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            with lock:
                lat.append((time.perf_counter() - t) * 1000)
            j += 1
        conn.close()

    def reindexer():
        while not stop.is_set():
            status, _ = post(port, "/reindex", {"full": True}, timeout=900)
            reindexes["n"] += 1
            reindexes["statuses"].append(status)
            if status == 409:  # the watcher's reindex holds it: ask again shortly
                time.sleep(0.2)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)] + \
        [threading.Thread(target=reindexer, daemon=True)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads[:-1]:
        t.join()
    threads[-1].join(1)  # a rebuild still running is stopped by the server's SIGTERM handling
    return {"clients": clients, "seconds": seconds, **summary(lat), "errors": len(errors),
            "error_kinds": sorted(set(map(str, errors))), "requests_per_s": round(len(lat) / seconds, 1),
            "reindex_requests": {str(s): reindexes["statuses"].count(s) for s in sorted(set(reindexes["statuses"]))}}


def watch_test(port, vault: Path, edits) -> dict:
    folder = vault / "zz-serve-bench"
    folder.mkdir(exist_ok=True)
    lat, missed = [], 0
    try:
        for i in range(edits):
            word = "zq" + uuid.uuid4().hex[:10]
            t = time.perf_counter()
            (folder / f"note-{i % 5}.md").write_text(f"# Bench note {i}\n\nThe marker word is {word} today.\n")
            deadline = t + 30
            while time.perf_counter() < deadline:
                status, body = post(port, "/search", {"query": word, "k": 1})
                if status == 200 and json.loads(body)["status"] == "ok":
                    lat.append((time.perf_counter() - t) * 1000)
                    break
                time.sleep(0.02)
            else:
                missed += 1
            time.sleep(0.3)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {**summary(lat), "missed": missed}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--load-seconds", type=float, default=60)
    ap.add_argument("--edits", type=int, default=50)
    ap.add_argument("--baseline", help="another checkout whose cold command hook is 'today' (e.g. /work/main)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="serve-bench-"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VAULTRAG_VAULT": str(Path(args.vault).resolve()),
           "VAULTRAG_DB": str(Path(args.db).resolve()), "XDG_STATE_HOME": str(tmp / "state"),
           "XDG_CONFIG_HOME": str(tmp / "config"), "VAULTRAG_MODEL": "bundled"}
    env.pop("PYTHONPATH", None)
    port, sock = free_port(), tmp / "serve.sock"
    proc = start(args.vault, args.db, sock, port, env)
    out: dict = {"vault": args.vault, "cpus": os.cpu_count()}
    try:
        print("hooks...", file=sys.stderr, flush=True)
        out["hooks"] = hook_latencies(port, sock, env, args.runs, args.baseline)
        print(json.dumps(out["hooks"]), file=sys.stderr, flush=True)
        single = []
        for i in range(args.runs):
            t = time.perf_counter()
            post(port, "/search", {"query": PROMPTS[i % len(PROMPTS)], "k": 5})
            single.append((time.perf_counter() - t) * 1000)
        out["search_one_client"] = summary(single)
        if args.edits:
            print("watch...", file=sys.stderr, flush=True)
            out["watch"] = watch_test(port, Path(args.vault), args.edits)
            print(json.dumps(out["watch"]), file=sys.stderr, flush=True)
        if args.load_seconds:
            print("load...", file=sys.stderr, flush=True)
            out["search_8_clients_during_reindex"] = load_test(port, args.load_seconds)
    finally:
        proc.terminate()
        out["sigterm_exit_code"] = proc.wait(120)
        out["socket_removed"] = not sock.exists()
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
