"""End to end: planted secrets never reach the SQLite file, the logs, search output or hook output."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from test_scrubber import FACTORIES, make
from vaultrag.indexer import reindex
from vaultrag.render import render_context, render_human
from vaultrag.retrieve import search


def test_planted_secrets_never_leave_the_vault(tmp_path, cfg_for, caplog):
    vault = tmp_path / "v"
    vault.mkdir()
    planted = [make(rule, 1) for rule in sorted(FACTORIES)]
    secrets = [s for _, s in planted]
    body = "\n\n".join(f"Debugging the deploy today, pasted this:\n{text}" for text, _ in planted)
    (vault / "deploy keys.md").write_text(f"---\ntoken: {secrets[0]}\n---\n# Deploy keys {secrets[1]}\n\n{body}\n")
    caplog.set_level(logging.DEBUG)
    cfg = cfg_for(vault)
    report = reindex(cfg)
    assert sum(report.secrets.values()) >= len(secrets)
    with_wal = b"".join(p.read_bytes() for p in cfg.db_path().parent.glob(cfg.db_path().name + "*"))
    outputs = []
    for q in ("deploy keys token password", "debugging the deploy", "pasted this"):
        ans = search(q, cfg)
        outputs += [json.dumps(ans.to_dict(), ensure_ascii=False), render_context(ans), render_human(ans)]
    env = dict(os.environ, VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(cfg.db_path()))
    hook = Path(__file__).resolve().parents[1] / "hooks" / "user_prompt_submit.py"
    p = subprocess.run([sys.executable, "-I", str(hook)], capture_output=True, env=env, timeout=60,
                       input=json.dumps({"session_id": "e2e", "hook_event_name": "UserPromptSubmit",
                                         "prompt": "what did I paste while debugging the deploy?"}).encode())
    outputs.append(p.stdout.decode())
    assert "REDACTED" in p.stdout.decode()
    leaked = [s for s in secrets if s.encode() in with_wal or s in caplog.text or any(s in o for o in outputs)]
    assert not leaked, f"{len(leaked)} secrets leaked"
