"""Stage 4, select: the priority order of the lines, then a greedy fill of the budget.

Order: by class; within a class, a line whose shape (digits, quotes, brackets masked) was already
taken comes after the first of every other shape, so the budget buys variety before repetition.
Each class may take only its share of the budget in a first pass, so that no class starves the
others; a second pass fills what is left in the same order. A line opening a new gap pays for the
gap's marker.
"""
from __future__ import annotations

import re

from . import rules
from .classify import C_CONTEXT, C_EDGE, C_ERROR, C_MATCH, C_RELEVANT, C_REST, Classes, View
from .clean import mask
from .logs import spread_rounds

SHAPE_DECAY = 0.5  # relevance divisor per earlier pick of the same line shape: variety first
MARKER_COST = 30  # approximate length of a gap marker line, paid when a new gap opens
# Share of the budget each class may take before every other class had its turn (first pass):
# summary, match, edge, error, context, warn, header, relevant, rest.
CLASS_SHARES = (0.30, 0.75, 0.15, 0.50, 0.20, 0.15, 0.35, 0.40, 1.0)
# In file/search content the outline (definitions, files, commits) is what a reader scans first.
CONTENT_SHARES = (0.30, 0.75, 0.15, 0.50, 0.20, 0.15, 0.50, 0.30, 1.0)
# pytest's key lines (each failure's FAILED line and E lines, classify `keys`) have a first-pass share
# of their own, beside the other error lines': a run of 11 failures needs ~1,600 characters of them,
# and with the error share alone the tracebacks' locals and the session header took the room first.
KEY_SHARE = 0.6

_SHAPE_SUBS = [
    (re.compile(r"\[[^\]\n]*\]"), "[]"),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "''"),
]
_DIGITS = str.maketrans("0123456789", "##########")


def shapes_of(view: View) -> list[str]:
    shapes = mask(view.joined, _SHAPE_SUBS).translate(_DIGITS).split("\n")
    if len(shapes) != len(view.texts):
        shapes = [mask(t, _SHAPE_SUBS).translate(_DIGITS) for t in view.texts]
    return shapes


def priority_order(view: View, c: Classes, scores: list[float], prior: list[int], candidates: list[int],
                   keys: list[str] | None = None) -> tuple[list[int], list[int]]:
    """`candidates` in the order the budget should take them, and each unit's shape rank (how
    many units of its class and shape come before it). `keys` (a log's record keys: level and
    component) order the rest as a fair spread: one line of every key per round (logs.py)."""
    cls, kind = c.cls, c.kind
    shapes = shapes_of(view)
    by_score = sorted(
        candidates,
        key=lambda u: (cls[u], -scores[u] if cls[u] >= C_RELEVANT or cls[u] == C_MATCH else -c.section[u],
                       shapes[u], u),
    )
    seen: dict[tuple[int, str], int] = {}
    rank = [0] * len(cls)
    for u in by_score:
        if kind[u] in ("def", "def0") or cls[u] == C_MATCH:
            continue  # every intent match and definition counts, however alike they look
        k = (cls[u], shapes[u])
        rank[u] = seen.get(k, 0)
        seen[k] = rank[u] + 1

    rounds = spread_rounds([u for u in by_score if cls[u] == C_REST], keys) if keys is not None else {}
    # The edges, outermost first and the very last line (how it ended) before the first (what ran):
    # when they overflow their share, the inner ones give way.
    edges = sorted(u for u in by_score if cls[u] == C_EDGE)
    depth = {u: min(len(edges) - 1 - i, i + 1) for i, u in enumerate(edges)}
    keys = key_order(view, c)


    def priority(u: int):
        if u in c.follows:  # a commit's subject comes right after its commit line
            return (*priority(c.follows[u])[:-1], u)
        if u in rounds:  # the rest of a log (score 0 there: a scoring line is `relevant`)
            return (cls[u], 0.0, "", rounds[u], u)
        if cls[u] == C_MATCH:  # the strongest matches first, then in output order
            return (cls[u], -round(scores[u], 6), u)
        if cls[u] >= C_RELEVANT:
            return (cls[u], -scores[u] / (1.0 + SHAPE_DECAY * rank[u]), shapes[u], u)
        if u in depth:  # where an edge sits matters more than its shape (every edge is in depth)
            return (cls[u], depth[u], u)
        if u in keys:  # pytest's key lines lead the errors, failure by failure (before any `>` line)
            return (cls[u], -1, keys[u])
        size = c.section[u] if kind[u] in rules.BY_SECTION else 0
        return (cls[u], cls[u] == C_CONTEXT and u in c.later, rank[u], -prior[u], scores[u] <= 0, -size,
                -scores[u], u)

    return sorted(by_score, key=priority), rank


def key_order(view: View, c: Classes) -> dict[int, tuple]:
    """The error-class pytest key lines (classify `keys`) -> their order: failure by failure, each
    failure's summary line and E lines by role, except that a line repeating an earlier key line's
    text (the same exception in 200 tests) waits until every distinct one is in."""
    out, seen = {}, set()
    for u in sorted((u for u in c.keys if c.cls[u] == C_ERROR), key=lambda u: (c.keys[u], u)):
        text = view.texts[u].strip()
        out[u] = (text in seen, *c.keys[u], u)
        seen.add(text)
    return out


def fill(order: list[int], cls: list[int], cost: list[int], n: int, budget: int, content: bool,
         follows: dict[int, int] | None = None, keys=()) -> list[bool]:
    """Which units fit the budget, taken greedily in `order` within class shares, then without.
    A unit that `follows` a header (a commit's subject) is taken with it or not at all. `keys`
    (pytest's key lines) fill KEY_SHARE of their own before their class's share."""
    chosen = [False] * n
    used = 0
    gaps = 1  # nothing chosen: everything is one gap
    follows = follows or {}
    follower = {h: v for v, h in follows.items()}

    def try_add(u: int) -> bool:
        nonlocal used, gaps
        # u sits in a run of unchosen units: taking it removes, shrinks or splits that run.
        at_start = u == 0 or chosen[u - 1]
        at_end = u == n - 1 or chosen[u + 1]
        delta = -1 if at_start and at_end else (0 if at_start or at_end else 1)
        if used + cost[u] + (gaps + delta) * MARKER_COST > budget:
            return False
        chosen[u] = True
        used += cost[u]
        gaps += delta
        return True

    def try_add_group(u: int) -> list[int]:
        """u and the unit following it, both or neither; the units taken."""
        nonlocal used, gaps
        if u in follows:  # taken with its header, or not at all
            return []
        group = [u] + ([follower[u]] if u in follower and not chosen[follower[u]] else [])
        saved = used, gaps
        taken = []
        for v in group:
            if not try_add(v):
                for t in taken:
                    chosen[t] = False
                used, gaps = saved
                return []
            taken.append(v)
        return taken

    shares = CONTENT_SHARES if content else CLASS_SHARES
    class_used = [0] * len(shares)
    key_used = 0
    deferred = []
    for u in order:
        c = cls[u]
        group_cost = cost[u] + (cost[follower[u]] if u in follower else 0)
        if u in keys and key_used + group_cost <= KEY_SHARE * budget:
            key_used += sum(cost[v] for v in try_add_group(u))
        elif class_used[c] + group_cost > shares[c] * budget:
            deferred.append(u)
        else:
            for v in try_add_group(u):
                class_used[cls[v]] += cost[v]
    for u in deferred:
        try_add_group(u)
    return chosen
