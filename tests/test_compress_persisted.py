"""A Bash output over ~30 KB: Claude Code gives PostToolUse its first 30,000 characters and the whole
of it in `persistedOutputPath` (CLI 2.1.332, recorded run: `<config>/projects/<project>/<session>/
tool-results/<id>.txt`, beside `<session>.jsonl`). The compressor reads the whole from there, and
only from there."""
from __future__ import annotations

import os

import pytest

from test_claude_client import FAILED_IDS, SUMMARY, failing_pytest_log
from vaultrag.compress import PREVIEW_CHARS, compress_post_tool_use
from vaultrag.compress.persisted import PERSISTED_MAX_BYTES, read_persisted

CLIENT_CUT = 30_000  # what 2.1.332 put in `stdout` of a 39,437-character output


@pytest.fixture
def session(claude_session):
    return claude_session


def bash_response(full: str, path) -> dict:
    return {"stdout": full[:CLIENT_CUT], "stderr": "", "interrupted": False, "isImage": False,
            "noOutputExpected": False, "persistedOutputPath": str(path), "persistedOutputSize": len(full)}


def compress(response, transcript, tmp_path):
    return compress_post_tool_use("Bash", {"command": "pytest -v", "description": "Run the test suite"}, response,
                                  spill_dir=tmp_path / "spill", transcript_path=transcript)


def test_the_whole_persisted_output_is_compressed_and_its_end_comes_first(session, tmp_path):
    transcript, results = session
    log = failing_pytest_log()
    assert len(log) > CLIENT_CUT and SUMMARY not in log[:CLIENT_CUT]
    (results / "bsdvvdnxw.txt").write_text(log)
    out = compress(bash_response(log, results / "bsdvvdnxw.txt"), transcript, tmp_path).tool_response
    head = out["stdout"][:PREVIEW_CHARS]
    assert SUMMARY in head and all(t in head for t in FAILED_IDS), head
    assert f"{len(log):,}-character output shortened" in head
    # Without the client's persisted keys the replacement is shown inline, not as a 2 KB preview.
    assert "persistedOutputPath" not in out and "persistedOutputSize" not in out
    assert set(out) == {"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"}


def _refused(response, transcript, tmp_path):
    out = compress(response, transcript, tmp_path).tool_response
    assert SUMMARY not in out["stdout"], "the file was read although it should have been refused"
    assert out["persistedOutputPath"] == response["persistedOutputPath"], "keys kept when the file is not used"
    assert "30,000-character output shortened" in out["stdout"]
    return out


def test_a_file_outside_the_sessions_tool_results_is_not_read(session, tmp_path):
    transcript, results = session
    log = failing_pytest_log()
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text(log)
    _refused(bash_response(log, elsewhere), transcript, tmp_path)
    (results / "ok.txt").write_text(log)  # the right file, but a transcript outside the config folder
    other = tmp_path / "other" / "3b1f.jsonl"
    other.parent.mkdir()
    other.write_text("{}\n")
    _refused(bash_response(log, results / "ok.txt"), str(other), tmp_path)
    _refused(bash_response(log, results / "ok.txt"), None, tmp_path)
    _refused(bash_response(log, str(results / ".." / ".." / ".." / "ok.txt")), transcript, tmp_path)


def test_a_symlink_a_fifo_or_a_mismatched_file_is_not_read(session, tmp_path):
    transcript, results = session
    log = failing_pytest_log()
    target = tmp_path / "secret.txt"
    target.write_text(log)
    (results / "link.txt").symlink_to(target)
    _refused(bash_response(log, results / "link.txt"), transcript, tmp_path)
    os.mkfifo(results / "fifo.txt")
    _refused(bash_response(log, results / "fifo.txt"), transcript, tmp_path)
    (results / "other.txt").write_text("another command's output\n" + log)
    _refused(bash_response(log, results / "other.txt"), transcript, tmp_path)


def test_a_file_over_the_cap_is_not_read(session, tmp_path):
    transcript, results = session
    log = failing_pytest_log()
    big = log + "x" * (PERSISTED_MAX_BYTES - len(log) + 1) + "\n" + log
    (results / "big.txt").write_text(big)
    assert read_persisted(str(results / "big.txt"), transcript, big[:CLIENT_CUT]) is None
    (results / "fits.txt").write_text(big[:PERSISTED_MAX_BYTES])
    assert read_persisted(str(results / "fits.txt"), transcript, big[:CLIENT_CUT]) == big[:PERSISTED_MAX_BYTES]


def client_error(output: str) -> str:
    """PostToolUseFailure's `error` as CLI 2.1.332 builds it (recorded run): `Exit code N`, then the
    head and tail of the output's first 30,000 characters around a truncation marker."""
    first = output[:CLIENT_CUT]
    if len(first) <= 10_000:
        return "Exit code 1\n" + first
    return (f"Exit code 1\n{first[:5000]}\n\n... [{len(first) - 10_000} characters truncated] ...\n\n"
            f"{first[-5000:]}")


def test_a_failed_command_cut_by_the_client_gets_a_note_on_how_to_see_its_end():
    from vaultrag.compress import digest_tool_failure

    log = failing_pytest_log()
    digest = digest_tool_failure("Bash", {"command": "pytest -v"}, client_error(log))
    assert digest is not None and len(digest) <= PREVIEW_CHARS
    assert "first 30,000 characters" in digest and 'f=$(mktemp); ( pytest -v ) >"$f" 2>&1; tail -n 100 "$f"' in digest
    # an output under the cap keeps its end in `error`: the digest carries the summary, and a note
    # on its middle only (what reached no hook), with a grep for its error lines
    short = log[-20_000:]
    digest = digest_tool_failure("Bash", {"command": "pytest -v"}, client_error(short))
    assert SUMMARY in digest and "first 30,000" not in digest and "in the middle reached no hook" in digest
    assert "`( pytest -v ) 2>&1 | grep -n -i -E '" in digest and len(digest) <= PREVIEW_CHARS
    multi = digest_tool_failure("Bash", {"command": "set -e\npytest -v"}, client_error(log))
    assert "saved to a file, then `tail -n 100` and `grep -n" in multi
