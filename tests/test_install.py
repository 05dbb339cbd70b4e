"""install.sh as a new user runs it: empty HOME, `--vault PATH --claude`, then the hook exactly as
registered in ~/.claude/settings.json, run with nothing but HOME and PATH in its environment."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLE_VAULT, REPO

VENV_PY = REPO / ".venv" / "bin" / "python"
pytestmark = pytest.mark.skipif(not VENV_PY.exists(), reason="install.sh reuses the checkout's .venv; run ./install.sh first")


def bare_env(home: Path) -> dict[str, str]:
    """What a fresh login has: HOME and PATH, nothing of vaultrag's, no XDG variables."""
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def install(home: Path, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    p = subprocess.run(["bash", str(REPO / "install.sh"), *args], capture_output=True, text=True,
                       env=bare_env(home), cwd=cwd, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p


def registered(home: Path, event: str) -> list[str]:
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    [handler] = [h for g in settings["hooks"][event] for h in g["hooks"] if "/hooks/" in json.dumps(h)]
    return [handler["command"], *handler.get("args", [])]


def run_registered(home: Path, event: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run(registered(home, event), input=json.dumps(payload), capture_output=True, text=True,
                          env=bare_env(home), timeout=60, cwd=str(home))


@pytest.fixture
def user_vault(tmp_path) -> Path:
    dest = tmp_path / "My Notes"  # a space, as real vault names have
    shutil.copytree(EXAMPLE_VAULT, dest)
    return dest


def test_fresh_home_install_ends_in_a_hook_that_injects(tmp_path, user_vault):
    home = tmp_path / "home"
    home.mkdir()
    out = install(home, "--vault", str(user_vault), "--claude").stdout
    config = home / ".config" / "vaultrag" / "config.yaml"
    assert f'vault: "{user_vault}"' in config.read_text()
    assert "hook:    injected into Claude's context:" in out, out
    assert "## Relevant Memory Context" in out
    # The sample question is made from one of the user's notes, not a canned one.
    assert "what did I decide last week" not in out

    # The acceptance check: the registered command, HOME and PATH only, a vault question on stdin.
    p = run_registered(home, "UserPromptSubmit", {
        "session_id": "s-accept", "transcript_path": str(home / "t.jsonl"), "cwd": str(home),
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
        "prompt": "how long are daily snapshots kept?"})
    assert p.returncode == 0, p.stderr
    block = json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Source: Projects/Backup plan.md:L" in block and "14 days" in block

    # And the SessionStart hook has nothing to say: everything works.
    p = run_registered(home, "SessionStart", {"session_id": "s2", "hook_event_name": "SessionStart",
                                               "source": "startup", "transcript_path": "", "cwd": str(home)})
    assert (p.returncode, p.stdout) == (0, "")

    doctor = subprocess.run([str(REPO / ".venv" / "bin" / "vaultrag"), "doctor"], capture_output=True, text=True,
                            env=bare_env(home), cwd=str(home), timeout=120)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "a hook would work" in doctor.stdout


def test_install_is_idempotent_and_keeps_an_existing_config(tmp_path, user_vault):
    home = tmp_path / "home"
    config = home / ".config" / "vaultrag" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("# my settings\nvault: ~/old-notes\nhooks:\n  max_tokens: 300  # keep\n")
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command",
                                                                                    "command": "true"}]}]}}))
    install(home, "--vault", str(user_vault), "--claude")
    text = config.read_text()
    assert text.startswith("# my settings\n") and "max_tokens: 300  # keep" in text and "old-notes" not in text
    [backup] = config.parent.glob("config.yaml.bak-*")
    assert "vault: ~/old-notes" in backup.read_text()
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus" and merged["hooks"]["Stop"][0]["hooks"][0]["command"] == "true"
    assert set(merged["hooks"]) == {"Stop", "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                                    "PostToolUseFailure", "SessionEnd"}
    first = (config.read_text(), settings.read_text())

    out = install(home, "--vault", str(user_vault), "--claude").stdout
    assert (config.read_text(), settings.read_text()) == first
    assert len(list(config.parent.glob("config.yaml.bak-*"))) == 1
    assert "vault already set, unchanged" in out and "vaultrag hooks already present" in out
    assert "injected into Claude's context" in out


def test_relative_vault_path_is_taken_from_where_install_sh_ran(tmp_path, user_vault):
    home = tmp_path / "home"
    home.mkdir()
    install(home, "--vault", user_vault.name, cwd=user_vault.parent)  # plugin route: no --claude
    assert f'vault: "{user_vault}"' in (home / ".config" / "vaultrag" / "config.yaml").read_text()
    assert not (home / ".claude").exists()


def test_claude_without_a_vault_says_the_hooks_stay_silent(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    out = install(home, "--claude").stdout
    assert "no vault is configured" in out
    p = run_registered(home, "SessionStart", {"session_id": "s", "hook_event_name": "SessionStart",
                                              "source": "startup", "transcript_path": "", "cwd": str(home)})
    message = json.loads(p.stdout)["systemMessage"]
    assert "no vault configured" in message and "install.sh --vault PATH" in message


def test_sample_question_is_made_from_the_vault_and_finds_its_note(tmp_path):
    """install.sh's sample question on a real vault names a section of one of its notes, and the
    hook's own search cites that note (issue 12: the canned "what did I decide last week?" found
    13 unrelated hits)."""
    from conftest import shared_path
    from vaultrag.config import load_config
    from vaultrag.hook_check import sample_question
    from vaultrag.indexer import reindex
    from vaultrag.retrieve import search

    vault = shared_path("eval", "vaults", "obsidian-help", "en")
    cfg = load_config(vault=str(vault), db=str(tmp_path / "i.sqlite"))
    reindex(cfg, embed=False)
    question, note = sample_question(cfg)
    assert (vault / note).is_file() and Path(note).stem in question
    answer = search(question, cfg)
    assert answer.status == "ok" and note in [h.path for h in answer.hits[:2]]


UNSECTIONED = {  # short notes: no section reaches SAMPLE_MIN_SECTION_CHARS
    "Router.md": "# Home network\n\nThe router is a FritzBox 7590 in the hallway cupboard.\n\n"
                 "Its admin page is at fritz.box, firmware updates run on Sundays.\n\n"
                 "## Printer\n\nThe printer sits on the guest network since the spring.\n",
    "Deploy.md": "# Deploy checklist\n\nRun the migrations before switching traffic, then restart the app.\n",
}


def test_sample_question_on_notes_without_sections_is_one_the_hook_answers(tmp_path, isolated_env, cfg_for):
    """A vault of short notes (no long section; tldr's pages, small vaults): the title-only question
    ("what do my notes say about Home network?") found nothing to inject, so the first run showed a
    silent hook (stop 31's trial); the sample is now the first candidate the hook answers with its own note."""
    from vaultrag.hook_check import _would_inject, sample_question
    from vaultrag.indexer import reindex

    vault = tmp_path / "v"
    vault.mkdir()
    for name, text in UNSECTIONED.items():
        (vault / name).write_text(text, encoding="utf-8")
    cfg = cfg_for(vault)
    reindex(cfg)
    question, note = sample_question(cfg)
    assert (vault / note).is_file()
    assert _would_inject(question, note, cfg), question
    assert not question.startswith("what do my notes say about")
