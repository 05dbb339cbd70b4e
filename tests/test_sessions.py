"""Issue 17: past Claude Code sessions as a searchable source (generated transcripts only)."""
from __future__ import annotations

import json
import re
import sqlite3

import pytest

from session_corpus import PROJECT, new_transcript, planted_sessions
from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.retrieve import search
from vaultrag.sessions.reader import read_transcript
from vaultrag.store import open_store


def probes(secret: str) -> set[bytes]:
    """Byte strings whose presence means the secret (or an FTS5 term cut from it) leaked."""
    return {secret.encode(), secret.lower().encode()} | {
        seg.lower().encode() for seg in re.findall(r"[A-Za-z0-9]{12,}", secret)}


@pytest.fixture
def corpus(tmp_path, vault):
    info = planted_sessions(tmp_path / "projects")
    cfg = load_config(vault=str(vault), db=str(tmp_path / "idx.sqlite"), sessions=str(tmp_path / "projects"))
    report = reindex(cfg)
    return info, cfg, report


def _session_hits(ans):
    return [h for h in ans.hits if h.scope == "sessions"]


def test_user_and_assistant_facts_are_found_with_their_session_and_message(corpus):
    info, cfg, _ = corpus
    for word, (session, uuid, role) in info["found"].items():
        ans = search(word, cfg, scope="sessions")
        assert ans.status == "ok", word
        hits = _session_hits(ans)
        # the planted message leads, or follows the reply that answered it (retrieve/replies)
        top = next(h for h in hits[:2] if h.origin["message_uuid"] == uuid)
        assert top is hits[0] or (hits[0].origin["role"] == "assistant" and role == "user"), word
        assert top.origin == {"kind": "session", "session_id": session, "message_uuid": uuid, "role": role,
                              "timestamp": top.origin["timestamp"], "project": top.origin["project"]}, word
        assert word in top.text.lower() and top.citation == "fresh"
        assert re.fullmatch(r"2026-11-\d\dT\d\d:\d\d:\d\d\.000Z", top.origin["timestamp"])
    # "Where did we put the runbook ... moonvault?" is answered by the next reply: it comes first
    moon = _session_hits(search("moonvault", cfg, scope="sessions"))
    assert moon[0].origin["message_uuid"] == info["found"]["runbook"][1]


def test_mechanism_sidechain_meta_and_half_written_line_are_not_indexed(corpus):
    info, cfg, report = corpus
    with open_store(cfg, readonly=True) as store:
        texts = [c.text.lower() + c.context.lower() for c in store.chunks_of_files(
            [r.id for p, r in store.files().items() if p.startswith("session://")])]
    assert len(texts) >= len(info["found"])
    for word, where in info["hidden"].items():
        assert not any(word in t for t in texts), f"{word} ({where}) was indexed"
        ans = search(word, cfg, scope="sessions")
        assert all(word not in h.text.lower() for h in ans.hits), where
    assert report.sessions["pending_tails"] == 1
    left = report.sessions["left_out"]
    assert left["sidechain"] == 2 and left["meta"] == 1 and left["tool use or thinking"] >= 2


def test_no_planted_secret_in_the_database_bytes(corpus):
    info, cfg, report = corpus
    assert sum(report.secrets.values()) >= len(info["secrets"])
    stored = b"".join(p.read_bytes() for p in cfg.db_path().parent.glob(cfg.db_path().name + "*"))
    assert len(stored) > 10_000
    leaked = [s for s in info["secrets"] if any(p in stored for p in probes(s))]
    assert not leaked
    ans = search("deploy token for CI secret manager", cfg, scope="sessions")
    assert ans.status == "ok" and "REDACTED" in _session_hits(ans)[0].text


def test_probe_finds_an_unscrubbed_value(tmp_path, vault):
    """The leak check can fail: a plain word stated by the user is in the database bytes."""
    info = planted_sessions(tmp_path / "p")
    cfg = load_config(vault=str(vault), db=str(tmp_path / "i.sqlite"), sessions=str(tmp_path / "p"))
    reindex(cfg)
    stored = b"".join(p.read_bytes() for p in cfg.db_path().parent.glob(cfg.db_path().name + "*"))
    assert any(p in stored for p in probes("spindlewharf"))


def test_appending_a_turn_and_reindexing_finds_it_without_rereading(corpus):
    info, cfg, _ = corpus
    path = info["paths"][1]  # ends in a half-written line
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    t = new_transcript(77)
    t.session_id = info["sessions"][1]
    t.user("New plan: ship the zephyrquill release on Thursday")
    path.write_bytes(data[:cut] + ("\n".join(t.lines) + "\n").encode())  # the half line was rewritten whole
    report = reindex(cfg)
    assert report.sessions["segments_written"] == 1 and report.sessions["unchanged"] == 2
    ans = search("zephyrquill", cfg, scope="sessions")
    assert ans.status == "ok" and _session_hits(ans)[0].origin["session_id"] == info["sessions"][1]
    # the older messages are still found, once
    ans = search("snickerbolt", cfg, scope="sessions")
    assert [h.origin["message_uuid"] for h in _session_hits(ans)].count(info["found"]["snickerbolt"][1]) == 1
    again = reindex(cfg)
    assert again.sessions["segments_written"] == 0 and again.sessions["unchanged"] == 3


def test_deleted_and_rewritten_transcripts(corpus):
    info, cfg, _ = corpus
    info["paths"][2].unlink()
    rewritten = info["paths"][0]
    t = new_transcript(5)
    t.user("Completely different content about the plumbusgrid")
    rewritten.write_text("\n".join(t.lines) + "\n", encoding="utf-8")
    report = reindex(cfg)
    assert report.sessions["deleted"] == 1 and report.sessions["reindexed"] == 1
    assert search("moonvault", cfg, scope="sessions").status == "no_evidence"
    assert search("flurbigate", cfg, scope="sessions").status == "no_evidence"
    assert search("plumbusgrid", cfg, scope="sessions").status == "ok"


def test_live_citation_drops_a_message_gone_from_its_transcript(corpus):
    info, cfg, _ = corpus
    path = info["paths"][2]
    assert search("moonvault", cfg, scope="sessions").status == "ok"
    path.write_text("", encoding="utf-8")  # emptied, not yet reindexed
    ans = search("moonvault", cfg, scope="sessions")
    assert ans.status == "no_evidence" and ans.reason == "unresolvable"


def test_scopes_select_and_every_hit_carries_scope_and_origin(corpus, tmp_path):
    info, cfg, _ = corpus
    vault_only = search("flurbigate broker", cfg, scope="vault", gate=False)
    assert all(h.scope == "vault" and h.origin is None for h in vault_only.hits)
    both = search("flurbigate", cfg)  # default: all
    assert {h.scope for h in both.hits} >= {"sessions"}
    for h in both.to_dict()["hits"]:
        assert h["origin"]["kind"] in ("file", "session") and h["scope"] in ("vault", "sessions")
        if h["origin"]["kind"] == "file":
            assert set(h["origin"]) == {"kind", "path", "heading_path", "title"}
        else:
            assert set(h["origin"]) == {"kind", "session_id", "message_uuid", "role", "timestamp", "project"}
    with pytest.raises(ValueError):
        search("x", cfg, scope="nonsense")


def test_path_rule_scopes(tmp_path, vault):
    (vault / "docs" / "adr").mkdir(parents=True)
    (vault / "docs" / "adr" / "0001-queue.md").write_text("# ADR 1\n\nWe adopt the trellisqueue for events.\n")
    (vault / "trellis.md").write_text("# Trellis\n\nThe trellisqueue was discussed but not adopted here.\n")
    cfg = load_config(vault=str(vault), db=str(tmp_path / "i.sqlite"))
    cfg = type(cfg)(**{**cfg.__dict__, "scopes": (("adr", ("docs/adr/**",)),)})
    reindex(cfg)
    adr = search("trellisqueue", cfg, scope="adr")
    assert [h.path for h in adr.hits] == ["docs/adr/0001-queue.md"] and adr.hits[0].scope == "adr"
    every = search("trellisqueue", cfg, scope="vault")
    assert {h.path for h in every.hits} == {"docs/adr/0001-queue.md", "trellis.md"}


def test_reader_groups_stream_chunks_and_keeps_summaries():
    t = new_transcript(9)
    t.user("first question about the gizmo")
    t.assistant(text="part one of the answer", thinking="hidden", tool=("Bash", {"command": "ls"}))
    t.user("Summary of the earlier conversation", isCompactSummary=True)
    data = ("\n".join(t.lines) + "\n").encode()
    res = read_transcript(data)
    assert [(m.role, m.summary) for m in res.messages] == [("user", False), ("assistant", False), ("user", True)]
    assert res.messages[1].text == "part one of the answer" and res.end == len(data)
    half = read_transcript(data + b'{"type":"user","mess')
    assert half.end == len(data) and half.pending_tail


def test_human_output_cites_session_id_timestamp_and_role(corpus):
    from vaultrag.render import render_context, render_human

    info, cfg, _ = corpus
    ans = search("snickerbolt", cfg, scope="sessions")
    top = _session_hits(ans)[0]
    line = f"session {top.origin['session_id'][:8]} {top.origin['timestamp']} assistant"
    assert line in render_human(ans) and line in render_context(ans)


def test_status_reports_coverage_per_scope(corpus, tmp_path):
    from vaultrag.status import status

    info, cfg, _ = corpus
    (tmp_path / "projects" / PROJECT / "new-session.jsonl").write_text("{}\n")
    cov = status(cfg)["coverage"]
    assert cov["scopes"]["sessions"]["indexed"] == 3 and cov["scopes"]["sessions"]["present"] == 4
    assert cov["scopes"]["sessions"]["not_indexed_yet"] == [f"{PROJECT}/new-session.jsonl"]
    assert cov["files_indexed"] == cov["markdown_files_in_vault"] == cov["scopes"]["vault"]["indexed"]
    assert status(cfg)["changed_since_reindex"] == 0


def test_config_sessions_true_honours_claude_config_dir(tmp_path, monkeypatch):
    from vaultrag.config import from_mapping

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert from_mapping({"sessions": True})["sessions"] == tmp_path / "cc" / "projects"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert str(from_mapping({"sessions": True})["sessions"]).endswith(".claude/projects")
    assert from_mapping({"scopes": {"adr": "docs/adr/**"}})["scopes"] == (("adr", ("docs/adr/**",)),)
    from vaultrag.errors import ConfigError
    with pytest.raises(ConfigError):
        from_mapping({"scopes": {"sessions": "x/**"}})


def test_origin_rows_go_with_their_chunks(corpus):
    info, cfg, _ = corpus
    info["paths"][2].unlink()
    reindex(cfg)
    conn = sqlite3.connect(cfg.db_path())
    orphans = conn.execute("SELECT count(*) FROM chunk_origins WHERE chunk_id NOT IN (SELECT id FROM chunks)").fetchone()
    n = conn.execute("SELECT count(*) FROM chunk_origins").fetchone()[0]
    chunks = conn.execute("SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id "
                          "WHERE f.path LIKE 'session://%'").fetchone()[0]
    assert orphans == (0,) and n == chunks > 0
    assert all(json.loads(o)["session_id"] in info["sessions"][:2] for (o,) in conn.execute("SELECT origin FROM chunk_origins"))


def test_bad_scopes_are_clear_errors(corpus, tmp_path):
    from vaultrag import api
    from vaultrag.errors import ConfigError

    info, cfg, _ = corpus
    conf = tmp_path / "bad.yaml"
    conf.write_text("hooks:\n  scopes: [vault, notes]\n")
    with pytest.raises(ConfigError, match="hooks.scopes"):
        load_config(str(conf))
    with pytest.raises(api.BadRequest, match="scope"):
        api.search("flurbigate", cfg, scope="nonsense")
    with pytest.raises(api.BadRequest):
        api.search("flurbigate", cfg, scope=3)
    ans = api.search("flurbigate", cfg, scope="sessions")
    assert ans.status == "ok" and {h["scope"] for h in ans.to_dict()["hits"]} == {"sessions"}


def test_full_rebuild_keeps_sessions_and_their_origins(corpus):
    info, cfg, _ = corpus
    report = reindex(cfg, full=True)
    assert report.sessions["segments_written"] == 3
    session, uuid, role = info["found"]["kafkaroo"]
    top = _session_hits(search("kafkaroo", cfg, scope="sessions"))[0]
    assert (top.origin["session_id"], top.origin["message_uuid"], top.origin["role"]) == (session, uuid, role)
