"""The SQLite write path of a reindex (issue 18, round 4): a group's files rows before their chunks
(FTS5 flushes once a group, not once a file), chunk text deflated once by a full rebuild, FTS5 forms
made by the workers."""
from __future__ import annotations

import shutil
from pathlib import Path

from vaultrag.config import load_config
from vaultrag.indexer import build_file, reindex
from vaultrag.store.sqlite.connection import connect
from vaultrag.store.sqlite.store import SqliteStore, fts_forms

from conftest import shared_path, write_notes


def _notes(n: int) -> dict[str, str]:
    return {f"n{i:03d}.md": f"# Note {i}\n\nThe pelican number {i} eats herring at dawn, said note {i}.\n\n"
                            f"## Later\n\nMore words about gulls and a tern called t{i}.\n" for i in range(n)}


def _file_writes(root: Path, cfg) -> list:
    out = []
    for p in sorted(root.glob("*.md")):
        raw = p.read_bytes()
        fw, _inputs, _secrets, _warnings = build_file(p.name, p.stat(), raw, raw.decode(), cfg, len)
        out.append(fw)
    return out


def _segments(db: Path) -> int:
    con = connect(db, readonly=True)
    try:
        return con.execute("SELECT count(DISTINCT segid) FROM chunks_fts_idx").fetchone()[0]
    finally:
        con.close()


def test_a_group_of_files_is_one_fts_segment(tmp_path):
    root = write_notes(tmp_path / "v", _notes(24))
    cfg = load_config(vault=str(root), db=str(tmp_path / "x.sqlite"), model="bundled")
    writes = _file_writes(root, cfg)
    store = SqliteStore(tmp_path / "x.sqlite", with_vec=False)
    try:
        with store.transaction():
            counts = store.write_files([(fw, None) for fw in writes])
    finally:
        store.close()
    assert counts == [len(fw.chunks) for fw in writes] and sum(counts) >= 24
    assert _segments(tmp_path / "x.sqlite") == 1  # file by file, the snapshot trigger flushed one a file


def test_forms_from_a_worker_index_what_the_store_would(tmp_path):
    root = write_notes(tmp_path / "v", {"a.md": "---\nlang: de\n---\n# Häuser\n\nDie Häuser stehen am Flussufer.\n",
                                        "b.md": "# 中文笔记\n\n这是一个关于数据库的笔记。\n"})
    cfg = load_config(vault=str(root), db=str(tmp_path / "x.sqlite"), model="bundled")
    plain, ahead = tmp_path / "plain.sqlite", tmp_path / "ahead.sqlite"
    for db, with_forms in ((plain, False), (ahead, True)):
        store = SqliteStore(db, with_vec=False)
        try:
            writes = _file_writes(root, cfg)
            if with_forms:
                writes = [fw.__class__(**{**fw.__dict__, "search_forms": fts_forms(fw)}) for fw in writes]
                assert all(fw.search_forms for fw in writes)
            with store.transaction():
                store.write_files([(fw, None) for fw in writes])
            vocab = store.fts_vocabulary()
        finally:
            store.close()
        if not with_forms:
            expected = vocab
    terms = {t for t, *_ in vocab}
    assert vocab == expected and "数" in terms and not any("ä" in t for t in terms)


def _chunk_rows(db: Path) -> list:
    con = connect(db, readonly=True)
    try:
        return con.execute("SELECT id, text, typeof(text) FROM chunks ORDER BY id").fetchall()
    finally:
        con.close()


def test_full_rebuild_deflates_chunk_text_as_an_incremental_run_does(tmp_path):
    # Small (no dictionary: deflated alone) and above TEXT_DICT_MIN_CHUNKS (a dictionary).
    small = write_notes(tmp_path / "small", _notes(30))
    big = tmp_path / "big"
    src = shared_path("eval", "vaults", "obsidian-help")
    for lang in ("en", "de"):
        shutil.copytree(src / lang, big / lang)
    for name, root in (("small", small), ("big", big)):
        inc, full = tmp_path / f"{name}-inc.sqlite", tmp_path / f"{name}-full.sqlite"
        reindex(load_config(vault=str(root), db=str(inc), model="bundled"), workers=1, embed=False)
        reindex(load_config(vault=str(root), db=str(full), model="bundled"), full=True, workers=1, embed=False)
        a, b = _chunk_rows(inc), _chunk_rows(full)
        assert a == b
        assert sum(kind == "blob" for *_, kind in b) > 0  # the deferred text was packed in the end


def test_a_full_rebuild_commits_in_larger_groups_than_an_incremental_run(tmp_path, monkeypatch):
    """A full rebuild's shadow copy is discarded whole when killed, so it writes REBUILD_FILES_PER_GROUP
    files a transaction; an incremental run keeps FILES_PER_GROUP (what a kill -9 may lose)."""
    from vaultrag import indexer

    root = write_notes(tmp_path / "v", _notes(20))
    cfg = load_config(vault=str(root), db=str(tmp_path / "i.sqlite"), model="bundled")
    monkeypatch.setattr(indexer, "FILES_PER_GROUP", 3)
    monkeypatch.setattr(indexer, "REBUILD_FILES_PER_GROUP", 7)
    groups: list[int] = []
    real = SqliteStore.write_files
    monkeypatch.setattr(SqliteStore, "write_files", lambda self, batch: groups.append(len(batch)) or real(self, batch))
    reindex(cfg, workers=1, embed=False)
    assert groups == [3] * 6 + [2]
    groups.clear()
    reindex(cfg, full=True, workers=1, embed=False)
    assert groups == [7, 7, 6]
    with SqliteStore(cfg.db_path(), readonly=True) as s:
        assert s.counts()["files"] == 20
