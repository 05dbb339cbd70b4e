"""Shared fixtures: an isolated environment (no real ~/.config or ~/.local), and small real vaults."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EXAMPLE_VAULT = REPO / "vaultrag" / "example_vault"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"),
                     ("XDG_STATE_HOME", "state")):
        monkeypatch.setenv(var, str(home / sub))
    for var in ("VAULTRAG_CONFIG", "VAULTRAG_VAULT", "VAULTRAG_DB", "VAULTRAG_MODEL", "VAULTRAG_MAX_TOKENS",
                "VAULTRAG_HOOK_MAX_TOKENS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never wait on the (unreachable) hub in tests
    monkeypatch.setenv("VAULTRAG_MODEL", "bundled")
    yield home


def write_notes(root: Path, notes: dict[str, str]) -> Path:
    for rel, text in notes.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def vault(tmp_path) -> Path:
    """A copy of the example vault that tests may edit."""
    import shutil

    dest = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, dest)
    return dest


@pytest.fixture
def cfg_for(tmp_path):
    from vaultrag.config import load_config

    def make(vault: Path, **kw):
        return load_config(vault=str(vault), db=str(tmp_path / "index.sqlite"), **kw)
    return make


def load_script(rel: str):
    """A script of the repo that is not a package module (benchmarks/, scripts/), as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(Path(rel).stem, REPO / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def lorem_notes(extra=lambda i: []) -> dict[str, str]:
    """60 filler notes (seed 5): 'common' in all of them, 'quokka' in every fourth, plus `extra(i)`."""
    import random

    rng = random.Random(5)
    filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed".split()
    notes = {}
    for i in range(60):
        words = [rng.choice(filler) for _ in range(rng.randint(5, 60))] + ["common"] * rng.randint(1, 3)
        if i % 4 == 0:
            words += ["quokka"] * rng.randint(1, 3)
        words += extra(i)
        rng.shuffle(words)
        notes[f"n{i:02d}.md"] = f"# Note {i}\n\n{' '.join(words)}\n"
    return notes


def shared_path(*parts: str) -> Path:
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is only beside the repo on the team's machines)")
    return p


@pytest.fixture
def claude_session(tmp_path, monkeypatch):
    """A Claude config folder (CLAUDE_CONFIG_DIR) with one session: (transcript path, its
    tool-results folder), where Claude Code persists a long tool output."""
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    project = config / "projects" / "-home-me-project"
    results = project / "3b1f" / "tool-results"
    results.mkdir(parents=True)
    transcript = project / "3b1f.jsonl"
    transcript.write_text("{}\n")
    return str(transcript), results
