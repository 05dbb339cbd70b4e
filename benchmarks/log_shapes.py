"""Generated logs (tests/test_compress_logs.nightly_log: 3,000 lines, 6 components, one ERROR record
mid-log, a tally at the end) through `compress_post_tool_use` as four commands would print them.

    python benchmarks/log_shapes.py [--code DIR]

Per format and command: characters returned, whether the ERROR record is kept and within the first
2,000 characters (the digest), whether the last line is kept, how many of the 6 components the kept
`processed item` lines come from and the largest one's share, and CPU ms (median of 3).

Then a Read of the log file as Claude Code returns one over READ_INTACT_CHARS (a 1,000-line log of
~100 KB, about the Read tool's ~25k-token cap, whole, with `truncatedByTokenCap`), asked about the
failure: the lines of the window, whether the ERROR record is in the window or named (by line
number) in the note, the same for the last line, whether the window is the file's own lines
unchanged, and CPU ms (median of 3).
`--code DIR` imports vaultrag from another checkout (`git archive main` unpacked) for a side-by-side run.
"""
from __future__ import annotations

import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE = next((sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--code"), str(REPO))
sys.path.insert(0, CODE)
sys.path.insert(1, str(REPO / "tests"))

from test_compress_logs import COMPONENTS, nightly_log  # noqa: E402  (the generator, from this checkout)
from vaultrag.compress import compress_post_tool_use  # noqa: E402

COMMANDS = ("cat nightly-import.log", "tail -n 3001 nightly-import.log", "./run-import.sh", "journalctl -u importer")
LEAD_END = "[... the compressed output in its own order follows ...]"
READ_LINES, READ_ERROR_AT = 1000, 600  # ~100 KB: what one Read returns at the token cap
READ_PROMPT = "why did the nightly import fail?"


def main() -> None:
    spill = tempfile.mkdtemp(prefix="log-shapes-")
    print(f"code: {CODE}\n\n| format | command | chars | ERROR kept | in first 2 KB | last line | components | "
          f"top share | CPU ms |\n|---|---|---:|---|---|---|---:|---:|---:|")
    for fmt in ("plain", "pylogging", "logfmt", "jsonl"):
        log, error_line, _ = nightly_log(fmt, traceback=fmt != "plain")
        last = log.rstrip("\n").split("\n")[-1]
        for command in COMMANDS:
            response = {"stdout": log, "stderr": "", "interrupted": False, "isImage": False}
            times = []
            for _ in range(3):
                t0 = time.process_time()
                out = compress_post_tool_use("Bash", {"command": command}, response, spill_dir=spill)
                times.append(time.process_time() - t0)
            stdout = out.tool_response["stdout"]
            body = stdout.split(LEAD_END)[-1]
            kept = Counter(c for line in body.split("\n") if "processed item" in line
                           for c in COMPONENTS if re.search(rf"\b{c}\b", line))
            share = max(kept.values()) / sum(kept.values()) if kept else 0.0
            yes = {True: "yes", False: "**no**"}
            print(f"| {fmt} | `{command.split()[0]}` | {len(stdout):,} | {yes[error_line in stdout]} | "
                  f"{yes[error_line in stdout[:2000]]} | {yes[last in stdout]} | {len(kept)} | {share:.2f} | "
                  f"{statistics.median(times) * 1000:.0f} |")
    reads()


def reads() -> None:
    print("\n| format | Read | window lines | ERROR in window | ERROR named in note | last line shown or named | "
          "window unchanged | CPU ms |\n|---|---|---:|---|---|---|---|---:|")
    yes = {True: "yes", False: "**no**"}
    for fmt in ("plain", "pylogging", "logfmt", "jsonl"):
        log, error_line, error_no = nightly_log(fmt, n=READ_LINES, error_at=READ_ERROR_AT, traceback=fmt != "plain")
        content = log.rstrip("\n")
        lines = content.split("\n")
        response = {"type": "text", "file": {"filePath": "/srv/app/nightly-import.log", "content": content,
                                             "numLines": len(lines), "startLine": 1, "totalLines": len(lines),
                                             "truncatedByTokenCap": True}}
        times = []
        for _ in range(3):
            t0 = time.process_time()
            out = compress_post_tool_use("Read", {"file_path": "/srv/app/nightly-import.log"}, response,
                                         prompt=READ_PROMPT)
            times.append(time.process_time() - t0)
        if out is None:
            print(f"| {fmt} | {len(content):,} chars | {len(lines)} (intact) | yes | - | yes | yes | "
                  f"{statistics.median(times) * 1000:.0f} |")
            continue
        f, note = out.tool_response["file"], out.note or ""
        a = f["startLine"]
        window = f["content"].split("\n")
        unchanged = window == lines[a - 1:a - 1 + len(window)] and f["numLines"] == len(window)
        named = re.search(rf"^\s*{error_no}\t", note, re.M) is not None
        last_named = re.search(rf"^\s*{len(lines)}\t", note, re.M) is not None
        print(f"| {fmt} | {len(content):,} chars | {a}-{a + len(window) - 1} | {yes[error_line in window]} | "
              f"{yes[named]} | {yes[lines[-1] in window or last_named]} | {yes[unchanged]} | "
              f"{statistics.median(times) * 1000:.0f} |")


if __name__ == "__main__":
    main()
