"""Files the index does not hold are skipped with their reason, never reported as changed (robust8).

A new-user trial: a 200 MB note (over index.max_file_bytes) made `status` (changed_since_reindex 1)
and `doctor` ("1 note(s) changed since the last reindex ... fix: vaultrag reindex") report it as
changed forever, a fix that changed nothing; status's coverage line did not list it as skipped; a
FIFO named like a note was silently ignored. Failed on main bd414a4.
"""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO, write_notes
from vaultrag.indexer import reindex


def test_huge_note_and_fifo_are_skipped_with_reasons_never_changed(tmp_path, cfg_for):
    from vaultrag.doctor import freshness_problems
    from vaultrag.status import status

    v = write_notes(tmp_path / "v", {"a.md": "# A\n\nA note about rivers and bridges.\n"})
    cfg = cfg_for(v)
    with open(v / "huge.md", "wb") as fh:  # 200 MB, sparse: the size is real, the disk use is not
        fh.truncate(200 * 1024 * 1024)
    os.mkfifo(v / "pipe.md")
    r = reindex(cfg, embed=False)
    reasons = dict(r.skipped)
    assert "max_file_bytes" in reasons["huge.md"] and "FIFO" in reasons["pipe.md"], r.skipped
    assert r.scanned == 1 and r.added == 1
    info = status(cfg)
    assert info["changed_since_reindex"] == 0 and info["changed_paths"] == [], info["changed_paths"]
    skipped = {s["path"]: s["reason"] for s in info["coverage"]["scopes"]["vault"]["skipped"]}
    assert "max_file_bytes" in skipped["huge.md"] and "FIFO" in skipped["pipe.md"]
    passed: list[str] = []
    assert freshness_problems(cfg, passed) == [] and any("fresh" in line for line in passed)
    p = subprocess.run([sys.executable, "-m", "vaultrag", "status", "--vault", str(v), "--db", str(cfg.db_path())],
                       capture_output=True, text=True, timeout=120, cwd=str(REPO))
    assert p.returncode == 0, p.stderr
    assert "0 files changed" in p.stdout and "2 skipped" in p.stdout and "huge.md: larger than max_file_bytes" in p.stdout


def test_a_note_grown_past_the_limit_leaves_the_index_and_stays_listed_as_skipped(tmp_path, cfg_for):
    """Its stale text used to stay indexed while status called it changed after every reindex."""
    from vaultrag.status import status
    from vaultrag.store import Store

    v = write_notes(tmp_path / "v", {"a.md": "# A\n\nRivers.\n", "b.md": "# B\n\nA short note about bridges.\n"})
    cfg = cfg_for(v, max_file_bytes=10_000)
    assert reindex(cfg, embed=False).added == 2
    (v / "b.md").write_text("# B\n\n" + "bridges and viaducts " * 1000)
    r = reindex(cfg, embed=False)
    assert r.deleted == 1 and "max_file_bytes" in dict(r.skipped)["b.md"], (r.deleted, r.skipped)
    with Store(cfg.db_path(), readonly=True) as s:
        assert set(s.files()) == {"a.md"}
    info = status(cfg)
    assert info["changed_since_reindex"] == 0 and info["files"] == 1
    assert reindex(cfg, embed=False).deleted == 0  # and it stays that way


def test_binary_note_read_and_skipped_is_not_a_change_until_it_changes(tmp_path, cfg_for):
    """The same for a note skipped once read (NUL bytes; unreadable as non-root): status counted it
    as changed and doctor named `vaultrag reindex`, which skipped it again (trial10)."""
    from vaultrag.doctor import freshness_problems
    from vaultrag.status import status

    v = write_notes(tmp_path / "v", {"a.md": "# A\n\nA note about rivers and bridges.\n"})
    (v / "blob.md").write_bytes(b"\x00\x01binary" * 100)
    cfg = cfg_for(v)
    assert dict(reindex(cfg, embed=False).skipped)["blob.md"].startswith("binary content")
    for _ in range(2):  # and after an incremental run that read it again
        info = status(cfg)
        assert info["changed_since_reindex"] == 0, info["changed_paths"]
        skipped = {s["path"]: s["reason"] for s in info["coverage"]["scopes"]["vault"]["skipped"]}
        assert skipped["blob.md"].startswith("binary content")
        passed: list[str] = []
        assert freshness_problems(cfg, passed) == [] and passed
        reindex(cfg, embed=False)
    (v / "blob.md").write_text("# Blob\n\nNow a real note.\n")  # changed since: a change again, then indexed
    assert status(cfg)["changed_paths"] == ["blob.md"]
    reindex(cfg, embed=False)
    assert status(cfg)["changed_since_reindex"] == 0 and status(cfg)["files"] == 2
