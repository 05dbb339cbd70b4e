"""`vaultrag doctor` on a PostgreSQL index, against a real embedded PostgreSQL 18 + pgvector: each
check (server, pgvector, schema, collection, chunks, model, hooks' reach) passes on a built index
and names its fix when it fails, the fix repeating --store with the password as ***."""
from __future__ import annotations

import json
import shlex
import shutil
import socket

import pytest

from pg_fixtures import pg_server, pg_url  # noqa: F401  (fixtures)
from vaultrag import cli
from vaultrag.config import load_config
from vaultrag.embedder import bundled_model_path
from vaultrag.indexer import reindex
from vaultrag.store.postgres import schema


@pytest.fixture
def home(tmp_path, monkeypatch, isolated_env):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.chdir(h)
    monkeypatch.setenv("VAULTRAG_SOCKET", str(tmp_path / "no-server.sock"))
    return h


def doctor(capsys, *args) -> dict:
    """`vaultrag doctor ARGS --json` through the CLI's own main (it records the location options)."""
    capsys.readouterr()
    cli.main(["doctor", *args, "--json"])
    return json.loads(capsys.readouterr().out)


def store_problems(report: dict) -> list[dict]:
    return [p for p in report["problems"] if p["check"] in ("store", "pgvector", "index", "model")]


def command(fix: str) -> list[str]:
    """The arguments of the vaultrag command inside a fix (after any advice before it, before its "  (why)")."""
    from vaultrag.errors import cli_command

    return shlex.split(fix[fix.index(cli_command()):].split("  (")[0])[len(shlex.split(cli_command())):]


def option(fix: str, flag: str) -> str:
    argv = command(fix)
    return argv[argv.index(flag) + 1]


def sql(url: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for s in statements:
            conn.execute(s)


def test_a_built_index_passes_every_store_check(vault, pg_url, home, capsys):
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    report = doctor(capsys, "--vault", str(vault), "--store", pg_url, "--collection", "notes")
    assert store_problems(report) == [], report["problems"]
    passed = "\n".join(report["passed"])
    assert "store: PostgreSQL 18" in passed and "pgvector 0." in passed
    assert "(collection notes): 15 chunks, schema" in passed and "model: bundled:" in passed
    assert "index: fresh" in passed
    facts = report["facts"]
    assert facts["chunks"] == 15 and facts["schema_version"] == schema.SCHEMA_VERSION and facts["pgvector"]
    # no `vaultrag serve` and the default 1.5 s deadline: the hooks would add nothing; the fix starts one
    [reach] = [p for p in report["problems"] if p["check"] == "hooks" and "vaultrag serve" in p["problem"]]
    assert reach["severity"] == "warning" and command(reach["fix"])[0] == "serve" and option(reach["fix"], "--store") == pg_url


def test_a_missing_collection_names_the_reindex_that_builds_it(vault, pg_url, home, capsys):
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    report = doctor(capsys, "--vault", str(vault), "--store", pg_url, "--collection", "other")
    [p] = store_problems(report)
    assert p["severity"] == "error" and "no collection 'other'" in p["problem"] and "notes" in p["problem"]
    assert command(p["fix"])[:3] == ["reindex", "--collection", "other"], p["fix"]
    assert option(p["fix"], "--store") == pg_url and option(p["fix"], "--vault") == str(vault.resolve())
    assert report["ok"] is False


def test_a_fresh_database_then_pgvector_alone_then_an_old_schema(vault, pg_url, home, capsys):
    cfg_args = ("--vault", str(vault), "--store", pg_url, "--collection", "notes")
    [p] = store_problems(doctor(capsys, *cfg_args))  # nothing there: pgvector is not even created
    assert p["check"] == "pgvector" and "not created in this database" in p["problem"]
    assert "reindex --collection notes" in p["fix"] and "CREATE EXTENSION vector" in p["fix"]
    sql(pg_url, "CREATE EXTENSION vector")
    [p] = store_problems(doctor(capsys, *cfg_args))
    assert p["check"] == "index" and p["problem"].startswith("no vaultrag index in") and "reindex --collection notes" in p["fix"]
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    sql(pg_url, f"UPDATE vaultrag_schema SET version = {schema.SCHEMA_VERSION - 1}")
    [p] = store_problems(doctor(capsys, *cfg_args))
    assert f"version {schema.SCHEMA_VERSION - 1}, this vaultrag needs {schema.SCHEMA_VERSION}" in p["problem"]
    assert "migrates" in p["fix"] and option(p["fix"], "--store") == pg_url
    sql(pg_url, f"UPDATE vaultrag_schema SET version = {schema.SCHEMA_VERSION + 1}")
    [p] = store_problems(doctor(capsys, *cfg_args))
    assert "newer than this vaultrag" in p["problem"] and "pip install -U vaultrag" in p["fix"]


def test_an_empty_collection_and_another_vaults_collection(vault, pg_url, home, capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    reindex(load_config(vault=str(empty), store=pg_url, collection="nothing"))
    [p] = store_problems(doctor(capsys, "--vault", str(empty), "--store", pg_url, "--collection", "nothing"))
    assert "holds no chunks" in p["problem"] and "reindex --collection nothing" in p["fix"]
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    [p] = store_problems(doctor(capsys, "--vault", str(empty), "--store", pg_url, "--collection", "notes"))
    assert f"indexes {vault}" in p["problem"] and "--full" in p["fix"]


def test_the_model_the_index_was_built_with_against_the_configured_one(vault, pg_url, home, capsys, tmp_path,
                                                                     monkeypatch):
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))  # $VAULTRAG_MODEL=bundled
    monkeypatch.delenv("VAULTRAG_MODEL")  # else it overrides the config's model
    other = tmp_path / "my-model"
    shutil.copytree(bundled_model_path(), other)  # a real Model2Vec folder: another model as far as config goes
    config = tmp_path / "config.yaml"
    config.write_text(f"vault: {vault}\nstore: {pg_url}\ncollection: notes\nindex:\n  model: {other}\n", encoding="utf-8")
    report = doctor(capsys, "--config", str(config))
    [p] = store_problems(report)
    assert p["check"] == "model" and p["severity"] == "warning"
    assert "built with bundled:" in p["problem"] and str(other) in p["problem"]
    assert command(p["fix"])[:4] == ["reindex", "--collection", "notes", "--full"] and option(p["fix"], "--config") == str(config)


def test_an_unreachable_server_never_shows_the_password(vault, home, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://alice:s3cr3t-pw@127.0.0.1:{port}/team"
    report = doctor(capsys, "--vault", str(vault), "--store", url)
    [p] = store_problems(report)
    assert p["check"] == "store" and "cannot connect to PostgreSQL at postgresql://alice:***@127.0.0.1" in p["problem"]
    assert f"pg_isready -h 127.0.0.1 -p {port}" in p["fix"] and "doctor" in p["fix"]
    assert option(p["fix"], "--store") == f"postgresql://alice:***@127.0.0.1:{port}/team" and "PGPASSWORD" in p["fix"]
    assert "s3cr3t-pw" not in json.dumps(report)


def test_a_role_that_may_not_read_the_index_is_a_problem_not_a_traceback(vault, pg_url, home, capsys):
    reindex(load_config(vault=str(vault), store=pg_url, collection="notes"))
    sql(pg_url, "DROP ROLE IF EXISTS doctor_nobody", "CREATE ROLE doctor_nobody LOGIN")
    try:
        nobody = pg_url.replace("postgresql://postgres:@", "postgresql://doctor_nobody:@", 1)
        assert nobody != pg_url
        [p] = store_problems(doctor(capsys, "--vault", str(vault), "--store", nobody, "--collection", "notes"))
        assert p["check"] == "store" and "refused a check" in p["problem"] and "InsufficientPrivilege" in p["problem"]
        assert command(p["fix"])[0] == "doctor" and option(p["fix"], "--store") == nobody
    finally:
        sql(pg_url, "DROP OWNED BY doctor_nobody", "DROP ROLE doctor_nobody")
