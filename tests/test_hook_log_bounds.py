"""Hook log lines stay bounded but keep a message's fix command whole (errors.shorten): the log
cut messages at 200 (server) / 300 (command hook) characters, which on a long index path cut the
`build it with: vaultrag reindex ...` the user was meant to run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from vaultrag.errors import FIX_MAX_CHARS, cli_command, damaged_index, fix_command, name_location, shorten
from vaultrag.hooks import LOG_LINE_CHARS

PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "how long are daily snapshots kept?"}


def long_folder(root: Path) -> Path:
    """A real folder whose path is over 600 characters (each component under NAME_MAX)."""
    folder = root.joinpath(*[f"{'deep-folder-' * 10}{i}" for i in range(5)])
    folder.mkdir(parents=True)
    assert len(str(folder)) > 600
    return folder


def log_lines(state: Path) -> list[str]:
    return (state / "vaultrag" / "hooks.log").read_text(encoding="utf-8").splitlines()


def test_shorten_keeps_the_fix_whole_and_cuts_the_message_before_it(tmp_path):
    db = long_folder(tmp_path) / "i.sqlite"
    name_location(db=str(db))
    try:
        message = str(damaged_index(db, "database disk image is malformed " * 20))
        fix = fix_command("reindex --full")
    finally:
        name_location()
    assert fix in message and len(message) > 2 * LOG_LINE_CHARS and str(db) in fix
    short = shorten(message, LOG_LINE_CHARS)
    assert short.endswith(fix) and short.startswith("index ") and "…" in short
    assert "; it is a copy of the vault, rebuild it with: " in short  # the words leading into the fix
    assert len(short) <= LOG_LINE_CHARS + len(fix)
    plain = "x" * 5000  # no fix command: a plain cut
    assert shorten(plain, 300) == "x" * 299 + "…" and shorten("short", 300) == "short"
    huge = "oops; run " + cli_command() + " reindex --db " + "y" * 50_000  # bounded even then
    assert len(shorten(huge, LOG_LINE_CHARS)) <= LOG_LINE_CHARS + FIX_MAX_CHARS


def test_log_line_keeps_a_long_fix_command_whole(isolated_env, tmp_path):
    from vaultrag.hooks import log_line

    db = long_folder(tmp_path) / "i.sqlite"
    name_location(db=str(db))
    try:
        message = f"UserPromptSubmit: IndexCorrupt: {damaged_index(db, 'file is not a database')}"
        fix = fix_command("reindex --full")
    finally:
        name_location()
    log_line(message + "\nsecond line of a driver's message")
    line = log_lines(isolated_env / "state")[-1]
    assert line.endswith(fix) or fix in line, line
    assert len(line) < LOG_LINE_CHARS + len(fix) + 40  # the stamp, the cut marker


def test_the_command_hook_logs_the_whole_fix_for_a_missing_index_at_a_long_path(isolated_env, vault, tmp_path):
    db = long_folder(tmp_path) / "index.sqlite"  # never built
    env = {**os.environ, "VAULTRAG_VAULT": str(vault), "VAULTRAG_DB": str(db), "VAULTRAG_SOCKET": str(tmp_path / "none")}
    p = subprocess.run([sys.executable, str(REPO / "hooks" / "user_prompt_submit.py")], input=json.dumps(PROMPT),
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout == ""
    line = next(x for x in log_lines(isolated_env / "state") if "IndexMissing" in x)
    assert f"IndexMissing: no index at {str(db)[:100]}" in line and "…" in line  # the path cut, not the fix
    assert line.endswith(f"build it with: {cli_command()} reindex --vault PATH"), line


def test_the_servers_hook_route_logs_the_whole_fix(isolated_env, vault, tmp_path):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from vaultrag import api
    from vaultrag.config import load_config
    from vaultrag.serve import auth
    from vaultrag.serve.app import build_app

    db = long_folder(tmp_path) / "index.sqlite"  # never built: every hook raises IndexMissing
    svc = api.Service(load_config(vault=str(vault), db=str(db)))
    try:
        app = build_app(svc, auth.Policy(bind_host="127.0.0.1", token_file=tmp_path / "tokens.json",
                                         peer_uid=lambda ip, port: os.getuid()))
        with TestClient(app, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50123)) as client:
            r = client.post("/hooks/UserPromptSubmit", json=PROMPT)
        assert r.status_code == 200 and r.json() == {}
    finally:
        svc.close()
    line = next(x for x in log_lines(isolated_env / "state") if "(http): IndexMissing" in x)
    assert line.endswith(f"build it with: {cli_command()} reindex --vault PATH"), line
