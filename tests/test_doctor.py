"""`vaultrag doctor` and the SessionStart notice, on real settings files, configs, indexes and logs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO
from vaultrag.doctor import diagnose, log_problems, quick_problems, render
from vaultrag.indexer import reindex
from vaultrag.install_hooks import install, snippet_for
from vaultrag.user_config import record_vault

HOOKS = REPO / "hooks"


@pytest.fixture
def home(tmp_path, monkeypatch, isolated_env):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("VAULTRAG_MODEL", raising=False)
    monkeypatch.chdir(h)
    return h


@pytest.fixture
def working(home, vault):
    """Config naming the vault, a fresh index, hooks registered with this interpreter."""
    from vaultrag.config import load_config

    record_vault(vault)
    os.environ["VAULTRAG_MODEL"] = "bundled"
    try:
        reindex(load_config())
    finally:
        del os.environ["VAULTRAG_MODEL"]
    install(home / ".claude" / "settings.json", snippet_for(REPO, sys.executable))
    return vault


def problems_of(report, check=None):
    return [p for p in report.problems if check is None or p.check == check]


def test_nothing_set_up_lists_each_problem_with_its_fix(home):
    report = diagnose()
    assert not report.ok
    checks = {p.check for p in report.problems if p.severity == "error"}
    assert checks == {"hooks", "config"}
    text = render(report)
    for p in report.problems:
        assert p.line() in text and " -> fix: " in p.line() and "\n" not in p.line()
    assert "install.sh --vault PATH --claude" in text


def test_working_setup_passes(working):
    report = diagnose()
    assert report.ok, render(report)
    assert not problems_of(report)
    joined = "\n".join(report.passed)
    assert "UserPromptSubmit" in joined and "SessionStart" in joined and "sqlite-vec ok" in joined
    assert "index: fresh" in joined


def test_changed_note_is_a_freshness_warning_not_an_error(working):
    note = working / "Projects" / "Backup plan.md"
    note.write_text(note.read_text() + "\nA new line.\n")
    report = diagnose()
    [p] = problems_of(report, "index")
    assert report.ok and p.severity == "warning" and "1 note(s) changed" in p.problem and "reindex" in p.fix


def test_missing_interpreter_and_script_are_errors(working, home):
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] = "/nonexistent/.venv/bin/python"
    data["hooks"]["PreToolUse"][0]["hooks"][0]["args"][-1] = "/moved/hooks/pre_tool_use.py"
    settings.write_text(json.dumps(data))
    report = diagnose()
    lines = [p.line() for p in problems_of(report, "hooks")]
    assert not report.ok and len(lines) == 2
    assert any("/nonexistent/.venv/bin/python, which does not exist" in ln for ln in lines)
    assert any("/moved/hooks/pre_tool_use.py, which does not exist" in ln for ln in lines)


def test_interpreter_without_vaultrag_is_reported(working, home, tmp_path):
    # A Python without vaultrag installed, running a script outside any checkout: nothing to import.
    python = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if Path(p).is_file()
                   and subprocess.run([p, "-I", "-c", "import vaultrag"], capture_output=True).returncode), None)
    if python is None:
        pytest.skip("no Python without vaultrag on this machine")
    fake = tmp_path / "elsewhere" / "hooks" / "user_prompt_submit.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("")
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["UserPromptSubmit"][0]["hooks"][0].update(command=python, args=["-I", str(fake)])
    settings.write_text(json.dumps(data))
    [p] = problems_of(diagnose(), "hooks")
    assert "cannot import vaultrag" in p.problem and "install.sh" in p.fix


def test_index_missing_and_config_broken(working, home):
    from vaultrag.config import load_config

    load_config().db_path().unlink()
    [p] = problems_of(diagnose(), "index")
    assert "no index at" in p.problem and p.fix.endswith(f"reindex  (builds it from {working})")
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "vaultrag" / "config.yaml"
    config.write_text(config.read_text() + "retrieval:\n  kk: 3\n")
    [p] = problems_of(diagnose(), "config")
    assert "unknown key `retrieval.kk`" in p.problem and str(config) in p.fix


def test_recent_hook_log_errors_since_the_last_change(home, tmp_path):
    log = Path(os.environ["XDG_STATE_HOME"]) / "vaultrag" / "hooks.log"
    log.parent.mkdir(parents=True)
    now = time.time()
    stamp = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))  # noqa: E731
    log.write_text(f"{stamp(now - 3 * 86400)} UserPromptSubmit: ConfigError: too old\n"
                   f"{stamp(now - 600)} UserPromptSubmit: ConfigError: before the fix\n"
                   f"{stamp(now - 60)} PostToolUse: gave up at the 1.50 s deadline\n")
    found = log_problems([], now=now, since=now - 300)
    assert [p.severity for p in found] == ["warning"]
    assert "deadline" in found[0].problem and "timeout_ms" in found[0].fix
    assert len(log_problems([], now=now)) == 2


def test_cli_exit_codes_and_json(home):
    env = {**os.environ, "HOME": str(home)}
    p = subprocess.run([sys.executable, "-m", "vaultrag", "doctor", "--json"], capture_output=True, text=True,
                       env=env, cwd=str(home), timeout=120)
    assert p.returncode == 1, p.stderr
    data = json.loads(p.stdout)
    assert data["ok"] is False and {"check", "problem", "fix", "severity"} <= set(data["problems"][0])


def session_start(env, source="startup"):
    payload = {"session_id": "s", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "SessionStart",
               "source": source}
    code = ("import json, runpy, sys; sys.argv = [sys.argv[1]]\n"
            "try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in ('numpy', 'model2vec', 'tiktoken', 'yaml', 'sqlite_vec') if m in sys.modules)\n"
            "print(json.dumps(heavy), file=sys.stderr)")
    p = subprocess.run([sys.executable, "-I", "-c", code, str(HOOKS / "session_start.py")], input=json.dumps(payload),
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout, json.loads(p.stderr.strip().splitlines()[-1])


def test_session_start_tells_the_user_once_and_only_when_broken(home, vault):
    env = {**os.environ, "HOME": str(home)}
    out, heavy = session_start(env)
    message = json.loads(out)["systemMessage"]
    assert "no vault configured" in message and "doctor" in message and heavy == []
    assert session_start(env, source="compact")[0] == ""  # the same session, already told

    record_vault(vault)
    out, _ = session_start(env)
    assert "no index at" in json.loads(out)["systemMessage"]
    from vaultrag.config import load_config
    reindex(load_config(model="bundled"))
    out, heavy = session_start(env)
    assert out == "" and heavy == []  # config parsed through its JSON cache: no yaml on this path


def test_quick_problems_matches_doctor_errors(working):
    from vaultrag.config import load_config

    assert quick_problems() == []
    load_config().db_path().unlink()
    assert [p.check for p in quick_problems()] == ["index"]


def test_plugin_dir_route_is_checked_from_its_hooks_json(home, vault, monkeypatch):
    if not (REPO / ".venv" / "bin" / "python").exists():
        pytest.skip("the plugin's hooks run the checkout's .venv/bin/python; run ./install.sh first")
    # The probe runs the .venv's Python with this environment: a forced SQLite module (CI's second
    # run sets VAULTRAG_SQLITE=stdlib for its own Python) would make that Python lose sqlite-vec.
    monkeypatch.delenv("VAULTRAG_SQLITE", raising=False)
    from vaultrag.config import load_config

    record_vault(vault)
    reindex(load_config(model="bundled"))
    assert [p.check for p in diagnose().problems if p.severity == "error"] == ["hooks"]
    report = diagnose(plugin_dir=REPO)
    assert report.ok, render(report)
    assert any(line.startswith(f"plugin: --plugin-dir {REPO}") for line in report.passed)
    assert any("SessionStart" in line and str(REPO / ".venv") in line for line in report.passed)


def test_plugin_enabled_from_a_directory_marketplace_runs_in_place(home, vault):
    """`claude plugin marketplace add <checkout>` + `claude plugin install vaultrag@vaultrag`
    (Claude Code 2.1.332) record these files; its hooks then run from the checkout itself."""
    from vaultrag.config import load_config

    record_vault(vault)
    reindex(load_config(model="bundled"))
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"vaultrag@vaultrag": True}}))
    (plugins / "known_marketplaces.json").write_text(json.dumps({"vaultrag": {
        "source": {"source": "directory", "path": str(REPO)}, "installLocation": str(REPO)}}))
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {"vaultrag@vaultrag": [
        {"scope": "user", "installPath": str(plugins / "cache" / "vaultrag" / "vaultrag" / "0.1.0")}]}}))
    if not (REPO / ".venv" / "bin" / "python").exists():
        pytest.skip("the plugin's hooks run the checkout's .venv/bin/python; run ./install.sh first")
    report = diagnose()
    assert report.ok, render(report)
    assert any(line.startswith("plugin: vaultrag@vaultrag enabled") and f"({REPO})" in line for line in report.passed)


def test_a_setup_registered_before_post_tool_use_failure_gets_a_warning(working, home):
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    assert "PostToolUseFailure" in data["hooks"] and diagnose().ok
    del data["hooks"]["PostToolUseFailure"]
    settings.write_text(json.dumps(data))
    report = diagnose()
    [p] = problems_of(report, "hooks")
    assert report.ok and p.severity == "warning" and "PostToolUseFailure" in p.problem and "--claude" in p.fix
