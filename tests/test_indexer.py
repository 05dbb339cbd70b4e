"""The indexer on real files and a real SQLite database: incremental behaviour and bad input."""
from __future__ import annotations

import os
import signal
import stat
import threading

import pytest

from conftest import write_notes
from vaultrag.errors import IndexCorrupt, IndexLocked, VaultNotFound
from vaultrag.indexer import reindex
from vaultrag.store.sqlite import ReindexLock
from vaultrag.store import Store


def test_full_index_of_example_vault(vault, cfg_for):
    cfg = cfg_for(vault)
    r = reindex(cfg)
    assert r.added == 7 and r.scanned == 7 and not r.skipped
    with Store(cfg.db_path(), readonly=True) as s:
        counts = s.counts()
        assert counts["files"] == 7 and counts["chunks"] >= 10
        assert counts["vectors"] == counts["chunks"], r.embedding
        assert s.get_meta("tokenizer") in ("cl100k", "estimate-len/4")
    assert stat.S_IMODE(os.stat(cfg.db_path()).st_mode) == 0o600


def test_incremental_noop_touch_edit_rename_delete(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg)
    r = reindex(cfg)
    assert (r.added, r.updated, r.deleted, r.chunks_written) == (0, 0, 0, 0) and r.unchanged == 7

    ada = vault / "People" / "Ada.md"
    os.utime(ada, ns=(ada.stat().st_atime_ns, ada.stat().st_mtime_ns + 10**9))
    r = reindex(cfg)
    assert r.touched == 1 and r.chunks_written == 0 and r.updated == 0

    plan = vault / "Projects" / "Backup plan.md"
    plan.write_text(plan.read_text() + "\n## Costs\n\nStorage costs about forty euros a month in total.\n")
    r = reindex(cfg)
    assert r.updated == 1 and r.embedding.embedded >= 1
    assert r.embedding.reused >= 3, "unchanged sections of an edited note keep their vectors"

    (vault / "Tools" / "Model2Vec.md").rename(vault / "Tools" / "Static embeddings.md")
    r = reindex(cfg)
    assert (r.added, r.deleted) == (1, 1)
    # the title comes from the H1, so the embedded input is unchanged: nothing re-embedded
    assert r.embedding.embedded == 0 and r.embedding.reused >= 1

    (vault / "Daily" / "2026-11-02.md").unlink()
    r = reindex(cfg)
    assert r.deleted == 1
    with Store(cfg.db_path(), readonly=True) as s:
        assert "Daily/2026-11-02.md" not in s.files()
        c = s.counts()
        assert c["vectors"] == c["chunks"]


def test_bad_inputs_are_skipped_or_repaired_with_reasons(tmp_path, cfg_for):
    v = write_notes(tmp_path / "v", {
        "good.md": "# Good\n\nA perfectly ordinary note about gardening tomatoes.\n",
        "empty.md": "",
        "spaces and ünïcode/naïve café.md": "# Café\n\nEspresso brewing ratios and grind size notes.\n",
    })
    (v / "latin1.md").write_bytes("# Caf\xe9 menu\n\nCr\xe8me br\xfbl\xe9e is on the menu today.\n".encode("latin-1"))
    (v / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (v / "crlf.md").write_bytes("\ufeff---\r\ntags: [x]\r\n---\r\n# Windows\r\n\r\nLine endings from Windows editors.\r\n".encode())
    (v / "huge.md").write_text("# Huge\n\n" + "lorem ipsum dolor sit amet " * 40000)
    (v / "bad-yaml.md").write_text("---\ntags: [unclosed\n---\n# Broken frontmatter\n\nThe body still counts.\n")
    cfg = cfg_for(v, max_file_bytes=1_000_000)
    r = reindex(cfg, embed=False)
    reasons = dict(r.skipped)
    assert "binary" in reasons["binary.md"]
    assert "max_file_bytes" in reasons["huge.md"]
    assert any(p == "latin1.md" and "UTF-8" in w for p, w in r.warnings)
    with Store(cfg.db_path(), readonly=True) as s:
        files = s.files()
        assert {"good.md", "empty.md", "latin1.md", "crlf.md", "bad-yaml.md",
                "spaces and ünïcode/naïve café.md"} <= set(files)
        texts = {ch.text for ch in s.chunks_of_files([r.id for r in files.values()])}
        assert any("The body still counts." in t for t in texts)
        assert not any("\r" in t for t in texts)


def test_unreadable_file_keeps_its_previous_version(tmp_path, cfg_for, monkeypatch):
    v = write_notes(tmp_path / "v", {"a.md": "# A\n\nFirst version of the note about kites.\n"})
    cfg = cfg_for(v)
    reindex(cfg, embed=False)
    (v / "a.md").write_text("# A\n\nSecond version of the note about kites and wind.\n")
    from vaultrag import safe_io
    real = safe_io.read_in_vault

    def deny(root, rel, max_bytes):
        if rel == "a.md":
            raise PermissionError(13, "Permission denied")
        return real(root, rel, max_bytes)
    monkeypatch.setattr(safe_io, "read_in_vault", deny)  # root can read anything: simulate the boundary
    r = reindex(cfg, embed=False)
    assert dict(r.skipped)["a.md"].startswith("unreadable")
    with Store(cfg.db_path(), readonly=True) as s:
        assert "a.md" in s.files()
        assert "First version" in s.chunks_of_files([s.files()["a.md"].id])[0].text


def test_symlinks_are_never_followed(tmp_path, cfg_for):
    outside = write_notes(tmp_path / "outside", {"secret.md": "# Private\n\nPrivate diary text outside the vault.\n"})
    v = write_notes(tmp_path / "v", {"a.md": "# A\n\nNote inside the vault about rivers.\n"})
    (v / "link-out.md").symlink_to(outside / "secret.md")
    (v / "dir-out").symlink_to(outside, target_is_directory=True)
    (v / "loop").symlink_to(v, target_is_directory=True)
    r = reindex(cfg_for(v), embed=False)
    assert r.scanned == 1
    reasons = dict(r.skipped)
    assert "outside the vault" in reasons["link-out.md"] and "outside the vault" in reasons["dir-out"]
    assert "symlink" in reasons["loop"]


def test_missing_vault_is_a_clear_error(tmp_path, cfg_for):
    with pytest.raises(VaultNotFound, match="does not exist"):
        reindex(cfg_for(tmp_path / "nope"))


def test_corrupt_database_says_rebuild_and_full_repairs_it(vault, cfg_for):
    cfg = cfg_for(vault)
    cfg.db_path().write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexCorrupt, match="--full"):
        reindex(cfg, embed=False)
    r = reindex(cfg, full=True, embed=False)
    assert r.added == 7
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.counts()["files"] == 7


def test_second_reindex_waits_then_says_why(vault, cfg_for):
    cfg = cfg_for(vault)
    with ReindexLock(cfg.db_path(), 0):
        with pytest.raises(IndexLocked, match="another reindex"):
            reindex(cfg, lock_wait_s=0.3, embed=False)
    assert reindex(cfg, embed=False).added == 7


def test_ctrl_c_commits_finished_files_and_reports(tmp_path, cfg_for):
    v = write_notes(tmp_path / "v", {f"n{i:03}.md": f"# Note {i}\n\nText number {i} about topic {i}.\n"
                                     for i in range(150)})
    cfg = cfg_for(v)
    seen = []

    def progress(done, total, path):
        seen.append(path)
        if done == 3:
            signal.raise_signal(signal.SIGINT)
    r = reindex(cfg, progress=progress, embed=False)
    assert r.interrupted
    assert 3 <= r.added < 150
    with Store(cfg.db_path(), readonly=True) as s:
        assert len(s.files()) == r.added
    r2 = reindex(cfg, embed=False)
    assert r2.added == 150 - r.added and not r2.interrupted


def test_full_rebuild_failure_keeps_old_index(vault, cfg_for, monkeypatch):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    import vaultrag.indexer as ix

    def boom(*a, **k):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(ix, "build_file", boom)
    with pytest.raises(RuntimeError):
        reindex(cfg, full=True, embed=False)
    with Store(cfg.db_path(), readonly=True) as s:
        assert s.counts()["files"] == 7
    assert not list(cfg.db_path().parent.glob("*.rebuild-*"))


def test_full_rebuild_leaves_a_compact_file(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg)
    for p in list(vault.rglob("*.md"))[:3]:  # edits free pages in the incremental index
        p.write_text(p.read_text(encoding="utf-8") + "\nMore text for the rebuild.\n", encoding="utf-8")
    reindex(cfg, full=True)
    with Store(cfg.db_path(), readonly=True) as store:
        assert store.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0


def test_read_note_refuses_a_note_swapped_for_a_link_after_the_scan(tmp_path):
    """The scan skips symlinks; a note replaced by one between the scan and the read is not read."""
    from vaultrag.indexer import read_note

    outside = tmp_path / "private.txt"
    outside.write_text("text from outside the vault\n")
    v = write_notes(tmp_path / "v", {"Notes/a.md": "# A\n\nkites\n"})
    raw, text, reason = read_note(v, "Notes/a.md", 1 << 20)
    assert "kites" in text and reason is None
    (v / "Notes" / "a.md").unlink()
    (v / "Notes" / "a.md").symlink_to(outside)
    raw, text, reason = read_note(v, "Notes/a.md", 1 << 20)
    assert raw is None and text is None and "link" in reason  # refused, the outside text never read


def test_a_new_scrubber_ruleset_rescrubs_an_existing_index(tmp_path, cfg_for, monkeypatch):
    """A secret an older scrubber let through does not stay in the index: the index records the
    ruleset it was scrubbed with, and the next plain reindex under another re-scrubs every note."""
    import vaultrag.indexer as indexer

    secret = "lantern copper zebra orbit"
    vault = write_notes(tmp_path / "v", {"Keys.md": f"# Keys\n\nGPG passphrase: {secret}\n",
                                         "Other.md": "# Other\n\nNothing to hide here.\n"})
    cfg = cfg_for(vault)

    def stored_text():
        with Store(cfg.db_path(), readonly=True) as s:
            ids = [r[0] for r in s.conn.execute("SELECT id FROM chunks")]
            return " ".join(c.text for c in s.chunks_by_id(ids).values())

    with monkeypatch.context() as m:  # an older vaultrag: its scrubber misses the passphrase
        m.setattr(indexer, "scrub", lambda text: (text, ()))
        m.setattr(indexer, "ruleset_id", lambda: "older")
        reindex(cfg, embed=False)
        assert secret in stored_text()
    r = reindex(cfg, embed=False)
    assert r.updated + r.added == 2, "every note re-scrubbed, not only the changed ones"
    assert secret not in stored_text() and "[REDACTED:passphrase-words]" in stored_text()
    assert reindex(cfg, embed=False).chunks_written == 0, "then the index is in line again"


def test_reindex_follows_the_bundled_model_to_a_moved_checkout(vault, cfg_for, tmp_path, monkeypatch):
    """A new clone with the old one deleted: the index must load the model from the new folder.
    `model_path` used to keep the old folder (same model, same fingerprint, nothing re-embedded), so
    every search ran without vectors and `vaultrag reindex`, the fix doctor names, changed nothing."""
    import shutil

    from vaultrag import embedder
    from vaultrag.retrieve import search
    from vaultrag.store import open_store

    old, new = tmp_path / "old-clone" / "model", tmp_path / "new-clone" / "model"
    shutil.copytree(embedder.bundled_model_path(), old)
    monkeypatch.setattr(embedder, "bundled_model_path", lambda: old)
    cfg = cfg_for(vault)
    reindex(cfg)
    shutil.copytree(old, new)
    shutil.rmtree(old.parent)
    monkeypatch.setattr(embedder, "bundled_model_path", lambda: new)
    for _ in range(2):  # the second run takes the no-load path (the signature matches)
        report = reindex(cfg)
        assert report.embedding.embedded == 0 and not report.embedding.reembedded_all
        with open_store(cfg, readonly=True) as store:
            assert store.meta().model_path == str(new)
    assert search("how long are daily snapshots kept?", cfg).channels["vec"].ran
