"""Issue 18: a reindex with nothing changed trusts the vault snapshot the last whole-vault run
stored, and only while no document was written since (triggers on `files`). Real files, real SQLite."""
from __future__ import annotations

import dataclasses
import os

import pytest

from vaultrag.indexer import reindex, reindex_paths
from vaultrag.store import Store
from vaultrag.store.base import FILES_SNAPSHOT_META
from vaultrag.store.sqlite import schema


def _snapshot(cfg) -> str | None:
    with Store(cfg.db_path(), readonly=True) as s:
        return s.get_meta(FILES_SNAPSHOT_META)


def _texts(cfg, path: str) -> str:
    with Store(cfg.db_path(), readonly=True) as s:
        rec = s.files_at([path])[path]
        return "\n".join(c.text for c in s.chunks_of_files([rec.id]))


def test_whole_vault_run_stores_a_snapshot_and_a_noop_keeps_it(vault, cfg_for):
    cfg = cfg_for(vault)
    first = reindex(cfg, embed=False)
    snap = _snapshot(cfg)
    assert first.added > 0 and snap
    again = reindex(cfg, embed=False)
    assert (again.added, again.updated, again.deleted, again.unchanged) == (0, 0, 0, first.added)
    assert _snapshot(cfg) == snap


def test_any_document_write_drops_the_snapshot(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    note = next(vault.rglob("*.md"))
    note.write_text(note.read_text(encoding="utf-8") + "\nsnapshot pelican\n", encoding="utf-8")
    assert reindex_paths(cfg, [note], embed=False).updated == 1
    assert _snapshot(cfg) is None
    with Store(cfg.db_path()) as s, s.transaction():  # a touch, a delete: the triggers fire on each
        s.set_meta(FILES_SNAPSHOT_META, "x")
        s.touch_file(note.relative_to(vault).as_posix(), 1, 1)
        assert s.get_meta(FILES_SNAPSHOT_META) is None
        s.set_meta(FILES_SNAPSHOT_META, "x")
        assert s.delete_file(note.relative_to(vault).as_posix())
        assert s.get_meta(FILES_SNAPSHOT_META) is None


def test_a_watched_write_then_a_revert_to_the_old_stat_is_still_seen(vault, cfg_for):
    """The index changed (watch path) while the vault came back to the snapshot's exact stat: the
    snapshot must not be trusted, or the index would keep the edited text forever."""
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    note = next(vault.rglob("*.md"))
    rel = note.relative_to(vault).as_posix()
    original = note.read_bytes()
    st = note.stat()
    edited = original.replace(original[:8], b"PELICANS", 1)  # same size, other text
    note.write_bytes(edited)
    reindex_paths(cfg, [note], embed=False)
    assert "PELICANS" in _texts(cfg, rel)
    note.write_bytes(original)
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))  # the stat the snapshot recorded
    rep = reindex(cfg, embed=False)
    assert rep.updated == 1
    assert "PELICANS" not in _texts(cfg, rel)


def test_changes_after_a_snapshot_are_found(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    notes = sorted(vault.rglob("*.md"))
    notes[0].write_text(notes[0].read_text(encoding="utf-8") + "\nmore\n", encoding="utf-8")
    notes[1].unlink()
    (vault / "brand new.md").write_text("# Brand new\n\nA note that was not there.\n", encoding="utf-8")
    rep = reindex(cfg, embed=False)
    assert (rep.added, rep.updated, rep.deleted) == (1, 1, 1)
    assert reindex(cfg, embed=False).added + reindex(cfg, embed=False).updated == 0


def test_a_skipped_file_is_looked_at_again(vault, cfg_for):
    """Raising the size limit indexes a skipped file next time although its stat never changed. A
    file over the limit is left out by the scan itself (robust8), so the snapshot is of the files
    the index should hold: the same limit is a no-op that still reports the skip, a raised one
    scans big.md in and no longer matches."""
    big = vault / "big.md"
    big.write_text("# Big\n\n" + "word " * 4000, encoding="utf-8")
    small = cfg_for(vault, max_file_bytes=10_000)
    rep = reindex(small, embed=False)
    assert any("big.md" in p for p, _ in rep.skipped)
    again = reindex(small, embed=False)
    assert any("big.md" in p for p, _ in again.skipped) and (again.added, again.updated) == (0, 0)
    rep = reindex(dataclasses.replace(small, max_file_bytes=1_000_000), embed=False)
    assert rep.added == 1


def test_an_index_without_the_triggers_is_rebuilt(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    with Store(cfg.db_path()) as s, s.transaction():
        for op in ("insert", "update", "delete"):
            s.conn.execute(f"DROP TRIGGER files_snapshot_{op}")
        s.set_meta("schema_version", "4")
    rep = reindex(cfg, embed=False)
    assert any("rebuilt" in w for _, w in rep.warnings) and rep.added > 0
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.schema_version() == schema.SCHEMA_VERSION >= 5
        names = {r[0] for r in s.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"files_snapshot_insert", "files_snapshot_update", "files_snapshot_delete"} <= names


@pytest.mark.parametrize("files", [0, 3])
def test_file_stats_match_records(vault, cfg_for, files):
    cfg = cfg_for(vault)
    for p in sorted(vault.rglob("*.md"))[files:]:
        p.unlink()
    reindex(cfg, embed=False)
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.file_stats() == {p: (r.mtime_ns, r.size) for p, r in s.files().items()}
        assert len(s.file_stats()) == files


# -- chunk text with a preset deflate dictionary (issue 18: size per chunk) ---------------------
def _dict_vault(root):
    from conftest import write_notes

    words = "restore the latest snapshot into the staging cluster and verify checksums before the rollout".split()
    notes = {}
    for i in range(12):
        body = " ".join(words[(i + j) % len(words)] for j in range(60)) + f" note{i} 中文 ✓"
        notes[f"n{i:02d}.md"] = f"# Note {i}\n\n{body}\n"
    return write_notes(root, notes)


def _stored_texts(db) -> dict:
    with Store(db, readonly=True) as s:
        return {p: [c.text for c in s.chunks_of_files([r.id])] for p, r in s.files().items()}


def test_text_dictionary_shrinks_chunks_and_reads_back_exactly(tmp_path, cfg_for, monkeypatch):
    vault = _dict_vault(tmp_path / "v")
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    before_texts = _stored_texts(cfg.db_path())
    reader = Store(cfg.db_path(), readonly=True)  # opened before the dictionary exists
    reader.chunks_of_files([1])
    with Store(cfg.db_path()) as s:
        blob_bytes = s.conn.execute("SELECT sum(length(text)) FROM chunks").fetchone()[0]
        assert not s.train_text_dict()  # below TEXT_DICT_MIN_CHUNKS
        monkeypatch.setattr(schema, "TEXT_DICT_MIN_CHUNKS", 5)
        monkeypatch.setattr(schema, "TEXT_DICT_BATCH", 4)  # several batches
        assert s.train_text_dict() and not s.train_text_dict()  # once
        after_bytes = s.conn.execute("SELECT sum(length(text)) FROM chunks").fetchone()[0]
        firsts = {r[0] for r in s.conn.execute("SELECT substr(text, 1, 1) FROM chunks WHERE typeof(text) = 'blob'")}
    assert after_bytes < blob_bytes * 0.8 and firsts == {b"\x01"}
    assert _stored_texts(cfg.db_path()) == before_texts
    ids = [r.id for r in reader.files().values()]
    assert [c.text for c in reader.chunks_of_files(ids)] == [t for p in sorted(before_texts) for t in before_texts[p]]
    reader.close()


def test_text_dictionary_new_writes_and_deletes_keep_fts_exact(tmp_path, cfg_for, monkeypatch):
    vault = _dict_vault(tmp_path / "v")
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    monkeypatch.setattr(schema, "TEXT_DICT_MIN_CHUNKS", 5)
    with Store(cfg.db_path()) as s:
        s.optimize()  # what a reindex writing many files runs: trains the dictionary
        assert s.conn.execute("SELECT count(*) FROM text_dicts").fetchone()[0] == 1
    (vault / "n03.md").unlink()
    (vault / "n05.md").write_text("# Note 5\n\nverify checksums before the rollout, then restore the staging "
                                  "cluster from the latest snapshot\n", encoding="utf-8")
    rep = reindex(cfg, embed=False)
    assert (rep.updated, rep.deleted) == (1, 1)
    with Store(cfg.db_path(), readonly=True) as s:
        vocab = s.fts_vocabulary()
        firsts = {r[0] for r in s.conn.execute("SELECT substr(text, 1, 1) FROM chunks WHERE typeof(text) = 'blob'")}
    assert firsts == {b"\x01"}  # the new chunk used the dictionary too
    fresh = dataclasses.replace(cfg, db=str(tmp_path / "fresh.sqlite"))
    reindex(fresh, embed=False)
    with Store(fresh.db_path(), readonly=True) as s:
        assert s.fts_vocabulary() == vocab
    assert _stored_texts(cfg.db_path()) == _stored_texts(fresh.db_path())
