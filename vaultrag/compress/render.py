"""Stage 5, render: kept lines in their original order, every gap marked with what it held."""
from __future__ import annotations

from .clean import Units, cut_line
from .select import MARKER_COST


def render(units: Units, chosen: list[bool]) -> str:
    out: list[str] = []
    texts, n = units.texts, len(units)
    u = 0
    while u < n:
        if chosen[u]:
            out.append(units.text(u))
            u += 1
            continue
        v = u
        while v < n and not chosen[v]:
            v += 1
        omitted = sum(units.count[u:v])
        if all(not texts[w].strip() for w in range(u, v)):
            if 0 < u and v < n:
                out.append("")  # blank lines between kept lines are not worth a marker
        elif v - u == 1 and units.count[u] == 1 and len(texts[u]) <= MARKER_COST:
            out.append(texts[u])  # cheaper than its marker
        else:
            out.append(f"[... {omitted} line{'s' if omitted != 1 else ''} omitted ...]")
        u = v
    return "\n".join(out)


def render_lead(units: Units, chosen: list[bool], line_chars: int) -> str:
    """The chosen lines only, in order, with `...` where lines were skipped (a preview's digest:
    every byte is worth more than a gap count)."""
    out: list[str] = []
    skipped = False
    for u in range(len(units)):
        if chosen[u]:
            if skipped and out:
                out.append("...")
            out.append(cut_line(units.texts[u], line_chars))
            skipped = False
        elif units.texts[u].strip():
            skipped = True
    return "\n".join(out)
