"""Helpers for the serve tests: a free port, a real `vaultrag serve` process."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(vault, db, sock, port, *extra):
    cmd = [sys.executable, "-m", "vaultrag", "serve", "--vault", str(vault), "--store", str(db),
           "--port", str(port), "--socket", str(sock), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read())
        if os.path.exists(sock):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return proc
            except OSError:
                pass
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("server did not start")
