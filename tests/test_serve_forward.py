"""The command hooks forward to a running server through its Unix socket, and fall back to the
in-process path when there is none (or it serves another index), within the fail-open rules."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")

from serve_fixtures import free_port, start_server  # noqa: E402

from vaultrag import api  # noqa: E402

HOOK = Path(__file__).resolve().parents[1] / "hooks" / "user_prompt_submit.py"
PROMPT = {"hook_event_name": "UserPromptSubmit", "prompt": "how long are daily snapshots kept?"}
# Imports a forwarded hook must never make: heavy ones, and vaultrag's own config/retrieval.
NOT_ON_FORWARD = ("numpy", "model2vec", "tiktoken", "yaml", "mcp", "starlette", "uvicorn", "vaultrag.config",
                  "vaultrag.retrieve", "vaultrag.store")


def run_hook(env, session: str, payload=PROMPT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", str(HOOK)], input=json.dumps({**payload, "session_id": session}),
                          capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def served(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault)
    api.reindex(cfg)
    sock = tmp_path / "h.sock"
    proc = start_server(vault, cfg.db_path(), sock, free_port())
    yield cfg, sock
    proc.terminate()
    proc.wait(30)


def test_hook_forwards_to_the_server(served):
    cfg, sock = served
    env = {**os.environ, "VAULTRAG_SOCKET": str(sock)}  # no VAULTRAG_VAULT/DB: in process it has no vault
    r = run_hook(env, "fw-1")
    assert r.returncode == 0 and r.stderr == ""
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert "Source: Projects/Backup plan.md" in out["additionalContext"]
    in_process = run_hook({**os.environ, "VAULTRAG_VAULT": str(cfg.vault), "VAULTRAG_DB": str(cfg.db_path())}, "fw-2")
    assert json.loads(in_process.stdout) == json.loads(r.stdout)  # what the in-process hook prints


def test_forwarding_imports_nothing_heavy(served):
    _, sock = served
    code = ("import json, sys, io; sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(%r).encode()));"
            "from vaultrag.hooks import main; main('UserPromptSubmit');"
            "sys.stderr.write(json.dumps(sorted(sys.modules)))" % ({**PROMPT, "session_id": "fw-3"},))
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "VAULTRAG_SOCKET": str(sock)})
    mods = json.loads(r.stderr)
    assert r.stdout.strip() and not [m for m in mods if m.split(".")[0] in NOT_ON_FORWARD or
                                      any(m == n or m.startswith(n + ".") for n in NOT_ON_FORWARD)]


def test_a_server_for_another_index_is_skipped(served, vault, tmp_path, cfg_for):
    from vaultrag.config import load_config

    cfg, sock = served
    other_vault = tmp_path / "other"
    other_vault.mkdir()
    (other_vault / "Zebra.md").write_text("# Zebra\n\nHow long are daily snapshots kept? Zebras keep them.\n")
    other = load_config(vault=str(other_vault), db=str(tmp_path / "other.sqlite"))
    api.reindex(other)
    env = {**os.environ, "VAULTRAG_SOCKET": str(sock), "VAULTRAG_VAULT": str(other_vault),
           "VAULTRAG_DB": str(other.db_path())}
    out = json.loads(run_hook(env, "fw-4").stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Zebra.md" in out and "Backup plan" not in out  # answered in process, from its own index


def test_stale_socket_falls_back_and_a_hung_server_fails_open(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault)
    api.reindex(cfg)
    env = {**os.environ, "VAULTRAG_VAULT": str(cfg.vault), "VAULTRAG_DB": str(cfg.db_path())}
    stale = tmp_path / "stale.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(stale))
    s.close()  # the file stays, nobody listens: a server that died
    r = run_hook({**env, "VAULTRAG_SOCKET": str(stale)}, "fw-5")
    assert r.returncode == 0 and "Backup plan" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    hung = tmp_path / "hung.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(hung))
    listener.listen(1)  # accepts the connection, never answers
    try:
        t = time.monotonic()
        r = run_hook({**env, "VAULTRAG_SOCKET": str(hung)}, "fw-6")
        assert r.returncode == 0 and r.stdout == "" and time.monotonic() - t < 10
    finally:
        listener.close()


def test_the_bare_http_client_parses_what_servers_send():
    from vaultrag.serve_client import _parse_response

    assert _parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}junk") == (200, b"{}")
    assert _parse_response(b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n") \
        == (409, b"abcde")
    for bad in (b"", b"SSH-2.0-OpenSSH\r\n", b"HTTP/1.1 200 OK\r\ncontent-length: 2"):
        with pytest.raises(ConnectionError):
            _parse_response(bad)
