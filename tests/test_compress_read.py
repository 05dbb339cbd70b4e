"""Reads are sacred: below READ_INTACT_CHARS a Read is never altered (a secret's span aside);
above it, one contiguous window with Claude Code's own numbering and exact offset/limit for the rest."""
from __future__ import annotations

import re
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from vaultrag.compress import READ_INTACT_CHARS, READ_WINDOW_CHARS, compress_post_tool_use, compress_tool_output

SECRET = "ghp_" + "Xq7Lm2Rt9Vb4Nk8Pz3Wc6Jd1Hf5Gs0Ya2Ue7"


def read_response(content: str, path: str = "/repo/mod.py", start: int = 1, total: int | None = None) -> dict:
    n = len(content.split("\n"))
    return {"type": "text", "file": {"filePath": path, "content": content, "numLines": n, "startLine": start,
                                     "totalLines": total if total is not None else start + n - 1}}


def real_text_files(root: Path, limit: int | None = None):
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".pyi", ".md", ".rst") and p.is_file():
            try:
                text = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if limit is None or len(text) <= limit:
                yield p, text


def assert_only_secret_spans_changed(before: str, after: str) -> None:
    a, b = before.split("\n"), after.split("\n")
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x == y:
            continue
        # the line is the original with some spans replaced by placeholders: its parts outside them match
        parts = re.split(r"\[REDACTED:[\w-]+\]", y)
        assert len(parts) > 1, (x, y)
        pos = 0
        for part in parts:
            i = x.find(part, pos)
            assert i >= 0, (x, y)
            pos = i + len(part)
        assert x.startswith(parts[0]) and x.endswith(parts[-1])


def test_every_real_source_and_doc_file_below_the_threshold_passes_unchanged():
    site = Path(sysconfig.get_paths()["purelib"])
    seen = unchanged = 0
    for path, text in real_text_files(site, READ_INTACT_CHARS):
        seen += 1
        out = compress_post_tool_use("Read", {"file_path": str(path)}, read_response(text, str(path)),
                                     prompt="fix the failing test in this module")
        if out is None:
            unchanged += 1
            continue
        f = out.tool_response["file"]  # only a secret may change it, and only there
        assert (f["numLines"], f["startLine"], f["totalLines"]) == (len(text.split("\n")), 1, len(text.split("\n")))
        assert_only_secret_spans_changed(text, f["content"])
        assert "REDACTED" in out.note and "never write the placeholder back" in out.note
    assert seen > 500 and unchanged >= 0.97 * seen


@pytest.mark.parametrize("size", [8_600, 21_000, 38_000, READ_INTACT_CHARS])
def test_reads_of_the_issue_sizes_are_byte_identical(size):
    # The issue's files: 214 lines / 8.6 KB, 21 KB and 38 KB sources, gutted or re-numbered before.
    lines, i = ["import base64", "import os", ""], 0
    while len("\n".join(lines)) < size:
        lines += [f"def handler_{i}(request, retries=3):", f"    return base64.b64encode(request.body[{i}:])", ""]
        i += 1
    text = "\n".join(lines)[:size]
    assert compress_tool_output("Read", {"file_path": "/r/h.py"}, read_response(text)) is None


def test_secret_in_small_read_changes_only_its_span():
    lines = [f"value_{i} = {i}" for i in range(200)]
    lines[41] = f'GITHUB_TOKEN = "{SECRET}"  # rotate me'
    text = "\n".join(lines) + "\n"
    out = compress_post_tool_use("Read", {"file_path": "/r/settings.py"}, read_response(text, "/r/settings.py"))
    f = out.tool_response["file"]
    assert SECRET not in f["content"]
    assert_only_secret_spans_changed(text, f["content"])
    assert f["content"].split("\n")[41].startswith('GITHUB_TOKEN = "[REDACTED:')
    assert f["content"].split("\n")[41].endswith('"  # rotate me')
    assert (f["numLines"], f["startLine"], f["totalLines"]) == (201, 1, 201)
    assert "line 42" in out.note and "/r/settings.py" in out.note


def big_source(n: int = 4000) -> list[str]:
    out = []
    for i in range(n):
        if i % 200 == 0:
            out.append(f"class Widget{i // 200}:")
        elif i % 25 == 0:
            out.append(f"    def method_{i}(self, value):")
        else:
            out.append(f"        total = total + value * {i}  # arithmetic line {i}")
    out[2500] = "    def insert_all(self, records, batch_size=100):"
    out[2501] = "        return self.insert_chunk(records[:batch_size])"
    return out


def reread(lines: list[str], first_line: int, offset: int, limit: int) -> list[str]:
    """What Read(offset, limit) returns from a read whose first line is `first_line`."""
    return lines[offset - first_line: offset - first_line + limit]


def check_window(lines: list[str], out, start: int = 1) -> tuple[int, int]:
    f = out.tool_response["file"]
    content = f["content"].split("\n")
    a = f["startLine"] - start
    assert content == lines[a:a + len(content)]  # contiguous, verbatim, no numbers added
    assert not any(re.match(r"^ *\d+\t", ln) for ln in content if not re.match(r"^ *\d+\t", lines[0]))
    assert f["numLines"] == len(content)
    assert len(f["content"]) <= READ_WINDOW_CHARS
    # every left-out line is named by an exact Read offset/limit
    ranges = [(int(o), int(n)) for o, n in re.findall(r"Read offset=(\d+) limit=(\d+)", out.note)]
    covered = list(content)
    for off, lim in ranges:
        part = reread(lines, start, off, lim)
        assert len(part) == lim
        if off < f["startLine"]:
            covered = part + covered
        else:
            covered = covered + part
    assert covered == lines
    return f["startLine"], f["startLine"] + len(content) - 1


def test_large_read_becomes_the_window_that_answers_the_prompt():
    lines = big_source()
    text = "\n".join(lines)
    assert len(text) > READ_INTACT_CHARS
    out = compress_post_tool_use("Read", {"file_path": "/r/db.py"}, read_response(text, "/r/db.py"),
                                 prompt="how is insert_all implemented?")
    lo, hi = check_window(lines, out)
    assert lo <= 2501 <= hi  # the definition asked about is inside, with its true number
    f = out.tool_response["file"]
    assert f["totalLines"] == 4000 and f["truncatedByTokenCap"] is True
    assert "   201\tclass Widget1:" in out.note  # the outline names what is elsewhere


def test_large_read_without_a_match_keeps_the_head():
    lines = big_source()
    out = compress_post_tool_use("Read", {"file_path": "/r/db.py"}, read_response("\n".join(lines), "/r/db.py"))
    lo, _ = check_window(lines, out)
    assert lo == 1


def test_large_read_from_an_offset_numbers_from_its_start_line():
    lines = big_source(3000)
    out = compress_post_tool_use("Read", {"file_path": "/r/x.py", "offset": 501},
                                 read_response("\n".join(lines), "/r/x.py", start=501, total=9000),
                                 prompt="insert_all")
    lo, hi = check_window(lines, out, start=501)
    assert lo <= 501 + 2500 <= hi
    assert out.tool_response["file"]["totalLines"] == 9000


def test_read_with_an_explicit_limit_is_what_the_agent_asked_for():
    text = "\n".join(big_source())
    assert compress_tool_output("Read", {"file_path": "/r/db.py", "offset": 1, "limit": 4000},
                                read_response(text)) is None


def test_large_read_is_deterministic():
    text = "\n".join(big_source())
    a = compress_post_tool_use("Read", {"file_path": "/r/db.py"}, read_response(text), prompt="insert_all")
    b = compress_post_tool_use("Read", {"file_path": "/r/db.py"}, read_response(text), prompt="insert_all")
    assert a == b


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=120), min_size=1,
                max_size=1200), st.integers(1, 40), st.text(max_size=40))
def test_property_window_invariants(body, start, prompt):
    lines = body * max(1, (READ_INTACT_CHARS // max(1, sum(len(x) + 1 for x in body))) + 1)
    text = "\n".join(lines)
    out = compress_post_tool_use("Read", {"file_path": "/r/p.txt"}, read_response(text, start=start), prompt=prompt)
    if len(text) <= READ_INTACT_CHARS:
        assert out is None or "REDACTED" in out.tool_response["file"]["content"]
        return
    if "REDACTED" in (out.tool_response["file"]["content"] if out else ""):
        return  # hypothesis built something secret-looking: the window is scrubbed, not verbatim
    check_window(lines, out, start=start)


def run_post_tool_use(payload: dict, vault: Path) -> dict | None:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "VAULTRAG_VAULT": str(vault)}
    script = Path(__file__).resolve().parents[1] / "hooks" / "post_tool_use.py"
    res = subprocess.run([sys.executable, str(script)], input=json.dumps(payload).encode(), env=env,
                         capture_output=True, timeout=60, check=True)
    return json.loads(res.stdout) if res.stdout.strip() else None


def test_hook_leaves_a_real_source_read_alone_and_windows_a_huge_one(vault):
    import base64

    small = Path(base64.__file__)  # a real 20 KB standard-library source
    text = small.read_text(encoding="utf-8")
    assert 8_000 < len(text) <= READ_INTACT_CHARS
    base = {"session_id": "s", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "PostToolUse",
            "tool_name": "Read", "tool_use_id": "t"}
    payload = {**base, "tool_input": {"file_path": str(small)}, "tool_response": read_response(text, str(small))}
    assert run_post_tool_use(payload, vault) is None
    lines = big_source()
    payload = {**base, "tool_input": {"file_path": "/r/db.py"},
               "tool_response": read_response("\n".join(lines), "/r/db.py")}
    out = run_post_tool_use(payload, vault)["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse"
    f = out["updatedToolOutput"]["file"]
    assert set(f) >= {"filePath", "content", "numLines", "startLine", "totalLines"}
    assert "Read offset=" in out["additionalContext"] and len(out["additionalContext"]) < 10_000


def test_context_rule_hits_in_code_leave_the_read_alone():
    # what the scrubber's context rules flag in real code: variables and documented examples
    text = "\n".join(["def login(value):", "    username, password = value",
                      "    url = 'smb://myuser:mypassword@myserver.com/share'", "    return username"] * 40)
    assert compress_tool_output("Read", {"file_path": "/r/auth.py"}, read_response(text)) is None
    text_with_key = text + f"\nTOKEN = '{SECRET}'"
    f = compress_tool_output("Read", {"file_path": "/r/auth.py"}, read_response(text_with_key))["file"]
    assert f["content"].startswith(text) and SECRET not in f["content"]


# -- a Read of a log (read_log.py) ------------------------------------------------------------------
def log_lines(n: int = 1000, errors=(600,), warnings=(), traceback: bool = True) -> list[str]:
    """A Python-logging log of n records (~100 chars each), chatty DEBUG lines of one component,
    ERROR records (each with a traceback) and WARNING records at the given 0-based positions."""
    out = []
    for i in range(n):
        stamp = f"2026-12-03 02:{i // 60 % 60:02d}:{i % 60:02d},{i % 1000:03d}"
        if i in errors:
            out.append(f"{stamp} - writer - ERROR - batch {i} failed: duplicate key value violates unique constraint")
            if traceback:
                out += ["Traceback (most recent call last):", '  File "/srv/app/writer.py", line 88, in flush',
                        "    cursor.executemany(INSERT_SQL, rows)", f"app.db.IntegrityError: duplicate key (id={i})"]
        elif i in warnings:
            out.append(f"{stamp} - pool - WARNING - connection {i} slow to answer, retrying in 2 s")
        else:
            out.append(f"{stamp} - cache - DEBUG - processed item {i} in {i % 90}ms (queue={i % 400}, worker=w{i % 8}) . . .")
    out.append("2026-12-03 03:00:00,000 - import - INFO - import finished: 998 ok, 1 failed")
    return out


def named_lines(note: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^ *(\d+)\t(.*)$", note, re.M)}


def test_large_read_of_a_log_shows_its_error_record_with_the_traceback():
    """The window used to be the 21 lines at the end matching "failed" (the tally), the error
    record in between neither shown nor named."""
    lines = log_lines()
    text = "\n".join(lines)
    assert READ_INTACT_CHARS < len(text)
    out = compress_post_tool_use("Read", {"file_path": "/srv/import.log"}, read_response(text, "/srv/import.log"),
                                 prompt="why did the nightly import fail?")
    lo, hi = check_window(lines, out)
    error_no = next(i for i, ln in enumerate(lines, 1) if " ERROR " in ln)
    assert lo < error_no and error_no + 4 <= hi  # the record and its traceback, with lines before it
    assert "a log: the part holding its error record" in out.note
    assert named_lines(out.note)[len(lines)] == lines[-1]  # the tally at the end is named with its number
    assert len(out.tool_response["file"]["content"]) > READ_WINDOW_CHARS * 0.9  # the whole window is used


def test_a_log_reads_error_and_warning_records_outside_the_window_are_named_by_line():
    errors, warnings = (120, 480, 870), (300, 700)
    lines = log_lines(errors=errors, warnings=warnings)
    text = "\n".join(lines)
    out = compress_post_tool_use("Read", {"file_path": "/srv/import.log"}, read_response(text, "/srv/import.log"))
    lo, hi = check_window(lines, out)
    named = named_lines(out.note)
    records = [i for i, ln in enumerate(lines, 1) if " ERROR " in ln or " WARNING " in ln]
    assert len(records) == 5
    for no in records:  # each one shown, or named with its true number and its own text
        assert lo <= no <= hi or named.get(no) == lines[no - 1], (no, lo, hi, out.note)
    assert any(not lo <= no <= hi for no in records)  # the test means something: some are outside
    assert "1 of its 3 error records" in out.note


def test_a_log_with_errors_everywhere_is_placed_by_the_request_and_the_rest_counted():
    lines = log_lines(errors=tuple(range(0, 1000, 2)), traceback=False)
    lines[801] = lines[801].replace("DEBUG - processed item", "DEBUG - quokka checkpoint item")
    out = compress_post_tool_use("Read", {"file_path": "/srv/import.log"},
                                 read_response("\n".join(lines), "/srv/import.log"), prompt="the quokka checkpoint")
    lo, hi = check_window(lines, out)
    assert lo <= 802 <= hi  # half the lines are errors: the level says nothing, the request places it
    named = named_lines(out.note)
    assert 0 < len(named) <= 31 and all(named[no] == lines[no - 1][:200] for no in named if len(lines[no - 1]) <= 200)
    assert re.search(r"\[\.\.\. \d+ more records not listed, between lines \d+ and \d+ \.\.\.\]", out.note)


def test_a_log_read_below_the_threshold_is_left_alone():
    lines = log_lines(n=500)
    text = "\n".join(lines)
    assert len(text) <= READ_INTACT_CHARS
    assert compress_post_tool_use("Read", {"file_path": "/srv/import.log"}, read_response(text, "/srv/import.log"),
                                  prompt="why did it fail?") is None


def test_a_window_at_the_end_of_a_read_fills_its_size():
    lines = big_source()
    lines[3995] = "    def flush_pending(self, rows):"
    out = compress_post_tool_use("Read", {"file_path": "/r/db.py"}, read_response("\n".join(lines), "/r/db.py"),
                                 prompt="how does flush_pending work?")
    lo, hi = check_window(lines, out)
    assert lo <= 3996 <= hi == 4000
    assert len(out.tool_response["file"]["content"]) > READ_WINDOW_CHARS * 0.9  # it held 25 lines of 4,000
