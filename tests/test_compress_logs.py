"""A log is judged by its lines' shape, not by the command that printed it.

`cat app.log`, `tail -n N app.log` and `./run.sh` printing the same long log must all keep its error
records (first, in the digest) and a fair spread of the rest; `cat` of source code or prose holding
the word "error" stays content (no events). A failed command whose output the client cut gets a
rerun that really finds a mid-output error. A windowed Read says when its outline was cut.

Logs are generated here (several formats, seeded), sent through the real hook scripts as Claude
Code sends them (PostToolUse with the client's 30,000-character `stdout` and its persisted file;
PostToolUseFailure with `error` cut as CLI 2.1.332 cuts it).
"""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from vaultrag.compress import PREVIEW_CHARS, compress_post_tool_use
from vaultrag.compress.classify import C_ERROR, C_WARN
from vaultrag.compress.text import plan

HOOKS = Path(__file__).resolve().parents[1] / "hooks"
CLIENT_CUT = 30_000  # what the client puts in PostToolUse `stdout` of a longer output
COMPONENTS = ["cache", "reader", "writer", "scheduler", "http", "db"]


def record(fmt: str, i: int, level: str, component: str, message: str) -> str:
    ts = f"2025-03-14T02:{(i // 60) % 60:02d}:{i % 60:02d}.{(i * 37) % 1000:03d}Z"
    if fmt == "plain":
        return f"{ts} {level} {component}: {message}"
    if fmt == "pylogging":
        return f"{ts[:10]} {ts[11:19]},{ts[20:23]} - {component} - {level.replace('WARN', 'WARNING')} - {message}"
    if fmt == "logfmt":
        return f'time={ts} level={level.lower()} component={component} msg="{message}"'
    if fmt == "jsonl":
        return json.dumps({"ts": ts, "level": level.lower(), "logger": component, "msg": message})
    raise ValueError(fmt)


def nightly_log(fmt: str = "plain", n: int = 3000, error_at: int = 2222, seed: int = 5,
                traceback: bool = False) -> tuple[str, str, int]:
    """(log, its error line, the error's 1-based line number): n lines, most of them the chatty
    DEBUG lines of one component, one error record in the middle, a tally at the end."""
    rng = random.Random(seed)
    lines, error_line, error_no = [], "", 0
    for i in range(n - 1):
        if i == error_at:
            error_line = record(fmt, i, "ERROR", "writer", f"batch {i} failed: duplicate key value violates "
                                                          f"unique constraint \"items_pkey\" (id={i * 7})")
            error_no = len(lines) + 1
            lines.append(error_line)
            if traceback:
                lines += ["Traceback (most recent call last):",
                          '  File "/srv/app/writer.py", line 88, in flush',
                          "    cursor.executemany(INSERT_SQL, rows)",
                          '  File "/srv/app/db.py", line 41, in executemany',
                          "    raise IntegrityError(detail)",
                          "app.db.IntegrityError: duplicate key value violates unique constraint"]
            continue
        component = rng.choice(COMPONENTS) if rng.random() < 0.3 else "cache"
        level = "DEBUG" if rng.random() < 0.9 else "INFO"
        lines.append(record(fmt, i, level, component, f"processed item {i} in {rng.randrange(1, 90)}ms "
                                                      f"(queue={rng.randrange(400)}, worker=w{rng.randrange(8)})"
                                                      + " ." * rng.randrange(15)))
    lines.append(record(fmt, n, "INFO", "import", f"import finished: {n - 2} ok, 1 failed"))
    return "\n".join(lines) + "\n", error_line, error_no


@pytest.fixture
def session(claude_session, vault):
    """A Claude config folder with one session, and the environment a hook process gets."""
    transcript, results = claude_session
    # the deadline is the hook's own concern (tests/test_hooks.py); here the machine may be busy
    env = {**os.environ, "VAULTRAG_VAULT": str(vault), "VAULTRAG_HOOK_TIMEOUT_MS": "30000"}
    return transcript, results, env


def run_hook(script: str, payload: dict, env: dict) -> dict | None:
    """The hook script as Claude Code runs it, importing this checkout's vaultrag (an installed
    one, e.g. a shared venv's editable install of another tree, must not answer instead)."""
    env = {**env, "PYTHONPATH": str(HOOKS.parent)}
    p = subprocess.run([sys.executable, str(HOOKS / script)], input=json.dumps(payload).encode(),
                       capture_output=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    return json.loads(out)["hookSpecificOutput"] if out.strip() else None


def post_tool_use(command: str, output: str, session, tmp_path) -> str:
    """The stdout the model gets for a Bash call printing `output` (exit 0), through the hook."""
    transcript, results, env = session
    path = results / f"b{abs(hash(command)) % 10**8}.txt"
    path.write_text(output)
    response = {"stdout": output[:CLIENT_CUT], "stderr": "", "interrupted": False, "isImage": False,
                "noOutputExpected": False}
    if len(output) > CLIENT_CUT:
        response.update(persistedOutputPath=str(path), persistedOutputSize=len(output))
    payload = {"session_id": "77c1", "transcript_path": transcript, "cwd": str(tmp_path),
               "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": command},
               "tool_use_id": "t1", "tool_response": response}
    out = run_hook("post_tool_use.py", payload, env)
    assert out is not None and out["hookEventName"] == "PostToolUse"
    new = out["updatedToolOutput"]
    assert "persistedOutputPath" not in new, "the whole output was read from the client's file"
    return new["stdout"]


def client_error(output: str) -> str:
    """PostToolUseFailure's `error` as CLI 2.1.332 builds it: `Exit code 1`, then the head and tail
    of the output's first 30,000 characters around a truncation marker."""
    first = output[:CLIENT_CUT]
    if len(first) <= 10_000:
        return "Exit code 1\n" + first
    return (f"Exit code 1\n{first[:5000]}\n\n... [{len(first) - 10_000} characters truncated] ...\n\n"
            f"{first[-5000:]}")


def kept_components(text: str) -> Counter:
    return Counter(re.findall(r"Z (?:DEBUG|INFO) (\w+): processed item", text))


@pytest.fixture
def log_file(tmp_path):
    log, error_line, error_no = nightly_log()
    path = tmp_path / "nightly-import.log"
    path.write_text(log)
    script = tmp_path / "run-import.sh"
    script.write_text(f"#!/bin/sh\ncat {path}\n")
    script.chmod(0o755)
    return path, log, error_line, error_no


@pytest.mark.parametrize("command", ["cat {log}", "tail -n 3001 {log}", "{script}"])
def test_a_long_log_keeps_its_error_first_and_a_spread_of_the_rest_however_it_was_printed(command, log_file,
                                                                                           session, tmp_path):
    path, log, error_line, _ = log_file
    assert len(log) > 250_000 and error_line not in log[:CLIENT_CUT]
    cmd = command.format(log=path, script=tmp_path / "run-import.sh")
    stdout = post_tool_use(cmd, log, session, tmp_path)
    assert len(stdout) < 8000
    assert error_line in stdout[:PREVIEW_CHARS], "the error record leads the digest"
    assert log.rstrip("\n").split("\n")[-1] in stdout, "how it ended"
    body = stdout.split("[... the compressed output in its own order follows ...]")[-1]
    assert error_line in body
    kept = kept_components(body)
    assert len(kept) == len(COMPONENTS), kept  # every component shows up, not 50 lines of `cache`
    assert max(kept.values()) <= sum(kept.values()) / 2, kept
    items = [int(x) for x in re.findall(r"processed item (\d+)", body)]
    thirds = Counter(min(i * 3 // 3000, 2) for i in items)
    assert all(thirds[t] >= 3 for t in range(3)), thirds  # spread over the whole log, not its head


@pytest.mark.parametrize("fmt", ["plain", "pylogging", "logfmt", "jsonl"])
def test_every_error_record_and_its_traceback_are_kept_in_common_log_formats(fmt):
    log, error_line, _ = nightly_log(fmt, n=2500, error_at=1300, seed=11, traceback=True)
    for command in (f"cat -n /var/log/app.{fmt}", "docker logs importer"):
        text = log
        if command.startswith("cat -n"):  # cat -n numbers the lines
            text = "".join(f"{i:6}\t{line}\n" for i, line in enumerate(log.rstrip("\n").split("\n"), 1))
        out = compress_post_tool_use("Bash", {"command": command},
                                     {"stdout": text, "stderr": "", "interrupted": False, "isImage": False})
        stdout = out.tool_response["stdout"]
        assert error_line in stdout, (fmt, command)
        for frame in ('  File "/srv/app/writer.py", line 88, in flush', "    raise IntegrityError(detail)",
                      "app.db.IntegrityError: duplicate key value violates unique constraint"):
            assert frame in stdout, (fmt, command, frame)


def source_with_error_words(n_funcs: int = 120) -> str:
    parts = ['"""Error handling helpers."""\nimport logging\n\nlog = logging.getLogger(__name__)\n']
    for i in range(n_funcs):
        parts.append(f"\n\ndef handle_error_{i}(exc, retries={i % 5}):\n"
                     f'    """Log the error and re-raise: ERROR lines must stay greppable."""\n'
                     f"    record = exc.args[0] if exc.args else None\n"
                     f"    key = (record, retries, {i})\n"
                     f"    seen.add(key)\n"
                     f"    log.error('ERROR: failed to parse record %s', exc)\n"
                     f"    if retries:\n"
                     f"        raise ValueError(f'Error: could not recover after {{retries}} retries')\n"
                     f"    return None\n")
    parts.append("\n\ndef parse_config(path):\n    return open(path).read()\n")
    return "".join(parts)


def test_cat_of_source_code_or_prose_holding_error_words_stays_content():
    source = source_with_error_words()
    prose = "".join(f"## Troubleshooting {i}\n\nWhen the service {i} stops answering, look at its status first.\n"
                    f"Error: connection refused means the database is down; restart it.\n"
                    f"Then read the last lines of its journal and compare them with the previous run.\n"
                    f"Most problems come from a full disk or an expired certificate.\n\n"
                    for i in range(200))
    for text, command in ((source, "cat src/errors.py"), (prose, "cat docs/troubleshooting.md")):
        p = plan(text, 4000, command, "", content=True)
        events = [u for u, c in enumerate(p.classes.cls) if c in (C_ERROR, C_WARN)]
        assert events == [], [p.units.texts[u] for u in events[:3]]
        # the same text as a status output would have had events: the content judgement is what stops them
        assert any(c == C_ERROR for c in plan(text, 4000, "python gen.py", "", content=False).classes.cls)
    out = compress_post_tool_use("Bash", {"command": "cat src/errors.py"},
                                 {"stdout": source, "stderr": "", "interrupted": False, "isImage": False},
                                 prompt="where is parse_config defined")
    assert "def parse_config(path):" in out.tool_response["stdout"]


@pytest.mark.parametrize("command", ["(cat {log}; exit 1)", "tail -n 3001 {log} {log}.missing", "{script}; exit 1"])
def test_a_failed_command_cut_by_the_client_gets_a_rerun_that_finds_the_mid_output_error(command, log_file, session,
                                                                                          tmp_path):
    path, log, error_line, _ = log_file
    _, _, env = session
    cmd = command.format(log=path, script=tmp_path / "run-import.sh")
    real = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=tmp_path)
    assert real.returncode != 0
    output = real.stdout + real.stderr
    error = client_error(output)
    assert error_line not in error  # nothing that reaches a hook holds it
    payload = {"session_id": "77c1", "transcript_path": "", "cwd": str(tmp_path),
               "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": cmd},
               "tool_use_id": "t2", "error": error}
    out = run_hook("post_tool_use_failure.py", payload, env)
    note = out["additionalContext"]
    assert len(note) <= PREVIEW_CHARS and "whether it holds an error is unknown" in note
    rerun = re.search(r"rerun `(.+)`\.$", note).group(1)
    shown = subprocess.run(["bash", "-c", rerun], capture_output=True, text=True, cwd=tmp_path).stdout
    line_no = output.split("\n").index(error_line) + 1  # `tail` of two files adds a `==> x <==` header
    assert f"{line_no}:{error_line}" in shown  # the error, with its line number in the output
    assert log.rstrip("\n").split("\n")[-1] in shown  # and the end


def test_a_mid_output_error_of_a_middle_truncated_failure_is_found_by_the_rerun(tmp_path, session):
    log, error_line, error_no = nightly_log(n=200, error_at=100, seed=3)
    assert 10_000 < len(log) < CLIENT_CUT
    path = tmp_path / "short.log"
    path.write_text(log)
    cmd = f"cat {path}; exit 1"
    error = client_error(log)
    assert error_line not in error
    note = run_hook("post_tool_use_failure.py", {
        "session_id": "s", "transcript_path": "", "cwd": str(tmp_path), "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "t3", "error": error}, session[2])
    note = note["additionalContext"]
    assert "in the middle reached no hook" in note
    rerun = re.search(r"rerun `(.+)`\.$", note).group(1)
    shown = subprocess.run(["bash", "-c", rerun], capture_output=True, text=True, cwd=tmp_path).stdout
    assert f"{error_no}:{error_line}" in shown


def test_a_windowed_read_says_when_its_outline_was_cut():
    rng = random.Random(9)
    weeks = 60
    parts = ["# Training log\n"]
    for w in range(1, weeks + 1):
        parts.append(f"\n## Week {w}\n\n")
        parts += [f"- {' '.join(rng.choice(['easy', 'tempo', 'long', 'hills', 'rest']) for _ in range(14))}\n"
                  for _ in range(30)]
    text = "".join(parts)
    lines = text.split("\n")
    n = len(lines)
    resp = {"type": "text", "file": {"filePath": "/v/log.md", "content": text, "numLines": n, "startLine": 1,
                                     "totalLines": n}}
    out = compress_post_tool_use("Read", {"file_path": "/v/log.md"}, resp, prompt="how did the training go")
    f = out.tool_response["file"]
    window = range(f["startLine"], f["startLine"] + f["numLines"])
    headings = [i for i, line in enumerate(lines, 1) if line.startswith("## ") and i not in window]
    listed = [int(m) for m in re.findall(r"^ *(\d+)\t## ", out.note, re.M)]
    assert listed and set(listed) <= set(headings)
    missing = sorted(set(headings) - set(listed))
    assert missing, "a case where not every heading fits"
    m = re.search(r"\[\.\.\. (\d+) more such lines? not listed, between lines (\d+) and (\d+)", out.note)
    assert m, out.note[-300:]
    assert (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (len(missing), missing[0], missing[-1])
    assert "Grep `^#{1,6} ` in /v/log.md" in out.note
