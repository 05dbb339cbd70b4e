"""The SessionEnd hook (issue 17): index the session that just ended, without holding Claude Code up.

The hook itself only checks that the transcript lies in the configured sessions folder and starts
a detached process (`vaultrag.sessions.ingest`) that indexes it after a short pause (the
transcript is written asynchronously and may lag the hook). Standard library only; it returns
in a few milliseconds, well inside SessionEnd's shared 1.5 s budget, and fails open like every hook.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding `vaultrag/`
_CHILD = ("import sys; sys.path.insert(0, sys.argv[1]); from vaultrag.sessions.ingest import main; "
          "sys.exit(main(sys.argv[2:]))")


def transcript_rel(cfg, transcript_path: str) -> str | None:
    """The transcript's path relative to the sessions folder, or None when it lies elsewhere (or
    sessions are not indexed): nothing outside that folder is ever read."""
    if cfg.sessions is None or not transcript_path or not transcript_path.endswith(".jsonl"):
        return None
    try:
        root = Path(cfg.sessions).expanduser().resolve()
        path = Path(transcript_path).expanduser().resolve()
        rel = path.relative_to(root).as_posix()
    except (OSError, ValueError, RuntimeError):
        return None
    return rel if rel.count("/") <= 1 else None  # root/<project>/<session>.jsonl at most


def session_end(transcript_path: str, cfg, log=None) -> None:
    """Start the detached indexing of the ended session's transcript (nothing when it is not in
    the sessions folder)."""
    rel = transcript_rel(cfg, transcript_path)
    if rel is None:
        if log and cfg.sessions is not None:
            log(f"SessionEnd: transcript not in the sessions folder {cfg.sessions}; not indexed")
        return
    subprocess.Popen([sys.executable, "-I", "-c", _CHILD, PACKAGE_PARENT, rel], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True,
                     start_new_session=True, env=dict(os.environ))
