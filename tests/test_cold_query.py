"""Issue 18, round 4 (room cold3): the query paths made cheaper without changing what they answer."""
from __future__ import annotations

import sqlite3

import pytest

from vaultrag.session_memory import SYNCHRONOUS, claim, seen_count, state_file


def _key(h):
    return h


def test_session_state_does_not_wait_for_the_disk(tmp_path):
    claim(tmp_path, "s", "q", ["a"], _key)
    conn = sqlite3.connect(state_file(tmp_path))
    try:  # the setting is per connection: read it back through the module's own connection
        from vaultrag.session_memory import _connect

        own = _connect(state_file(tmp_path))
        assert own.execute("PRAGMA synchronous").fetchone()[0] == 0 and SYNCHRONOUS == "OFF"
        assert own.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        own.close()
    finally:
        conn.close()


def test_a_damaged_session_state_is_started_again(tmp_path):
    assert claim(tmp_path, "s", "q1", ["a", "b"], _key) == ["a", "b"]
    path = state_file(tmp_path)
    path.write_bytes(b"this is not a database at all, it was damaged" * 100)
    # the memory is gone with the file: the block is injected again, then remembered as before
    assert claim(tmp_path, "s", "q1", ["a", "b"], _key) == ["a", "b"]
    assert claim(tmp_path, "s", "q1", ["a", "b"], _key) == []
    assert seen_count(tmp_path, "s") == 2
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_locked_session_state_is_not_reset(tmp_path):
    claim(tmp_path, "s", "q1", ["a"], _key)
    from vaultrag.store.sqlite.connection import sqlite_module

    # the module's own driver: two SQLite libraries in one process do not see each other's locks
    holder = sqlite_module().connect(str(state_file(tmp_path)), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(Exception, match="locked|busy"):
            claim(tmp_path, "s", "q2", ["b"], _key)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert seen_count(tmp_path, "s") == 1  # the state was kept, not started again


def test_the_lean_driver_is_the_package_s_own_c_module():
    import subprocess
    import sys

    code = ("import sys\nfrom vaultrag.store.sqlite.connection import driver, driver_name, sqlite_module\n"
            "lean = driver()\nbefore = sorted(m for m in ('sqlite3', 'sqlean', 'datetime') if m in sys.modules)\n"
            "pkg = sqlite_module()\n"  # the package imported after: the same classes, not a second copy
            "same = pkg.Connection is lean.Connection and pkg.OperationalError is lean.OperationalError\n"
            "c = lean.connect(':memory:', isolation_level=None)\n"
            "print(driver_name(), before, same, c.execute('select 1').fetchone()[0])\n")
    for forced in ("", "stdlib"):
        env = {k: v for k, v in __import__("os").environ.items() if k != "VAULTRAG_SQLITE"}
        if forced:
            env["VAULTRAG_SQLITE"] = forced
        p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env, timeout=60)
        assert p.returncode == 0, p.stderr
        name, rest = p.stdout.split(" ", 1)
        assert name == (forced.replace("stdlib", "sqlite3") or name) and rest.strip() == "[] True 1", p.stdout


QUICK = [["search", "q"], ["search", "a b c", "--json"], ["search", "--json", "q", "--k", "3"],
         ["search", "q", "--k=5", "--max-tokens", "0", "--channels", "bm25,vec", "--no-gate", "--explain",
          "--scope", "vault", "-v"],
         ["search", "--queries", "f.jsonl", "--db", "/x", "--vault", "/v", "--config", "c.yaml", "--store", "s",
          "--collection", "a,b", "--context", "--no-graph", "--verbose"],
         ["search"], ["search", "x=y", "--vault="], ["search", "--k", " 7", "q"]]
# argparse's business: help, errors, abbreviations, negative numbers, "--", a second query, other commands
ARGPARSE = [["search", "q", "--k", "x"], ["search", "-h"], ["search", "q", "r"], ["search", "--ex", "q"],
            ["search", "q", "--k", "-1"], ["status"], ["search", "q", "--json=1"], ["search", "--", "q"],
            ["search", "-vv", "q"], ["search", "q", "--db"], ["search", "-", "q"], []]


def test_quick_search_arguments_are_argparse_s():
    from vaultrag.cli import build_parser
    from vaultrag.search_cli import quick_args

    for argv in QUICK:
        quick = quick_args(argv)
        assert quick is not None, argv
        assert vars(quick) == vars(build_parser().parse_args(argv)), argv
    for argv in ARGPARSE:
        assert quick_args(argv) is None, argv


def test_search_cli_does_not_import_argparse(vault, cfg_for, isolated_env):
    import json
    import os
    import subprocess
    import sys

    from vaultrag.indexer import reindex

    cfg = cfg_for(vault)
    reindex(cfg)
    env = {**os.environ, "VAULTRAG_VAULT": str(vault), "VAULTRAG_DB": str(cfg.db_path())}
    code = ("import sys\nfrom vaultrag.cli import main\nrc = main(['search', 'daily snapshots retention', '--json'])\n"
            "print(sorted(m for m in ('argparse', 'gettext', 'shutil', 'lzma', 'bz2') if m in sys.modules), "
            "file=sys.stderr)\nsys.exit(rc)\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["status"] == "ok"
    assert p.stderr.strip().splitlines()[-1] == "[]"
