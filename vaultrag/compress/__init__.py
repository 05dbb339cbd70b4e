"""Shrink a large tool output for a PostToolUse hook, keeping what an agent needs from it.

`compress_post_tool_use(tool_name, tool_input, tool_response, prompt=...)` returns a replacement
`tool_response` in exactly the tool's Output shape plus an optional note for `additionalContext`,
or None when nothing should change (`compress_tool_output` returns only the response).
`digest_tool_failure` gives PostToolUseFailure's additionalContext for a long failed Bash output.
Stages, one module each:

  clean.py     ANSI, carriage returns, control bytes, xdist prefixes out; long lines cut; runs of
               lines equal up to noise (times, addresses) folded into one line plus a count
  logs.py      whether a text is a log by its lines' shape; its records' levels and keys
  classify.py  summary / intent match / edge / error / context / warning / header / rest
  rank.py      BM25 against the request; the word-piece intent matches of search and listings
  select.py    priority order (class, then shape variety, then score) and a greedy budget fill
  render.py    kept lines in order, every gap marked `[... 412 lines omitted ...]`
  text.py      the pipeline for one text (`compress_text`) and the preview digest
  read.py      Read: intact below READ_INTACT_CHARS, else one window with its own numbering
  spill.py     the full scrubbed output of a shortened Bash, Grep, Glob or WebFetch result (0600)
  tools.py     tool shapes (Bash, Read, Grep, Glob, WebFetch) and the client's size limits

Guarantees: deterministic bytes (nothing depends on time, hashing or set order; ties break on
position); every returned text goes through `vaultrag.scrubber.scrub`; the tool's exact Output
shape; any error means None (fail open). Standard library only: a fresh hook process imports this
on every tool call.
"""
from __future__ import annotations

from .read import READ_INTACT_CHARS, READ_WINDOW_CHARS
from .text import BUDGET_CHARS, compress_text
from .tools import (PERSIST_CHARS, PREVIEW_CHARS, THRESHOLD_CHARS, Compressed, compress_post_tool_use,
                    compress_tool_output, digest_tool_failure)

__all__ = ["compress_tool_output", "compress_post_tool_use", "compress_text", "digest_tool_failure", "Compressed",
           "BUDGET_CHARS",
           "THRESHOLD_CHARS", "READ_INTACT_CHARS", "READ_WINDOW_CHARS", "PERSIST_CHARS", "PREVIEW_CHARS"]
