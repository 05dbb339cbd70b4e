"""Past Claude Code sessions as a searchable source (issue 17). Standard library only here: the
hooks and the retriever import these names.

A transcript is stored as one or more *segments*, each a document in the store whose path is
`session://<project>/<session id>.jsonl@<byte offset where the segment starts>`: an appended
transcript gets a new segment from the offset the last run stopped at, so nothing already indexed
is read, scrubbed or embedded again. A vault path is relative and never holds `//`, so the prefix
cannot name a note. Each chunk is one message (or a piece of a long one) and keeps its origin
(session id, message uuid, role, timestamp, project) in the store's origin table.

Modules: `reader` (JSONL -> messages), `chunking` (messages -> rows), `index` (scan, incremental
by offset, deletions), `scopes` (scope and origin of a hit), `hook` (the SessionEnd hook).
"""
from __future__ import annotations

import os
from pathlib import Path

SESSION_PREFIX = "session://"
FOLDER_META = "sessions_folder"  # index metadata: the transcripts folder last indexed (citations, status)
SESSIONS_SCOPE = "sessions"
VAULT_SCOPE = "vault"
ALL_SCOPE = "all"
RESERVED_SCOPES = (VAULT_SCOPE, SESSIONS_SCOPE, ALL_SCOPE)


def is_session_path(path: str) -> bool:
    return path.startswith(SESSION_PREFIX)


def segment_path(rel: str, start: int) -> str:
    """The stored path of the segment of transcript `rel` (relative to the sessions folder) that
    starts at byte `start`."""
    return f"{SESSION_PREFIX}{rel}@{int(start)}"


def parse_segment_path(path: str) -> tuple[str, int]:
    """(transcript path relative to the sessions folder, start offset) of a stored segment path."""
    rel, _, start = path[len(SESSION_PREFIX):].rpartition("@")
    return rel, int(start or 0)


def session_of(rel: str) -> tuple[str, str]:
    """(project, session id) of a transcript path relative to the sessions folder."""
    parts = rel.split("/")
    session = parts[-1].removesuffix(".jsonl")
    return (parts[-2] if len(parts) > 1 else ""), session


def claude_projects_dir() -> Path:
    """Where Claude Code keeps transcripts: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`."""
    base = os.environ.get("CLAUDE_CONFIG_DIR", "")
    if base and os.path.isabs(os.path.expanduser(base)):
        return Path(os.path.expanduser(base)) / "projects"
    from ..config import home_dir

    return home_dir() / ".claude" / "projects"


def sessions_root(cfg, store) -> Path | None:
    """The transcripts folder: the configured one, else the one the index was last built from."""
    if cfg.sessions is not None:
        return Path(cfg.sessions)
    folder = store.get_meta(FOLDER_META)
    return Path(folder) if folder else None
