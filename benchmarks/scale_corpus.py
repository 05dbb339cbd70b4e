"""Build the tldr-pages vault at several scales for growth measurements (evaluation only, never committed).

    .venv/bin/python benchmarks/scale_corpus.py DEST --copies 10 [--seed 1]
    .venv/bin/python benchmarks/scale_corpus.py DEST --files 1000      # a deterministic subset

Copy 0 is the corpus as shipped (../shared/corpora/tldr-pages.tar.gz, read at run time). Copies 1..N-1
live under `copyK/` and are perturbed so that no copy is a duplicate of another: about PERTURB_SHARE of the words in each prose line
are swapped for words drawn from the corpus (seeded per copy and page), and each page's title gets a
copy-specific suffix. Code spans and
command lines (`{{...}}` placeholders, backticks) are left as they are, so the chunker sees the same shapes.
At 10 copies the corpus is ~384k files, ~460k chunks. Prints a JSON line: files written, bytes, seconds.
Library use: `build(dest, copies=..., files=..., seed=...)` returns that dict.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tarfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "tldr-pages.tar.gz"
PERTURB_SHARE = 0.2   # share of prose words replaced per copy: enough that BM25 statistics differ per copy
VOCAB_SAMPLE = 50_000  # words kept for replacements (drawn from the corpus itself, all languages)
_WORD = re.compile(r"[^\W\d_]{3,}")


def _pages() -> list[tuple[str, str]]:
    if not CORPUS.exists():
        sys.exit(f"corpus not found: {CORPUS} (it lives in ../shared beside the repo)")
    out = []
    with tarfile.open(CORPUS) as tf:
        for m in tf:
            if m.isfile() and m.name.endswith(".md"):
                out.append((m.name, tf.extractfile(m).read().decode("utf-8", "replace")))
    out.sort()
    return out


def _perturb_line(line: str, rng: random.Random, vocab: list[str]) -> str:
    if line.startswith("`") or "{{" in line or not line.strip():
        return line
    return _WORD.sub(lambda m: rng.choice(vocab) if rng.random() < PERTURB_SHARE else m.group(0), line)


def _perturb(text: str, copy: int, rng: random.Random, vocab: list[str]) -> str:
    lines = text.split("\n")
    out = []
    for ln in lines:
        if ln.startswith("# "):
            out.append(f"{ln} {copy}")
        elif ln.startswith("#"):
            out.append(ln)
        else:
            out.append(_perturb_line(ln, rng, vocab))
    return "\n".join(out)


def build(dest: Path, copies: int = 1, files: int | None = None, seed: int = 1) -> dict:
    t = time.perf_counter()
    pages = _pages()
    if files is not None and files < len(pages):
        pages = random.Random(seed).sample(pages, files)
        pages.sort()
    words = sorted({w for _, txt in pages[:5000] for w in _WORD.findall(txt)})
    vocab = random.Random(seed).sample(words, min(VOCAB_SAMPLE, len(words)))
    n = size = 0
    for k in range(copies):
        base = dest if k == 0 else dest / f"copy{k}"
        for name, txt in pages:
            body = txt if k == 0 else _perturb(txt, k, random.Random(f"{seed}:{k}:{name}"), vocab)
            p = base / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(body, encoding="utf-8")
            n += 1
            size += len(body.encode("utf-8"))
    return {"files": n, "bytes": size, "copies": copies, "seconds": round(time.perf_counter() - t, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--copies", type=int, default=1, help="1 = the corpus as shipped; 10 = ~460k chunks")
    ap.add_argument("--files", type=int, help="a deterministic subset of this many pages (per copy)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(json.dumps(build(a.dest, a.copies, a.files, a.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
