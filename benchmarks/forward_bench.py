"""Cost of a forwarded command hook (hooks -> `vaultrag serve` through its Unix socket), side by side.

    python benchmarks/forward_bench.py [--code DIR ...] [--runs 40]

A stand-in server answers `{}` at once on a Unix socket, so what is timed is the hook process:
interpreter start, vaultrag's forwarding imports, reading the hook deadline (the config file's
`hooks.timeout_ms` since fix12), one round trip. For each checkout (`--code`, default this tree),
round robin, with no config file and with one: wall ms (median, p90) of `python -c <hook main>`,
and the median `-X importtime` self-time sum of vaultrag's modules. A bare `python -I -c pass` is
the floor. Prints Markdown.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOOK = "import sys; from vaultrag.hooks import main; sys.exit(main('UserPromptSubmit'))"
PAYLOAD = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "how long are snapshots kept?",
                      "session_id": "bench"})


def serve(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(16)

    def loop():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")

    threading.Thread(target=loop, daemon=True).start()
    return sock


def import_ms(code: str, env: dict) -> float:
    """Self time (ms) of vaultrag's modules in one forwarded hook's `-X importtime`."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", HOOK], input=PAYLOAD, capture_output=True,
                       text=True, env={**env, "PYTHONPATH": code})
    total = 0
    for line in r.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip().startswith("vaultrag"):
            total += int(parts[0].split(":")[1])
    return total / 1000


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--code", action="append", default=[], help="checkout to import vaultrag from (repeat)")
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args(argv)
    codes = args.code or [str(REPO)]
    tmp = Path(tempfile.mkdtemp(prefix="forward-bench-"))
    sock_path = str(tmp / "serve.sock")
    server = serve(sock_path)
    config = tmp / "config.yaml"
    config.write_text("hooks:\n  max_tokens: 500\n  timeout_ms: 1500   # the hook's deadline\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith("VAULTRAG_")}
    base.update({"VAULTRAG_SOCKET": sock_path, "XDG_CONFIG_HOME": str(tmp / "noconfig"),
                 "XDG_STATE_HOME": str(tmp / "state"), "XDG_CACHE_HOME": str(tmp / "cache")})
    cases = [(code, name, {**base, "PYTHONPATH": code, **({"VAULTRAG_CONFIG": str(config)} if name else {})})
             for code in codes for name in ("", "config file")]
    times: dict = {(c, n): [] for c, n, _ in cases}
    times[("floor", "")] = []
    imports: dict = {(c, n): [] for c, n, _ in cases}
    for _ in range(args.runs):
        for code, name, env in cases:
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-c", HOOK], input=PAYLOAD, capture_output=True, text=True, env=env)
            times[(code, name)].append((time.perf_counter() - t0) * 1000)
            assert r.returncode == 0 and r.stdout == "", (r.stdout, r.stderr)
            imports[(code, name)].append(import_ms(code, env))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"])
        times[("floor", "")].append((time.perf_counter() - t0) * 1000)
    server.close()
    print(f"forwarded UserPromptSubmit hook, {args.runs} runs round robin, load {os.getloadavg()[0]:.1f}\n")
    print("| code | config file | wall ms median | p90 | vaultrag import self-time ms (median) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (code, name), ts in times.items():
        ts = sorted(ts)
        imp = f"{statistics.median(imports[(code, name)]):.2f}" if (code, name) in imports else ""
        print(f"| `{code}` | {name or 'none'} | {statistics.median(ts):.1f} | {ts[int(0.9 * (len(ts) - 1))]:.1f} "
              f"| {imp} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
