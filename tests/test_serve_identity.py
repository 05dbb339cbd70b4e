"""`vaultrag serve` answers a forwarded hook only when the hook's environment names the index it
serves: vault, SQLite file, config, and (issue 15) the store (`VAULTRAG_STORE`, a file or a
PostgreSQL URL) and the collection (`VAULTRAG_COLLECTION`). A hook meant for another store gets
409 and runs in process, from its own index."""
from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("starlette")
pytest.importorskip("mcp")

from starlette.testclient import TestClient  # noqa: E402

from pg_fixtures import pg_server, pg_url  # noqa: E402,F401  (fixtures)
from vaultrag import api, serve_client  # noqa: E402
from vaultrag.config import load_config  # noqa: E402
from vaultrag.serve import auth  # noqa: E402
from vaultrag.serve.app import build_app  # noqa: E402
from vaultrag.serve.runner import _identity  # noqa: E402

PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "how long are daily snapshots kept?"}


def _client(service, tmp_path):
    policy = auth.Policy(bind_host="127.0.0.1", token_file=tmp_path / "tokens.json", peer_uid=lambda ip, port: os.getuid())
    return TestClient(build_app(service, policy), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50123),
                      raise_server_exceptions=False)


def _hook_status(client, env: dict, monkeypatch) -> int:
    """The status a hook with exactly `env` (of the identity variables) gets from the server."""
    for key in serve_client.IDENTITY_ENV:
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    header = serve_client.identity()  # what the forwarding hook sends
    return client.post("/hooks/UserPromptSubmit", json=PROMPT, headers={serve_client.IDENTITY_HEADER: header}).status_code


def test_a_hook_naming_another_sqlite_store_is_refused(vault, tmp_path, monkeypatch):
    db = tmp_path / "index.sqlite"
    cfg = load_config(vault=str(vault), store=str(db))
    api.reindex(cfg)
    service = api.Service(cfg)
    try:
        service.identity = _identity(service)
        with _client(service, tmp_path) as c:
            assert _hook_status(c, {"VAULTRAG_STORE": str(db)}, monkeypatch) == 200
            assert _hook_status(c, {"VAULTRAG_STORE": str(tmp_path / "." / "index.sqlite")}, monkeypatch) == 200
            assert _hook_status(c, {"VAULTRAG_STORE": str(tmp_path / "other.sqlite")}, monkeypatch) == 409
            assert _hook_status(c, {"VAULTRAG_STORE": "postgresql://u@localhost/team"}, monkeypatch) == 409
            # a SQLite server holds one index: a collection name alone does not make it another one
            assert _hook_status(c, {"VAULTRAG_COLLECTION": "anything"}, monkeypatch) == 200
    finally:
        service.close()


def test_a_hook_naming_another_postgres_database_or_collection_is_refused(vault, tmp_path, pg_url, monkeypatch):
    cfg = load_config(vault=str(vault), store=pg_url, collection="notes")
    api.reindex(cfg)
    service = api.Service(cfg)
    try:
        service.identity = _identity(service)
        prefix, _, query = pg_url.partition("?")
        other_db = prefix.rsplit("/", 1)[0] + "/otherdb" + ("?" + query if query else "")
        with _client(service, tmp_path) as c:
            assert _hook_status(c, {"VAULTRAG_STORE": pg_url, "VAULTRAG_COLLECTION": "notes"}, monkeypatch) == 200
            assert _hook_status(c, {"VAULTRAG_STORE": pg_url}, monkeypatch) == 200
            assert _hook_status(c, {"VAULTRAG_STORE": other_db}, monkeypatch) == 409
            assert _hook_status(c, {"VAULTRAG_STORE": pg_url, "VAULTRAG_COLLECTION": "other"}, monkeypatch) == 409
            assert _hook_status(c, {"VAULTRAG_STORE": str(tmp_path / "index.sqlite")}, monkeypatch) == 409
    finally:
        service.close()


def test_the_identity_header_never_carries_a_database_password(monkeypatch):
    for key in serve_client.IDENTITY_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("VAULTRAG_STORE", "postgres://alice:s3cret-pw@db.example:5433/team?sslmode=require")
    header = json.loads(serve_client.identity())
    assert header == {"VAULTRAG_STORE": "postgresql://alice@db.example:5433/team?sslmode=require"}
    assert "s3cret" not in serve_client.identity()
    # the same database with another password (or none) is the same store
    assert serve_client.store_identity("postgresql://alice:other@db.example:5433/team?sslmode=require") == \
        header["VAULTRAG_STORE"]
    assert serve_client.store_identity("/tmp/x.sqlite") == "/tmp/x.sqlite"
