"""Benchmark the PostToolUse compressor (vaultrag.compress) on real tool outputs.

    python benchmarks/compress_bench.py [--corpus DIR] [--runs N] [--budget N] [--out FILE] [--code DIR]
                                        [--site-packages DIR]

The corpus (default `<repo>/../shared/corpora/tool-outputs`) holds one folder per output with
`output.txt` and `meta.json` (`tool`, `command`, `intent`, `must_keep`). For each output this builds a
`tool_response` in the tool's real Output shape, compresses it with the intent as the user's prompt,
and reports bytes in/out, reduction, must-keep substrings kept, time (median of N runs), whether two
calls give identical bytes, and for `-run1`/`-run2` pairs the difflib ratio of their compressed
outputs. Writes a Markdown table (default `benchmarks/results/compress.md`). must_keep is used only
to measure, never to tune.

Beyond must_keep it measures what issue 12 asks for:
- intent lines: for outputs with a `must_keep_regex` (search, listing, read), ALL the lines matching
  it (not only the first 5-8 must_keep lists), with the dev intent and with a paraphrase written
  here (held-out style: the same need in other words);
- preview: for Bash outputs over 30,000 characters the client shows the model only the first
  ~2,000 characters of what the hook returned, so the must-keep lines found there are counted;
- Read intact: every .py/.pyi/.md/.rst file of `--site-packages` below the Read threshold is fed
  through as a Read and must come back unchanged (None), or, holding a secret, changed only there.

`--code DIR` imports vaultrag from another checkout (e.g. `git archive <rev>` unpacked), for a
before/after table on the same machine.
"""
from __future__ import annotations

import argparse
import atexit
import difflib
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_CODE = next((sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--code"), str(REPO))
sys.path.insert(0, _CODE)

import vaultrag.compress as VC  # noqa: E402

PREVIEW = 2000  # what the model sees of a persisted Bash result (reference §2.6)
PERSIST = 30_000  # Bash results above this many characters are persisted by the client
READ_INTACT = getattr(VC, "READ_INTACT_CHARS", 64_000)
SPILL_DIR = Path(tempfile.mkdtemp(prefix="compress-bench-"))  # full-output files, removed at exit
atexit.register(shutil.rmtree, SPILL_DIR, True)
# The same needs as the corpus intents, in other words (held-out style; written for this bench).
PARAPHRASES = {
    "find-name-py-txtai": "where do the approximate nearest neighbour index implementations live",
    "glob-py-ts-khoj": "which modules talk to the LLM vendors like OpenAI, Anthropic or Gemini",
    "grep-rn-def-click": "show me where click's main() and invoke() are implemented",
    "read-click-core-py": "how does a Command run its callback: Context, main and invoke",
    "read-llm-docs-usage-md": "how do I keep chatting in the same conversation and set a system prompt",
    "rg-c-unwrap-book": "files with the most unwrap() calls",
    "rg-l-fn-main-book": "the minigrep project of chapter 12",
    "rg-n-execute-sqlite-utils": "the definition of the execute method",
}

DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "tool-outputs"
_CAT_N = re.compile(r"^ *(\d+)\t(.*)$")


def build_call(meta: dict, output: str) -> tuple[str, dict, dict]:
    """(tool_name, tool_input, tool_response) for one corpus output, in the tool's real shape."""
    tool = meta["tool"]
    command = meta.get("command", "")
    lines = output.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    if tool == "Grep":
        m = re.search(r"""(['"])(.*?)\1""", command)
        pattern = m.group(2) if m else ""
        if " -l" in command:
            return tool, {"pattern": pattern, "output_mode": "files_with_matches"}, {
                "mode": "files_with_matches", "numFiles": len(lines), "filenames": lines}
        mode = "count" if " -c" in command else "content"
        files = sorted({ln.split(":", 1)[0] for ln in lines if ":" in ln})
        return tool, {"pattern": pattern, "output_mode": mode, "-n": True}, {
            "mode": mode, "numFiles": len(files), "filenames": [], "content": output,
            "numLines": len(lines)}
    if tool == "Glob":
        m = re.search(r"-g '([^']*)'", command)
        return tool, {"pattern": m.group(1) if m else "*"}, {
            "filenames": lines, "durationMs": 12, "numFiles": len(lines), "truncated": False}
    if tool == "Read":
        body = []
        for ln in lines:
            m = _CAT_N.match(ln)
            body.append(m.group(2) if m else ln)
        path = command.split()[-1]
        return tool, {"file_path": "/repo/" + path}, {"type": "text", "file": {
            "filePath": "/repo/" + path, "content": "\n".join(body), "numLines": len(body),
            "startLine": 1, "totalLines": len(body)}}
    return "Bash", {"command": command}, {
        "stdout": output, "stderr": "", "interrupted": False, "isImage": False}


def call(tool: str, tool_input: dict, response: dict, prompt: str, budget: int) -> tuple[dict | None, str]:
    """(replacement response or None, note for additionalContext) from the code under test."""
    if hasattr(VC, "compress_post_tool_use"):
        out = VC.compress_post_tool_use(tool, tool_input, response, prompt=prompt, budget_chars=budget,
                                        spill_dir=SPILL_DIR)
        return (out.tool_response, out.note or "") if out is not None else (None, "")
    return VC.compress_tool_output(tool, tool_input, response, prompt=prompt, budget_chars=budget), ""


def rendered(tool: str, response: dict, note: str = "") -> str:
    """The text the model would see, for must-keep checks (Read lines numbered like cat -n)."""
    if tool == "Read":
        content = response["file"]["content"]
        start = response["file"].get("startLine", 1)
        if re.match(r"^ *\d+\t", content):  # the old compressor numbered the kept lines itself
            return content + ("\n" + note if note else "")
        body = "\n".join(f"{start + i:>6}\t{ln}" for i, ln in enumerate(content.split("\n")))
        return body + ("\n" + note if note else "")
    if tool == "Bash":
        return response["stdout"] + ("\n" + response["stderr"] if response.get("stderr") else "")
    if tool == "Glob":
        return "\n".join(response["filenames"])
    return response.get("content") or "\n".join(response.get("filenames", []))


def intent_lines(meta: dict, output: str, text_out: str) -> tuple[int, int]:
    """(lines matching must_keep_regex that are kept, all such lines)."""
    rx = re.compile(meta["must_keep_regex"])
    lines = [ln.rstrip() for ln in output.split("\n") if rx.search(ln.rstrip())]
    kept = set(text_out.split("\n"))
    return sum(ln in kept or (ln and ln in text_out) for ln in lines), len(lines)


_SECTION_HEAD = re.compile(r"^_+ (?!_ |_$).*\S _+$")


def pytest_keys(output: str) -> list[str]:
    """A failed pytest run's key lines, read from the output: the last `E` line of each section
    under FAILURES / ERRORS (what failed) and every FAILED / ERROR line of the short test summary."""
    keys, last, where = [], None, None
    for line in output.split("\n"):
        line = line.rstrip()
        if re.match(r"^=+ (FAILURES|ERRORS) =+$", line):
            where = "sections"
        elif re.match(r"^=+ short test summary info =+$", line):
            where = "summary"
        elif re.match(r"^=+ ", line):
            where = None
        if where == "sections" and (_SECTION_HEAD.match(line) or line.startswith("=")):
            if last:
                keys.append(last)
            last = None
        elif where == "sections" and re.match(r"^E +\S", line):
            last = line
        elif where == "summary" and re.match(r"^(FAILED|ERROR) \S", line):
            keys.append(line)
    if last:
        keys.append(last)
    return list(dict.fromkeys(keys))


def client_error(output: str, exit_code: int) -> str:
    """PostToolUseFailure's `error` as Claude Code builds it (reference §1.4, tools.py): the output
    capped at 30,000 characters, then middle-truncated to its head and tail of 5,000 each."""
    text = output[:PERSIST]
    if len(text) > 10_000:
        text = f"{text[:5000]}\n... [{len(text) - 10_000} characters truncated] ...\n{text[-5000:]}"
    return f"Exit code {exit_code}\n{text}"


def run(corpus: Path, runs: int, budget: int) -> tuple[list[dict], dict]:
    rows = []
    compressed_text = {}
    for folder in sorted(p for p in corpus.iterdir() if (p / "meta.json").exists()):
        meta = json.loads((folder / "meta.json").read_text())
        output = (folder / "output.txt").read_text(encoding="utf-8", errors="replace")
        tool, tool_input, response = build_call(meta, output)
        times, results = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            results.append(call(tool, tool_input, response, meta.get("intent"), budget))
            times.append(time.perf_counter() - t0)
        out = results[0][0] if results[0][0] is not None else response
        text_in = rendered(tool, response)
        text_out = rendered(tool, out, results[0][1])
        must = meta.get("must_keep", [])
        missing = [s for s in must if s not in text_out]
        row_extra = {}
        if tool == "Bash" and len(text_in) > PERSIST:
            preview = (out["stdout"] + ("\n" + out["stderr"] if out.get("stderr") else ""))[:PREVIEW]
            row_extra["preview"] = (sum(s in preview for s in must), len(must))
        if meta.get("must_keep_regex"):
            row_extra["intent"] = intent_lines(meta, output, text_out)
            if meta["id"] in PARAPHRASES:
                alt, alt_note = call(tool, tool_input, response, PARAPHRASES[meta["id"]], budget)
                row_extra["paraphrase"] = intent_lines(meta, output, rendered(tool, alt or response, alt_note))
        keys = pytest_keys(output) if tool == "Bash" and meta.get("exit_code") else []
        if keys:  # a failed pytest run: its key lines in the PostToolUse output and the failure digest
            kept = set(text_out.split("\n"))
            row_extra["keys"] = (sum(k in kept for k in keys), len(keys))
        if tool == "Bash" and meta.get("exit_code") and hasattr(VC, "digest_tool_failure"):
            error = client_error(output, meta["exit_code"])
            digest = VC.digest_tool_failure("Bash", tool_input, error) or ""
            row_extra["digest"] = (sum(m in digest for m in must if m in error), sum(m in error for m in must))
            shown = set(pytest_keys(error.split("\n", 1)[1]))
            if shown:
                row_extra["digest_keys"] = (sum(k in set(digest.split("\n")) for k in shown), len(shown))
        compressed_text[meta["id"]] = text_out
        rows.append({
            "id": meta["id"], "tool": tool, "bytes_in": len(text_in.encode()),
            "bytes_out": len(text_out.encode()),
            "reduction": 1 - len(text_out.encode()) / max(1, len(text_in.encode())),
            "kept": len(must) - len(missing), "must": len(must), "missing": missing,
            "ms": statistics.median(times) * 1000,
            "deterministic": all(json.dumps(r, sort_keys=True) == json.dumps(results[0], sort_keys=True)
                                 for r in results),
            **row_extra,
        })
    pairs = {}
    for key, text in compressed_text.items():
        if key.endswith("-run1") and key[:-1] + "2" in compressed_text:
            other = compressed_text[key[:-1] + "2"]
            pairs[key[:-5]] = difflib.SequenceMatcher(None, text, other, autojunk=False).ratio()
    return rows, pairs


def one_megabyte(corpus: Path, runs: int) -> float:
    """Median ms to compress a ~1 MB Bash output (the largest corpus output, cut at 1 MB)."""
    biggest = max((p / "output.txt" for p in corpus.iterdir() if (p / "output.txt").exists()),
                  key=lambda p: p.stat().st_size)
    text = biggest.read_text(encoding="utf-8", errors="replace")
    while len(text) < 1_000_000:
        text += "\n" + text
    text = text[:1_000_000]
    response = {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call("Bash", {"command": "pytest"}, response, "which tests fail and why", 4000)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def versus(old_file: Path, corpus: Path, rounds: int) -> dict:
    """CPU ms (time.process_time, median of `rounds`) of the 1 MB call for a single-file compressor
    (e.g. main's vaultrag/compress.py) and this code, alternating in one process: CPU time of
    interleaved calls is the comparison machine load disturbs least."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compress_versus", old_file)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    biggest = max((p / "output.txt" for p in corpus.iterdir() if (p / "output.txt").exists()),
                  key=lambda p: p.stat().st_size)
    text = biggest.read_text(encoding="utf-8", errors="replace")
    while len(text) < 1_000_000:
        text += "\n" + text
    text = text[:1_000_000]
    resp = {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
    args = ("Bash", {"command": "pytest"}, resp)
    kw = {"prompt": "which tests fail and why", "budget_chars": 4000}
    times: dict[str, list[float]] = {"before": [], "after": [], "before_text": [], "after_text": []}
    for _ in range(rounds):
        for key, fn in (("before", lambda: old.compress_tool_output(*args, **kw)),
                        ("after", lambda: call(*args[:3], kw["prompt"], 4000)),
                        ("before_text", lambda: old.compress_text(text, query="pytest", **kw)),
                        ("after_text", lambda: VC.compress_text(text, query="pytest", **kw))):
            t0 = time.process_time()
            fn()
            times[key].append(time.process_time() - t0)
    return {k: statistics.median(v) * 1000 for k, v in times.items()}


def read_files(site: Path) -> list[Path]:
    exts = (".py", ".pyi", ".md", ".rst")
    return sorted(p for p in site.rglob("*") if p.suffix in exts and p.is_file())


def read_intact(site: Path) -> dict:
    """Feed every text file below the Read threshold through as a Read: how many come back
    unchanged, and for those changed (a secret), whether only the secret's span changed."""
    sizes, unchanged, redacted, broken, ms = [], 0, 0, [], []
    for path in read_files(site):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        sizes.append(len(text))
        if len(text) > READ_INTACT:
            continue
        lines = text.split("\n")
        resp = {"type": "text", "file": {"filePath": str(path), "content": text, "numLines": len(lines),
                                         "startLine": 1, "totalLines": len(lines)}}
        t0 = time.perf_counter()
        out, _ = call("Read", {"file_path": str(path)}, resp, "fix the bug in this module", 4000)
        ms.append((time.perf_counter() - t0) * 1000)
        if out is None:
            unchanged += 1
            continue
        new = out["file"]["content"]
        same_shape = (out["file"]["numLines"], out["file"]["startLine"]) == (len(lines), 1)
        only_span = same_shape and new.count("\n") == text.count("\n") and "[REDACTED:" in new and all(
            a == b or "[REDACTED:" in b for a, b in zip(lines, new.split("\n")))
        if only_span:
            redacted += 1
        else:
            broken.append(str(path.relative_to(site)))
    sizes.sort()
    n = len(sizes)
    q = {f"p{int(k * 100)}": sizes[min(n - 1, int(k * n))] for k in (0.5, 0.9, 0.95, 0.99)} if n else {}
    return {"files": n, "below": sum(s <= READ_INTACT for s in sizes), "unchanged": unchanged,
            "redacted": redacted, "broken": broken, "quantiles": q,
            "share_below": {t: sum(s < t for s in sizes) / max(n, 1) for t in (40_000, 64_000, 100_000)},
            "ms_median": statistics.median(ms) if ms else 0.0}


def _frac(rows, key) -> tuple[int, int]:
    return sum(r[key][0] for r in rows if key in r), sum(r[key][1] for r in rows if key in r)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--budget", type=int, default=4000, help="the hook's default (hooks.compress_budget_chars)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "compress.md")
    ap.add_argument("--code", default=str(REPO), help="checkout to import vaultrag from")
    ap.add_argument("--versus", type=Path, default=None,
                    help="a single-file compressor (main's vaultrag/compress.py) to time against, interleaved")
    ap.add_argument("--site-packages", type=Path, default=None,
                    help="folder of real source/doc files for the Read check (default: this venv's)")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    site = args.site_packages or next(iter(sorted((REPO / ".venv" / "lib").glob("python*/site-packages"))), None)
    rows, pairs = run(args.corpus, args.runs, args.budget)
    mb_ms = one_megabyte(args.corpus, args.runs)
    big = [r["reduction"] for r in rows if r["bytes_in"] > 20_000]
    kept = sum(r["kept"] for r in rows)
    total = sum(r["must"] for r in rows)
    code = "this tree" if Path(args.code).resolve() == REPO else f"`{args.code}`"
    lines = [
        "# PostToolUse compression benchmark",
        "",
        f"Command: `python benchmarks/compress_bench.py --runs {args.runs} --budget {args.budget}"
        f"{f' --versus {args.versus}' if args.versus else ''}` "
        f"(code: {code}; corpus `{args.corpus.name}`, {len(rows)} outputs; prompt = each output's intent)",
        "",
        f"- median reduction on outputs over 20 KB: **{statistics.median(big):.1%}** ({len(big)} outputs)"
        if big else "- no outputs over 20 KB",
        f"- must-keep substrings kept: **{kept}/{total}**",
        "- every line matching the intent regex (search/listing/read outputs), dev intent: **{}/{}**".format(
            *_frac(rows, "intent")),
        "- the same with a paraphrased intent (held-out style): **{}/{}**".format(*_frac(rows, "paraphrase")),
        f"- Bash outputs over {PERSIST:,} chars: must-keep lines in the first {PREVIEW:,} chars the client "
        "previews: **{}/{}**".format(*_frac(rows, "preview")),
        "- failed pytest runs: key lines (each failure's last E line, every FAILED/ERROR summary line) in "
        "the PostToolUse output: **{}/{}**".format(*_frac(rows, "keys")),
        "- failed Bash outputs as PostToolUseFailure's `error` (capped, middle-truncated): must-keep lines "
        "the `error` still holds that its digest keeps: **{}/{}**; pytest key lines it holds that the digest "
        "keeps: **{}/{}**".format(*_frac(rows, "digest"), *_frac(rows, "digest_keys")),
        f"- deterministic (identical bytes over {args.runs} calls): "
        f"**{sum(r['deterministic'] for r in rows)}/{len(rows)}**",
        f"- time on a 1 MB Bash output: **{mb_ms:.0f} ms** (median of {args.runs})",
    ]
    for name, ratio in pairs.items():
        lines.append(f"- run1/run2 similarity of compressed `{name}`: **{ratio:.3f}** (difflib ratio)")
    if args.versus is not None:
        v = versus(args.versus, args.corpus, args.runs)
        lines.append(f"- 1 MB Bash call, CPU ms (median of {args.runs}, interleaved with `{args.versus}`): "
                     f"**{v['after']:.0f}** vs {v['before']:.0f} (x{v['after'] / v['before']:.2f}); "
                     f"compress_text alone {v['after_text']:.0f} vs {v['before_text']:.0f} "
                     f"(x{v['after_text'] / v['before_text']:.2f})")
    if site is not None and site.is_dir():
        ri = read_intact(site)
        lines += [
            f"- Read intact: of {ri['below']:,} .py/.pyi/.md/.rst files of site-packages at or below "
            f"{READ_INTACT:,} chars, **{ri['unchanged']:,} unchanged**, {ri['redacted']} changed only in a "
            f"secret's span, **{len(ri['broken'])} altered otherwise** (median {ri['ms_median']:.2f} ms per Read)",
            f"- file sizes ({ri['files']:,} files): " + ", ".join(f"{k} {v:,} B" for k, v in ri["quantiles"].items())
            + "; below 40/64/100 KB: " + " / ".join(f"{v:.1%}" for v in ri["share_below"].values()),
        ]
        if ri["broken"]:
            lines.append("  - altered: " + ", ".join(f"`{b}`" for b in ri["broken"][:10]))
    lines += [
        "",
        "| id | tool | bytes in | bytes out | reduction | must-keep | intent lines | paraphrase | preview "
        "| pytest keys | failure digest | ms | det. |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]

    def cell(r, key):
        return f"{r[key][0]}/{r[key][1]}" if key in r else ""

    for r in rows:
        lines.append(
            f"| `{r['id']}` | {r['tool']} | {r['bytes_in']:,} | {r['bytes_out']:,} | {r['reduction']:.1%} "
            f"| {r['kept']}/{r['must']} | {cell(r, 'intent')} | {cell(r, 'paraphrase')} | {cell(r, 'preview')} "
            f"| {cell(r, 'keys')} | {cell(r, 'digest')}{' + ' + cell(r, 'digest_keys') if 'digest_keys' in r else ''} "
            f"| {r['ms']:.1f} | {'yes' if r['deterministic'] else 'NO'} |")
    missing = [(r["id"], m) for r in rows for m in r["missing"]]
    if missing:
        lines += ["", "Missing must-keep substrings:", ""]
        lines += [f"- `{i}`: `{m[:100]}`" for i, m in missing]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
