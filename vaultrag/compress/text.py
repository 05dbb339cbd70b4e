"""The text pipeline: clean -> classify -> rank -> select -> render, for one text field.

`compress_text` cuts a text to a budget keeping its important lines in order; `lead_text` is the
short digest (summary, failure ids, their key lines) that goes first when the client will show
the model only a preview.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from vaultrag.textutil import normalize

from . import logs, rules
from .classify import (C_CONTEXT, C_ERROR, C_HEADER, C_MATCH, C_REST, C_RELEVANT, C_SUMMARY, C_WARN, Classes, View,
                       classify)
from .clean import Units, clean, prepare, scrub_text
from .rank import bm25, defined_names, intent_matches, intent_terms, path_prior, weighted_terms
from .render import render, render_lead
from .select import MARKER_COST, fill, priority_order

# Hook output strings over 10,000 characters become a 2 KB preview (reference §2.6); 6,000 leaves
# room for JSON escaping and the hookSpecificOutput wrapper, and is ~1,500 tokens.
BUDGET_CHARS = 6000
MIN_BUDGET = 200  # below this not even the summary and a marker fit
DEFINITION_BOOST = 2.0  # in file/search content, a definition matching the query is the answer
STATUS_RELEVANCE_FLOOR = 0.3  # of the best line's score; below it a status line is filler
NOISE_FACTOR = 0.5  # PASSED / ok lines are the bulk of a green run, rarely the point
# The preview digest: a summary shape repeated (`test result: ok.` per crate) is shown once, a
# failing one up to this many times; a digest line is cut to this length.
LEAD_SAME_SUMMARIES = 3
LEAD_LINE_CHARS = 400  # pytest warning lines run to ~300 characters
LEAD_IDS = 10  # failure ids before the first E lines; the rest come after the error lines
_FAILING_RE = re.compile(r"\b(?:FAILED|FAIL|ERROR|[1-9]\d* (?:failed|failures?|errors?))\b")


@dataclass(frozen=True)
class Plan:
    text: str  # the cleaned text the plan was made from
    units: Units
    view: View
    classes: Classes
    order: list[int]
    rank: list[int]  # shape rank: earlier units of the same class and shape
    cost: list[int]


def plan(text: str, budget: int, query: str = "", prompt: str = "", content: bool = False,
         intent: str = "", search: bool = False) -> Plan:
    """Everything but the budget fill: units, classes and their priority order."""
    units = prepare(text, budget, MARKER_COST)
    view = View.of(units, content)
    # A log (by its lines' shape, whatever printed it) has events even as content, and its rest is
    # spread over its components rather than left out (status) or taken in shape order (content).
    log = logs.shape(view.texts, view.joined, view.starts) if logs.is_log(view.texts, view.blank) else None
    c = classify(view, units, log)
    n = len(units)
    scores = [0.0] * n
    terms = weighted_terms(query, f"{prompt} {intent}".strip())
    if terms:
        norm = normalize(view.body_joined).split("\n")
        if len(norm) != n:
            norm = [normalize(b) for b in view.body]
        scores = bm25(norm, terms)
        for u in c.definitions:
            scores[u] *= DEFINITION_BOOST
        for u in rules.NOISE.lines(view.joined, view.starts, view.texts):
            scores[u] *= NOISE_FACTOR
    match_scores = scores
    if content:
        definitions = {u for u in c.definitions if scores[u] > 0 and len(c.definitions) <= max(3, n // 3)}
        c.promote(definitions, C_HEADER, "def")
    if search:
        matches, match_scores = intent_matches(view.texts, intent_terms(f"{prompt} {intent}", query),
                                               defined_names(view.body, c.definitions))
        c.promote(matches, C_MATCH, "match")
    prior = [0] * n
    for u in range(n):
        if c.cls[u] == C_HEADER or (content and scores[u] > 0):
            prior[u] = path_prior(view.body[u])
            if prior[u] < 0:
                scores[u] *= NOISE_FACTOR
        if c.cls[u] == C_REST and scores[u] > 0:
            c.cls[u] = C_RELEVANT
    # A status output (test run, build, install) is read for its outcome: lines that match the
    # request only faintly, or not at all, are left out rather than used as filler.
    floor = STATUS_RELEVANCE_FLOOR * max(scores) if not content and scores else 0.0
    candidates = [u for u in range(n) if not view.blank[u]
                  and (content or log is not None or c.cls[u] < C_RELEVANT or scores[u] >= floor > 0)]
    ranked = [match_scores[u] if c.cls[u] == C_MATCH else scores[u] for u in range(n)]
    order, rank = priority_order(view, c, ranked, prior, candidates, log.key if log is not None else None)
    return Plan(text, units, view, c, order, rank, [len(units.text(u)) + 1 for u in range(n)])


def compress_text(
    text: str,
    *,
    query: str = "",
    budget_chars: int = BUDGET_CHARS,
    prompt: str = "",
    content: bool = False,
    intent: str = "",
    search: bool = False,
) -> str:
    """`text` cut to at most `budget_chars` characters, keeping its important lines in order.

    `query` is what the tool was asked (command, pattern, path), `prompt` the user's request and
    `intent` the agent's own statement of it (Bash `description`); they steer the ranking.
    `content=True` says the text is file or search content (a grep, a listing, a log), not a
    process reporting its status; `search=True` (a grep, a listing) keeps every line matching the
    intent first. Text that
    fits the budget comes back cleaned (ANSI, carriage returns) but otherwise whole.
    """
    return compress_planned(text, budget_chars, query=query, prompt=prompt, content=content, intent=intent,
                            search=search)[0]


def compress_planned(text: str, budget_chars: int, **kw) -> tuple[str, Plan | None]:
    """`compress_text`, and the plan it made (None when the text fit whole), for the digest."""
    query, prompt, intent = kw.get("query", ""), kw.get("prompt", ""), kw.get("intent", "")
    content, search = kw.get("content", False), kw.get("search", False)
    if not isinstance(text, str):
        return "", None
    budget = max(int(budget_chars), MIN_BUDGET)
    cleaned = clean(text)
    if "-----BEGIN" in cleaned:  # a key block may be cut by a gap: scrub it while whole
        cleaned = scrub_text(cleaned)[0]
    if len(cleaned) <= budget:
        return scrub_text(cleaned)[0], None
    p = plan(cleaned, budget, query, prompt, content or search, intent, search)
    chosen = fill(p.order, p.classes.cls, p.cost, len(p.units), budget, content, p.classes.follows,
                  {u for u in p.classes.keys if p.classes.cls[u] == C_ERROR})
    out = render(p.units, chosen)
    # Marker lengths vary around MARKER_COST: drop the least important units until it fits (a
    # commit line with its subject, which comes right after it in the order).
    for u in reversed(p.order):
        if len(out) <= budget:
            break
        if chosen[u]:
            chosen[u] = False
            if u in p.classes.follows:
                chosen[p.classes.follows[u]] = False
            out = render(p.units, chosen)
    return scrub_text(out)[0][:budget], p


def lead_text(p: Plan, budget: int) -> str:
    """The digest of an output for the first ~2 KB a client preview shows, in output order: the
    summary lines (failing ones and one of each shape), failure ids, intent matches, the other
    error lines (E lines, raising frames) and the message line after each, warnings, the outline."""
    cls, rank = p.classes.cls, p.rank
    keys = {u for u in p.classes.keys if cls[u] == C_ERROR}

    def lead_rank(u: int) -> int | None:
        c = cls[u]
        if u in p.classes.ids:
            return 1
        if c == C_SUMMARY:
            failing = _FAILING_RE.search(p.units.texts[u]) is not None
            return 0 if rank[u] == 0 or (failing and rank[u] < LEAD_SAME_SUMMARIES) else None
        if c == C_ERROR:
            return 3
        if c == C_CONTEXT:  # the line right after an error (its message) competes with the errors
            return None if u in p.classes.later else 3
        return {C_MATCH: 2, C_WARN: 5, C_HEADER: 6}.get(c)

    pos = {u: i for i, u in enumerate(p.order)}
    ids = sorted(p.classes.ids)
    late_ids = set(ids[LEAD_IDS:])

    def pick(u: int, r: int) -> tuple:
        # pytest's key lines past the first ids (each failure's E lines, the later FAILED lines) lead
        # the error lines, failure by failure in the priority order (select.key_order)
        if u in keys and (r == 3 or u in late_ids):
            return (3, -1, pos[u], u)
        # within a rank: one line of each shape before repeats (a panic message before a second panic)
        return (4 if u in late_ids else r, rank[u] if r == 3 else 0, pos[u], u)

    picks = sorted(pick(u, r) for u in p.order if (r := lead_rank(u)) is not None)
    chosen = [False] * len(p.units)
    used = 0
    follows = p.classes.follows
    follower = {h: v for v, h in follows.items()}
    for *_, u in picks:
        if chosen[u] or u in follows:  # a commit's subject comes with its commit line only
            continue
        group = [u] + ([follower[u]] if u in follower else [])
        cost = sum(min(len(p.units.texts[v]), LEAD_LINE_CHARS) + 5 for v in group)  # lines, newlines, "..."
        if used + cost <= budget:
            for v in group:
                chosen[v] = True
            used += cost
    out = render_lead(p.units, chosen, LEAD_LINE_CHARS)
    while len(out) > budget and any(chosen):  # "..." lines overshot: drop the last picks
        last = max((pos[u], u) for u in range(len(chosen)) if chosen[u])[1]
        chosen[last] = False
        if last in follows:
            chosen[follows[last]] = False
        out = render_lead(p.units, chosen, LEAD_LINE_CHARS)
    return scrub_text(out)[0][:budget]
