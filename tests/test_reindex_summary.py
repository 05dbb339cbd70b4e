"""The reindex summary adds up: scanned = added + updated + unchanged + not read; deleted notes were
in the index only; paths the scan passed by (a symlink, a note over the size limit) are counted apart.
It used to print "38405 scanned, 38405 added, ..., 1 skipped" for a symlink that was never scanned,
and a binary note counted in neither. A vault with one file of each kind, real index."""
from __future__ import annotations

import os

from conftest import write_notes
from vaultrag.cli import render_report
from vaultrag.indexer import reindex


def test_every_kind_of_file_is_counted_once_and_the_line_adds_up(tmp_path, cfg_for):
    v = write_notes(tmp_path / "v", {
        "same.md": "# Same\n\nRivers and bridges.\n",
        "edit.md": "# Edit\n\nThe first draft.\n",
        "gone.md": "# Gone\n\nDeleted before the second run.\n",
        "touch.md": "# Touch\n\nSaved again with the same text.\n",
    })
    cfg = cfg_for(v, max_file_bytes=4096)
    first = reindex(cfg, embed=False)
    assert (first.scanned, first.added, first.not_read, first.skipped) == (4, 4, 0, [])
    (v / "edit.md").write_text("# Edit\n\nThe second draft, longer.\n", encoding="utf-8")
    (v / "gone.md").unlink()
    st = os.stat(v / "touch.md")
    os.utime(v / "touch.md", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    (v / "new.md").write_text("# New\n\nA new note.\n", encoding="utf-8")
    (v / "blob.md").write_bytes(b"# Blob\n\x00\x01\x02 binary\n")
    (v / "big.md").write_text("# Big\n\n" + "word " * 2000, encoding="utf-8")
    (v / "link.md").symlink_to(v / "same.md")
    r = reindex(cfg, embed=False)
    assert (r.added, r.updated, r.unchanged, r.not_read, r.deleted) == (1, 1, 2, 1, 1), r
    assert r.scanned == r.added + r.updated + r.unchanged + r.not_read == 5
    reasons = dict(r.skipped)
    assert set(reasons) == {"blob.md", "big.md", "link.md"}, reasons
    line = next(x for x in render_report(r).splitlines() if x.startswith("files:"))
    assert line == "files:   5 scanned: 1 added, 1 updated, 2 unchanged, 1 not read; 1 deleted; 2 other paths skipped"
