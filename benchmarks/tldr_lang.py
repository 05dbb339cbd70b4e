"""Retrieval and the evidence gate in every language of tldr-pages (issue 20, third round).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/tldr_lang.py [--tldr /tmp/tldr] [--langs tr,el,...]
        [--max-pages 1000] [--max-queries 100] [--json OUT.json]

No labelled set exists for most languages a vault may be written in; tldr-pages has the same pages
translated into ~38 of them (pages.<lang>/, English in pages/). Each page has a description
("> ...") and example descriptions ("- ...:") each followed by a code line. Per language:

- vault A: every page (at most --max-pages, a fixed sample), code lines and inline code removed
  (they hold the command names and English flags, which would make queries trivial), and its
  description lines removed too;
- `ex` queries: one example description per page (its text is in the page: the easy case);
- `desc` queries: the page's description, answerable only from the rest of the page (its
  examples), since vault A lacks that line;
- vault B: the pages of half the command names (a fixed hash), same treatment; `off` queries:
  the descriptions of pages of the other half, off-topic in the same language and script.

Queries whose text is shared by two pages (alias pages, "Display help") are not used. Measures
MRR@10 with the gate off (ranking) and on (as answered: 0 when it abstains), the share abstained
(ex, desc), and the share of off-topic questions answered (off). Reads the corpus at run time
(/tmp/tldr, else extracts ../shared/corpora/tldr-pages.tar.gz to a temporary folder); prints a
Markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import eval as ev  # noqa: E402  (benchmarks/eval.py: its library glue and metrics)

TARBALL = ev.ROOT.parent / "shared" / "corpora" / "tldr-pages.tar.gz"
SEED = 13
_CODE_SPAN = re.compile(r"`[^`]*`")
_PLACEHOLDER = re.compile(r"\{\{[^}]*\}\}")


def clean(line: str) -> str:
    """A description without inline code or placeholders, whitespace collapsed."""
    return " ".join(_PLACEHOLDER.sub(" ", _CODE_SPAN.sub(" ", line)).split()).strip(" :.;,")


def parse(text: str) -> tuple[list[str], list[str]]:
    """(description lines, example descriptions) of one tldr page; URL lines left out."""
    desc, examples = [], []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(">") and "<http" not in line:
            if (d := clean(line[1:])):
                desc.append(d)
        elif line.startswith("- "):
            if (d := clean(line[2:])):
                examples.append(d)
    return desc, examples


def load_pages(root: Path, lang: str, max_pages: int) -> dict[str, tuple[list[str], list[str]]]:
    """vault path ("linux/ls.md") -> (description lines, examples), a fixed sample of max_pages."""
    folder = root / ("pages" if lang == "en" else f"pages.{lang}")
    paths = sorted(folder.rglob("*.md"))
    if max_pages and len(paths) > max_pages:
        paths = sorted(random.Random(SEED).sample(paths, max_pages))
    out = {}
    for p in paths:
        desc, examples = parse(p.read_text(encoding="utf-8", errors="replace"))
        if examples:
            out[p.relative_to(folder).as_posix()] = (desc, examples)
    return out


def half_of(path: str) -> int:
    """0 or 1 by the command name, so a command's pages on every platform fall in one half."""
    return zlib.crc32(Path(path).stem.encode()) % 2


def write_vault(pages: dict, root: Path) -> None:
    for rel, (_, examples) in pages.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# {Path(rel).stem}\n\n" + "".join(f"- {e}\n" for e in examples), encoding="utf-8")


def unique(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(query, page) pairs whose query text belongs to one page only, long enough to mean something."""
    owners: dict[str, set[str]] = {}
    for q, page in pairs:
        owners.setdefault(q.casefold(), set()).add(page)
    return [(q, page) for q, page in pairs if len(owners[q.casefold()]) == 1 and len(q) >= 8]


def queries(pages: dict, max_q: int) -> dict[str, list[tuple[str, str]]]:
    rng = random.Random(SEED)
    ex = unique([(rng.choice(examples), rel) for rel, (_, examples) in pages.items()])
    desc = unique([(" ".join(d), rel) for rel, (d, _) in pages.items() if d])
    inside = [(q, r) for q, r in desc if half_of(r) == 0]
    off = [(q, r) for q, r in desc if half_of(r) == 1]
    return {"ex": ev.subsample(ex, max_q), "desc": ev.subsample(desc, max_q),
            "in": ev.subsample(inside, max_q), "off": ev.subsample(off, max_q)}


def score(pairs, cfg, store) -> dict:
    channels, graph = ev.ABLATIONS[ev.DEFAULT]
    rank = answered = abstained = 0.0
    for q, page in pairs:
        paths, status = ev.ranked_paths(q, cfg, store, channels, graph)
        r = ev.mrr(paths, {page: 1})
        rank += r
        if status == "no_evidence":
            abstained += 1
        else:
            answered += r
    n = max(1, len(pairs))
    return {"n": len(pairs), "ranking": round(rank / n, 4), "answered": round(answered / n, 4),
            "abstained": round(abstained / n, 4)}


def run(root: Path, lang: str, a, work: Path) -> dict | None:
    pages = load_pages(root, lang, a.max_pages)
    if len(pages) < 40:
        return None
    qs = queries(pages, a.max_queries)
    t = time.monotonic()
    res = {"lang": lang, "pages": len(pages)}
    full = work / lang / "A"
    write_vault(pages, full)
    cfg = ev.make_cfg(full, work / lang / "A.db")
    res["index_s"] = ev.index(cfg)["index_s"]
    store = ev.open_store(cfg)
    res["ex"], res["desc"] = score(qs["ex"], cfg, store), score(qs["desc"], cfg, store)
    if store is not None:
        store.close()
    half = work / lang / "B"
    write_vault({r: v for r, v in pages.items() if half_of(r) == 0}, half)
    cfg = ev.make_cfg(half, work / lang / "B.db")
    ev.index(cfg)
    store = ev.open_store(cfg)
    res["in"], off = score(qs["in"], cfg, store), score(qs["off"], cfg, store)
    res["off"] = {"n": off["n"], "answered": round(1 - off["abstained"], 4)}
    if store is not None:
        store.close()
    res["wall_s"] = round(time.monotonic() - t, 1)
    return res


def corpus_root(arg: str | None, tmp: Path) -> Path:
    if arg:
        return Path(arg)
    if Path("/tmp/tldr/pages").is_dir():
        return Path("/tmp/tldr")
    with tarfile.open(TARBALL) as tf:
        tf.extractall(tmp / "tldr", filter="data")
    tops = [p for p in (tmp / "tldr").iterdir() if p.is_dir()]
    return tops[0] if len(tops) == 1 and not (tmp / "tldr" / "pages").is_dir() else tmp / "tldr"


def table(rows: list[dict]) -> str:
    out = ["| lang | pages | ex: n, ranking / answered / abstained | desc: n, ranking / answered / abstained "
           "| half vault: n, desc abstained | n, off-topic answered |", "|---|---|---|---|---|---|"]
    for r in rows:
        e, d = r["ex"], r["desc"]
        out.append(f"| {r['lang']} | {r['pages']} | {e['n']}: {e['ranking']:.3f} / {e['answered']:.3f} / "
                   f"{e['abstained']:.3f} | {d['n']}: {d['ranking']:.3f} / {d['answered']:.3f} / {d['abstained']:.3f} "
                   f"| {r['in']['n']}: {r['in']['abstained']:.3f} | {r['off']['n']}: {r['off']['answered']:.3f} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tldr", help="extracted tldr-pages folder (holds pages/, pages.<lang>/)")
    ap.add_argument("--langs", default="", help="comma-separated codes (en = pages/); default every language")
    ap.add_argument("--max-pages", type=int, default=1000, help="fixed sample per language; 0 = all")
    ap.add_argument("--max-queries", type=int, default=100, help="per query kind (fixed-seed subsample)")
    ap.add_argument("--json", help="also write the rows here")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="vaultrag-tldrlang-") as tmp:
        root = corpus_root(a.tldr, Path(tmp))
        langs = [x for x in a.langs.split(",") if x] or ["en"] + sorted(
            p.name.split(".", 1)[1] for p in root.glob("pages.*") if p.is_dir())
        for lang in langs:
            r = run(root, lang, a, Path(tmp))
            if r:
                rows.append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
