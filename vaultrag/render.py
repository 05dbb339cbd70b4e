"""Answer -> the Markdown context block hooks inject, and human CLI text (the token budget and the
block's layout it measures: retrieve/budget.py).

Token counts of chunk text come from the index (cl100k, computed at reindex); the few header
characters around them are estimated at 3 characters a token, which over-counts on purpose, so
the rendered block never exceeds the budget without loading a tokenizer on the hook path.
"""
from __future__ import annotations

from .paths import escape_controls as esc
from .retrieve.budget import (BLOCK_TITLE, HEADER_CHARS_PER_TOKEN, MAX_CONTEXT_CHARS, MIN_FIRST_TOKENS,  # noqa: F401
                              MIN_PARTIAL_TOKENS, TRUNCATION_MARKER, _hit_block, citation, fit_budget, folder_of,
                              hit_body, hit_header)
from .retrieve.types import Answer


def render_context(answer: Answer) -> str:
    """The block a hook injects: factual, cited, '' when there is no evidence."""
    if answer.status != "ok" or not answer.hits:
        return ""
    parts = [BLOCK_TITLE] + [_hit_block(h) for h in answer.hits]
    return "\n\n".join(parts)[:MAX_CONTEXT_CHARS]


def render_human(answer: Answer, *, explain: bool = False, color: bool = False) -> str:
    def c(code: str, s: str) -> str:
        return f"\033[{code}m{s}\033[0m" if color else s

    if answer.status != "ok":
        from .errors import fix_command

        why = {"no_hits": "nothing in the index matches", "below_threshold": "matches are too weak to trust",
               "unresolvable": f"the matching notes changed or were deleted; run {fix_command('reindex')}"
               }.get(answer.reason or "", "")
        lines = [f"no evidence ({answer.reason}): {why}"]
        if answer.reason == "below_threshold":
            lines.append("(--no-gate shows the best matches anyway)")
    else:
        lines = [] if answer.hits else ["the token budget is too small for one hit (raise --max-tokens)"]
        if answer.evidence.get("passed") is False:
            lines.insert(0, c("33", "weak evidence: these matches are too weak to trust (shown because of --no-gate)"))
        for i, h in enumerate(answer.hits, 1):
            tag = "" if h.via == "direct" else c("33", "  [via link]")
            mark = {"fresh": "", "stored": c("33", "  [index copy: file not checked]")}.get(
                h.citation, c("33", "  [changed since indexing]"))
            lines.append(f"{i:>2}. {c('1;36', esc(citation(h)))}  {c('1', esc(h.title))}"  # no raw ESC from notes
                         + (f" > {esc(h.heading_path)}" if h.heading_path and h.scope != "sessions" else "")
                         + tag + mark)
            snippet = esc(" ".join(h.text.split()))
            lines.append(f"    {snippet[:200]}{'…' if len(snippet) > 200 else ''}")
            if explain:
                ranks = " ".join(f"{ch}=#{r} ({h.raw[ch]:.4g})" if r is not None else f"{ch}=-"
                                 for ch, r in h.ranks.items())
                lines.append(c("2", f"    score {h.score:.5f}  {ranks}"))
                if h.graph_provenance:
                    gp = h.graph_provenance
                    lines.append(c("2", f"    linked from {gp['seed_path']} ({gp['link']}, line {gp['line']})"))
    ch = ", ".join(f"{name}: {'%d hits' % s.hits if s.ran else 'skipped'}" + (f" ({s.reason})" if s.reason else "")
                   for name, s in answer.channels.items())
    lines.append(c("2", f"channels: {ch}"))
    if explain and answer.evidence:
        lines.append(c("2", f"evidence: {answer.evidence}"))
    if answer.stale_files:
        lines.append(c("33", f"{answer.stale_files} candidate file(s) changed on disk since the last reindex"))
    return "\n".join(lines)
