"""Scrubber false positives and speed on real prose nobody on this project wrote.

    .venv/bin/python benchmarks/scrub_fp.py [--show N] [--corpus NAME] [--against REV]

Corpora (read from ../shared relative to the repo root; nothing is copied into the repo):
  obsidian-help  eval/vaults/**/*.md (Obsidian Help vault, 5 languages)
  tldr           corpora/tldr-pages.tar.gz, unpacked to a temporary folder (38k pages)
  tool-outputs   corpora/tool-outputs/*/output.txt (what the hooks scrub: pytest, git, pip, cat ...)

Chunks approximate the real chunker (not written yet): split at H2 headings, then at blank lines
into pieces of at most CHUNK_CHARS. A chunk is "altered" if scrub changes it. Every finding is real
text the scrubber changed; print them with --show to review. Speed is measured on whole files, as
the indexer calls scrub (one raw file before parsing), as CPU time of this process (the machine is
shared; wall time is printed beside it). `--against REV` loads the scrubber of a git revision (the
single-file or the package layout) and times it on the same files, interleaved, median of
--repeat runs each, so the ratio holds however busy the machine is.
"""
from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sqlite3
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from vaultrag.scrubber import scrub, summarize  # noqa: E402

SHARED = ROOT.parent / "shared"
CHUNK_CHARS = 1200  # about the reference system's chunk size (49,746 chunks over tldr's 18.6 MB)
# Reference system: full index of ~50k chunks = 52 CPU-s, of which embedding 46 s
# (shared/reference/performance.md). Our indexer is not written yet, so it is the denominator.
REFERENCE_INDEX_CPU_S = 52.0


def chunks(text: str) -> list[str]:
    out = []
    for section in re.split(r"(?m)^(?=## )", text):
        buf = ""
        for para in re.split(r"\n[ \t]*\n", section):
            if buf and len(buf) + len(para) > CHUNK_CHARS:
                out.append(buf)
                buf = ""
            buf = f"{buf}\n\n{para}" if buf else para
        if buf.strip():
            out.append(buf)
    return out


def load(name: str, tmp: Path) -> list[tuple[str, str]]:
    if name == "obsidian-help":
        files = sorted((SHARED / "eval" / "vaults").rglob("*.md"))
        base = SHARED / "eval" / "vaults"
    elif name == "tool-outputs":
        files = sorted((SHARED / "corpora" / "tool-outputs").glob("*/output.txt"))
        base = SHARED / "corpora" / "tool-outputs"
    else:
        with tarfile.open(SHARED / "corpora" / "tldr-pages.tar.gz") as tar:
            tar.extractall(tmp, filter="data")
        files, base = sorted(tmp.rglob("*.md")), tmp
    return [(str(f.relative_to(base)), f.read_text(encoding="utf-8", errors="replace")) for f in files]


def index_floor_seconds(docs: list[tuple[str, str]]) -> float:
    """Chunk + FTS5 insert into an in-memory SQLite: a floor for indexing without embeddings."""
    t = time.perf_counter()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE fts USING fts5(path, text)")
    with db:
        db.executemany("INSERT INTO fts VALUES (?, ?)", ((p, c) for p, text in docs for c in chunks(text)))
    return time.perf_counter() - t


def load_revision(rev: str, tmp: Path):
    """The `scrub` function of git revision `rev`, imported from a private copy."""
    dest = tmp / f"ref_{re.sub(r'[^A-Za-z0-9]', '_', rev)}"
    dest.mkdir(exist_ok=True)
    for path in ("vaultrag/scrubber.py", "vaultrag/scrubber"):
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, path], capture_output=True)
        if archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
            break
    else:
        raise SystemExit(f"no scrubber at revision {rev}: give a commit that has vaultrag/scrubber")
    sys.path.insert(0, str(dest))
    # the copy is imported as top-level `vaultrag.scrubber` under another root: rename the root
    (dest / "vaultrag").rename(dest / f"refpkg_{dest.name}")
    return importlib.import_module(f"refpkg_{dest.name}.scrubber").scrub


def timed(fn, docs) -> tuple[float, float]:
    """(CPU seconds, wall seconds) to scrub every document once."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _, text in docs:
        fn(text)
    return time.process_time() - cpu, time.perf_counter() - wall


def run(name: str, show: int, tmp: Path, against=None, repeat: int = 1) -> str:
    docs = load(name, tmp)
    mb = sum(len(t.encode("utf-8")) for _, t in docs) / 1e6
    ours, ref = [], []
    for _ in range(repeat):
        ours.append(timed(scrub, docs))
        if against is not None:
            ref.append(timed(against[1], docs))
    secs, wall = sorted(ours)[len(ours) // 2]
    total = altered = 0
    by_rule: Counter = Counter()
    examples = []
    for path, text in docs:
        for chunk in chunks(text):
            total += 1
            clean, findings = scrub(chunk)
            if findings:
                altered += 1
                by_rule.update(summarize(findings))
                examples.append((path, findings, chunk, clean))
    lines = [f"## {name}", "",
             f"- files {len(docs):,}, {mb:.2f} MB, chunks {total:,}",
             f"- scrub whole files: {secs:.3f} CPU-s = **{mb / secs:.1f} MB/s** "
             f"(wall {wall:.3f} s = {mb / wall:.1f} MB/s; median of {repeat})",
             f"- chunks altered: **{altered} / {total:,} = {100 * altered / max(total, 1):.3f}%**",
             f"- findings by rule: {dict(sorted(by_rule.items())) or 'none'}"]
    if against is not None:
        ref_secs = sorted(ref)[len(ref) // 2][0]
        lines.append(f"- against {against[0]}: {ref_secs:.3f} CPU-s = {mb / ref_secs:.1f} MB/s; "
                     f"this tree / {against[0]} speed = **{ref_secs / secs:.2f}x**")
    if name == "tldr":
        floor = index_floor_seconds(docs)
        lines += [f"- share of full-index time (reference 52 CPU-s at ~50k chunks): "
                  f"**{100 * secs / (REFERENCE_INDEX_CPU_S + secs):.1f}%**",
                  f"- share of a no-embedding floor (chunk + FTS5 insert, {floor:.2f} s): "
                  f"{100 * secs / (floor + secs):.1f}%"]
    for path, findings, chunk, clean in examples[:show]:
        print(f"--- {name} {path} {[f.rule for f in findings]}", file=sys.stderr)
        for before, after in zip(chunk.splitlines(), clean.splitlines()):
            if before != after:
                print(f"  - {before[:160]}\n  + {after[:160]}", file=sys.stderr)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=0, help="print N altered chunks to stderr")
    parser.add_argument("--corpus", choices=["obsidian-help", "tldr", "tool-outputs"], action="append")
    parser.add_argument("--against", metavar="REV", help="also time the scrubber of this git revision")
    parser.add_argument("--repeat", type=int, default=3, help="timing runs per scrubber (median)")
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"{SHARED} not found: this benchmark reads the shared eval data beside the repo; "
              "nothing to measure.")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        against = (args.against, load_revision(args.against, Path(tmp))) if args.against else None
        for name in args.corpus or ["obsidian-help", "tldr", "tool-outputs"]:
            print(run(name, args.show, Path(tmp), against, args.repeat), "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
