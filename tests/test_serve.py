"""`vaultrag serve`'s HTTP API on the example vault: routes, limits, errors, auth, and the real
process (port taken, SIGTERM, PID and socket files)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("mcp")

from starlette.testclient import TestClient  # noqa: E402

from vaultrag import api  # noqa: E402
from vaultrag.serve import auth, tokens  # noqa: E402
from vaultrag.serve.app import build_app  # noqa: E402
from vaultrag.serve.mcp_server import build_mcp, http_app  # noqa: E402
from serve_fixtures import free_port, start_server  # noqa: E402

BASE = "http://127.0.0.1:8765"
PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "how long are daily snapshots kept?"}


@pytest.fixture
def service(vault, cfg_for):
    cfg = cfg_for(vault)
    api.reindex(cfg)
    svc = api.Service(cfg)
    yield svc
    svc.close()


@pytest.fixture
def token_file(tmp_path):
    return tmp_path / "tokens.json"


def make_client(service, token_file, *, same_user=True, bind="127.0.0.1", client=("127.0.0.1", 50123), **kw):
    policy = auth.Policy(bind_host=bind, token_file=token_file,
                         peer_uid=lambda ip, port: os.getuid() if same_user else os.getuid() + 1)
    app = build_app(service, policy, mcp_app=http_app(build_mcp(service)))
    return TestClient(app, base_url=kw.pop("base_url", BASE), client=client, raise_server_exceptions=False, **kw)


@pytest.fixture
def client(service, token_file):
    with make_client(service, token_file) as c:
        yield c


def test_search_answers_like_the_cli(client, service):
    r = client.post("/search", json={"query": "how long are daily snapshots kept?", "k": 3})
    assert r.status_code == 200
    assert r.json() == api.search("how long are daily snapshots kept?", service.cfg, k=3).to_dict()
    assert r.json()["status"] == "ok" and r.json()["hits"][0]["citation"]


@pytest.mark.parametrize("body, status, code", [
    ({"query": ""}, 400, "bad_request"), ({"query": "a", "k": 0}, 400, "bad_request"),
    ({"query": "a", "k": 10**6}, 400, "bad_request"), ({"query": "x" * 5000}, 400, "bad_request"),
    ({"query": "a", "colour": "red"}, 400, "bad_request"), ([1, 2], 400, "bad_json"),
])
def test_bad_search_input_is_a_json_error(client, body, status, code):
    r = client.post("/search", json=body)
    assert r.status_code == status and r.json()["code"] == code and r.json()["message"]


def test_limits_and_unknown_routes(client):
    r = client.post("/search", content=b"{", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] == "bad_json"
    big = json.dumps({"query": "a" * (2 * 1024 * 1024)})
    assert client.post("/search", content=big).status_code == 413
    assert client.get("/nope").json()["code"] == "not_found"
    assert client.get("/search").status_code == 405


def test_status_coverage_healthz_openapi(client, service, vault):
    assert client.get("/healthz").json() == {"ok": True}
    st = client.get("/status").json()
    assert st["files"] == 7 and st["db"] == str(service.cfg.db_path())
    (vault / "People" / "Ada.md").write_text("# Ada\n\nChanged.\n", encoding="utf-8")
    cov = client.get("/coverage").json()
    assert cov["files_indexed"] == 7 and cov["stale_files"] == 1 and cov["stale_paths"] == ["People/Ada.md"]
    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.") and {"/search", "/reindex", "/hooks/{event}"} <= set(doc["paths"])


def test_reindex_report_and_409_while_one_runs(client, service, vault):
    (vault / "New.md").write_text("# New\n\nQuagga stripes.\n", encoding="utf-8")
    r = client.post("/reindex", json={})
    assert r.status_code == 200 and r.json()["added"] == 1 and r.json()["scanned"] == 8
    assert client.post("/search", json={"query": "quagga stripes"}).json()["hits"][0]["path"] == "New.md"
    assert service._reindexing.acquire(blocking=False)  # as if another reindex were running
    try:
        r = client.post("/reindex", json={"full": True})
        assert r.status_code == 409 and r.json()["code"] == "reindex_running"
    finally:
        service._reindexing.release()
    assert client.post("/reindex", json={"full": "yes"}).status_code == 400


def test_hook_route_prints_what_the_command_hook_would(client, service):
    from vaultrag import hooks

    r = client.post("/hooks/UserPromptSubmit", json=PROMPT)
    assert r.status_code == 200
    out = r.json()["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit" and "Source: " in out["additionalContext"]
    again = hooks.handle({**PROMPT, "session_id": "other"}, "UserPromptSubmit", cfg=service.cfg)
    assert r.text == again  # byte for byte
    # no evidence, a mismatched event, garbage: {} (the command hook prints nothing), never an error
    assert client.post("/hooks/UserPromptSubmit", json={**PROMPT, "prompt": "zzqx vvbn"}).json() == {}
    assert client.post("/hooks/PreToolUse", json=PROMPT).json() == {}
    assert client.post("/hooks/UserPromptSubmit", content=b"not json").json() == {}
    assert client.post("/hooks/Bad-Name", json=PROMPT).status_code == 404


def test_hook_for_another_index_is_refused_so_the_hook_runs_in_process(client, service, tmp_path):
    service.identity = {"VAULTRAG_DB": str(service.cfg.db_path().resolve())}
    mine = json.dumps({"VAULTRAG_DB": str(service.cfg.db_path())})
    other = json.dumps({"VAULTRAG_DB": str(tmp_path / "other.sqlite")})
    assert client.post("/hooks/UserPromptSubmit", json=PROMPT, headers={"X-Vaultrag-Identity": mine}).status_code == 200
    assert client.post("/hooks/UserPromptSubmit", json=PROMPT, headers={"X-Vaultrag-Identity": other}).status_code == 409


# -- auth -----------------------------------------------------------------------------------------
def test_tokens_are_stored_hashed_in_a_private_file(token_file):
    token, rec = tokens.create_token("reader", "ci", path=token_file)
    raw = token_file.read_text()
    assert token.startswith(tokens.TOKEN_PREFIX) and token not in raw and rec.sha256 in raw
    assert oct(token_file.stat().st_mode & 0o777) == "0o600"
    loaded = tokens.load_tokens(token_file)
    assert tokens.verify(token, loaded) == rec and tokens.verify(token + "x", loaded) is None
    t2, _ = tokens.create_token("maintainer", path=token_file)
    assert t2 != token and [r.role for r in tokens.load_tokens(token_file)] == ["reader", "maintainer"]
    with pytest.raises(Exception, match="role"):
        tokens.create_token("admin", path=token_file)


def test_with_tokens_401_without_one_and_403_for_a_reader_reindexing(service, token_file):
    reader, _ = tokens.create_token("reader", path=token_file)
    maint, _ = tokens.create_token("maintainer", path=token_file)
    with make_client(service, token_file) as c:
        r = c.post("/search", json={"query": "snapshots"})
        assert r.status_code == 401 and r.json()["code"] == "unauthorized" and "Bearer" in r.headers["www-authenticate"]
        assert c.post("/search", json={"query": "snapshots"}, headers={"Authorization": "Bearer nope"}).status_code == 401
        ok = c.post("/search", json={"query": "snapshots"}, headers={"Authorization": f"Bearer {reader}"})
        assert ok.status_code == 200
        r = c.post("/reindex", json={}, headers={"Authorization": f"Bearer {reader}"})
        assert r.status_code == 403 and r.json()["code"] == "forbidden"
        assert c.post("/reindex", json={}, headers={"Authorization": f"Bearer {maint}"}).status_code == 200
        assert c.get("/healthz").status_code == 200  # liveness needs no token


def test_without_tokens_only_loopback_same_user(service, token_file):
    with make_client(service, token_file, same_user=False) as c:
        r = c.get("/status")
        assert r.status_code == 401 and "token create" in r.json()["message"]
    with make_client(service, token_file, client=("10.1.2.3", 40000)) as c:
        assert c.get("/status").status_code == 401


@pytest.mark.parametrize("headers", [{"Host": "evil.example:8765"}, {"Origin": "http://evil.example"},
                                     {"Origin": "null"}])
def test_dns_rebinding_guard_refuses_foreign_host_and_origin(service, token_file, headers):
    with make_client(service, token_file) as c:
        r = c.post("/search", json={"query": "snapshots"}, headers=headers)
        assert r.status_code == 403 and r.json()["code"] in ("bad_host", "bad_origin")
        assert c.post("/search", json={"query": "snapshots"}, headers={"Origin": "http://localhost:8765"}).status_code == 200


def test_peer_uid_finds_the_owner_of_a_real_loopback_socket():
    if not os.path.exists("/proc/net/tcp"):
        pytest.skip("no /proc/net/tcp on this system")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cli = socket.create_connection(srv.getsockname())
    try:
        ip, port = cli.getsockname()
        assert auth.peer_uid(ip, port) == os.getuid()
        assert auth.peer_uid("127.0.0.1", 1) is None  # nobody's socket
    finally:
        cli.close()
        srv.close()


# -- the real process ----------------------------------------------------------------------------
def test_serve_process_port_taken_sigterm_cleans_up(vault, cfg_for, tmp_path):
    from vaultrag.serve_client import request

    cfg = cfg_for(vault)
    api.reindex(cfg)
    sock, port = tmp_path / "s.sock", free_port()
    proc = start_server(vault, cfg.db_path(), sock, port)
    try:
        pid = json.loads((tmp_path / "s.sock.pid").read_text())
        assert pid["pid"] == proc.pid and pid["port"] == port
        status, body = request(str(sock), "POST", "/search", json.dumps({"query": "restore drill"}).encode())
        assert status == 200 and json.loads(body)["status"] == "ok"
        taken = subprocess.run([sys.executable, "-m", "vaultrag", "serve", "--vault", str(vault), "--store",
                                str(cfg.db_path()), "--port", str(port), "--socket", str(tmp_path / "t.sock")],
                               capture_output=True, text=True, timeout=60)
        assert taken.returncode == 1 and f"port {port}" in taken.stderr and "already taken" in taken.stderr
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert not sock.exists() and not (tmp_path / "s.sock.pid").exists()
        err = proc.stderr.read()
        assert "restore drill" not in err  # nothing of the request in the logs
    finally:
        if proc.poll() is None:
            proc.kill()


def test_non_loopback_bind_needs_tokens(vault, tmp_path):
    r = subprocess.run([sys.executable, "-m", "vaultrag", "serve", "--vault", str(vault), "--host", "0.0.0.0",
                        "--port", str(free_port()), "--socket", str(tmp_path / "x.sock")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "create a token" in r.stderr and not (tmp_path / "x.sock").exists()


def test_http_hook_snippet_and_mcp_json_point_at_real_routes(client):
    from serve_fixtures import REPO

    snippet = json.loads((REPO / "settings.http.snippet.json").read_text())
    for event, groups in snippet["hooks"].items():
        for h in (h for g in groups for h in g["hooks"]):
            assert h["type"] == "http" and h["url"].endswith(f"/hooks/{event}") and "VAULTRAG_TOKEN" in h["allowedEnvVars"]
            path = h["url"].split("8765", 1)[1]
            body = {**PROMPT, "hook_event_name": event, "tool_name": "Grep", "tool_input": {"pattern": "snapshots"}}
            r = client.post(path, json=body, headers={"Authorization": "Bearer "})  # the env var unset: no token
            assert r.status_code == 200 and isinstance(r.json(), dict)
    server = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["vaultrag"]
    assert server["type"] == "stdio" and server["args"][-2:] == ["vaultrag", "mcp"]


def test_mcp_over_http_checks_token_and_role(service, token_file):
    reader, _ = tokens.create_token("reader", path=token_file)
    maint, _ = tokens.create_token("maintainer", path=token_file)
    mcp_headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "reindex", "arguments": {}}}
    with make_client(service, token_file) as c:
        assert c.post("/mcp", json=call, headers=mcp_headers).status_code == 401
        r = c.post("/mcp", json=call, headers={**mcp_headers, "Authorization": f"Bearer {reader}"})
        assert r.status_code == 200 and r.json()["result"]["isError"] and "maintainer" in r.text
        r = c.post("/mcp", json=call, headers={**mcp_headers, "Authorization": f"Bearer {maint}"})
        assert r.status_code == 200 and not r.json()["result"].get("isError"), r.text
        assert '"scanned": 7' in r.json()["result"]["content"][0]["text"].replace(":7", ": 7")


def test_sigterm_during_a_full_rebuild_stops_it_and_keeps_the_index(tmp_path, cfg_for):
    import threading

    from serve_fixtures import start_server
    from vaultrag.serve_client import request

    big = tmp_path / "big"
    for i in range(1500):
        d = big / f"f{i % 30}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"n{i}.md").write_text(f"# Note {i}\n\nAbout topic number {i} and the word quagga{i % 7}.\n")
    cfg = cfg_for(big)
    api.reindex(cfg)
    sock = tmp_path / "b.sock"
    proc = start_server(big, cfg.db_path(), sock, free_port())
    answer = {}

    def rebuild():
        try:
            answer["r"] = request(str(sock), "POST", "/reindex", b'{"full": true}', timeout=120)
        except OSError as exc:
            answer["r"] = (None, type(exc).__name__.encode())

    t = threading.Thread(target=rebuild)
    t.start()
    time.sleep(1.5)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0
    t.join(60)
    assert time.monotonic() - started < 45  # not a whole rebuild's worth of waiting
    status, body = answer["r"]
    assert status in (None, 200, 503)
    if status == 503:
        assert json.loads(body)["code"] == "stopping"
    assert api.search("topic number 42", cfg).status == "ok"  # the old index (or the finished new one) answers
    assert not list(tmp_path.glob("*.rebuild-*")) and not sock.exists()
