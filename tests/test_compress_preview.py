"""Compression that survives the client: a Bash result over PERSIST_CHARS reaches the model only as
a ~2 KB preview of what the hook returned, so that preview must carry the summary, the failure ids
and their key lines, and say where the full output is."""
from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path

import pytest

from vaultrag.compress import PERSIST_CHARS, PREVIEW_CHARS, compress_tool_output
from vaultrag.compress import spill as spill_mod

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "tool-outputs"
PREVIEW = 2000  # "Preview (first 2KB)" (reference §2.6)
BUDGET = 4000
SECRET = "ghp_" + "Xq7Lm2Rt9Vb4Nk8Pz3Wc6Jd1Hf5Gs0Ya2Ue7"
PATH_RE = re.compile(r"full output \(scrubbed\): (\S+?)\]")


def bash(stdout: str, stderr: str = "") -> dict:
    return {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}


def failing_pytest_log(n_pass: int = 700, n_fail: int = 14) -> str:
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0", f"collected {n_pass + n_fail} items", ""]
    lines += [f"tests/test_api_{i % 11}.py::test_endpoint_{i} PASSED{' ' * 30}[{i * 100 // n_pass:3d}%]"
              for i in range(n_pass)]
    lines += ["", "=================================== FAILURES ==================================="]
    for i in range(n_fail):
        lines += [f"_________________________ test_checkout_total_{i} _________________________", "",
                  f"    def test_checkout_total_{i}():", "        cart = make_cart(items=3)",
                  ">       assert cart.total() == Decimal('30.00')",
                  f"E       AssertionError: assert Decimal('{27 + i}.00') == Decimal('30.00')", "",
                  f"tests/test_checkout.py:{40 + 9 * i}: AssertionError"]
    lines.append("=========================== short test summary info ============================")
    lines += [f"FAILED tests/test_checkout.py::test_checkout_total_{i} - AssertionError: assert Decimal('{27 + i}.00')..."
              for i in range(n_fail)]
    lines.append(f"=================== {n_fail} failed, {n_pass} passed in 12.04s ===================")
    return "\n".join(lines) + "\n"


def test_long_failing_log_preview_has_summary_ids_and_path(tmp_path):
    log = failing_pytest_log()
    assert len(log) > PERSIST_CHARS
    out = compress_tool_output("Bash", {"command": "pytest", "description": "Run the test suite"}, bash(log),
                               prompt="run the tests", budget_chars=BUDGET, spill_dir=tmp_path)["stdout"]
    head = out[:PREVIEW]
    assert "=================== 14 failed, 700 passed in 12.04s ===================" in head
    for i in range(10):
        assert f"FAILED tests/test_checkout.py::test_checkout_total_{i} " in head, i
    assert "E       AssertionError: assert Decimal('27.00') == Decimal('30.00')" in head
    first_line = out.split("\n", 1)[0]
    full = Path(PATH_RE.search(first_line).group(1))
    assert full.parent == tmp_path and full.read_text() == log.rstrip("\n")
    assert stat.S_IMODE(full.stat().st_mode) == 0o600


def test_below_the_persist_limit_there_is_no_digest(tmp_path):
    log = failing_pytest_log(n_pass=250, n_fail=2)
    assert 8000 < len(log) < PERSIST_CHARS
    out = compress_tool_output("Bash", {"command": "pytest"}, bash(log), budget_chars=BUDGET, spill_dir=tmp_path)["stdout"]
    assert out.startswith("[vaultrag: ") and PATH_RE.search(out.split("\n", 1)[0])
    assert "compressed output in its own order follows" not in out


def test_full_output_is_scrubbed_and_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    log = failing_pytest_log() + f"\nERROR: push rejected for GITHUB_TOKEN={SECRET}\n"
    out = compress_tool_output("Bash", {"command": "pytest"}, bash(log), budget_chars=BUDGET)["stdout"]
    full = Path(PATH_RE.search(out.split("\n", 1)[0]).group(1))
    assert full.parent == tmp_path / "state" / "vaultrag" / "outputs"
    assert stat.S_IMODE(full.parent.stat().st_mode) == 0o700
    assert SECRET not in full.read_text() and "[REDACTED:" in full.read_text()
    assert SECRET not in out


def test_same_output_same_bytes_and_one_file(tmp_path):
    resp = bash(failing_pytest_log())
    a = compress_tool_output("Bash", {"command": "pytest"}, resp, budget_chars=BUDGET, spill_dir=tmp_path)
    b = compress_tool_output("Bash", {"command": "pytest"}, resp, budget_chars=BUDGET, spill_dir=tmp_path)
    assert json.dumps(a) == json.dumps(b)
    assert len(list(tmp_path.glob("*.txt"))) == 1


def test_outputs_dir_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(spill_mod, "SPILL_MAX_FILES", 5)
    paths = []
    for i in range(9):
        p = spill_mod.spill(f"output number {i}\n" * 50, tmp_path)
        os.utime(p, (1_000_000 + i, 1_000_000 + i))  # strictly increasing ages
        paths.append(p)
    spill_mod.prune(tmp_path)
    left = sorted(tmp_path.glob("*.txt"))
    assert len(left) == 5 and set(left) == set(paths[-5:])


def test_unwritable_state_dir_still_compresses(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out = compress_tool_output("Bash", {"command": "pytest"}, bash(failing_pytest_log()), budget_chars=BUDGET,
                               spill_dir=blocker / "outputs")["stdout"]
    assert "full output not saved" in out.split("\n", 1)[0]
    assert "14 failed, 700 passed" in out[:PREVIEW]


def _long_bash_outputs():
    if not CORPUS.is_dir():
        return []
    out = []
    for folder in sorted(CORPUS.iterdir()):
        meta_path = folder / "meta.json"
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            if meta["tool"] == "Bash" and meta["bytes"] > PERSIST_CHARS and meta.get("rule_family") in (
                    "pytest-fail", "pytest-pass", "cargo-test", "lint"):
                out.append(folder)
    return out


@pytest.mark.skipif(not CORPUS.is_dir(), reason="tool-output corpus not present")
@pytest.mark.parametrize("folder", _long_bash_outputs(), ids=lambda p: p.name)
def test_real_long_outputs_preview_carries_the_summary_and_failure_ids(folder, tmp_path):
    meta = json.loads((folder / "meta.json").read_text())
    output = (folder / "output.txt").read_text(encoding="utf-8", errors="replace")
    out = compress_tool_output("Bash", {"command": meta["command"]}, bash(output), prompt=meta["intent"],
                               budget_chars=BUDGET, spill_dir=tmp_path)
    head = out["stdout"][:PREVIEW]
    assert PATH_RE.search(head.split("\n", 1)[0])
    # summary lines and failure ids are what the model must see first
    key = [m for m in meta["must_keep"]
           if re.match(r"^=+ .* in [\d.]+s|^(?:FAILED|ERROR) |^test result: FAILED|^test \S+.* FAILED$|^Found \d+ error", m)]
    assert key, "a long output of this family has a summary"
    missing = [m for m in key if m not in head]
    assert not missing, missing[:3]
    assert len(out["stdout"].split("[... the compressed output in its own order follows ...]")[0]) <= PREVIEW_CHARS


def test_failed_command_digest_for_post_tool_use_failure():
    from vaultrag.compress import digest_tool_failure

    log = failing_pytest_log()
    # the client middle-truncates PostToolUseFailure's `error` at 10,000 characters (reference §1.4)
    error = "Exit code 1\n" + log[:5000] + f"\n... [{len(log) - 10000} characters truncated] ...\n" + log[-5000:]
    digest = digest_tool_failure("Bash", {"command": "pytest -q"}, error)
    assert digest is not None and len(digest) <= PREVIEW_CHARS
    assert "14 failed, 700 passed in 12.04s" in digest
    for i in range(8):
        assert f"FAILED tests/test_checkout.py::test_checkout_total_{i} " in digest, i
    assert digest_tool_failure("Bash", {"command": "false"}, "Exit code 1\nshort") is None
    assert digest_tool_failure("Read", {}, error) is None


def test_hook_answers_post_tool_use_failure_with_the_digest(vault):
    import subprocess

    log = failing_pytest_log()
    payload = {"session_id": "s", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "PostToolUseFailure",
               "tool_name": "Bash", "tool_input": {"command": "pytest"}, "tool_use_id": "t",
               "error": "Exit code 1\n" + log[-9000:]}
    code = "import sys; from vaultrag.hooks import main; sys.exit(main('PostToolUseFailure'))"
    res = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload).encode(), capture_output=True,
                         env={**os.environ, "VAULTRAG_VAULT": str(vault)}, timeout=60, check=True)
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUseFailure"
    assert "14 failed, 700 passed" in out["additionalContext"] and len(out["additionalContext"]) < 10_000
