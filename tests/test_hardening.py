"""Issue 14: nothing outside the vault gets out, hooks stay inside their budget (findings 1-3, 6).

Each test here failed on the code before the fix (main 703a2bf); the comment says how.
"""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from vaultrag.indexer import reindex
from vaultrag.retrieve import search

HOOKS = Path(__file__).resolve().parents[1] / "hooks"
NOTE = "Projects/Backup plan.md"
QUERY = "how long are daily snapshots kept"


@pytest.fixture
def indexed(vault, cfg_for):
    cfg = cfg_for(vault)
    reindex(cfg, embed=False)
    return cfg


@pytest.fixture
def hook_env(indexed):
    e = os.environ.copy()
    # A generous deadline: a loaded CI machine must not turn "answers" into "gave up" (the lock test
    # sets the real 1.5 s one).
    e.update(VAULTRAG_VAULT=str(indexed.vault), VAULTRAG_DB=str(indexed.db_path()), VAULTRAG_HOOK_TIMEOUT_MS="20000")
    return e


# A child's ru_maxrss starts at its parent's RSS at fork (Linux keeps the high-water mark across
# exec), so a hook started by a big process would report that process's memory. A tiny spawner
# process starts the hook instead and reports the hook's own wait4 rusage.
SPAWNER = r"""
import json, os, subprocess, sys, threading, time
args, timeout = json.loads(sys.argv[1]), float(sys.argv[3])
with open(sys.argv[2], "rb") as stdin:
    t = time.perf_counter()
    p = subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
timer = threading.Timer(timeout, p.kill)
timer.start()
out = p.stdout.read()
_, status, usage = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
timer.cancel()
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "s": wall, "rss_mb": usage.ru_maxrss / 1024,
                  "killed": wall >= timeout, "out": out.decode("utf-8", "replace")}))
"""


def run_hook(script: str, payload, env, timeout=30, with_rss=False, tmp_dir: Path | None = None):
    """(parsed stdout or None, seconds[, peak RSS in MB of this hook process alone])."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    args = [sys.executable, "-I", str(HOOKS / script)]
    if with_rss:
        case = Path(tempfile.mkdtemp()) / "stdin.bin"
        case.write_bytes(data)
        p = subprocess.run([sys.executable, "-I", "-S", "-c", SPAWNER, json.dumps(args), str(case), str(timeout)],
                           env=env, capture_output=True, timeout=timeout + 60)
        case.unlink()
        r = json.loads(p.stdout)
        assert r["rc"] == 0 and not r["killed"], r
        out = r["out"]
        return (json.loads(out) if out.strip() else None), r["s"], r["rss_mb"]
    started = time.monotonic()
    p = subprocess.run(args, input=data, capture_output=True, env=env, timeout=timeout)
    elapsed = time.monotonic() - started
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    out = p.stdout.decode()
    return (json.loads(out) if out.strip() else None), elapsed


def bash_payload(**over):
    big = "\n".join(f"line {i}: building module_{i}" for i in range(3000))
    base = {"session_id": "s", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": "make"},
            "tool_response": {"stdout": big, "stderr": "", "interrupted": False, "isImage": False}}
    base.update(over)
    return base


# -- finding 1: live citations never read through a link ---------------------------------------
def _swap_for_link(vault: Path, target: Path) -> None:
    note = vault / NOTE
    os.unlink(note)
    os.symlink(target, note)


def test_citation_does_not_read_a_note_swapped_for_a_symlink(vault, indexed, tmp_path):
    # Before: the file was re-read through the link; its text (similar enough) came back as
    # `source_changed` under the vault path, private line and all.
    outside = tmp_path / "private.txt"
    outside.write_text((vault / NOTE).read_text() + "\nOUTSIDE-PRIVATE-LINE root:x:0:0\n")
    _swap_for_link(vault, outside)
    ans = search(QUERY, indexed)
    assert ans.status == "ok"
    assert all("OUTSIDE-PRIVATE" not in h.text for h in ans.hits)
    mine = [h for h in ans.hits if h.path == NOTE]
    assert mine and {h.citation for h in mine} == {"stored"}
    assert "14 days" in " ".join(h.text for h in mine)  # the stored text, as indexed


def test_citation_does_not_follow_a_symlinked_folder(vault, indexed, tmp_path):
    real = tmp_path / "elsewhere"
    (real).mkdir()
    (real / "Backup plan.md").write_text((vault / NOTE).read_text() + "\nFROM-ELSEWHERE\n")
    os.unlink(vault / NOTE)
    os.rmdir(vault / "Projects")
    os.symlink(real, vault / "Projects")
    ans = search(QUERY, indexed)
    assert all("FROM-ELSEWHERE" not in h.text for h in ans.hits)
    assert {h.citation for h in ans.hits if h.path == NOTE} <= {"stored"}


def test_citation_of_a_note_swapped_for_a_fifo_does_not_block(vault, indexed):
    # Before: read_bytes() on the FIFO waited for a writer forever (the CLI search hung).
    os.unlink(vault / NOTE)
    os.mkfifo(vault / NOTE)
    p = subprocess.run([sys.executable, "-m", "vaultrag", "search", QUERY, "--json", "--vault", str(vault),
                        "--db", str(indexed.db_path())], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    hits = json.loads(p.stdout)["hits"]
    assert {h["citation"] for h in hits if h["path"] == NOTE} == {"stored"}


def test_citation_of_an_oversized_file_uses_the_stored_text(vault, indexed):
    with open(vault / NOTE, "a") as fh:
        fh.write("padding " * (indexed.max_file_bytes // 8 + 10))
    ans = search(QUERY, indexed)
    assert {h.citation for h in ans.hits if h.path == NOTE} == {"stored"}


def test_read_in_vault_refuses_escapes(tmp_path):
    from vaultrag.safe_io import RefusedFile, read_in_vault

    (tmp_path / "v").mkdir()
    (tmp_path / "secret").write_text("s")
    for rel in ("../secret", "/etc/passwd", "a/../../secret", ""):
        with pytest.raises(RefusedFile):
            read_in_vault(tmp_path / "v", rel, 100)


# -- finding 2: every blocking call fits inside the hook deadline ------------------------------
def test_posttool_with_dev_zero_transcript_is_bounded(hook_env):
    # Before: the tail read of /dev/zero never ended (2.6 GB at 1 s); killed here by the timeout.
    out, elapsed, rss_mb = run_hook("post_tool_use.py", bash_payload(transcript_path="/dev/zero"), hook_env,
                                    timeout=20, with_rss=True)
    assert out is not None  # the compression still ran
    assert rss_mb < 256


@pytest.mark.parametrize("kind", ["fifo", "dir", "dev_zero", "huge"])
def test_latest_user_prompt_refuses_special_files(tmp_path, kind):
    from vaultrag.hooks import latest_user_prompt

    path = tmp_path / "t.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "dev_zero":
        path = Path("/dev/zero")
    else:
        with open(path, "wb") as fh:
            fh.write(json.dumps({"type": "user", "message": {"content": "old"}}).encode() + b"\n")
            fh.seek(64 * 1024 * 1024)
            fh.write(b"\n" + json.dumps({"type": "user", "message": {"content": "the newest prompt"}}).encode() + b"\n")
    result: list[str] = []
    t = threading.Thread(target=lambda: result.append(latest_user_prompt(str(path))), daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), f"latest_user_prompt blocked on a {kind}"
    assert result == (["the newest prompt"] if kind == "huge" else [""])


def test_hook_busy_timeout_fits_inside_the_deadline(indexed):
    from vaultrag.store import connection

    connection.set_deadline(time.monotonic() + 1.5, busy_share=0.3)
    try:
        conn = connection.connect(indexed.db_path(), readonly=True)
        (busy,) = conn.execute("PRAGMA busy_timeout").fetchone()
        conn.close()
    finally:
        connection.set_deadline(None)
    assert 0 < busy <= 450
    assert connection.busy_timeout_ms() == connection.BUSY_TIMEOUT_MS  # reset for the rest of the process


def test_hook_gives_up_on_a_held_lock_inside_its_deadline(indexed, hook_env, isolated_env):
    # Before: the 5 s busy timeout kept the hook 5.03 s, past Claude Code's own 5 s timeout.
    holder = sqlite3.connect(str(indexed.db_path()))
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
    try:
        payload = {"session_id": "l", "transcript_path": "", "cwd": "/", "hook_event_name": "UserPromptSubmit",
                   "prompt": QUERY}
        out, elapsed = run_hook("user_prompt_submit.py", payload, dict(hook_env, VAULTRAG_HOOK_TIMEOUT_MS="1500"))
    finally:
        holder.rollback()
        holder.close()
    assert out is None
    assert elapsed < 4.0  # deadline 1.5 s + interpreter start on a loaded machine; was 5.0+
    log = (isolated_env / "state" / "vaultrag" / "hooks.log").read_text()
    assert "locked" in log or "deadline" in log


# -- finding 3: every input field is type-checked ----------------------------------------------
@pytest.mark.parametrize("value", [1, 2, True, 0, 1.5, [], {}, "a\x00b"])
def test_non_string_transcript_path_does_not_touch_our_fds(hook_env, value):
    # Before: open(1) on the hook's own stdout, then exit 120 with no output.
    out, _ = run_hook("post_tool_use.py", bash_payload(transcript_path=value), hook_env)
    assert out is not None and out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"


@pytest.mark.parametrize("field,value", [
    ("session_id", 1), ("session_id", {"a": 1}), ("session_id", "x" * 100_000), ("prompt", 5), ("prompt", ["q"]),
    ("cwd", 1), ("source", 3), ("hook_event_name", 1), ("tool_name", 1), ("tool_input", "str"),
    ("tool_response", 1), ("tool_response", True),
])
@pytest.mark.parametrize("script,event", [("user_prompt_submit.py", "UserPromptSubmit"),
                                           ("pre_tool_use.py", "PreToolUse"), ("post_tool_use.py", "PostToolUse")])
def test_wrong_field_types_fail_open(hook_env, script, event, field, value):
    payload = {"session_id": "t", "transcript_path": "", "cwd": "/", "hook_event_name": event, "prompt": QUERY,
               "tool_name": "Grep", "tool_input": {"pattern": "snapshots"}, "tool_response": "x"}
    payload[field] = value
    run_hook(script, payload, hook_env)  # exit 0 is asserted inside


def test_parse_hook_input_rejects_wrong_types():
    from vaultrag.hook_input import parse_hook_input

    inp = parse_hook_input({"hook_event_name": "PostToolUse", "session_id": 7, "transcript_path": True,
                            "tool_input": [1], "tool_response": 3, "prompt": None, "cwd": "/x"})
    assert (inp.session_id, inp.transcript_path, inp.tool_input, inp.tool_response, inp.cwd) == ("", "", {}, None, "/x")
    assert set(inp.rejected) == {"session_id", "transcript_path", "tool_input", "tool_response"}


# -- finding 6 and issue 12: session memory is atomic and never backfills -----------------------
def _prompt(text, session):
    return {"session_id": session, "transcript_path": "", "cwd": "/", "hook_event_name": "UserPromptSubmit",
            "prompt": text}


def _parallel(payloads, env):
    procs = [subprocess.Popen([sys.executable, "-I", str(HOOKS / "user_prompt_submit.py")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in payloads]
    outs = []
    for p, payload in zip(procs, payloads):
        out, err = p.communicate(json.dumps(payload).encode(), timeout=60)
        assert p.returncode == 0, err
        outs.append(json.loads(out) if out.strip() else None)
    return outs


def _cited(out) -> set[str]:
    import re

    return set(re.findall(r"Source: (.+?:L\d+-L\d+)", out["hookSpecificOutput"]["additionalContext"])) if out else set()


def test_same_prompt_at_once_is_injected_once(hook_env):
    # Before: 10 at once with one session were injected 5-8 times (read-modify-write race).
    env = hook_env
    outs = _parallel([_prompt(QUERY, "same")] * 10, env)
    assert sum(o is not None for o in outs) == 1


def test_concurrent_hooks_lose_no_session_keys(hook_env, isolated_env):
    from vaultrag.session_memory import seen_count

    env = hook_env
    prompts = ["daily snapshots retention", "restore drill staging cluster", "Ada reviews restores",
               "model2vec static embeddings", "sqlite fts5 tokenizer", "off-site bucket nightly",
               "weekly snapshots eight weeks", "checksum script record time", "reading notes", "home page links"]
    outs = _parallel([_prompt(p, "many") for p in prompts], env)
    injected = set().union(*(_cited(o) for o in outs))
    assert injected
    assert seen_count(isolated_env / "state" / "vaultrag", "many") == len(injected)


def test_repeat_prompt_in_a_session_injects_nothing(hook_env):
    # Before: the second time injected weaker chunks (further down the list) instead of nothing.
    first, _ = run_hook("user_prompt_submit.py", _prompt(QUERY, "r"), hook_env)
    again, _ = run_hook("user_prompt_submit.py", _prompt(QUERY, "r"), hook_env)
    reworded, _ = run_hook("user_prompt_submit.py", _prompt("How long are  DAILY snapshots kept", "r"), hook_env)
    assert first is not None and again is None and reworded is None


def test_claim_never_backfills(tmp_path):
    from vaultrag.session_memory import claim

    key = lambda h: h  # noqa: E731
    assert claim(tmp_path, "s", "q1", ["a", "b"], key) == ["a", "b"]
    assert claim(tmp_path, "s", "q1", ["a", "b", "c"], key) == []  # same question
    assert claim(tmp_path, "s", "q2", ["a", "c"], key) == []  # top hit already injected: c is weaker
    assert claim(tmp_path, "s", "q3", ["d", "a", "e"], key) == ["d", "e"]  # new top hit: only the new ones
    assert claim(tmp_path, "other", "q1", ["a", "b"], key) == ["a", "b"]  # sessions are separate
    assert claim(tmp_path, "", "q1", ["a"], key) == ["a"]  # no session id: no memory


def test_session_state_is_private_and_holds_no_paths(hook_env, isolated_env):
    run_hook("user_prompt_submit.py", _prompt(QUERY, "p"), hook_env)
    state = isolated_env / "state" / "vaultrag"
    db = state / "sessions.sqlite"
    assert oct(db.stat().st_mode & 0o777) == "0o600" and oct(state.stat().st_mode & 0o777) == "0o700"
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT session, key FROM injected").fetchall()
    conn.close()
    assert rows and not any("Backup" in k or k == "p" for row in rows for k in row)


# -- finding 2 (continued): stdin that parses into too much, or for too long --------------------
@pytest.mark.parametrize("name,raw", [
    ("dicts", b"[" + b"{}," * 10_600_000 + b"{}]"),  # ~31 MB under the stdin cap: ~700 MB of dicts
    ("dense", b"[" + b"0," * 15_900_000 + b"0]"),  # ~32 MB: 6.9 s inside json.loads, past any deadline
])
def test_pathological_json_is_refused_within_budget(hook_env, isolated_env, name, raw):
    out, elapsed, rss_mb = run_hook("post_tool_use.py", raw, hook_env, timeout=60, with_rss=True)
    assert out is None
    assert rss_mb < 256
    assert elapsed < 10.0  # the PostToolUse timeout in hooks.json; the dense case took 4-7 s before, past the deadline
    # refused before json.loads (before: parsed for seconds, then "not a JSON object")
    assert "JSON values" in (isolated_env / "state" / "vaultrag" / "hooks.log").read_text()
