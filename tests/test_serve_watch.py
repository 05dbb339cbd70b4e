"""`--watch`: saves, renames and deletes reach the index without a command; network shares poll."""
from __future__ import annotations

import os
import time

import pytest

pytest.importorskip("watchfiles")

from vaultrag import api  # noqa: E402
from vaultrag.serve import watch  # noqa: E402

WAIT_S = 20  # generous: the machine is shared and slow; the benchmark measures the latency


@pytest.fixture(autouse=True)
def restore_embedder_loader(monkeypatch):
    """The watcher keeps its model loaded by wrapping the loader: undo that for the other tests."""
    from vaultrag import embedder

    monkeypatch.setattr(embedder, "load_embedder", embedder.load_embedder)


def paths_for(svc, query: str) -> list[str]:
    ans = svc.search(query)
    return [h.path for h in ans.hits] if ans.status == "ok" else []


def wait_for(cond) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def watched(vault, cfg_for):
    cfg = cfg_for(vault)
    api.reindex(cfg)
    svc = api.Service(cfg)
    reports = []
    w = watch.Watcher(svc, poll=False, on_reindex=reports.append)
    w.start()
    assert wait_for(lambda: reports)  # the catch-up reindex ran: the watcher is up
    time.sleep(0.5)
    yield svc, vault, w
    w.stop()
    svc.close()


def test_save_rename_delete_are_followed(watched):
    svc, vault, w = watched
    assert w.mode == "events"
    note = vault / "Zebra.md"
    note.write_text("# Zebra\n\nQuagga stripes are unusual.\n", encoding="utf-8")
    assert wait_for(lambda: paths_for(svc, "quagga stripes") == ["Zebra.md"])
    (vault / "Animals").mkdir()
    os.rename(note, vault / "Animals" / "Zebra.md")
    assert wait_for(lambda: paths_for(svc, "quagga stripes") == ["Animals/Zebra.md"])
    os.rename(vault / "Animals", vault / "Fauna")  # a folder rename reports the folder only
    assert wait_for(lambda: paths_for(svc, "quagga stripes") == ["Fauna/Zebra.md"])
    (vault / "Fauna" / "Zebra.md").unlink()
    assert wait_for(lambda: paths_for(svc, "quagga stripes") == [])


def test_hidden_and_other_files_do_not_trigger(tmp_path):
    root = tmp_path
    (root / "a.txt").write_text("x")
    assert watch.wants(str(root / "Note.md"), root) and watch.wants(str(root / "Gone"), root)
    assert not watch.wants(str(root / ".obsidian" / "workspace.md"), root)
    assert not watch.wants(str(root / "a.txt"), root) and not watch.wants("/elsewhere/x.md", root)


def test_network_share_falls_back_to_polling(vault, cfg_for, tmp_path, monkeypatch):
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/sda1 / ext4 rw 0 0\nserver:/export {vault.parent} nfs4 rw 0 0\n")
    assert watch.filesystem_type(vault, str(mounts)) == "nfs4"
    assert watch.filesystem_type(tmp_path.parent, str(mounts)) == "ext4"
    cfg = cfg_for(vault)
    api.reindex(cfg)
    svc = api.Service(cfg)
    monkeypatch.setattr(watch, "POLL_INTERVAL_S", 0.3)
    monkeypatch.setenv("VAULTRAG_WATCH_POLL", "1")  # as the nfs4 row above would decide on Linux
    w = watch.Watcher(svc)
    assert w.mode == "poll"
    w.start()
    try:
        (vault / "Okapi.md").write_text("# Okapi\n\nOkapis have striped legs.\n", encoding="utf-8")
        assert wait_for(lambda: paths_for(svc, "okapis striped legs") == ["Okapi.md"])
    finally:
        w.stop()
        svc.close()
