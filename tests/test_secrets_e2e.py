"""End to end: planted secrets never reach the SQLite file, its WAL, the logs, search output or hook
output. Every secret is generated here (test_scrubber's factories and syntax matrix): one per rule
and vendor shape, and every `name = value` syntax with every value alphabet."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_scrubber import FACTORIES, make, syntax_samples

from vaultrag.indexer import reindex
from vaultrag.render import render_context, render_human
from vaultrag.retrieve import search

HOOKS = Path(__file__).resolve().parents[1] / "hooks"
NOTE_SIZE = 20  # snippets per note: several chunks per note, several notes per vault
MIN_LOWERCASE_PROBE = 10  # FTS5 stores terms lower-cased; probe those only when long enough not to collide


def planted() -> list[tuple[str, str]]:
    """(snippet as pasted, secret) for every rule (two seeds) and every syntax x value alphabet."""
    items = [make(rule, seed) for rule in sorted(FACTORIES) for seed in (1, 2)]
    return items + list(syntax_samples(7))


def write_vault(root: Path, items: list[tuple[str, str]]) -> None:
    root.mkdir()
    for k in range(0, len(items), NOTE_SIZE):
        group = items[k:k + NOTE_SIZE]
        parts = [f"---\ntitle: Deploy notes {k}\ntoken: {group[0][1]}\n---\n# Deploy notes {k}\n"]
        for j, (text, _) in enumerate(group):
            fence = j % 3 == 0  # some pasted as code, some inline in prose
            parts.append(f"## Debugging step {j}\n\nPasted while debugging the deploy:\n"
                         + (f"```\n{text}\n```\n" if fence else f"{text}\n"))
        (root / f"deploy-{k // NOTE_SIZE:02d}.md").write_text("\n".join(parts), encoding="utf-8")


def probes(secret: str) -> set[bytes]:
    """Byte strings whose presence means the secret (or an FTS5 term cut from it) leaked."""
    out = {secret.encode()}
    if len(secret) >= MIN_LOWERCASE_PROBE:
        out.add(secret.lower().encode())
    out |= {seg.lower().encode() for seg in re.findall(r"[A-Za-z0-9]{12,}", secret)}
    return out


def run_hook(script: str, payload: dict, env: dict) -> str:
    p = subprocess.run([sys.executable, "-I", str(HOOKS / script)], capture_output=True, env=env, timeout=120,
                       input=json.dumps(payload).encode())
    assert p.returncode == 0
    return p.stdout.decode()


def _holds(text: str, secret: str) -> bool:
    if not secret.isdigit():
        return secret in text
    return re.search(r"(?<![0-9])%s(?![0-9])" % secret, text) is not None


@pytest.fixture
def indexed(tmp_path, cfg_for, caplog):
    items = planted()
    vault = tmp_path / "v"
    write_vault(vault, items)
    caplog.set_level(logging.DEBUG)
    cfg = cfg_for(vault)
    report = reindex(cfg)
    return items, vault, cfg, report


def test_planted_secrets_never_leave_the_vault(indexed, caplog, isolated_env):
    items, vault, cfg, report = indexed
    secrets = [s for _, s in items]
    assert len(items) > 500 and sum(report.secrets.values()) >= len(items)

    outputs = []
    for q in ("deploy notes token password", "debugging the deploy", "pasted while debugging", "api key secret"):
        ans = search(q, cfg)
        outputs += [json.dumps(ans.to_dict(), ensure_ascii=False), render_context(ans), render_human(ans)]
    env = dict(os.environ, VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(cfg.db_path()))
    prompt = run_hook("user_prompt_submit.py", {"session_id": "e2e", "hook_event_name": "UserPromptSubmit",
                                                "prompt": "what did I paste while debugging the deploy?"}, env)
    pre = run_hook("pre_tool_use.py", {"session_id": "e2e2", "hook_event_name": "PreToolUse", "tool_name": "Grep",
                                       "tool_input": {"pattern": "deploy token", "path": str(vault)}}, env)
    # A tool output that pastes every secret (cat .env, a config dump): the compressor scrubs it.
    dump = "\n".join(f"{i:04d} {text}" for i, (text, _) in enumerate(items))
    post = run_hook("post_tool_use.py", {"session_id": "e2e", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                         "tool_input": {"command": "cat deploy/*.env"},
                                         "tool_response": {"stdout": dump, "stderr": "", "interrupted": False}}, env)
    outputs += [prompt, pre, post]
    assert "REDACTED" in prompt and "REDACTED" in post

    stored = b"".join(p.read_bytes() for p in cfg.db_path().parent.glob(cfg.db_path().name + "*"))
    assert len(stored) > 10_000
    hook_log = isolated_env / "state" / "vaultrag" / "hooks.log"
    logs = caplog.text + (hook_log.read_text(encoding="utf-8") if hook_log.exists() else "")
    in_db = [s for s in secrets if any(p in stored for p in probes(s))]
    # (a secret of digits counts where no digit touches it: PIN `6100` is not in bm25 score `3.31610010`)
    elsewhere = [s for s in secrets if any(_holds(o, s) for o in [logs, *outputs])]
    assert not in_db, f"{len(in_db)} of {len(secrets)} planted secrets in the database bytes: {in_db[:5]}"
    assert not elsewhere, f"{len(elsewhere)} planted secrets in logs or outputs: {elsewhere[:5]}"


def test_probe_finds_a_secret_that_was_stored(tmp_path, cfg_for):
    """The leak check can fail: a value the scrubber does not treat as secret is found by it."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "n.md").write_text("# Plain\n\nThe build id is Zq8Xw3Lp9Vt2Nr6Hs4Kd1Fg7 for today.\n", encoding="utf-8")
    cfg = cfg_for(vault)
    reindex(cfg)
    stored = b"".join(p.read_bytes() for p in cfg.db_path().parent.glob(cfg.db_path().name + "*"))
    assert any(p in stored for p in probes("Zq8Xw3Lp9Vt2Nr6Hs4Kd1Fg7"))
