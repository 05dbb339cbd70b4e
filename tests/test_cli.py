"""The `vaultrag` CLI and `python -m vaultrag.reindex` as real subprocesses."""
from __future__ import annotations

import json
import os
import subprocess
import sys


def cli(*args, env=None, module="vaultrag"):
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          env=env or os.environ.copy(), timeout=120)


def test_reindex_status_search_roundtrip(vault, tmp_path):
    db = str(tmp_path / "i.sqlite")
    r = cli("--vault", str(vault), "--db", db, "--json", module="vaultrag.reindex")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["added"] == 7 and report["embedding"]["available"] is True
    s = cli("status", "--vault", str(vault), "--db", db, "--json")
    info = json.loads(s.stdout)
    assert info["files"] == 7 and info["changed_since_reindex"] == 0 and info["embedding"]["model"]
    (vault / "People" / "Ada.md").write_text("# Ada\n\nChanged.\n")
    assert json.loads(cli("status", "--vault", str(vault), "--db", db, "--json").stdout)["changed_since_reindex"] == 1
    q = cli("search", "restore drill", "--vault", str(vault), "--db", db, "--json", "--channels", "bm25,meta")
    ans = json.loads(q.stdout)
    assert ans["status"] == "ok" and not ans["channels"]["vec"]["ran"]
    human = cli("search", "restore drill", "--vault", str(vault), "--db", db, "--explain")
    assert "Backup plan.md:L" in human.stdout and "bm25=#" in human.stdout and "\033[" not in human.stdout
    weak = "quantum chromodynamics of gluon plasma"
    gated = cli("search", weak, "--vault", str(vault), "--db", db)
    assert "no evidence (below_threshold)" in gated.stdout and "--no-gate" in gated.stdout
    shown = cli("search", weak, "--vault", str(vault), "--db", db, "--no-gate")
    assert "weak evidence" in shown.stdout and ".md:L" in shown.stdout
    assert json.loads(cli("search", weak, "--vault", str(vault), "--db", db, "--no-gate", "--json").stdout
                      )["evidence"]["passed"] is False
    both = cli("search", weak, "--vault", str(vault), "--db", db, "--no-gate", "--context")
    assert both.returncode == 1 and "--context" in both.stderr
    k3 = json.loads(cli("search", "snapshots storage restore", "--vault", str(vault), "--db", db, "--json",
                        "--k", "3").stdout)
    assert len(k3["hits"]) == 3 and all("[… truncated]" not in h["text"] for h in k3["hits"])
    small = json.loads(cli("search", "snapshots storage restore", "--vault", str(vault), "--db", db, "--json",
                           "--k", "3", "--max-tokens", "60").stdout)
    assert len(small["hits"]) < 3, "a budget asked for still applies"
    qf = tmp_path / "q.jsonl"
    qf.write_text('{"_id": "a", "text": "restore drill"}\n{"_id": "b", "text": "倒排索引"}\n')
    lines = cli("search", "--queries", str(qf), "--vault", str(vault), "--db", db).stdout.splitlines()
    assert [json.loads(x)["_id"] for x in lines] == ["a", "b"]


def test_errors_are_one_clear_line_and_exit_1(tmp_path):
    r = cli("reindex", "--vault", str(tmp_path / "nope"), "--db", str(tmp_path / "x.sqlite"))
    assert r.returncode == 1 and r.stderr.startswith("vaultrag: error:") and "does not exist" in r.stderr
    r = cli("search", "x", "--vault", str(tmp_path), "--db", str(tmp_path / "none.sqlite"))
    assert r.returncode == 1 and "reindex" in r.stderr
    r = cli("search", "x", "--channels", "bogus", "--vault", str(tmp_path), "--db", str(tmp_path / "none.sqlite"))
    assert r.returncode == 1
    assert cli("frobnicate").returncode == 2


def test_status_names_the_sqlite_library_it_reads_with(vault, tmp_path):
    """A user on a pyenv Python (stdlib sqlite3 without extension loading) sees which SQLite
    vaultrag uses, in the human and the --json status, as doctor shows it for each hook."""
    import sqlite3

    from vaultrag.store.sqlite.connection import driver_name

    db = str(tmp_path / "i.sqlite")
    assert cli("reindex", "--vault", str(vault), "--db", db).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "VAULTRAG_SQLITE"}
    lib = json.loads(cli("status", "--vault", str(vault), "--db", db, "--json", env=env).stdout)["sqlite"]
    assert lib["library"] == driver_name() and lib["fts5"] is True and lib["forced"] is None
    assert lib["extensions"] is True and lib["vec"] is None  # this venv loads sqlite-vec, one way or the other
    forced = json.loads(cli("status", "--vault", str(vault), "--db", db, "--json",
                            env={**env, "VAULTRAG_SQLITE": "stdlib"}).stdout)["sqlite"]
    assert forced["library"] == "sqlite3" and forced["version"] == sqlite3.sqlite_version
    capable = hasattr(sqlite3.Connection, "enable_load_extension")
    assert forced["extensions"] is capable and (forced["vec"] is None) is capable
    human = cli("status", "--vault", str(vault), "--db", db, env={**env, "VAULTRAG_SQLITE": "stdlib"}).stdout
    line = next(x for x in human.splitlines() if x.startswith("sqlite:"))
    assert f"sqlite3 {sqlite3.sqlite_version}" in line and "VAULTRAG_SQLITE=stdlib" in line
    assert ("sqlite-vec loaded" in line) is capable and ("cannot load extensions" in line) is not capable
