"""VAULTRAG_SQLITE forces a SQLite driver; what vaultrag says about the vector channel then must be
true (trial finding: `VAULTRAG_SQLITE=stdlib` on a Python whose sqlite3 cannot load extensions
said "sqlean-py is not installed (pip install sqlean-py)" while sqlean-py was installed)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from vaultrag.store.sqlite import connection
from vaultrag.store.sqlite.connection import load_vec

HAS_SQLEAN = importlib.util.find_spec("sqlean") is not None


def stdlib_connection_without_extensions():
    import _sqlite3

    conn = _sqlite3.connect(":memory:")
    if hasattr(conn, "enable_load_extension"):
        conn.close()
        pytest.skip("this Python's sqlite3 can load extensions: forcing it keeps the vector channel on")
    return conn


def cli(*args, env):
    return subprocess.run([sys.executable, "-m", "vaultrag", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.skipif(not HAS_SQLEAN, reason="needs sqlean-py installed (the case the trial met)")
def test_forced_stdlib_says_it_was_asked_for_and_how_to_turn_vectors_back_on(vault, tmp_path):
    stdlib_connection_without_extensions().close()
    env = {**os.environ, "VAULTRAG_SQLITE": "stdlib"}
    db = str(tmp_path / "i.sqlite")
    rep = cli("reindex", "--vault", str(vault), "--db", db, env=env)
    assert rep.returncode == 0, rep.stderr
    status = cli("status", "--vault", str(vault), "--db", db, env=env).stdout
    search = cli("search", "--vault", str(vault), "--db", db, "restore the backup", env=env).stdout
    lines = [next(x for x in rep.stdout.splitlines() if x.startswith("vectors:")),
             next(x for x in status.splitlines() if x.startswith("vectors:")),
             next(x for x in search.splitlines() if x.startswith("channels:"))]
    for line in lines:
        assert "VAULTRAG_SQLITE=stdlib" in line and "cannot load extensions" in line, line
        assert "vector channel is off" in line and "unset VAULTRAG_SQLITE" in line, line
        assert "not installed" not in line, line  # it is installed
    # unset, the same index answers with vectors through sqlean-py
    unset = {k: v for k, v in os.environ.items() if k != "VAULTRAG_SQLITE"}
    assert cli("reindex", "--vault", str(vault), "--db", db, env=unset).returncode == 0
    assert "vec: skipped" not in cli("search", "--vault", str(vault), "--db", db, "restore the backup",
                                     env=unset).stdout


@pytest.mark.parametrize("forced,sqlean,says", [
    ("stdlib", True, ["VAULTRAG_SQLITE=stdlib", "unset VAULTRAG_SQLITE to use the installed sqlean-py"]),
    ("stdlib", False, ["VAULTRAG_SQLITE=stdlib", "unset VAULTRAG_SQLITE and pip install sqlean-py"]),
    ("sqlean", False, ["VAULTRAG_SQLITE=sqlean", "not installed", "pip install sqlean-py"]),
    ("", True, ["sqlean-py is installed but failed to import", "--force-reinstall sqlean-py"]),
    ("", False, ["sqlean-py is not installed (pip install sqlean-py)"]),
])
def test_each_reason_for_no_extension_loading_names_its_fix(monkeypatch, forced, sqlean, says):
    conn = stdlib_connection_without_extensions()
    real = importlib.util.find_spec
    monkeypatch.setattr(connection.importlib.util, "find_spec",
                        lambda name, *a: (real(name, *a) if sqlean else None) if name == "sqlean" else real(name, *a))
    monkeypatch.setenv("VAULTRAG_SQLITE", forced)
    try:
        why = load_vec(conn)
    finally:
        conn.close()
    assert why is not None and "cannot load extensions" in why
    assert [s for s in says if s not in why] == [], why
    if forced == "stdlib":
        assert "vector channel is off" in why and "sqlean-py is not installed" not in why


@pytest.mark.skipif(not HAS_SQLEAN, reason="needs sqlean-py installed (the case the trial met)")
def test_doctor_fix_for_a_forced_stdlib_is_to_unset_it(tmp_path):
    """doctor probes each hook's interpreter with this environment: a forced stdlib sqlite3 is
    fixed by unsetting VAULTRAG_SQLITE, not by installing what is installed."""
    from pathlib import Path

    import json

    from vaultrag import doctor
    from vaultrag.hook_check import Handler

    stdlib_connection_without_extensions().close()
    repo = Path(__file__).resolve().parents[1]
    script = repo / "hooks" / "user_prompt_submit.py"
    handler = Handler("UserPromptSubmit", tmp_path / "settings.json", sys.executable, ("-I", str(script)), 5.0)

    def problems(env: dict) -> list:
        # doctor's own probe, run without -I so that this tree's vaultrag answers (an editable
        # install elsewhere would answer under -I)
        out = subprocess.run([sys.executable, "-c", doctor._PROBE, str(script)], capture_output=True, text=True,
                             env={**env, "PYTHONPATH": str(repo)}, timeout=60, check=True).stdout
        probes = {(sys.executable, str(script.parent)): json.loads(out.strip().splitlines()[-1])}
        return [p for p in doctor.handler_problems(handler, [], probes) if p.check == "sqlite-vec"]

    forced = problems({**os.environ, "VAULTRAG_SQLITE": "stdlib"})
    assert len(forced) == 1 and "VAULTRAG_SQLITE=stdlib" in forced[0].problem, forced
    assert forced[0].fix.startswith("unset VAULTRAG_SQLITE") and "pip install" not in forced[0].fix
    assert problems({k: v for k, v in os.environ.items() if k != "VAULTRAG_SQLITE"}) == []
