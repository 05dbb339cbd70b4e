"""Issue 17 on the hook path: SessionEnd indexes the ended session (detached, lean, fail-open);
prompt hooks inject past sessions only when `hooks.scopes` names them, never the current one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from session_corpus import PROJECT, new_transcript, planted_sessions
from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.retrieve import search

HOOKS = Path(__file__).resolve().parents[1] / "hooks"
HEAVY = ("numpy", "model2vec", "tiktoken", "yaml", "tokenizers", "sqlite_vec", "safetensors")


def _setup(tmp_path, vault, hook_scopes=None):
    projects = tmp_path / "projects"
    info = planted_sessions(projects)
    conf = tmp_path / "config.yaml"
    lines = [f"vault: {vault}", f"db: {tmp_path / 'idx.sqlite'}", f"sessions: {projects}"]
    if hook_scopes:
        lines.append(f"hooks:\n  scopes: [{', '.join(hook_scopes)}]")
    conf.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, VAULTRAG_CONFIG=str(conf))
    cfg = load_config(str(conf))
    return info, cfg, env, projects


def _hook(script: str, payload: dict, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", str(HOOKS / script)], input=json.dumps(payload).encode(),
                          capture_output=True, env=env, timeout=60)


def test_session_end_indexes_the_ended_session_in_the_background(tmp_path, vault):
    info, cfg, env, projects = _setup(tmp_path, vault)
    reindex(cfg)
    t = new_transcript(123)
    t.user("We settled on the quibblestack layout for the monorepo")
    path = t.write(projects / PROJECT)
    started = time.monotonic()
    p = _hook("session_end.py", {"session_id": t.session_id, "hook_event_name": "SessionEnd", "reason": "other",
                                 "transcript_path": str(path), "cwd": str(tmp_path)}, env)
    took = time.monotonic() - started
    assert p.returncode == 0 and p.stdout == b"" and took < 5
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        ans = search("quibblestack", cfg, scope="sessions")
        if ans.status == "ok":
            break
        time.sleep(0.5)
    assert ans.status == "ok" and ans.hits[0].origin["session_id"] == t.session_id


def test_session_end_ignores_a_transcript_outside_the_sessions_folder(tmp_path, vault):
    from vaultrag.sessions.hook import transcript_rel

    info, cfg, env, projects = _setup(tmp_path, vault)
    assert transcript_rel(cfg, str(projects / PROJECT / "a.jsonl")) == f"{PROJECT}/a.jsonl"
    assert transcript_rel(cfg, str(tmp_path / "elsewhere.jsonl")) is None
    assert transcript_rel(cfg, str(projects / PROJECT / ".." / ".." / "x.jsonl")) is None
    assert transcript_rel(cfg, str(projects / PROJECT / "s" / "subagents" / "agent-1.jsonl")) is None
    p = _hook("session_end.py", {"session_id": "x", "hook_event_name": "SessionEnd",
                                 "transcript_path": "/etc/passwd"}, env)
    assert p.returncode == 0 and p.stdout == b""


def test_session_end_hook_path_is_lean(tmp_path, vault):
    info, cfg, env, projects = _setup(tmp_path, vault)
    code = ("import io, sys, json\n"
            f"sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps({{'session_id': 'x', 'hook_event_name': 'SessionEnd',"
            f" 'transcript_path': {str(info['paths'][0])!r}}}).encode()))\n"
            "from vaultrag.hooks import main\n"
            "main('SessionEnd')\n"
            f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
            "print(json.dumps(heavy), file=sys.stderr)\n")
    env = dict(env, VAULTRAG_HOOK_TIMEOUT_MS="3000")
    load_config(env["VAULTRAG_CONFIG"])  # the YAML parse is cached as JSON, as after any earlier run
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stderr.decode().strip().splitlines()[-1]) == []


def _prompt(session: str, text: str) -> dict:
    return {"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": text}


@pytest.mark.parametrize("scopes", [None, ["vault", "sessions"]])
def test_prompt_hook_injects_sessions_only_when_configured_and_never_the_current_one(tmp_path, vault, scopes):
    info, cfg, env, _ = _setup(tmp_path, vault, scopes)
    reindex(cfg)
    owner = info["found"]["snickerbolt"][0]
    question = "which fixture fixed the flaky quokkasort test, the snickerbolt one?"
    other = _hook("user_prompt_submit.py", _prompt("another-session", question), env)
    own = _hook("user_prompt_submit.py", _prompt(owner, question), env)
    assert other.returncode == own.returncode == 0
    injected = json.loads(other.stdout)["hookSpecificOutput"]["additionalContext"] if other.stdout else ""
    own_text = json.loads(own.stdout)["hookSpecificOutput"]["additionalContext"] if own.stdout else ""
    if scopes is None:
        assert "past session" not in injected and "snickerbolt" not in injected
    else:
        assert "snickerbolt" in injected and f"session {owner[:8]}" in injected
    assert f"session {owner[:8]}" not in own_text
