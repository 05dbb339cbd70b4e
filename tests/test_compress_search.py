"""Search, listing and test-failure outputs keep the lines the agent asked for.

Held-out style: the synthetic cases below phrase the need in other words than the paths or code
they must find, and the corpus cases re-ask each dev intent in words written here."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from vaultrag.compress import compress_post_tool_use, compress_text, compress_tool_output

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "tool-outputs"
BUDGET = 4000  # the hook's default (hooks.compress_budget_chars)


def bash(stdout: str) -> dict:
    return {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}


def project_paths() -> list[str]:
    """A plausible repository: many packages, tests and docs; billing code is a small part."""
    out = []
    for pkg in ("api", "auth", "search", "storage", "notify", "admin", "reports", "sync", "ui", "jobs"):
        for i in range(45):
            out.append(f"src/shop/{pkg}/{pkg}_part_{i:02d}.py")
            out.append(f"tests/{pkg}/test_{pkg}_part_{i:02d}.py")
    for name in ("invoice_pdf", "invoice_numbering", "tax_rates", "refunds", "payment_gateway", "dunning"):
        out.append(f"src/shop/billing/{name}.py")
        out.append(f"tests/billing/test_{name}.py")
    out += [f"docs/guide/chapter-{i:02d}.md" for i in range(30)]
    # a listing comes in walk order, not sorted by relevance: interleave deterministically
    return [out[(i * 37) % len(out)] for i in range(len(out))]


def test_listing_keeps_every_path_the_intent_names():
    paths = project_paths()
    wanted = [p for p in paths if "/billing/" in p]
    resp = {"filenames": [f"/home/dev/shop/{p}" for p in paths], "durationMs": 40, "numFiles": len(paths),
            "truncated": False}
    out = compress_tool_output("Glob", {"pattern": "**/*.py"}, resp, prompt="how do we bill customers? find the billing code",
                               budget_chars=BUDGET)
    kept = set(out["filenames"])
    assert len(out["filenames"]) < len(paths) / 4
    assert [p for p in wanted if f"/home/dev/shop/{p}" not in kept] == []


def test_find_output_with_the_intent_in_the_bash_description():
    paths = project_paths()
    text = "\n".join(f"./{p}" for p in paths)
    out = compress_tool_output("Bash", {"command": "find . -name '*.py'", "description": "Locate refund and invoice modules"},
                               bash(text), prompt="", budget_chars=BUDGET, spill_dir=None)
    for p in paths:
        if "refunds" in p or "invoice" in p:
            assert f"./{p}" in out["stdout"], p


def test_grep_rn_keeps_every_definition_the_intent_asks_for():
    lines = []
    for i in range(1400):
        lines.append(f"./src/shop/mod{i % 60}/helpers.py:{i + 10}:def helper_{i}(value):")
    wanted = [
        "./src/shop/billing/invoice_pdf.py:40:def render_invoice_pdf(invoice, template=None):",
        "./src/shop/billing/invoice_pdf.py:88:def _invoice_pdf_footer(invoice):",
        "./src/shop/billing/invoice_pdf.py:120:    def render(self, invoice):",
        "./tests/billing/test_invoice_pdf.py:12:def test_render_invoice_pdf_has_totals(invoice):",
    ]
    for k, line in enumerate(wanted):
        lines.insert(300 + 250 * k, line)
    out = compress_tool_output("Bash", {"command": 'grep -rn "def " .'}, bash("\n".join(lines)),
                               prompt="where do we turn an invoice into a PDF?", budget_chars=BUDGET)["stdout"]
    for line in wanted:
        assert line in out


def test_grep_content_mode_intent_phrased_differently():
    lines = [f"lib/core/file{i}.ts:{i}:  logger.debug('step ' + {i});" for i in range(900)]
    wanted = [f"lib/net/retry_policy.ts:{k}:export function backoffDelay(attempt: number) {{" for k in (3, 30)]
    lines[200:200] = wanted[:1]
    lines[650:650] = wanted[1:]
    resp = {"mode": "content", "numFiles": 40, "filenames": [], "content": "\n".join(lines), "numLines": len(lines)}
    out = compress_tool_output("Grep", {"pattern": "function|logger", "output_mode": "content"}, resp,
                               prompt="how long do we wait between retries (the backoff)?", budget_chars=BUDGET)
    for line in wanted:
        assert line in out["content"]


def pytest_l_log(n_pass: int) -> str:
    """A pytest run with --showlocals (-l): the raising frame and its locals are the answer."""
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0", f"collected {n_pass + 2} items", ""]
    lines += [f"tests/test_mod{i % 9}.py::test_case_{i} PASSED{' ' * 24}[{i * 100 // n_pass:3d}%]"
              for i in range(n_pass)]
    lines += ["tests/test_net.py::test_parse_ipv6_host FAILED", "tests/test_net.py::test_parse_port FAILED", "",
              "=================================== FAILURES ===================================",
              "____________________________ test_parse_ipv6_host ____________________________", "",
              "    def test_parse_ipv6_host():", "        s = '[::1]:8080'",
              ">       host, port = parse_hostport(s)", "",
              "s          = '[::1]:8080'", "", "tests/test_net.py:12: ",
              "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ ", "",
              "    def parse_hostport(s):", "        host, _, port = s.partition(':')",
              ">       return host, int(port)",
              "E       ValueError: invalid literal for int() with base 10: ':1]:8080'", "",
              "_          = ':'", "host       = '['", "port       = ':1]:8080'", "s          = '[::1]:8080'", "",
              "src/net.py:5: ValueError",
              "_______________________________ test_parse_port _______________________________", "",
              "    def test_parse_port():", ">       assert parse_port('http') == 80",
              "E       AssertionError: assert None == 80",
              "E        +  where None = parse_port('http')", "", "tests/test_net.py:20: AssertionError",
              "=========================== short test summary info ============================",
              "FAILED tests/test_net.py::test_parse_ipv6_host - ValueError: invalid literal for int() with base 10: ':1]:8080'",
              "FAILED tests/test_net.py::test_parse_port - AssertionError: assert None == 80",
              f"========================= 2 failed, {n_pass} passed in 7.31s ========================="]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("n_pass", [150, 900])
def test_pytest_failure_keeps_the_raising_frame_and_its_locals(n_pass, tmp_path):
    out = compress_tool_output("Bash", {"command": "pytest -l"}, bash(pytest_l_log(n_pass)),
                               prompt="why does the ipv6 parsing test fail", budget_chars=BUDGET,
                               spill_dir=tmp_path)["stdout"]
    for line in (">       return host, int(port)", ">       host, port = parse_hostport(s)",
                 "E       ValueError: invalid literal for int() with base 10: ':1]:8080'",
                 "s          = '[::1]:8080'", "port       = ':1]:8080'", ">       assert parse_port('http') == 80",
                 "E       AssertionError: assert None == 80", "2 failed"):
        assert line in out, line


def test_key_value_lines_outside_a_failure_section_are_not_locals():
    text = "\n".join([f"setting_{i} = {i}" for i in range(600)] + ["=== 1 passed in 0.1s ==="])
    out = compress_text(text, budget_chars=800)
    assert "setting_599" not in out or "omitted" in out  # not promoted wholesale
    assert len(out) <= 800


# ------------------------------------------------------------------------------------ corpus

# The dev intents asked again, in other words (written here; the regexes come from the corpus).
PARAPHRASES = {
    "find-name-py-txtai": "where are the approximate nearest neighbour backends",
    "glob-py-ts-khoj": "the conversation processors for each model provider",
    "grep-rn-def-click": "where is the invoke method and the main entry of a command defined",
    "rg-l-fn-main-book": "the minigrep code of chapter 12",
    "rg-n-execute-sqlite-utils": "the execute method's definition",
}


def _search_outputs():
    if not CORPUS.is_dir():
        return []
    out = []
    for folder in sorted(CORPUS.iterdir()):
        if (folder / "meta.json").exists():
            meta = json.loads((folder / "meta.json").read_text())
            if meta.get("must_keep_regex") and meta["tool"] != "Read":
                out.append(folder)
    return out


@pytest.mark.skipif(not CORPUS.is_dir(), reason="tool-output corpus not present")
@pytest.mark.parametrize("folder", _search_outputs(), ids=lambda p: p.name)
def test_corpus_search_outputs_keep_every_intent_line(folder, tmp_path):
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from compress_bench import build_call, rendered
    finally:
        sys.path.pop(0)
    meta = json.loads((folder / "meta.json").read_text())
    output = (folder / "output.txt").read_text(encoding="utf-8", errors="replace")
    tool, tool_input, resp = build_call(meta, output)
    rx = re.compile(meta["must_keep_regex"])
    wanted = [ln.rstrip() for ln in output.split("\n") if rx.search(ln.rstrip())]
    assert wanted
    for prompt in filter(None, (meta["intent"], PARAPHRASES.get(meta["id"]))):
        out = compress_post_tool_use(tool, tool_input, resp, prompt=prompt, budget_chars=BUDGET, spill_dir=tmp_path)
        text = rendered(tool, out.tool_response if out else resp).split("\n")
        missing = [w for w in wanted if w not in text]
        assert not missing, (prompt, missing[:3])


# Other needs on a real listing (the rust-lang/book `rg -l "fn main"` output), phrased as a person would.
OTHER_NEEDS = [
    ("list the Rust source files, e.g. the chapter-21 web-server listings", r"/ch21-web-server/"),
    ("where's the multithreaded web server example", r"/ch21-web-server/"),
    ("the guessing game program", r"/ch02-guessing-game"),
    ("smart pointer examples like Box and Rc", r"/ch15-smart-pointers/"),
]


@pytest.mark.skipif(not (CORPUS / "rg-l-fn-main-book").is_dir(), reason="tool-output corpus not present")
@pytest.mark.parametrize("prompt,where", OTHER_NEEDS)
def test_real_listing_keeps_every_file_of_another_need(prompt, where):
    output = (CORPUS / "rg-l-fn-main-book" / "output.txt").read_text(encoding="utf-8")
    names = [ln for ln in output.split("\n") if ln]
    resp = {"mode": "files_with_matches", "numFiles": len(names), "filenames": names}
    out = compress_tool_output("Grep", {"pattern": "fn main", "output_mode": "files_with_matches"}, resp,
                               prompt=prompt, budget_chars=BUDGET)
    wanted = [n for n in names if re.search(where, n)]
    assert 5 <= len(wanted) < len(names) / 5
    assert len(out["filenames"]) < len(names)
    assert [n for n in wanted if n not in out["filenames"]] == []
