"""An offline machine: the hub is probed once, the bundled model is used quietly, and later
reindexes neither probe again nor warn (issue 12, item 7)."""
from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vaultrag import embedder as emb_mod
from vaultrag.embedder import BUNDLED_MODEL_ID, HUB_RECHECK_S, resolve_model


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def offline(monkeypatch, tmp_path):
    for var in ("HF_HUB_OFFLINE", "HTTPS_PROXY", "https_proxy", "VAULTRAG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-empty"))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    probes = []
    real = emb_mod._probe_hub
    monkeypatch.setattr(emb_mod, "_probe_hub", lambda timeout: probes.append(timeout) or real(timeout))
    return probes


def test_unreachable_hub_is_probed_once_then_remembered(offline, caplog):
    caplog.set_level(logging.INFO, logger="vaultrag.embedder")
    first = resolve_model("minishlab/potion-base-8M")
    second = resolve_model("minishlab/potion-base-8M")
    assert len(offline) == 1
    assert first.model_id == second.model_id == BUNDLED_MODEL_ID
    assert "unreachable" in first.fallback_reason and "not probed again" in second.fallback_reason
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("using the bundled model" in r.getMessage() for r in caplog.records)


def test_verdict_expires_and_is_per_endpoint(offline, monkeypatch):
    resolve_model("minishlab/potion-base-8M")
    verdict = emb_mod._verdict_path()
    data = json.loads(verdict.read_text())
    verdict.write_text(json.dumps({**data, "at": time.time() - HUB_RECHECK_S - 1}))
    resolve_model("minishlab/potion-base-8M")
    assert len(offline) == 2  # a day later: asked again
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    resolve_model("minishlab/potion-base-8M")
    assert len(offline) == 3  # another endpoint (or proxy) is another question


def test_reachable_hub_forgets_the_verdict(offline, monkeypatch):
    resolve_model("minishlab/potion-base-8M")
    assert emb_mod._verdict_path().exists()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
        info = resolve_model("minishlab/potion-base-8M")
    assert info.source == "hub" and info.fallback_reason is None
    assert not emb_mod._verdict_path().exists()


def test_two_offline_reindexes_print_no_warning(offline, vault, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "VAULTRAG_MODEL"}
    cmd = [sys.executable, "-m", "vaultrag", "reindex", "--vault", str(vault), "--db", str(tmp_path / "i.sqlite")]
    runs = [subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300) for _ in range(2)]
    for p in runs:
        assert p.returncode == 0, p.stderr
        assert "WARNING" not in p.stderr and "warning" not in p.stderr.lower(), p.stderr
        assert "vectors: bundled:minilm-l6-static-256" in p.stdout
    assert "not probed again" in runs[1].stdout
    assert Path(os.environ["XDG_CACHE_HOME"], "vaultrag", "hub.json").is_file()
