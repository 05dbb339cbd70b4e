"""The real hook scripts as subprocesses, fed what Claude Code sends, and every way it can go wrong."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultrag.indexer import reindex

HOOKS = Path(__file__).resolve().parents[1] / "hooks"

# Written from the hook contract (reference §2): what Claude Code 2.1.x accepts on stdout.
OUTPUT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["hookSpecificOutput"],
    "properties": {"hookSpecificOutput": {"oneOf": [
        {"type": "object", "additionalProperties": False, "required": ["hookEventName", "additionalContext"],
         "properties": {"hookEventName": {"enum": ["UserPromptSubmit", "PreToolUse", "PostToolUseFailure"]},
                        "additionalContext": {"type": "string", "minLength": 1, "maxLength": 10000}}},
        # PostToolUse (reference §2.3): updatedToolOutput, and additionalContext beside it (a windowed Read's note)
        {"type": "object", "additionalProperties": False, "required": ["hookEventName", "updatedToolOutput"],
         "properties": {"hookEventName": {"const": "PostToolUse"}, "updatedToolOutput": {"type": "object"},
                        "additionalContext": {"type": "string", "minLength": 1, "maxLength": 10000}}},
    ]}},
}
BASH_OUTPUT = {"type": "object", "required": ["stdout", "stderr", "interrupted", "isImage"],
               "properties": {"stdout": {"type": "string"}, "stderr": {"type": "string"},
                              "interrupted": {"type": "boolean"}, "isImage": {"type": "boolean"}}}


@pytest.fixture
def env(vault, cfg_for, isolated_env):
    cfg = cfg_for(vault)
    reindex(cfg)
    e = os.environ.copy()
    e.update(VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(cfg.db_path()))
    return e


def run(script: str, payload, env, timeout=30):
    data = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
    p = subprocess.run([sys.executable, "-I", str(HOOKS / script)], input=data if isinstance(data, bytes) else data.encode(),
                       capture_output=True, env=env, timeout=timeout)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert out.count("\n") <= 1, "exactly one JSON line, or nothing"
    return json.loads(out) if out.strip() else None


def prompt(text, session="s1", **extra):
    return {"session_id": session, "transcript_path": "/nonexistent.jsonl", "cwd": "/tmp",
            "hook_event_name": "UserPromptSubmit", "prompt": text, **extra}


def validate(obj, schema=OUTPUT_SCHEMA):
    import jsonschema
    jsonschema.validate(obj, schema)


def test_prompt_gets_cited_context_once_per_session(env):
    out = run("user_prompt_submit.py", prompt("how long do we keep daily snapshots?"), env)
    validate(out)
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert ctx.startswith("## Relevant Memory Context\n\n### ")
    assert "Projects/Backup plan.md:L" in ctx and "14 days" in ctx
    again = run("user_prompt_submit.py", prompt("how long do we keep daily snapshots?"), env)
    assert again is None, "a question already answered in this session injects nothing (issue 12)"
    other = run("user_prompt_submit.py", prompt("how long do we keep daily snapshots?", session="s2"), env)
    assert other is not None


def test_prompt_without_evidence_injects_nothing(env):
    assert run("user_prompt_submit.py", prompt("quantum chromodynamics of gluon plasma"), env) is None


def test_machine_prompt_sources_are_skipped(env):
    assert run("user_prompt_submit.py", prompt("daily snapshots retention", source="loop_wakeup"), env) is None


def test_hook_budget_is_configurable(env):
    e = dict(env, VAULTRAG_HOOK_MAX_TOKENS="80")
    out = run("user_prompt_submit.py", prompt("snapshots retention restore drill storage", session="b"), e)
    from vaultrag.tokens import load_counter
    assert load_counter()[1](out["hookSpecificOutput"]["additionalContext"]) <= 80


def test_pretool_context_for_search_tools_only(env):
    payload = {"session_id": "p", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "PreToolUse",
               "tool_name": "Grep", "tool_input": {"pattern": "snapshot retention", "path": "/src"}, "tool_use_id": "t"}
    out = run("pre_tool_use.py", payload, env)
    validate(out)
    assert "permissionDecision" not in json.dumps(out)
    payload.update(tool_name="Bash", tool_input={"command": "ls"})
    assert run("pre_tool_use.py", payload, env) is None


def test_posttool_compresses_big_bash_output_in_bash_shape(env):
    lines = [f"tests/test_mod{i}.py::test_case_{i} PASSED" for i in range(3000)]
    lines[1500] = "tests/test_mod1500.py::test_case_1500 FAILED"
    stdout = "\n".join(lines + ["=========== 1 failed, 2999 passed in 12.34s ==========="])
    payload = {"session_id": "c", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "PostToolUse",
               "tool_name": "Bash", "tool_input": {"command": "pytest -v"}, "tool_use_id": "t",
               "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}}
    out = run("post_tool_use.py", payload, env)
    validate(out)
    new = out["hookSpecificOutput"]["updatedToolOutput"]
    validate(new, BASH_OUTPUT)
    assert len(new["stdout"]) < len(stdout) / 5
    assert "1 failed, 2999 passed" in new["stdout"] and "test_case_1500 FAILED" in new["stdout"]
    payload["tool_response"]["stdout"] = "short output"
    assert run("post_tool_use.py", payload, env) is None


def test_posttool_windowed_read_output_matches_the_contract(env, tmp_path):
    from vaultrag.compress import READ_INTACT_CHARS

    text = "".join(f"def f_{i}(x):\n    return x * {i}  # {'pad ' * 6}\n\n" for i in range(3000))
    assert len(text) > READ_INTACT_CHARS
    path = tmp_path / "big.py"
    path.write_text(text)
    n = text.count("\n")
    payload = {"session_id": "w", "transcript_path": "", "cwd": str(tmp_path), "hook_event_name": "PostToolUse",
               "tool_name": "Read", "tool_input": {"file_path": str(path)}, "tool_use_id": "t",
               "tool_response": {"type": "text", "file": {"filePath": str(path), "content": text, "numLines": n,
                                                          "startLine": 1, "totalLines": n}}}
    out = run("post_tool_use.py", payload, env)
    validate(out)
    spec = out["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "updatedToolOutput", "additionalContext"}
    assert "offset" in spec["additionalContext"] and len(spec["updatedToolOutput"]["file"]["content"]) < len(text)


@pytest.mark.parametrize("stdin", [b"", b"   ", b"not json", b"[1, 2]", b"\xff\xfe\x00garbage", b"null",
                                   b'{"hook_event_name": "Stop"}', b'{"hook_event_name": "UserPromptSubmit"}',
                                   b'{"hook_event_name": "UserPromptSubmit", "prompt": 42}'])
@pytest.mark.parametrize("script", ["user_prompt_submit.py", "pre_tool_use.py", "post_tool_use.py",
                                    "post_tool_use_failure.py"])
def test_garbage_stdin_fails_open(env, script, stdin):
    assert run(script, stdin, env) is None


def test_missing_and_corrupt_database_fail_open(env, tmp_path, isolated_env):
    e = dict(env, VAULTRAG_DB=str(tmp_path / "missing.sqlite"))
    assert run("user_prompt_submit.py", prompt("snapshots"), e) is None
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"garbage" * 1000)
    e = dict(env, VAULTRAG_DB=str(bad))
    assert run("user_prompt_submit.py", prompt("snapshots"), e) is None
    log = (isolated_env / "state" / "vaultrag" / "hooks.log").read_text()
    assert "IndexMissing" in log and "IndexCorrupt" in log


def test_deadline_gives_up_cleanly(env, isolated_env):
    e = dict(env, VAULTRAG_HOOK_TIMEOUT_MS="1")
    assert run("user_prompt_submit.py", prompt("snapshots retention"), e) is None
    assert "deadline" in (isolated_env / "state" / "vaultrag" / "hooks.log").read_text()


def test_huge_payload_is_handled(env):
    big = {"session_id": "h", "transcript_path": "", "cwd": "/", "hook_event_name": "PostToolUse",
           "tool_name": "Bash", "tool_input": {"command": "cat big"},
           "tool_response": {"stdout": "x" * 40_000_000, "stderr": "", "interrupted": False, "isImage": False}}
    assert run("post_tool_use.py", big, env) is None


def test_without_sqlite_vec_the_hook_still_answers(env, tmp_path):
    blocker = tmp_path / "sitecustomize_block.py"
    blocker.write_text(
        "import sys, importlib.machinery\n"
        "class B:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'sqlite_vec':\n"
        "            return importlib.machinery.ModuleSpec(name, None)\n"
        "        return None\n"
        "sys.meta_path.insert(0, B())\n"
        f"import runpy; sys.argv = ['{HOOKS / 'user_prompt_submit.py'}']\n"
        f"runpy.run_path('{HOOKS / 'user_prompt_submit.py'}', run_name='__main__')\n")
    p = subprocess.run([sys.executable, "-I", str(blocker)], input=json.dumps(prompt("daily snapshots kept")).encode(),
                       capture_output=True, env=env, timeout=30)
    assert p.returncode == 0
    out = json.loads(p.stdout)
    assert "Backup plan" in out["hookSpecificOutput"]["additionalContext"]


def test_hook_path_imports_no_heavy_modules(env):
    code = ("import io, sys, json\n"
            "sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps({'session_id': 'x', 'hook_event_name': 'UserPromptSubmit',"
            " 'prompt': 'daily snapshots retention'}).encode()))\n"
            "from vaultrag.hooks import main\n"
            "main('UserPromptSubmit')\n"
            "heavy = sorted(m for m in ('numpy', 'model2vec', 'tiktoken', 'yaml', 'tokenizers', 'sqlite_vec', 'safetensors')"
            " if m in sys.modules)\n"
            "print(json.dumps(heavy), file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    assert b"Relevant Memory Context" in p.stdout
    assert json.loads(p.stderr.decode().strip().splitlines()[-1]) == []


def test_install_hooks_merges_idempotently_with_backup(tmp_path):
    from vaultrag.install_hooks import install, snippet_for
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    existing = {"model": "opus", "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "other"}]}]}}
    settings.write_text(json.dumps(existing))
    snip = snippet_for(Path("/opt/vaultrag"), "/opt/vaultrag/.venv/bin/python")
    assert install(settings, snip) == (6, 0)  # SessionStart, UserPromptSubmit, PreToolUse, PostToolUse(Failure), SessionEnd
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus"
    cmds = [h["command"] for g in merged["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert cmds == ["other", "/opt/vaultrag/.venv/bin/python"]
    assert "/opt/vaultrag/hooks/user_prompt_submit.py" in json.dumps(merged)
    assert list(settings.parent.glob("settings.json.bak-*"))
    before = settings.read_text()
    assert install(settings, snip) == (0, 0) and settings.read_text() == before
    assert "__VAULTRAG_ROOT__" not in json.dumps(snip)


def test_reinstall_from_a_new_clone_removes_the_hooks_of_the_deleted_one(tmp_path):
    """A clone deleted and another installed: its six hooks used to stay beside the new ones, failing
    on every event, and doctor's fix (rerun install.sh --claude) left them there. Hooks of a checkout
    that still exists, and other tools' hooks, stay."""
    from vaultrag.install_hooks import install, snippet_for

    settings = tmp_path / ".claude" / "settings.json"
    old, other, new = tmp_path / "old-clone", tmp_path / "other-clone", tmp_path / "new-clone"
    for root in (old, other, new):
        (root / "hooks").mkdir(parents=True)
        for name in ("session_start", "session_end", "user_prompt_submit", "pre_tool_use", "post_tool_use",
                     "post_tool_use_failure"):
            (root / "hooks" / f"{name}.py").write_text("")
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "x"}]}]}}))
    assert install(settings, snippet_for(old, "/usr/bin/python3")) == (6, 0)
    assert install(settings, snippet_for(other, "/usr/bin/python3")) == (6, 0)
    import shutil

    shutil.rmtree(old)
    assert install(settings, snippet_for(new, "/usr/bin/python3")) == (6, 6)
    text = settings.read_text()
    assert str(old) not in text and text.count(str(other)) == 6 and text.count(str(new)) == 6
    groups = json.loads(text)["hooks"]["UserPromptSubmit"]
    assert all(g["hooks"] for g in groups) and groups[0]["hooks"][0]["command"] == "x"
    assert install(settings, snippet_for(new, "/usr/bin/python3")) == (0, 0)


def test_plugin_layout_is_consistent():
    root = HOOKS.parent
    plugin = json.loads((root / ".claude-plugin" / "plugin.json").read_text())
    hooks = json.loads((root / "hooks" / "hooks.json").read_text())
    snippet = json.loads((root / "settings.snippet.json").read_text())
    assert plugin["name"] == "vaultrag"
    assert set(hooks["hooks"]) == set(snippet["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse",
                                                                  "PostToolUse", "PostToolUseFailure", "SessionEnd"}
    for groups in hooks["hooks"].values():
        for g in groups:
            for h in g["hooks"]:
                assert h["args"][-1].startswith("${CLAUDE_PLUGIN_ROOT}/hooks/")
                assert (root / "hooks" / h["args"][-1].rsplit("/", 1)[1]).is_file()
                assert isinstance(h["timeout"], int) and h["timeout"] <= 10


def test_no_hook_is_registered_async():
    """Claude Code 2.1.197 hands an `async` command hook an empty stdin under `claude -p` (seen in a
    trial: SessionEnd logged "stdin is not a JSON object (0 bytes)" on every run, so no ended
    session was ever indexed); the SessionEnd script returns at once and detaches its indexer."""
    root = HOOKS.parent
    for f in (root / "hooks" / "hooks.json", root / "settings.snippet.json"):
        for event, groups in json.loads(f.read_text())["hooks"].items():
            for g in groups:
                for h in g["hooks"]:
                    assert not h.get("async"), (f.name, event)


def test_the_deadline_is_not_swallowed_by_a_best_effort_step(vault, cfg_for, isolated_env, monkeypatch):
    """The deadline's SIGALRM can land in any step; one that degrades on `except Exception` (session
    memory: "injected without it") swallowed it, so a hook injected past its budget (seen: 9 of 30
    hooks with a 20 ms deadline printed a block). The deadline must reach main() and mean no output."""
    from vaultrag import hooks, session_memory

    cfg = cfg_for(vault)
    reindex(cfg)
    assert hooks.context_for("how long are daily snapshots kept?", "s-ok", "UserPromptSubmit", cfg)

    def late(*a, **k):
        raise hooks.Deadline()

    monkeypatch.setattr(session_memory, "claim", late)
    with pytest.raises(hooks.Deadline):
        hooks.context_for("how long are daily snapshots kept?", "s-late", "UserPromptSubmit", cfg)
