"""Connections to PostgreSQL: the psycopg import (optional extra), a small pool, the schema.

The pool keeps idle connections per URL inside the process: a library or server that searches
many times reuses warm connections (no TCP/auth handshake, prepared plans kept); the CLI and a
hook open one and exit. A connection goes back to the pool only when it is idle and healthy.
"""
from __future__ import annotations

import threading
from ...errors import DependencyMissing, StoreUnavailable, redact_url
from . import schema

POOL_MAX_IDLE = 8  # idle connections kept per URL (8 concurrent searchers in the load test)
CONNECT_TIMEOUT_S = 10  # fail with a clear error rather than hang on an unreachable host

_pool: dict[str, list] = {}
_pool_lock = threading.Lock()
_ready: set[str] = set()  # URLs whose schema is known to be current in this process


def psycopg():
    try:
        import psycopg as mod  # type: ignore[import-not-found]
    except ImportError:
        raise DependencyMissing("a postgresql:// store needs the psycopg driver: pip install 'vaultrag[postgres]'") from None
    return mod


def connect(url: str):
    """A pooled or new autocommit connection with the session settings the store relies on."""
    with _pool_lock:
        idle = _pool.get(url)
        while idle:
            conn = idle.pop()
            if not conn.closed and conn.info.transaction_status == 0:  # IDLE
                return conn
    pg = psycopg()
    try:
        conn = pg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except pg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreUnavailable(f"cannot connect to PostgreSQL at {redact_url(url)} ({first}); check the URL given to "
                               f"--store / VAULTRAG_STORE / `store:` and that the server is running") from None
    conn.execute(f"SET hnsw.ef_search = {schema.HNSW_EF_SEARCH}")  # a placeholder until pgvector loads
    return conn


def release(url: str, conn) -> None:
    """Give a connection back to the pool (or close it when the pool is full or it is unusable)."""
    try:
        healthy = not conn.closed and conn.info.transaction_status == 0
    except Exception:
        healthy = False
    with _pool_lock:
        idle = _pool.setdefault(url, [])
        if healthy and len(idle) < POOL_MAX_IDLE:
            idle.append(conn)
            return
    try:
        conn.close()
    except Exception:
        pass


def close_pool() -> None:
    """Close every idle pooled connection (tests, server shutdown)."""
    with _pool_lock:
        conns = [c for idle in _pool.values() for c in idle]
        _pool.clear()
    for c in conns:
        try:
            c.close()
        except Exception:
            pass


def ensure_schema(url: str, conn, *, create: bool) -> int:
    """Bring the database to SCHEMA_VERSION (writers) or check it (readers). Returns the version."""
    version = _version(conn)
    if version == schema.SCHEMA_VERSION:
        _ready.add(url)
        return version
    if version > schema.SCHEMA_VERSION:
        raise StoreUnavailable(f"the vaultrag schema in {redact_url(url)} is version {version}, newer than this vaultrag "
                               f"({schema.SCHEMA_VERSION}); upgrade vaultrag")
    if not create:
        return version
    pg = psycopg()
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (schema.SCHEMA_LOCK_KEY,))
            version = _version(conn)  # another process may have created it meanwhile
            if version == 0:
                for sql in schema.BASE:
                    conn.execute(sql)
                conn.execute("INSERT INTO vaultrag_schema (version) VALUES (1)")
                version = 1
            for number, statements in enumerate(schema.MIGRATIONS[version - 1:], start=version + 1):
                for sql in statements:
                    conn.execute(sql)
                conn.execute("UPDATE vaultrag_schema SET version = %s", (number,))
                version = number
    except pg.errors.FeatureNotSupported as exc:
        raise StoreUnavailable(f"PostgreSQL at {redact_url(url)} cannot create the pgvector extension ({exc}); install "
                               f"pgvector on the server (e.g. apt install postgresql-18-pgvector)") from None
    except pg.errors.InsufficientPrivilege as exc:
        first = str(exc).strip().splitlines()[0]
        if "extension" not in first:  # "permission denied for schema public": the role may not create tables
            raise writer_needed(url, first) from None
        raise StoreUnavailable(f"PostgreSQL at {redact_url(url)}: {first}. vaultrag needs the pgvector extension: install "
                               f"it on the server (apt install postgresql-18-pgvector, or your provider's 'vector' "
                               f"extension) and run CREATE EXTENSION vector as its owner; see README, PostgreSQL") from None
    except pg.errors.UndefinedFile as exc:
        first = str(exc).strip().splitlines()[0]
        raise StoreUnavailable(f"PostgreSQL at {redact_url(url)}: {first}. vaultrag needs the pgvector extension: install "
                               f"it on the server (apt install postgresql-18-pgvector, or your provider's 'vector' "
                               f"extension) and run CREATE EXTENSION vector as its owner; see README, PostgreSQL") from None
    _ready.add(url)
    return version


def writer_needed(url: str, why: str) -> StoreUnavailable:
    """A reindex by a role that may not write vaultrag's tables (a searchers' read-only role)."""
    return StoreUnavailable(f"PostgreSQL at {redact_url(url)}: {why}. A reindex needs a writer role: GRANT CREATE ON "
                            f"SCHEMA public (the first run), then INSERT, UPDATE, DELETE on vaultrag's tables; a "
                            f"read-only role can search but not reindex (see README, PostgreSQL, Permissions)")


def _version(conn) -> int:
    row = conn.execute("SELECT to_regclass('vaultrag_schema') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    row = conn.execute("SELECT max(version) FROM vaultrag_schema").fetchone()
    return int(row[0] or 0)
