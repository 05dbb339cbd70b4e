"""A reindex by a read-only role (README, PostgreSQL, Permissions: searchers only read) says that it
needs a writer role, in one line: it used to end in psycopg's traceback ('permission denied for table
collections'), or, on a new database, in a message saying the pgvector extension was missing."""
from __future__ import annotations

import uuid

import pytest

from pg_fixtures import database_url, pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag.config import load_config
from vaultrag.errors import StoreUnavailable
from vaultrag.indexer import reindex
from vaultrag.retrieve import search


@pytest.fixture
def reader(pg_server):
    """A role that may read every table of the public schema (the README's grants) and nothing else."""
    import psycopg

    name = "reader_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN")
    yield name
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {name}")
        conn.execute(f"DROP ROLE {name}")


def _as(url: str, role: str) -> str:
    """`url` (postgresql://postgres:@/db?host=...) logging in as `role` (trust auth on the socket)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{role}@{rest.split('@', 1)[1]}"


def test_a_read_only_role_searches_but_its_reindex_names_the_writer_grants(vault, pg_url, reader):
    import psycopg

    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {reader}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}")
    try:
        cfg = load_config(vault=str(vault), store=_as(pg_url, reader), collection="notes")
        assert search("how long are daily snapshots kept?", cfg).hits
        with pytest.raises(StoreUnavailable, match="A reindex needs a writer role") as err:
            reindex(cfg)
        assert "permission denied for table collections" in str(err.value)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:  # the role's grants, so that it can be dropped
            conn.execute(f"DROP OWNED BY {reader}")


def test_a_role_that_may_not_create_tables_is_not_told_pgvector_is_missing(vault, pg_server, reader):
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = database_url(pg_server, name)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
            conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        with pytest.raises(StoreUnavailable, match="A reindex needs a writer role") as err:
            reindex(load_config(vault=str(vault), store=_as(url, reader), collection="notes"))
        assert "permission denied for schema public" in str(err.value) and "pgvector" not in str(err.value)
    finally:
        from vaultrag.store.postgres.connection import close_pool

        close_pool()
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
