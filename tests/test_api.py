"""The facade (vaultrag.api) on the example vault: what every face calls."""
from __future__ import annotations

import json
import os
import threading

import pytest

from vaultrag import api
from vaultrag.retrieve.pipeline import search as pipeline_search
from vaultrag.store import Store

GITHUB_TOKEN = "ghp_" + "Zq8xW2mK4vB7nR1tY6uP3sD9fG5hJ0lA2cE4"  # a realistic shape; not a real token


@pytest.fixture
def cfg(vault, cfg_for):
    c = cfg_for(vault)
    api.reindex(c)
    return c


def test_search_is_the_pipeline_answer(cfg):
    via_api = api.search("how long are daily snapshots kept?", cfg, k=3)
    with Store(cfg.db_path(), readonly=True) as store:
        direct = pipeline_search("how long are daily snapshots kept?", cfg, k=3, store=store)
    assert via_api.status == "ok" and via_api.to_dict() == direct.to_dict()
    assert 1 <= len(via_api.hits) <= 3 + cfg.graph_seeds * cfg.graph_fanout


@pytest.mark.parametrize("opts, words", [
    (dict(query=""), "non-empty"), (dict(query="x" * (api.MAX_QUERY_CHARS + 1)), "limit"),
    (dict(query="a", k=0), "`k`"), (dict(query="a", k=api.MAX_K + 1), "`k`"), (dict(query="a", k="3"), "integer"),
    (dict(query="a", k=True), "integer"), (dict(query="a", max_tokens=-1), "max_tokens"),
    (dict(query="a", scope="web"), "scope"), (dict(query="a", gate="no"), "gate"),
])
def test_search_rejects_bad_input_with_a_clear_message(cfg, opts, words):
    with pytest.raises(api.BadRequest, match=words):
        api.search(opts.pop("query"), cfg, **opts)


def test_scope_sessions_and_collection_say_what_this_build_lacks(cfg):
    if not api._accepts(pipeline_search, "scope"):
        with pytest.raises(api.BadRequest, match="transcript"):
            api.search("snapshots", cfg, scope="sessions")
    assert api.search("snapshots", cfg, scope="vault").status in ("ok", "no_evidence")
    if not api._accepts(pipeline_search, "collection"):
        with pytest.raises(api.BadRequest, match="collection"):
            api.search("snapshots", cfg, collection="work")


def test_get_whole_note_and_a_line_range(cfg, vault):
    whole = api.get(cfg, "Projects/Backup plan.md")
    disk = (vault / "Projects" / "Backup plan.md").read_text(encoding="utf-8").splitlines()
    assert whole.text.splitlines() == disk and whole.line_start == 1 and whole.line_end == len(disk) == whole.total_lines
    part = api.get(cfg, "Projects/Backup plan.md", 2, 3)
    assert part.text.splitlines() == disk[1:3] and (part.line_start, part.line_end) == (2, 3)
    assert api.get(cfg, "Projects/Backup plan.md", 2, 10**6).line_end == len(disk)
    with pytest.raises(api.BadRequest, match="past the end"):
        api.get(cfg, "Projects/Backup plan.md", len(disk) + 5)
    with pytest.raises(api.BadRequest, match="before"):
        api.get(cfg, "Projects/Backup plan.md", 3, 2)


def test_get_scrubs_secrets(cfg, vault):
    (vault / "Ops.md").write_text(f"# Ops\n\nThe deploy token is {GITHUB_TOKEN} for now.\nEnd.\n", encoding="utf-8")
    note = api.get(cfg, "Ops.md")
    assert GITHUB_TOKEN not in note.text and "[REDACTED:" in note.text and sum(note.redacted.values()) == 1
    assert "redacted" in json.dumps(note.to_dict())
    assert api.get(cfg, "Ops.md", 4, 4).redacted == {} and api.get(cfg, "Ops.md", 4, 4).text == "End."


def test_get_never_leaves_the_vault(cfg, vault, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Private\n\nnot in the vault\n", encoding="utf-8")
    os.symlink(outside, vault / "link.md")
    (vault / ".obsidian").mkdir(exist_ok=True)
    (vault / ".obsidian" / "x.md").write_text("# hidden\n", encoding="utf-8")
    (vault / "data.txt").write_text("plain\n", encoding="utf-8")
    (vault / "Folder.md").mkdir()
    for bad in ("../outside.md", str(outside), "link.md", ".obsidian/x.md", "data.txt", "Folder.md",
                "Nope.md", "Projects/../../outside.md", "a\x00.md"):
        with pytest.raises((api.NotFound, api.BadRequest)):
            api.get(cfg, bad)
    for bad in (None, 3, ""):
        with pytest.raises(api.BadRequest):
            api.get(cfg, bad)


def test_coverage_counts_stale_files(cfg, vault):
    before = api.coverage(cfg)
    assert before["files_indexed"] == before["markdown_files_in_vault"] == 7 and before["stale_files"] == 0
    (vault / "People" / "Ada.md").write_text("# Ada\n\nChanged.\n", encoding="utf-8")
    after = api.coverage(cfg)
    assert after["stale_files"] == 1 and after["stale_paths"] == ["People/Ada.md"]


def test_service_allows_one_reindex_at_a_time(cfg):
    svc = api.Service(cfg)
    entered, release = threading.Event(), threading.Event()

    def slow_progress(done, total, path):
        entered.set()
        release.wait(10)

    t = threading.Thread(target=svc.reindex, kwargs=dict(full=True, progress=slow_progress))
    t.start()
    assert entered.wait(30)
    try:
        assert svc.reindexing
        with pytest.raises(api.Busy):
            svc.reindex()
    finally:
        release.set()
        t.join(60)
    assert not svc.reindexing and svc.reindex().scanned == 7


def test_service_store_follows_a_full_rebuild(cfg, vault):
    svc = api.Service(cfg)
    assert svc.search("snapshots").status == "ok"
    (vault / "Zebra.md").write_text("# Zebra\n\nQuagga stripes are unusual.\n", encoding="utf-8")
    svc.reindex(full=True)  # writes a new file and swaps it in: the old handle sees the old index
    ans = svc.search("quagga stripes")
    assert ans.status == "ok" and ans.hits[0].path == "Zebra.md"
    svc.close()


def test_service_hook_is_what_the_command_hook_prints(cfg):
    from vaultrag import hooks

    svc = api.Service(cfg)
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "how long are snapshots kept?"}
    out = svc.hook("UserPromptSubmit", payload)
    assert out and json.loads(out)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert svc.hook("UserPromptSubmit", payload) != out  # the session already saw those chunks
    assert hooks.handle({**payload, "session_id": "s2"}, "UserPromptSubmit", cfg=cfg) == out
    with pytest.raises(api.BadRequest):
        svc.hook("UserPromptSubmit", ["not", "an", "object"])


def test_cli_and_facade_do_not_import_the_serve_stack(cfg):
    import subprocess
    import sys

    code = ("import sys, json; from vaultrag.cli import build_parser; build_parser();"
            "from vaultrag import api; api.status(api.load_config(vault=%r, db=%r));"
            "print(json.dumps(sorted(sys.modules)))" % (str(cfg.vault), str(cfg.db_path())))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    mods = set(json.loads(r.stdout))
    assert "vaultrag.status" in mods
    assert not {m for m in mods if m.split(".")[0] in ("mcp", "starlette", "uvicorn", "watchfiles", "anyio", "httpx")}
