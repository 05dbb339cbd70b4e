"""`vaultrag doctor` on a PostgreSQL index (`--store postgresql://...`, `store:`, $VAULTRAG_STORE).

Checks, in the order a search depends on them: the psycopg driver imports; the server answers;
pgvector is created in the database (or at least installable); the vaultrag schema is there and
current; each collection named exists and holds chunks; the index belongs to the configured
vault; the model it was built with is the configured one and its folder is on this machine; the
hooks can reach it (a fresh hook process leaves PostgreSQL to `vaultrag serve`). Each problem
names its fix, a command that repeats the location options given, the URL's password as `***`.
"""
from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

from .doctor import Problem, freshness_problems
from .errors import DependencyMissing, IndexMissing, StoreUnavailable, fix_command, redact_url

# A doctor run waits this long for the server (the store's own connections wait 10 s): a host that
# drops packets should not hold the whole report.
CONNECT_TIMEOUT_S = 5
# A hub id not in the local cache is probed this long when doctor resolves the configured model.
MODEL_PROBE_TIMEOUT_S = 2.0


def pg_index_problems(cfg, url: str, passed: list[str], facts: dict, *, freshness: bool = True) -> list[Problem]:
    """Every check of a PostgreSQL index, stopping at the first that the later ones need."""
    from .store.open import collection_names

    names = collection_names(cfg)
    shown = redact_url(url)
    facts.update(store=shown, collections=list(names))
    try:
        from .store.postgres.connection import psycopg

        pg = psycopg()
    except DependencyMissing as exc:
        return [Problem("store", str(exc), f"{shlex.quote(sys.executable)} -m pip install 'vaultrag[postgres]'  "
                        f"(then {fix_command('doctor')})")]
    try:
        conn = pg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except pg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return [Problem("store", f"cannot connect to PostgreSQL at {shown} ({first})",
                        f"start the server ({_pg_isready(url)} says whether it accepts connections) or correct "
                        f"--store / VAULTRAG_STORE / `store:`; then {fix_command('doctor')}")]
    try:
        found = _server_problems(conn, shown, names, passed, facts)
        if not found:
            found = _index_problems(cfg, url, names, passed, facts, freshness=freshness)
    except pg.Error as exc:  # a role that may not read the catalog or the tables, a server going away
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        found = [Problem("store", f"PostgreSQL at {shown} refused a check: {type(exc).__name__}: {first}",
                         f"grant the role in the URL read access to the vaultrag tables (or use the role that "
                         f"ran the reindex); then {fix_command('doctor')}")]
    finally:
        conn.close()
    return found


def _pg_isready(url: str) -> str:
    """`pg_isready` with the URL's host and port (never its password)."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    host = parts.hostname or (parse_qs(parts.query).get("host") or [""])[0]
    args = ["pg_isready"] + (["-h", host] if host else []) + (["-p", str(parts.port)] if parts.port else [])
    return " ".join(shlex.quote(a) for a in args)


def _server_problems(conn, shown: str, names: tuple[str, ...], passed: list[str], facts: dict) -> list[Problem]:
    """The server's version, pgvector, the schema version: what every collection needs."""
    from .store.postgres import schema
    from .store.postgres.store import _reindex_collection

    build = fix_command(_reindex_collection(names[0]))
    server = conn.execute("SHOW server_version").fetchone()[0]
    vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    facts.update(server_version=server, pgvector=vector[0] if vector else None)
    if vector is None:
        available = conn.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if available is None:
            return [Problem("pgvector", f"PostgreSQL {server} at {shown} has no pgvector extension installed",
                            f"install pgvector on the server (apt install postgresql-{server.split('.')[0]}-pgvector, "
                            f"or your provider's 'vector' extension); then {build}")]
        return [Problem("pgvector", f"pgvector {available[0]} is installed on {shown} but not created in this database",
                        f"{build}  (creates it; needs a role that may CREATE EXTENSION, else run "
                        f"CREATE EXTENSION vector as the database owner)")]
    passed.append(f"store: PostgreSQL {server} at {shown}, pgvector {vector[0]}")
    exists = conn.execute("SELECT to_regclass('vaultrag_schema') IS NOT NULL").fetchone()[0]
    version = int(conn.execute("SELECT coalesce(max(version), 0) FROM vaultrag_schema").fetchone()[0]) if exists else 0
    facts["schema_version"] = version
    if version == 0:
        return [Problem("index", f"no vaultrag index in {shown}", f"{build}  (builds collection {names[0]})")]
    if version > schema.SCHEMA_VERSION:
        return [Problem("index", f"the vaultrag schema in {shown} is version {version}, newer than this vaultrag "
                        f"({schema.SCHEMA_VERSION})", f"{shlex.quote(sys.executable)} -m pip install -U vaultrag  "
                        f"(then {fix_command('doctor')})")]
    if version < schema.SCHEMA_VERSION:
        return [Problem("index", f"the vaultrag schema in {shown} is version {version}, this vaultrag needs "
                        f"{schema.SCHEMA_VERSION}", f"{build}  (migrates the database once)")]
    rows = dict(conn.execute("SELECT c.name, coalesce(g.chunks, -1) FROM collections c "
                             "LEFT JOIN generations g ON g.id = c.live").fetchall())
    out = []
    for name in names:
        if rows.get(name, -1) < 0:
            others = ", ".join(sorted(rows)) or "none"
            out.append(Problem("index", f"no collection {name!r} in {shown} (collections there: {others})",
                               f"{fix_command(_reindex_collection(name))}  (builds it; or name another with --collection)"))
    return out


def _index_problems(cfg, url: str, names: tuple[str, ...], passed: list[str], facts: dict, *,
                    freshness: bool) -> list[Problem]:
    """The collections read through the store itself: chunks, vault, model; then freshness."""
    from .store.postgres import PgStore
    from .store.postgres.store import _reindex_collection

    build = fix_command(_reindex_collection(names[0]))
    try:
        with PgStore(url, collection=names, readonly=True) as store:
            meta = store.meta()
            counts = store.counts()
            where = store.location
    except (IndexMissing, StoreUnavailable) as exc:  # dropped between the checks above and this one
        return [Problem("index", str(exc), build)]
    out: list[Problem] = []
    if counts["chunks"] == 0:
        out.append(Problem("index", f"{where} holds no chunks (no Markdown notes found in {cfg.vault}?)",
                           f"check the vault path and index.include / index.exclude, then run {build}"))
    if meta.vault and cfg.vault and Path(meta.vault).resolve() != Path(cfg.vault).resolve():
        out.append(Problem("index", f"{where} indexes {meta.vault}, not the configured vault {cfg.vault}",
                           f"{fix_command(_reindex_collection(names[0]) + ' --full')}  (or name the collection "
                           f"of this vault with --collection)"))
    if out:
        return out
    last = meta.last_reindex.get("at")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last)) if last else "unknown"
    passed.append(f"index: {where}: {counts['chunks']} chunks, schema {meta.schema_version}, last reindex {when}")
    facts.update(chunks=counts["chunks"], vectors=counts["vectors"], last_reindex=last)
    out += model_problems(cfg, meta, counts["vectors"], _reindex_collection(names[0]), passed)
    out += hook_reach_problems(cfg, passed)
    if freshness:
        out += freshness_problems(cfg, passed)
    return out


def model_problems(cfg, meta, vectors: int, reindex: str, passed: list[str]) -> list[Problem]:
    """The index's model against the configured one, and its folder on this machine (queries load it).
    `reindex`: the arguments of the reindex that rebuilds the collection."""
    from .embedder import resolve_model

    build = fix_command(reindex)
    built = meta.model() or meta.embedding.get("model")
    if not meta.embedding.get("available") or vectors == 0:
        return [Problem("model", f"the index has no vectors ({meta.embedding.get('reason') or 'never embedded'}); "
                        "searches use BM25 and names only", build, "warning")]
    try:
        configured = resolve_model(cfg.model, probe_timeout=MODEL_PROBE_TIMEOUT_S).model_id
    except Exception as exc:  # a `model:` folder that holds no model: the config's problem
        return [Problem("model", f"the configured model {cfg.model!r} does not resolve: {exc}",
                        "fix `model:` in the config (a Model2Vec folder, a hub id, or `bundled`)")]
    if built and configured != built:
        return [Problem("model", f"the index was built with {built}, the config says {cfg.model} ({configured}); "
                        "queries use the index's model until it is rebuilt",
                        f"{fix_command(reindex + ' --full')}  (re-embeds every chunk with the configured model)",
                        "warning")]
    if not meta.model_path or not os.path.isdir(meta.model_path):
        return [Problem("model", f"the index's model folder {meta.model_path} is not on this machine; queries run "
                        "without vectors here", f"{build}  (from this machine: re-resolves the model)", "warning")]
    passed.append(f"model: {built} at {meta.model_path}")
    return []


def hook_reach_problems(cfg, passed: list[str]) -> list[Problem]:
    """A fresh hook process leaves a PostgreSQL store to `vaultrag serve` under a short deadline."""
    from .serve_client import default_socket
    from .store.postgres.hook_policy import in_process_refusal

    if in_process_refusal(cfg) is None:
        passed.append("hooks: search PostgreSQL in the hook process (hooks.timeout_ms allows the driver import)")
        return []
    sock = default_socket()
    if os.path.exists(sock):
        passed.append(f"hooks: forward to `vaultrag serve` at {sock}")
        return []
    return [Problem("hooks", f"no `vaultrag serve` listens at {sock}: with a PostgreSQL index the hooks add no "
                    "context without it (a fresh hook process would time out importing the driver)",
                    f"{fix_command('serve')}  (keep it running; or raise hooks.timeout_ms to 4000)", "warning")]
