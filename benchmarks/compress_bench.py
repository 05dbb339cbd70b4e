"""Benchmark the PostToolUse compressor (vaultrag.compress) on real tool outputs.

    python benchmarks/compress_bench.py [--corpus DIR] [--runs N] [--out FILE]

The corpus (default `<repo>/../shared/corpora/tool-outputs`) holds one folder per output with
`output.txt` and `meta.json` (`tool`, `command`, `intent`, `must_keep`). For each output this builds a
`tool_response` in the tool's real Output shape, compresses it with the intent as the user's prompt,
and reports bytes in/out, reduction, must-keep substrings kept, time (median of N runs), whether two
calls give identical bytes, and for `-run1`/`-run2` pairs the difflib ratio of their compressed
outputs. Writes a Markdown table (default `benchmarks/results/compress.md`). must_keep is used only
to measure, never to tune.
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vaultrag.compress import compress_tool_output  # noqa: E402

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


def rendered(tool: str, response: dict) -> str:
    """The text the model would see, for must-keep checks (Read lines re-numbered like cat -n)."""
    if tool == "Read":
        content = response["file"]["content"]
        start = response["file"].get("startLine", 1)
        if re.match(r"^ *\d+\t", content):  # the compressor numbered the kept lines itself
            return content
        return "\n".join(f"{start + i:>6}\t{ln}" for i, ln in enumerate(content.split("\n")))
    if tool == "Bash":
        return response["stdout"] + ("\n" + response["stderr"] if response.get("stderr") else "")
    if tool == "Glob":
        return "\n".join(response["filenames"])
    return response.get("content") or "\n".join(response.get("filenames", []))


def run(corpus: Path, runs: int) -> tuple[list[dict], dict]:
    rows = []
    compressed_text = {}
    for folder in sorted(p for p in corpus.iterdir() if (p / "meta.json").exists()):
        meta = json.loads((folder / "meta.json").read_text())
        output = (folder / "output.txt").read_text(encoding="utf-8", errors="replace")
        tool, tool_input, response = build_call(meta, output)
        times, results = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            results.append(compress_tool_output(tool, tool_input, response, prompt=meta.get("intent")))
            times.append(time.perf_counter() - t0)
        out = results[0] if results[0] is not None else response
        text_in = rendered(tool, response)
        text_out = rendered(tool, out)
        must = meta.get("must_keep", [])
        missing = [s for s in must if s not in text_out]
        compressed_text[meta["id"]] = text_out
        rows.append({
            "id": meta["id"], "tool": tool, "bytes_in": len(text_in.encode()),
            "bytes_out": len(text_out.encode()),
            "reduction": 1 - len(text_out.encode()) / max(1, len(text_in.encode())),
            "kept": len(must) - len(missing), "must": len(must), "missing": missing,
            "ms": statistics.median(times) * 1000,
            "deterministic": all(json.dumps(r, sort_keys=True) == json.dumps(results[0], sort_keys=True)
                                 for r in results),
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
        compress_tool_output("Bash", {"command": "pytest"}, response, prompt="which tests fail and why")
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "compress.md")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    rows, pairs = run(args.corpus, args.runs)
    mb_ms = one_megabyte(args.corpus, args.runs)
    big = [r["reduction"] for r in rows if r["bytes_in"] > 20_000]
    kept = sum(r["kept"] for r in rows)
    total = sum(r["must"] for r in rows)
    lines = [
        "# PostToolUse compression benchmark",
        "",
        f"Command: `python benchmarks/compress_bench.py --runs {args.runs}` "
        f"(corpus `{args.corpus.name}`, {len(rows)} outputs; prompt = each output's intent)",
        "",
        f"- median reduction on outputs over 20 KB: **{statistics.median(big):.1%}** ({len(big)} outputs)"
        if big else "- no outputs over 20 KB",
        f"- must-keep substrings kept: **{kept}/{total}**",
        f"- deterministic (identical bytes over {args.runs} calls): "
        f"**{sum(r['deterministic'] for r in rows)}/{len(rows)}**",
        f"- time on a 1 MB Bash output: **{mb_ms:.0f} ms** (median of {args.runs})",
    ]
    for name, ratio in pairs.items():
        lines.append(f"- run1/run2 similarity of compressed `{name}`: **{ratio:.3f}** (difflib ratio)")
    lines += [
        "",
        "| id | tool | bytes in | bytes out | reduction | must-keep | ms | deterministic |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['id']}` | {r['tool']} | {r['bytes_in']:,} | {r['bytes_out']:,} | {r['reduction']:.1%} "
            f"| {r['kept']}/{r['must']} | {r['ms']:.1f} | {'yes' if r['deterministic'] else 'NO'} |")
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
