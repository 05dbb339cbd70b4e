"""`reindex_paths` (the watch path) and the string-path scan, on real files and a real SQLite index:
after each change the index must equal a from-scratch build of the same vault."""
from __future__ import annotations

import dataclasses
import os

from conftest import write_notes
from vaultrag.indexer import reindex, reindex_paths
from vaultrag.scan import scan
from vaultrag.store import Store


def _content(db) -> dict:
    """Everything stored per file (path -> title, chunk texts, line ranges, link targets)."""
    with Store(db, readonly=True) as s:
        out = {}
        for path, rec in s.files().items():
            chunks = s.chunks_of_files([rec.id])
            out[path] = (rec.hash, sorted((c.text, c.line_start, c.line_end) for c in chunks),
                         sorted((ln.target_key, ln.line) for ln in s.links_from([rec.id])))
        return out


def _fresh(cfg, tmp_path) -> dict:
    other = dataclasses.replace(cfg, db=str(tmp_path / "fresh.db"))
    reindex(other, embed=False)
    return _content(other.db_path())


def test_edit_add_delete_rename_match_a_fresh_build(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    plan = vault / "Projects" / "Backup plan.md"
    plan.write_text(plan.read_text() + "\n## Costs\n\nThe pelican tier costs forty euros a month.\n")
    r = reindex_paths(cfg, [plan], embed=False)
    assert (r.scanned, r.updated, r.added, r.deleted) == (1, 1, 0, 0)
    assert _content(cfg.db_path()) == _fresh(cfg, tmp_path)

    new = write_notes(vault, {"Inbox/Heron.md": "# Heron\n\nA grey heron stands in the reeds. See [[Ada]].\n"})
    old = vault / "Tools" / "Model2Vec.md"
    moved = vault / "Tools" / "Static embeddings.md"
    old.rename(moved)
    (vault / "Daily" / "2026-11-02.md").unlink()
    r = reindex_paths(cfg, [str(new / "Inbox" / "Heron.md"), old, moved, "Daily/2026-11-02.md"], embed=False)
    assert (r.added, r.deleted, r.updated) == (2, 2, 0)
    assert _content(cfg.db_path()) == _fresh(cfg, tmp_path)


def test_folder_moved_in_and_out(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    before = set(_content(cfg.db_path()))
    (vault / "People").rename(vault / "Folks")
    r = reindex_paths(cfg, [vault / "People", vault / "Folks"], embed=False)
    moved = {p for p in before if p.startswith("People/")}
    assert moved and r.deleted == len(moved) and r.added == len(moved)
    assert _content(cfg.db_path()) == _fresh(cfg, tmp_path)


def test_paths_it_may_not_index_are_ignored(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    outside = write_notes(tmp_path / "elsewhere", {"secret.md": "# Outside\n\npelican outside text\n"})
    hidden = write_notes(vault, {".trash/old.md": "# Old\n\nhidden pelican\n"})
    (vault / "Linked.md").symlink_to(outside / "secret.md")
    (vault / "LinkedDir").symlink_to(outside)
    r = reindex_paths(cfg, [outside / "secret.md", hidden / ".trash" / "old.md", vault / "Linked.md",
                            vault / "LinkedDir", vault / "LinkedDir" / "secret.md", "../elsewhere/secret.md"],
                      embed=False)
    assert (r.added, r.updated, r.deleted) == (0, 0, 0)
    paths = set(_content(cfg.db_path()))
    assert not any("secret" in p or "Linked" in p or ".trash" in p for p in paths)


def test_a_note_replaced_by_a_symlink_is_dropped(vault, cfg_for, tmp_path):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    outside = write_notes(tmp_path / "elsewhere", {"x.md": "# X\n\nfar away\n"})
    ada = vault / "People" / "Ada.md"
    ada.unlink()
    ada.symlink_to(outside / "x.md")
    r = reindex_paths(cfg, [ada], embed=False)
    assert r.deleted == 1 and "People/Ada.md" not in _content(cfg.db_path())


def test_scan_applies_exclude_patterns_and_start(tmp_path, cfg_for):
    root = write_notes(tmp_path / "v", {"Archive/a.md": "# A\n", "Archive/deep/b.md": "# B\n", "Notes/c.md": "# C\n",
                                        "Notes/c.draft.md": "# D\n", "Notes/sub/e.markdown": "# E\n",
                                        "Notes/skip.txt": "no"})
    cfg = dataclasses.replace(cfg_for(root), exclude=("Archive/*", "*.draft.md"))
    found, skipped = scan(cfg, root)
    assert sorted(found) == ["Notes/c.md", "Notes/sub/e.markdown"] and not skipped
    assert all(found[p].st_size == os.lstat(root / p).st_size for p in found)
    sub, _ = scan(cfg, root, start="Notes/sub")
    assert list(sub) == ["Notes/sub/e.markdown"]


def test_nothing_to_do_loads_neither_model_nor_tiktoken(vault, cfg_for):
    import subprocess
    import sys

    cfg = cfg_for(vault)
    reindex(cfg)
    code = ("import sys; from vaultrag.config import load_config; from vaultrag.indexer import reindex\n"
            f"cfg = load_config(vault={str(vault)!r}, db={str(cfg.db_path())!r})\n"
            "r = reindex(cfg); print(r.unchanged, r.embedding.available, 'model2vec' in sys.modules, "
            "'tiktoken' in sys.modules)\n"
            f"open({str(vault / 'Inbox.md')!r}, 'w').write('# Inbox\\n\\nA pelican note to embed.\\n')\n"
            "r = reindex(cfg); print(r.added, r.embedding.embedded, 'model2vec' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"}).stdout.split("\n")
    assert out[0] == "7 True False False"
    assert out[1] == "1 1 True"  # the first file to embed loads the model
    with Store(cfg.db_path(), readonly=True) as s:
        c = s.counts()
        assert c["vectors"] == c["chunks"]
