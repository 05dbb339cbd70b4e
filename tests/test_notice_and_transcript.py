"""SessionStart's notice keeps every fix command it shows whole; a transcript path that is not a
Claude Code JSONL transcript is never read (a `serve` client names the file)."""
from __future__ import annotations

import json

from vaultrag.doctor import Problem
from vaultrag.hooks import latest_user_prompt
from vaultrag.session_start import MAX_MESSAGE_CHARS, notice

LONG = "/home/u/" + "deep/" * 30 + "vault"


def test_notice_never_cuts_a_fix_command():
    fixes = [f"/home/u/.venv/bin/vaultrag reindex --full --vault {LONG}{i} --db {LONG}{i}.db" for i in range(4)]
    problems = [Problem("index", f"index {i} is damaged: database disk image is malformed " + "x" * 300, fix)
                for i, fix in enumerate(fixes)]
    text = notice(problems, "/home/u/.venv/bin/vaultrag doctor --vault " + LONG)
    assert len(text) <= MAX_MESSAGE_CHARS + 10
    assert fixes[0] in text  # the first problem's fix whole, its message shortened around it
    shown = [f for f in fixes if f in text]
    assert all(f in text for f in shown) and "more" in text
    assert text.count(fixes[0][:40]) == len(shown)  # every fix that starts is there whole
    assert text.endswith("vaultrag doctor --vault " + LONG)


def test_notice_with_room_shows_every_problem():
    problems = [Problem("index", "no index at /tmp/x.db", "vaultrag reindex --db /tmp/x.db"),
                Problem("model", "model missing", "vaultrag reindex --full")]
    text = notice(problems, "vaultrag doctor")
    assert "no index at /tmp/x.db (fix: vaultrag reindex --db /tmp/x.db); model missing" in text
    assert "more" not in text


def test_a_transcript_is_read_only_from_a_jsonl_file(tmp_path):
    rec = json.dumps({"type": "user", "message": {"content": "how do I rotate the logs?"}})
    ok = tmp_path / "session.jsonl"
    ok.write_text(rec + "\n", encoding="utf-8")
    other = tmp_path / "notes.txt"
    other.write_text(rec + "\n", encoding="utf-8")
    assert latest_user_prompt(str(ok)) == "how do I rotate the logs?"
    assert latest_user_prompt(str(other)) == ""
    assert latest_user_prompt(str(tmp_path)) == ""
