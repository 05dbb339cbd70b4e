"""Scrubber on the secrets dev set, side by side with detect-secrets when it is installed.

    .venv/bin/python benchmarks/scrub_dev.py [--misses] [--no-baseline]
    .venv/bin/pip install detect-secrets   # optional: the side-by-side column (benchmark only)

Dev set: ../shared/eval/secrets/{positives,negatives}.jsonl (read at run time, never copied).
- removed: share of positives whose `secret` no longer occurs in the scrubbed text
- unchanged: share of negatives that come back byte for byte
- speed: CPU microseconds per dev row (tiny texts: per-call cost; MB/s on real text is in
  scrub_fp.py); both tools see exactly the same rows.

detect-secrets "removes" a secret when one of the values it reports for the row contains it or
when the row's secret lies inside a reported line it flags (it reports values, not spans; we give it
the benefit of the doubt), and leaves a negative "unchanged" when it reports nothing for it.
By family, so a figure that moves can be traced to a kind of credential.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from vaultrag.scrubber import scrub  # noqa: E402
from vaultrag.scrubber.judge import is_placeholder  # noqa: E402

# A standalone string with no name, prefix or context (detect-secrets' entropy plugins): only two
# narrow shapes of it are redacted (see vaultrag/scrubber/__init__.py); this sorts the misses.
KEYWORD_RE = re.compile(r"(?i)pass|pwd|secret|token|key|cred|auth|api|://|bearer|basic")

DEV = ROOT.parent / "shared" / "eval" / "secrets"
REPEAT = 5  # rows are tiny: time several passes and keep the median


def load(name: str) -> list[dict]:
    with open(DEV / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ours(text: str) -> tuple[str, bool]:
    clean, findings = scrub(text)
    return clean, bool(findings)


def detect_secrets_scanner():
    """A row -> (reported values, flagged) function over detect-secrets' default plugins, or None."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def run(text: str) -> tuple[list[str], bool]:
        values = []
        with default_settings():
            for line in text.splitlines() or [text]:
                values += [s.secret_value or "" for s in scan_line(line)]
        return values, bool(values)
    return run


def median_us_per_row(fn, texts: list[str]) -> float:
    """CPU microseconds per row, median of REPEAT passes (rows are tiny: this is per-call cost)."""
    times = []
    for _ in range(REPEAT):
        t = time.process_time()
        for text in texts:
            fn(text)
        times.append(time.process_time() - t)
    return 1e6 * sorted(times)[len(times) // 2] / len(texts)


def score_ours(pos, neg, misses: bool) -> dict:
    removed, by_family, why = 0, defaultdict(lambda: [0, 0]), defaultdict(int)
    for row in pos:
        clean, _ = ours(row["text"])
        ok = row["secret"] not in clean
        removed += ok
        placeholder = is_placeholder(row["secret"])
        by_family["(not placeholder-shaped)"][0] += ok and not placeholder
        by_family["(not placeholder-shaped)"][1] += not placeholder
        if not ok:
            why["placeholder-shaped secret (xxxx, EXAMPLE, `password`)" if placeholder
                else "no name, prefix or context (standalone string)" if not KEYWORD_RE.search(row["text"])
                else "other"] += 1
        by_family[row["family"]][0] += ok
        by_family[row["family"]][1] += 1
        if misses and not ok:
            print(f"MISS {row['rule']}: {row['text'][:160]!r}", file=sys.stderr)
    unchanged = 0
    for row in neg:
        clean, _ = ours(row["text"])
        unchanged += clean == row["text"]
        if misses and clean != row["text"]:
            print(f"FP   {row['rule']}: {row['text'][:160]!r} -> {clean[:160]!r}", file=sys.stderr)
    return {"removed": removed / len(pos), "unchanged": unchanged / len(neg), "by_family": by_family,
            "why": why, "n_pos": len(pos)}


def score_baseline(run, pos, neg) -> dict:
    removed = 0
    for row in pos:
        values, _ = run(row["text"])
        removed += any(row["secret"] in v or (v and v in row["secret"] and len(v) >= len(row["secret"]) // 2)
                       for v in values)
    unchanged = sum(not run(row["text"])[1] for row in neg)
    return {"removed": removed / len(pos), "unchanged": unchanged / len(neg)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print missed positives and altered negatives")
    parser.add_argument("--no-baseline", action="store_true", help="skip detect-secrets even if installed")
    args = parser.parse_args()
    if not DEV.is_dir():
        print(f"{DEV} not found: this benchmark reads the shared dev set beside the repo; nothing to measure.")
        return 0
    pos, neg = load("positives.jsonl"), load("negatives.jsonl")
    texts = [r["text"] for r in pos + neg]
    mine = score_ours(pos, neg, args.misses)
    mine["speed"] = median_us_per_row(ours, texts)
    print(f"dev set: {len(pos)} positives, {len(neg)} negatives\n")
    print("| scanner | positives removed | negatives unchanged | CPU us per row |")
    print("|---|---|---|---|")
    print(f"| vaultrag scrubber | **{mine['removed']:.3f}** | **{mine['unchanged']:.3f}** | {mine['speed']:.0f} |")
    run = None if args.no_baseline else detect_secrets_scanner()
    if run is not None:
        base = score_baseline(run, pos, neg)
        base["speed"] = median_us_per_row(run, texts)
        print(f"| detect-secrets (default plugins) | {base['removed']:.3f} | {base['unchanged']:.3f} "
              f"| {base['speed']:.0f} |")
        print(f"\nspeed: vaultrag is {base['speed'] / mine['speed']:.1f}x faster per row")
    elif not args.no_baseline:
        print("\n(detect-secrets not installed: `.venv/bin/pip install detect-secrets` for the side-by-side row)")
    print("\n| positives left | rows |\n|---|---|")
    for reason, n in sorted(mine["why"].items(), key=lambda kv: -kv[1]):
        print(f"| {reason} | {n} |")
    ok, n = mine["by_family"].pop("(not placeholder-shaped)")
    print(f"\nremoved among the {n} positives whose secret is not placeholder-shaped: **{ok / n:.3f}**")
    print("\n| family | removed |\n|---|---|")
    for family, (ok, n) in sorted(mine["by_family"].items()):
        print(f"| {family} | {ok}/{n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
