"""The forwarder (serve_client) keeps the hook's deadline, the config's `hooks.timeout_ms` included
(trial finding: it waited a fixed 1.2 s, so a hung server held a 500 ms hook past its deadline and
a 4000 ms hook gave up on a working server), without importing the config loader."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from vaultrag import serve_client
from vaultrag.config import load_config

REPO = Path(__file__).resolve().parents[1]
PROMPT = {"hook_event_name": "UserPromptSubmit", "prompt": "how long are daily snapshots kept?", "session_id": "ft"}
# This tree's hook entry point (the hook scripts run with -I, which an editable install elsewhere answers).
HOOK_CODE = "import sys; from vaultrag.hooks import main; sys.exit(main('UserPromptSubmit'))"

CONFIGS = [
    "hooks:\n  timeout_ms: 700\n",
    "vault: /tmp/v\nhooks:\n  max_tokens: 400   # budget\n  timeout_ms: 2500     # internal deadline\n",
    "hooks: {max_tokens: 400, timeout_ms: 900}\n",
    "# a comment\nhooks:\n    timeout_ms: 1200\n    scopes: [vault]\nretrieval:\n  k: 5\n",
    "retrieval:\n  k: 5\nhooks:\n  scopes:\n    - vault\n  timeout_ms: 3100\n",
    "hooks:\n  max_tokens: 400\n",
    "retrieval:\n  k: 5\n",
    "hooks:\n  'timeout_ms': 650\n",
    "---\nhooks:\n\n  timeout_ms: 4000\n...\n",
    "hooks:\n  timeout_ms: 800\nhooks_extra_comment: 1\n",
    "",
]


@pytest.mark.parametrize("text", CONFIGS)
def test_the_line_scan_reads_what_yaml_reads(text):
    data = yaml.safe_load(text) or {}
    want = (data.get("hooks") or {}).get("timeout_ms") if isinstance(data.get("hooks"), dict) else None
    got = serve_client.scan_hooks_timeout(text)
    assert (int(got) if got is not None else None) == want


@pytest.mark.parametrize("text", [t for t in CONFIGS if "hooks_extra" not in t])
def test_the_forward_deadline_is_the_config_loaders(text, tmp_path, monkeypatch):
    monkeypatch.delenv("VAULTRAG_HOOK_TIMEOUT_MS", raising=False)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(text)
    monkeypatch.setenv("VAULTRAG_CONFIG", str(cfg))
    assert serve_client.hook_timeout_ms() == load_config().hook_timeout_ms
    monkeypatch.setenv("VAULTRAG_HOOK_TIMEOUT_MS", "600")  # the environment wins, as in hooks.main
    assert serve_client.hook_timeout_ms() == 600


def test_default_config_location_and_the_default_deadline(monkeypatch):
    monkeypatch.delenv("VAULTRAG_HOOK_TIMEOUT_MS", raising=False)
    from vaultrag.config import config_file_path

    assert Path(serve_client.config_file()) == config_file_path()[0]  # the isolated XDG_CONFIG_HOME
    assert not Path(serve_client.config_file()).exists()
    assert serve_client.hook_timeout_ms() == load_config().hook_timeout_ms == serve_client.DEFAULT_HOOK_TIMEOUT_MS
    assert serve_client.forward_timeout() == pytest.approx(serve_client.FORWARD_TIMEOUT_S)
    config_path = Path(serve_client.config_file())
    config_path.parent.mkdir(parents=True)
    config_path.write_text("hooks:\n  timeout_ms: 400\n")
    assert serve_client.hook_timeout_ms() == 400 and serve_client.forward_timeout() == pytest.approx(0.2)


def test_an_unreadable_shape_asks_the_config_loader(tmp_path, monkeypatch):
    monkeypatch.delenv("VAULTRAG_HOOK_TIMEOUT_MS", raising=False)
    cfg = tmp_path / "config.yaml"
    cfg.write_text("base: &b\n  timeout_ms: 2200\nhooks: *b\n")
    monkeypatch.setenv("VAULTRAG_CONFIG", str(cfg))
    try:
        want = load_config().hook_timeout_ms
    except Exception:
        want = serve_client.DEFAULT_HOOK_TIMEOUT_MS  # the loader refuses it: the default, and the hook reports it
    assert serve_client.hook_timeout_ms() == want


class SlowServer:
    """A Unix socket server that reads one request and answers after `delay` seconds (None: never),
    recording how long each client waited before it closed the connection."""

    def __init__(self, path: Path, delay: float | None, body: bytes = b"{}"):
        self.path, self.delay, self.body, self.waits = path, delay, body, []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.sock.settimeout(0.1)  # accept() wakes to see `stopped`: closing the socket would not wake it
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            t0 = time.monotonic()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next(x.split(b":")[1] for x in head.split(b"\r\n")
                                  if x.lower().startswith(b"content-length")))
                while len(body) < length:
                    body += conn.recv(65536)
                if self.delay is None:
                    conn.settimeout(20)
                    try:
                        conn.recv(1)  # returns b"" when the client gives up and closes
                    except OSError:
                        pass
                else:
                    time.sleep(self.delay)
                    try:
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                     + str(len(self.body)).encode() + b"\r\nConnection: close\r\n\r\n" + self.body)
                    except OSError:
                        pass
            self.waits.append(time.monotonic() - t0)

    def close(self):
        """Stop and join the thread (a thread left running makes later tests' reindex start its
        workers by spawn instead of fork: index_pool.start_method)."""
        self.stopped.set()
        self.thread.join(30)
        self.sock.close()
        assert not self.thread.is_alive()


def hook_env(tmp_path: Path, sock: Path, timeout_ms: int) -> dict:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"hooks:\n  max_tokens: 500\n  timeout_ms: {timeout_ms}   # the hook's deadline\n")
    env = {k: v for k, v in os.environ.items() if k != "VAULTRAG_HOOK_TIMEOUT_MS"}
    return {**env, "VAULTRAG_SOCKET": str(sock), "VAULTRAG_CONFIG": str(cfg), "PYTHONPATH": str(REPO)}


def run_hook(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HOOK_CODE], input=json.dumps(PROMPT), capture_output=True,
                          text=True, env=env, timeout=60)


def hook_log() -> str:
    from vaultrag.config import xdg_dir

    path = xdg_dir("state") / "hooks.log"
    return path.read_text() if path.exists() else ""


def test_a_hung_server_is_given_up_within_a_short_configured_deadline(tmp_path):
    server = SlowServer(tmp_path / "hung.sock", None)
    try:
        r = run_hook(hook_env(tmp_path, server.path, 400))
        for _ in range(100):  # the server thread notes the wait when it sees the close
            if server.waits:
                break
            time.sleep(0.05)
    finally:
        server.close()
    assert r.returncode == 0 and r.stdout == ""  # fail open: no context
    assert server.waits and 0.1 < server.waits[0] < 0.35, server.waits  # 0.2 s of a 400 ms deadline, not 1.2 s
    assert "gave up on the server" in hook_log() and "hook deadline 400 ms" in hook_log()


def test_a_long_configured_deadline_waits_for_a_slow_server(tmp_path):
    """hooks.timeout_ms 4000 (the README's advice for a PostgreSQL store): a server that answers
    in 1.6 s is waited for, and its context printed."""
    answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "from the server"}}
    server = SlowServer(tmp_path / "slow.sock", 1.6, json.dumps(answer).encode())
    try:
        r = run_hook(hook_env(tmp_path, server.path, 4000))
    finally:
        server.close()
    assert r.returncode == 0 and json.loads(r.stdout) == answer, (r.stdout, hook_log())


def test_forwarding_still_imports_no_config_loader(tmp_path):
    server = SlowServer(tmp_path / "fast.sock", 0.0, b"{}")
    code = ("import json, sys, io; sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(%r).encode()));"
            "from vaultrag.hooks import main; main('UserPromptSubmit');"
            "sys.stderr.write(json.dumps(sorted(sys.modules)))" % (PROMPT,))
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           env=hook_env(tmp_path, server.path, 900))
    finally:
        server.close()
    mods = json.loads(r.stderr)
    assert server.waits and not [m for m in mods if m == "yaml" or m.startswith("vaultrag.config")
                                 or m.startswith("vaultrag.store") or m.startswith("vaultrag.retrieve")]
