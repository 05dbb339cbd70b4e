"""Timing helpers shared by the benchmark scripts (cold_bench, pg_bench, serve_bench)."""
from __future__ import annotations


def pct(xs, p):
    """The p-th percentile of `xs` by linear interpolation, rounded to 0.01; None for no samples."""
    xs = sorted(xs)
    if not xs:
        return None
    i = (len(xs) - 1) * p / 100
    lo, hi = int(i), min(int(i) + 1, len(xs) - 1)
    return round(xs[lo] + (xs[hi] - xs[lo]) * (i - lo), 2)
