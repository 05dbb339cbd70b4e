"""A failed pytest run keeps, for every failure, the line that says what failed (trial finding:
the PostToolUseFailure digest of a real run dropped the `E   ValueError: ...` lines).

The outputs are real: a small failing test file is run by this interpreter's pytest in a temporary
folder, and what must survive is read from that output (each failure section's `E` lines, the
short test summary's FAILED lines), not written here.
"""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from vaultrag.compress import PREVIEW_CHARS, compress_post_tool_use, digest_tool_failure

# Exceptions of several kinds, some with the same message shape (`negative price: -3.0`, `-5.0`),
# raised several frames deep, one chained, one with a multi-line message, plus assertion failures.
FAILING_TESTS = '''
import json

import pytest


def parse_price(text):
    value = float(text.strip().lstrip("$"))
    if value < 0:
        raise ValueError(f"negative price: {value}")
    return value


def load(doc):
    data = json.loads(doc)
    return [parse_price(x) for x in data["prices"]]


@pytest.mark.parametrize("n", range(40))
def test_parses_dollars(n):
    assert parse_price(f"${n}.50") == n + 0.5


def test_negative():
    assert load('{"prices": ["$1", "-3"]}') == [1.0, -3.0]


def test_bad_text():
    assert parse_price("twelve") == 12


def test_missing_key():
    assert load('{"price": []}') == []


def test_chained():
    try:
        load('{"prices": ["x"]}')
    except ValueError as exc:
        raise RuntimeError("price list unreadable") from exc


def test_multiline_message():
    raise LookupError("no such product\\nsku: 1234\\nshop: main")


def test_total():
    assert sum(parse_price(x) for x in ["1", "2", "4"]) == 8


class TestBatch:
    def test_sum(self):
        items = [parse_price(x) for x in ["1", "2", "-5", "4"]]
        assert sum(items) == 2


@pytest.mark.parametrize("raw", ["-1", "-2.5", "abc", "$-7"])
def test_batch_values(raw):
    assert parse_price(raw) >= 0
'''
SECTION_HEAD_RE = re.compile(r"^_+ (?!_ )(.*\S) _+$")


@pytest.fixture(scope="module")
def run_output(tmp_path_factory):
    """(plain output, verbose output) of the real failing run."""
    folder = tmp_path_factory.mktemp("failing-run")
    (folder / "test_prices.py").write_text(textwrap.dedent(FAILING_TESTS))
    outs = []
    for extra in ([], ["-v"]):
        res = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
                              "--color=no", *extra, "test_prices.py"], cwd=folder, capture_output=True, text=True,
                             timeout=120)
        assert res.returncode == 1, res.stdout[-2000:]
        outs.append(res.stdout)
    return outs


def key_lines(output: str) -> tuple[list[str], list[str], list[str]]:
    """(each failure section's last E line, each section's first E line, the FAILED summary
    lines), read from the output."""
    last, first, failed, section, in_failures = [], [], [], None, False
    for line in output.split("\n"):
        if re.match(r"^=+ FAILURES =+$", line):
            in_failures = True
            continue
        if re.match(r"^=+ ", line):
            in_failures = False
        if in_failures and SECTION_HEAD_RE.match(line):
            section = []
            first.append(None)
            last.append(None)
        elif in_failures and section is not None and line.startswith("E ") and line.strip() != "E":
            if first[-1] is None:
                first[-1] = line.rstrip()
            last[-1] = line.rstrip()
        if line.startswith("FAILED "):
            failed.append(line.rstrip())
    assert None not in last and len(last) == len(failed) >= 11  # the run is what this test expects
    return last, first, failed


def test_the_run_has_same_shaped_messages_and_a_multiline_one(run_output):
    last, first, _ = key_lines(run_output[0])
    assert any("negative price: -3.0" in x for x in last) and any("negative price: -5.0" in x for x in last)
    assert any(a != b for a, b in zip(first, last))  # a chained exception / multi-line message
    assert len(run_output[0]) > 4000  # over FAILURE_DIGEST_MIN_CHARS: a digest is given


@pytest.mark.parametrize("verbose", [False, True], ids=["plain", "verbose"])
def test_failure_digest_keeps_every_failures_e_line_and_summary_line(run_output, verbose):
    output = run_output[verbose]
    last, first, failed = key_lines(output)
    digest = digest_tool_failure("Bash", {"command": "pytest test_prices.py"}, "Exit code 1\n" + output)
    assert digest is not None and len(digest) <= PREVIEW_CHARS
    lines = set(digest.split("\n"))
    assert [x for x in last if x not in lines] == []
    assert [x for x in failed if x not in lines] == []
    assert re.search(r"^=+ 11 failed, 40 passed in ", digest, re.M)


def compressed(output: str, budget: int) -> str:
    out = compress_post_tool_use("Bash", {"command": "pytest test_prices.py"},
                                 {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
                                 prompt="fix the failing tests", budget_chars=budget, threshold_chars=1000)
    assert out is not None
    text = out.tool_response["stdout"]
    assert len(text) < len(output)  # it was shortened
    return text


@pytest.mark.parametrize("verbose", [False, True], ids=["plain", "verbose"])
@pytest.mark.parametrize("budget", [3000, 4000])  # 4000: hooks.compress_budget_chars by default
def test_post_tool_use_keeps_every_failures_e_lines_and_summary_line(run_output, verbose, budget):
    last, first, failed = key_lines(run_output[verbose])
    lines = set(compressed(run_output[verbose], budget).split("\n"))
    assert [x for x in last + first if x not in lines] == []
    assert [x for x in failed if x not in lines] == []


@pytest.mark.parametrize("verbose", [False, True], ids=["plain", "verbose"])
def test_tight_budget_keeps_the_first_failures_key_lines_whole(run_output, verbose):
    """At 2,000 characters not every key line fits (with the gap markers): the FAILED lines cut
    are the last ones, and each failure whose FAILED line is kept keeps its last E line too."""
    last, _, failed = key_lines(run_output[verbose])
    lines = set(compressed(run_output[verbose], 2000).split("\n"))
    kept = [x in lines for x in failed]
    assert kept == sorted(kept, reverse=True) and sum(kept) >= len(failed) // 2
    kept_e = [x in lines for x in last]
    assert all(e for f, e in zip(kept, kept_e) if f)
