"""Unsolicited injection, both errors, on a small and a large vault.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/inject_eval.py [--obs-db FILE] [--tldr DIR --tldr-db FILE]

What the UserPromptSubmit hook would inject (`vaultrag.hooks.context_for` with a fresh session)
for two kinds of prompt:
- answerable: obsidian-help en `description` and `alias` queries (../shared/eval/vault-queries),
  the right note must be cited in the block; tldr: questions built mechanically from English tldr
  pages at run time ("how do I <an example's description> with <command>?"), the right note is
  any platform's page of that command;
- off-topic: real commit subjects (the sqlite-utils `git log` in ../shared/corpora/tool-outputs and
  this repository's own `git log`), tool-run descriptions, chit-chat, questions no notes
  answer and coding prompts about the user's own files and identifiers (benchmarks/prompts/*.txt);
  any block is a false positive.
Calibration uses vaultrag/retrieve/null_prompts.py only; the script checks that no evaluation
prompt is among them. Indexes are built in a temporary folder unless --obs-db / --tldr-db point
at existing ones. Writes benchmarks/results/inject.md.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("VAULTRAG_SHARED_DIR", ROOT.parent / "shared"))
PROMPTS = ROOT / "benchmarks" / "prompts"
OUT = ROOT / "benchmarks" / "results" / "inject.md"
SEED = 13
TLDR_QUESTIONS = 200
PAIRS = 150  # two-question prompts per vault (--pairs)
FORCE_CALIBRATION = False
DUMP = False
_EXAMPLE_RE = re.compile(r"^- (.+?):?\s*$")


def read_lines(path: Path) -> list[str]:
    return [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]


def commit_subjects_sqlite_utils() -> list[str]:
    """Subjects of the commits in a real `git log --stat` output (the line after `Date:`)."""
    p = SHARED / "corpora" / "tool-outputs" / "git-log-stat-300-sqlite-utils" / "output.txt"
    if not p.exists():
        return []
    lines = p.read_text(encoding="utf-8").splitlines()
    out = []
    for i, ln in enumerate(lines):
        if ln.startswith("Date:") and i + 2 < len(lines):
            out.append(lines[i + 2].strip())
    return [s for s in dict.fromkeys(out) if s]


def commit_subjects_here() -> list[str]:
    try:
        r = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%s"], capture_output=True, text=True, timeout=30)
    except OSError:
        return []
    return [s for s in dict.fromkeys(r.stdout.splitlines()) if s.strip()]


def off_topic_sets() -> dict[str, list[str]]:
    sets = {"commits: sqlite-utils": commit_subjects_sqlite_utils(), "commits: vaultrag": commit_subjects_here()}
    for name in ("tool_descriptions", "chitchat", "personal", "repo_coding"):
        sets[name.replace("_", " ")] = read_lines(PROMPTS / f"{name}.txt")
    return {k: v for k, v in sets.items() if v}


def obs_answerable(lang: str = "en") -> dict[str, list[tuple[str, set[str]]]]:
    p = SHARED / "eval" / "vault-queries" / "obsidian-help" / f"{lang}.jsonl"
    out: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
    for line in p.read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if q["type"] in ("description", "alias"):
            out[q["type"]].append((q["text"], {q["note"]}))
    return dict(out)


def tldr_answerable(vault: Path, n: int = TLDR_QUESTIONS) -> dict[str, list[tuple[str, set[str]]]]:
    """'how do I <example description> with <command>?' from n English pages; right: that command's pages."""
    pages = sorted((vault / "pages").glob("*/*.md"))
    by_cmd: dict[str, set[str]] = defaultdict(set)
    for p in pages:
        by_cmd[p.stem].add(p.relative_to(vault).as_posix())
    rng = random.Random(SEED)
    out = []
    for p in rng.sample(pages, min(n, len(pages))):
        examples = [m.group(1) for ln in p.read_text(encoding="utf-8").splitlines() if (m := _EXAMPLE_RE.match(ln))]
        if not examples:
            continue
        desc = re.sub(r"[\[\]{}]", "", rng.choice(examples)).rstrip(":").strip()
        desc = desc[:1].lower() + desc[1:]
        out.append((f"how do I {desc} with {p.stem}?", by_cmd[p.stem]))
    return {"example questions": out}


def _two(a: str, b: str) -> str:
    return f"{a.rstrip(' ?.')}? {b[:1].upper() + b[1:].rstrip(' ?.')}?"


def paired(answerable: dict, off: dict, n: int = PAIRS) -> tuple[dict, dict]:
    """Two questions in one prompt ("how do I X? And where is Y?"): pairs of answerable prompts of
    different notes (right: either note cited; `both` counts prompts citing both) and pairs of
    off-topic prompts (any block is a false positive). Fixed seed."""
    rng = random.Random(SEED)
    items = [it for v in answerable.values() for it in v]
    pairs = []
    while items and len(pairs) < n:
        (qa, ra), (qb, rb) = rng.sample(items, 2)
        if not ra & rb:
            pairs.append((_two(qa, qb), ra | rb, (ra, rb)))
    offs = [q for v in off.values() for q in v]
    off_pairs = [_two(*rng.sample(offs, 2)) for _ in range(min(n, len(offs)))] if len(offs) > 1 else []
    return {"two questions": pairs}, {"two off-topic prompts": off_pairs}


def build_index(vault: Path, db: Path | None, work: Path, name: str):
    from vaultrag.config import load_config
    from vaultrag.indexer import reindex

    target = db or work / f"{name}.sqlite"
    cfg = load_config(vault=str(vault), db=str(target), model="bundled")
    if db is None or not db.exists():
        t = time.monotonic()
        reindex(cfg, full=True)
        print(f"{name}: indexed in {time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)
    return cfg


def injected(prompt: str, cfg, store) -> tuple[str, dict]:
    """The block the UserPromptSubmit hook would inject in a fresh session ('' for none), and the
    evidence behind it: the same calls as `vaultrag.hooks.context_for`."""
    import dataclasses

    from vaultrag.render import fit_budget, render_context
    from vaultrag.retrieve.inject import hook_answer

    ans = hook_answer(prompt, cfg, max_tokens=cfg.hook_max_tokens * 4, store=store)
    ev = dict(ans.evidence)
    ev.update({f"inject_{k}": v for k, v in ev.pop("inject", {}).items()})
    if ans.status != "ok":
        return "", ev
    hits = fit_budget(list(ans.hits), cfg.hook_max_tokens)
    return (render_context(dataclasses.replace(ans, hits=tuple(hits))) if hits else ""), ev


def cited_ungated(prompt: str, cfg, store) -> set[str]:
    import dataclasses

    from vaultrag.render import fit_budget, render_context
    from vaultrag.retrieve import search

    ans = search(prompt, cfg, store=store, max_tokens=cfg.hook_max_tokens * 4, gate=False)
    block = render_context(dataclasses.replace(ans, hits=tuple(fit_budget(list(ans.hits), cfg.hook_max_tokens))))
    return set(re.findall(r"^Source: (.+?\.md):L\d+", block, flags=re.M))


def ensure_calibrated(cfg, force: bool) -> dict:
    from vaultrag.retrieve.inject import META_KEY, Calibration, recalibrate
    from vaultrag.store import Store

    with Store(cfg.db_path()) as store:
        recalibrate(cfg, store, force=force)
        return Calibration.from_json(store.get_meta(META_KEY)).__dict__


def run_vault(label: str, cfg, answerable: dict, off: dict, rows: list) -> dict:
    from vaultrag.store import Store

    res = {"answerable": {}, "off_topic": {}, "calibration": ensure_calibrated(cfg, FORCE_CALIBRATION)}
    with Store(cfg.db_path(), readonly=True) as store:
        n_chunks = store.chunk_count()
        for kind, items in answerable.items():
            ok = got_block = both = 0
            for text, right, *parts in items:
                block, ev = injected(text, cfg, store)
                cited = set(re.findall(r"^Source: (.+?\.md):L\d+", block, flags=re.M))
                hit = bool(cited & right)
                ok += hit
                got_block += bool(block)
                both += bool(parts) and all(cited & r for r in parts[0])
                row = {"vault": label, "set": kind, "answerable": True, "prompt": text, "block": bool(block),
                       "right": hit, **ev}
                if DUMP and not block:  # would the block have cited it, injected anyway? (for tuning)
                    row["right_if_injected"] = bool(right & cited_ungated(text, cfg, store))
                rows.append(row)
            res["answerable"][kind] = {"n": len(items), "right_note": ok, "block": got_block,
                                       **({"both_notes": both} if items and len(items[0]) > 2 else {})}
        for kind, items in off.items():
            got = 0
            for text in items:
                block, ev = injected(text, cfg, store)
                got += bool(block)
                rows.append({"vault": label, "set": kind, "answerable": False, "prompt": text, "block": bool(block),
                             **ev})
            res["off_topic"][kind] = {"n": len(items), "block": got}
    res["chunks"] = n_chunks
    return res


def render(results: dict, cmd: str) -> str:
    L = ["# Unsolicited injection: both errors", "", f"Command: `{cmd}`  ",
         f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", ""]
    for label, r in results.items():
        a = r["answerable"]
        o = r["off_topic"]
        an = sum(v["n"] for v in a.values())
        ar = sum(v["right_note"] for v in a.values())
        on = sum(v["n"] for v in o.values())
        ob = sum(v["block"] for v in o.values())
        cal = r["calibration"]
        L += [f"## {label} ({r['chunks']:,} chunks)", "",
              f"Calibration: thresholds {cal['thresholds']} from {cal['prompts']} null prompts in {cal['seconds']} s.", "",
              f"Right note in the block: **{ar}/{an} = {ar / max(1, an):.1%}**; off-topic prompts that got a block: "
              f"**{ob}/{on} = {ob / max(1, on):.1%}**.", "",
              "| prompts | n | got a block | right note cited |", "|---|---|---|---|"]
        for k, v in a.items():
            both = f"; both notes {v['both_notes']} ({v['both_notes'] / max(1, v['n']):.1%})" if "both_notes" in v else ""
            L.append(f"| answerable: {k} | {v['n']} | {v['block']} | {v['right_note']} ({v['right_note'] / max(1, v['n']):.1%}){both} |")
        for k, v in o.items():
            L.append(f"| off-topic: {k} | {v['n']} | {v['block']} ({v['block'] / max(1, v['n']):.1%}) | — |")
        L.append("")
    return "\n".join(L)


def hook_latency(db: Path, vault: Path, prompts: list[str], baseline_src: Path | None, rounds: int) -> dict:
    """Fresh-process UserPromptSubmit hook wall time (ms), this tree and optionally an older
    checkout's package (`baseline_src`, e.g. `git archive main | tar -x -C DIR`), alternating
    call by call so both see the same machine load. Medians and p95."""
    import statistics

    script = ROOT / "hooks" / "user_prompt_submit.py"
    trees = {"this tree": ROOT}
    if baseline_src:
        trees["baseline"] = baseline_src
    env = dict(os.environ, VAULTRAG_VAULT=str(vault), VAULTRAG_DB=str(db), HF_HUB_OFFLINE="1")
    times: dict[str, list[float]] = {k: [] for k in trees}
    for r in range(rounds):
        for i, p in enumerate(prompts):
            payload = json.dumps({"session_id": f"lat-{r}-{i}", "transcript_path": "", "cwd": "/tmp",
                                  "hook_event_name": "UserPromptSubmit", "prompt": p}).encode()
            for name, src in (trees.items() if (r + i) % 2 == 0 else reversed(trees.items())):
                t = time.perf_counter()
                subprocess.run([sys.executable, str(script)], input=payload, capture_output=True,
                               env=dict(env, PYTHONPATH=str(src)), timeout=60)
                times[name].append((time.perf_counter() - t) * 1000)
    out = {}
    for name, xs in times.items():
        xs.sort()
        out[name] = {"n": len(xs), "p50_ms": round(statistics.median(xs), 1), "p95_ms": round(xs[int(0.95 * (len(xs) - 1))], 1)}
    if baseline_src:
        out["ratio_p50"] = round(out["this tree"]["p50_ms"] / out["baseline"]["p50_ms"], 3)
    return out


def cpu_child(tldr: Path, db: Path) -> dict:
    """In this process, with whatever `vaultrag` is importable: CPU and wall ms per hook query on
    one open Store (hook_answer where it exists, else search as main's hook called it)."""
    import statistics

    import vaultrag
    from vaultrag.config import load_config
    from vaultrag.store import Store

    try:
        from vaultrag.retrieve.inject import hook_answer
        call = lambda p, cfg, st: hook_answer(p, cfg, max_tokens=cfg.hook_max_tokens * 4, store=st)  # noqa: E731
    except ImportError:
        from vaultrag.retrieve import search
        call = lambda p, cfg, st: search(p, cfg, store=st, max_tokens=cfg.hook_max_tokens * 4)  # noqa: E731
    prompts = latency_prompts(tldr, 30)
    cfg = load_config(vault=str(tldr), db=str(db), model="bundled")
    cpu, wall = [], []
    with Store(db, readonly=True) as st:
        for p in prompts[:5]:
            call(p, cfg, st)
        for _ in range(3):
            for p in prompts:
                t, w = time.process_time(), time.perf_counter()
                call(p, cfg, st)
                cpu.append((time.process_time() - t) * 1000)
                wall.append((time.perf_counter() - w) * 1000)
    return {"package": vaultrag.__file__, "n": len(cpu), "cpu_p50_ms": round(statistics.median(cpu), 2),
            "wall_p50_ms": round(statistics.median(wall), 2)}


def latency_prompts(tldr: Path, n: int) -> list[str]:
    return ([q for q, _ in tldr_answerable(tldr, n)["example questions"]] + off_topic_sets()["chitchat"][:n // 3]
            + commit_subjects_sqlite_utils()[:n])


def _sets(answerable: dict, off: dict, a) -> tuple[dict, dict]:
    if not (a.pairs or a.only_pairs):
        return answerable, off
    two, two_off = paired(answerable, off)
    return (two, two_off) if a.only_pairs else ({**answerable, **two}, {**off, **two_off})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--obs-db", type=Path, help="existing index of obsidian-help en (else built)")
    ap.add_argument("--tldr", type=Path, help="unpacked tldr-pages folder (else the tarball is unpacked)")
    ap.add_argument("--tldr-db", type=Path, help="existing index of that folder (else built)")
    ap.add_argument("--skip-tldr", action="store_true")
    ap.add_argument("--dump", type=Path, help="write every prompt's evidence as JSONL here")
    ap.add_argument("--recalibrate", action="store_true", help="measure the calibration again even if stored")
    ap.add_argument("--latency", action="store_true",
                    help="only time the fresh-process hook on the tldr index (needs --tldr and --tldr-db)")
    ap.add_argument("--baseline-src", type=Path, help="with --latency: an older checkout to time side by side")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--pairs", action="store_true",
                    help="also two-question prompts: pairs of answerable prompts, pairs of off-topic ones")
    ap.add_argument("--only-pairs", action="store_true", help="only the two-question prompts (implies --pairs)")
    ap.add_argument("--cpu-child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.cpu_child:
        print(json.dumps(cpu_child(a.tldr, a.tldr_db)))
        return 0
    if a.latency:
        out = {"fresh process": hook_latency(a.tldr_db, a.tldr, latency_prompts(a.tldr, 15), a.baseline_src, a.rounds)}
        for r in range(2):  # in-process CPU time: robust to a busy machine; trees alternate
            for name, src in (("this tree", ROOT), ("baseline", a.baseline_src)):
                if src is None:
                    continue
                p = subprocess.run([sys.executable, __file__, "--cpu-child", "--tldr", str(a.tldr), "--tldr-db",
                                    str(a.tldr_db)], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(src)))
                out.setdefault(f"in-process {name}", []).append(json.loads(p.stdout.strip().splitlines()[-1]))
        print(json.dumps(out, indent=1))
        return 0
    global FORCE_CALIBRATION, DUMP
    FORCE_CALIBRATION, DUMP = a.recalibrate, bool(a.dump)
    obs = SHARED / "eval" / "vaults" / "obsidian-help" / "en"
    if not obs.is_dir():
        print(f"eval data not found at {SHARED}; nothing to do", file=sys.stderr)
        return 0
    from vaultrag.retrieve.null_prompts import all_prompts

    off = off_topic_sets()
    calib = set(all_prompts())
    leaked = [p for v in off.values() for p in v if p in calib]
    assert not leaked, f"evaluation prompts also in the calibration set: {leaked[:5]}"
    rows: list = []
    results = {}
    with tempfile.TemporaryDirectory(prefix="vaultrag-inject-") as tmp:
        work = Path(tmp)
        cfg = build_index(obs, a.obs_db, work, "obsidian-help-en")
        results["obsidian-help en (small)"] = run_vault("obs-en", cfg, *_sets(obs_answerable(), off, a), rows)
        if not a.skip_tldr:
            tldr = a.tldr
            if tldr is None:
                tldr = work / "tldr"
                tldr.mkdir()
                subprocess.run(["tar", "-xzf", str(SHARED / "corpora" / "tldr-pages.tar.gz"), "-C", str(tldr)], check=True)
            cfg = build_index(tldr, a.tldr_db, work, "tldr")
            results["tldr-pages (large)"] = run_vault("tldr", cfg, *_sets(tldr_answerable(tldr), off, a), rows)
    if a.dump:
        a.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    flags = " --pairs" if a.pairs else " --only-pairs" if a.only_pairs else ""
    text = render(results, "HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/inject_eval.py" + flags)
    if not a.only_pairs:  # the report holds the standard sets
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
