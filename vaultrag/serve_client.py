"""Hook processes forward to a running `vaultrag serve` through its Unix socket.

Standard library only, and nothing of vaultrag's is imported before forwarding: a hook process
that finds the server spends its time on interpreter start, one socket round trip and the
server's in-process answer. No socket file -> the caller runs the hook in process, as before.
Same fail-open rules as the hook: never raises, never blocks past FORWARD_TIMEOUT_S.
"""
from __future__ import annotations

import http.client
import io
import json
import os
import socket
import sys

FORWARD_TIMEOUT_S = 1.2  # under the hook's own 1.5 s deadline; the server answers in ~10 ms
MAX_STDIN_BYTES = 32 * 1024 * 1024  # as vaultrag.hooks.MAX_STDIN_BYTES
# The environment that picks the index; the server refuses (409) a hook meant for another one.
IDENTITY_ENV = ("VAULTRAG_CONFIG", "VAULTRAG_VAULT", "VAULTRAG_DB")
IDENTITY_HEADER = "X-Vaultrag-Identity"
SOCKET_NAME = "serve.sock"


def default_socket() -> str:
    """`$VAULTRAG_SOCKET`, else `<XDG_STATE_HOME>/vaultrag/serve.sock` (`~/.local/state/...`)."""
    env = os.environ.get("VAULTRAG_SOCKET")
    if env:
        return env
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "vaultrag", SOCKET_NAME)


def identity() -> str:
    return json.dumps({k: os.environ[k] for k in IDENTITY_ENV if os.environ.get(k)}, sort_keys=True)


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def request(path: str, method: str, route: str, body: bytes | None = None, timeout: float = FORWARD_TIMEOUT_S,
            headers: dict | None = None) -> tuple[int, bytes]:
    conn = UnixHTTPConnection(path, timeout)
    try:
        conn.request(method, route, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def forwarded(event: str, sock: str | None = None) -> bool:
    """Answer the hook `event` through the server: True if done (output printed, or deliberately
    none); False to run it in process, with stdin restored for the caller to read."""
    sock = sock or default_socket()
    if not os.path.exists(sock):
        return False
    raw = b""
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
        if len(raw) > MAX_STDIN_BYTES:
            return False  # the in-process path logs and skips it
        status, out = request(sock, "POST", f"/hooks/{event}", raw, headers={IDENTITY_HEADER: identity()})
    except (ConnectionError, FileNotFoundError, http.client.HTTPException):
        return _restore(raw)  # a stale socket file (no server behind it), or not a vaultrag server
    except OSError as exc:  # timeout or a broken server: fail open, like the hook itself
        _log(f"{event}: server at {sock}: {type(exc).__name__}: {exc}")
        return True
    if status != 200:
        return _restore(raw)  # 409: the server serves another index; others: let the hook decide
    text = out.decode("utf-8", errors="replace").strip()
    if text and text != "{}":
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    return True


def _restore(raw: bytes) -> bool:
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    return False


def _log(message: str) -> None:
    try:
        from .hooks import log_line

        log_line(message)
    except Exception:
        pass
