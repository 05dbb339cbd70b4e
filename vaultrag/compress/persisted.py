"""The whole output of a long Bash result, from the file Claude Code persisted it to.

For a Bash output over ~30,000 characters Claude Code hands PostToolUse only the first 30,000 in
`tool_response.stdout` and writes the whole of it to `tool_response.persistedOutputPath` (its
length in `persistedOutputSize`). A test log's summary and failure ids are at its end, so the
compressor reads that file, but only where the client writes such files: the `tool-results`
folder beside the session's transcript (CLI 2.1.332 records
`~/.claude/projects/<project>/<session>.jsonl` and `.../<session>/tool-results/<id>.txt`), under
`$CLAUDE_CONFIG_DIR` or `~/.claude`. Anything else (another folder, a symlink, a device, a file
over the cap, one that does not start with the text the hook was given) is refused: None, and the
caller compresses what it has.
"""
from __future__ import annotations

import os
from pathlib import Path

# A larger output is compressed from the 30,000 characters the client gave: compressing costs
# ~0.5 s CPU per MB here (a 1.97 MB pytest log: 0.97 s) and hooks give up at hooks.timeout_ms
# (default 1.5 s) on a machine that may be busy.
PERSISTED_MAX_BYTES = 1024 * 1024
# The persisted file must start with this much of the `stdout` the hook got (same output).
PREFIX_CHECK_CHARS = 4096


def claude_config_dir() -> Path:
    """Where Claude Code keeps its projects and sessions: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def tool_results_dir(transcript_path: str) -> Path | None:
    """The folder the client persists this session's long tool results to, or None when the
    transcript is not a session file under the Claude config folder's `projects/`."""
    if not isinstance(transcript_path, str) or not transcript_path.endswith(".jsonl"):
        return None
    transcript = Path(os.path.realpath(transcript_path))
    projects = Path(os.path.realpath(claude_config_dir() / "projects"))
    if transcript.parent.parent != projects:
        return None
    return transcript.with_suffix("") / "tool-results"


def read_persisted(path: object, transcript_path: object, prefix: str) -> str | None:
    """The text of Claude Code's persisted output file `path`, or None (refused or unreadable)."""
    if not isinstance(path, str) or not path or not isinstance(transcript_path, str):
        return None
    folder = tool_results_dir(transcript_path)
    if folder is None or Path(os.path.realpath(os.path.dirname(path))) != Path(os.path.realpath(folder)):
        return None
    from ..safe_io import read_regular

    try:  # a regular file only (not a link, FIFO or device), at most the cap
        data = read_regular(path, PERSISTED_MAX_BYTES, follow_symlinks=False)
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    head = prefix[:PREFIX_CHECK_CHARS]
    return text if head and text.startswith(head) and len(text) > len(prefix) else None
