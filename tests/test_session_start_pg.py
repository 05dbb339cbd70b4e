"""SessionStart with a PostgreSQL store: a server that is not running is told in one line with its
fix (it was silent: the hooks then failed open on every prompt and the user saw nothing), in a few
milliseconds and without the driver; a running server, a real embedded PostgreSQL, says nothing."""
from __future__ import annotations

import json
import socket
import sys

import pytest

from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag.doctor import pg_reach_problems
from vaultrag.session_start import session_message

START = {"hook_event_name": "SessionStart", "source": "startup"}


@pytest.fixture
def vault_env(tmp_path, monkeypatch, isolated_env):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nText.\n", encoding="utf-8")
    monkeypatch.setenv("VAULTRAG_VAULT", str(vault))
    monkeypatch.setenv("VAULTRAG_SOCKET", str(tmp_path / "no-server.sock"))
    return vault


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_that_is_not_running_is_told_with_its_fix_and_never_its_password(vault_env, monkeypatch):
    url = f"postgresql://vr:s3cretPW@127.0.0.1:{closed_port()}/notes"
    monkeypatch.setenv("VAULTRAG_STORE", url)
    told = json.loads(session_message(START))["systemMessage"]
    assert "cannot reach PostgreSQL at postgresql://vr:***@127.0.0.1" in told, told
    assert "s3cretPW" not in told and "doctor" in told and "start the server" in told


def test_the_probe_imports_no_driver_and_judges_socket_folders(tmp_path):
    import subprocess

    code = ("import sys; from vaultrag.doctor import pg_reach_problems as r; "
            f"p = r('postgresql://u@127.0.0.1:{closed_port()}/d'); "
            "print(len(p), 'psycopg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout.split()
    assert out == ["1", "False"]
    [p] = pg_reach_problems(f"postgresql://u@/d?host={tmp_path}")
    assert f"no socket {tmp_path}/.s.PGSQL.5432" in p.problem
    (tmp_path / ".s.PGSQL.5433").touch()
    assert pg_reach_problems(f"postgresql://u@/d?host={tmp_path}&port=5433") == []
    assert pg_reach_problems(f"postgresql://u@:5433/d?host={tmp_path}") == []
    # not judged here: libpq's own socket folder, several hosts, a malformed URL (doctor connects)
    assert pg_reach_problems("postgresql:///d") == []
    assert pg_reach_problems("postgresql://u@h1:5432,h2:5432/d") == []
    assert pg_reach_problems("postgresql://u@[::1/d") == []


def test_a_running_server_says_nothing(vault_env, monkeypatch, pg_url):
    monkeypatch.setenv("VAULTRAG_STORE", pg_url)
    assert session_message(START) is None
