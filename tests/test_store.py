"""The store: FTS5 stays in step with the chunks table; the schema is what we say it is."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import write_notes
from vaultrag.indexer import reindex
from vaultrag.store import Store
from vaultrag.store.connection import load_vec, sqlite_module, vec_extension_path

SNAPSHOT = Path(__file__).parent / "snapshots" / "schema.sql"


def vocabulary(db):
    with Store(db, readonly=True) as s:
        return s.fts_vocabulary()


def test_fts_matches_a_fresh_rebuild_after_adds_edits_deletes_renames(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    (vault / "Projects" / "Backup plan.md").write_text("# Backup plan\n\n## Schedule\n\nSnapshots now run at 04:00.\n")
    (vault / "People" / "Ada.md").unlink()
    (vault / "Tools" / "Model2Vec.md").rename(vault / "Model2Vec moved.md")
    write_notes(vault, {"New/Idea.md": "# Idea\n\nA new note about 中文 search and kimchi.\n"})
    reindex(cfg, embed=False)

    fresh = tmp_path / "fresh.sqlite"
    from vaultrag.config import load_config
    reindex(load_config(vault=str(vault), db=str(fresh)), embed=False)
    incremental = vocabulary(cfg.db_path())
    assert incremental == vocabulary(fresh)
    terms = {t for t, *_ in incremental}
    assert "04" in terms and "中" in terms and "文" in terms


def test_deleted_note_leaves_nothing_behind(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg)
    for p in vault.rglob("*.md"):
        p.unlink()
    reindex(cfg)
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.counts() == {"files": 0, "chunks": 0, "links": 0, "vectors": 0}
        assert s.fts_vocabulary() == []
        assert s.conn.execute("SELECT count(*) FROM keys").fetchone()[0] == 0


def test_schema_snapshot(tmp_path):
    with Store(tmp_path / "s.sqlite") as s:
        rows = s.conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                              "AND name NOT LIKE 'chunks_fts_%' AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
    text = "\n".join(f"-- {t} {n}\n{' '.join(sql.split())};" for t, n, sql in rows) + "\n"
    if not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(text)
    assert text == SNAPSHOT.read_text(), "schema changed: add a migration, then update tests/snapshots/schema.sql"


def test_vec_extension_loads_without_importing_numpy():
    import subprocess
    import sys
    code = ("import sys; from vaultrag.store.connection import connect, load_vec; c = connect(':memory:'); "
            "err = load_vec(c); print(err); print(c.execute('select vec_version()').fetchone()[0]); "
            "print('numpy' in sys.modules, 'sqlite_vec' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "None" and out[1].startswith("v") and out[2] == "False False"


@pytest.mark.parametrize("backend", ["stdlib", "sqlean"])
def test_both_sqlite_backends(backend, monkeypatch, tmp_path):
    import sqlite3
    if backend == "stdlib" and not hasattr(sqlite3.Connection, "enable_load_extension"):
        pytest.skip("this Python's sqlite3 cannot load extensions (the sqlean fallback covers it)")
    if backend == "sqlean":
        pytest.importorskip("sqlean")
    monkeypatch.setenv("VAULTRAG_SQLITE", backend)
    assert sqlite_module().__name__ == ("sqlite3" if backend == "stdlib" else "sqlean")
    with Store(tmp_path / "b.sqlite") as s:
        assert s.vec_error is None
        assert vec_extension_path() is not None
