"""The detached process the SessionEnd hook starts: index one ended session's transcript.

Waits a moment for Claude Code to finish writing the file, takes the index's writer lock (a
running reindex goes first; after LOCK_WAIT_S it gives up: the next reindex picks the session
up anyway), embeds with the model the index was built with (or not at all: a model change is a
full re-embed, which is reindex's job), writes the new segment, and logs one line on failure.
"""
from __future__ import annotations

import time
from pathlib import Path

SETTLE_S = 2.0  # the transcript is written asynchronously and may lag the SessionEnd hook
LOCK_WAIT_S = 120.0  # a reindex of a large vault takes minutes; the session is not lost meanwhile


def index_transcripts(cfg, rels: list[str], *, lock_wait_s: float = LOCK_WAIT_S) -> dict:
    """Index these transcripts (paths relative to `cfg.sessions`); returns the sessions report."""
    from ..indexer import Report, _Interrupt, _index_sessions
    from ..store import backend_for

    backend = backend_for(cfg)
    report = Report(db=backend.location, vault=str(cfg.vault or ""))
    with backend.lock(lock_wait_s), backend.open() as store, _Interrupt() as stop:
        embedder = _embedder_of(store, cfg)
        return _index_sessions(store, cfg, embedder, report, stop, only=rels)


def _embedder_of(store, cfg):
    """The embedder matching the index's vectors, else None (lexical only for these chunks)."""
    meta = store.meta()
    if store.vec_error is not None or meta.vector_dim is None or meta.vectors_invalid:
        return None
    try:
        from ..embedder import load_embedder

        emb = load_embedder(cfg.model)
    except Exception:
        return None
    return emb if (emb.model_id, emb.dim) == (meta.model(), meta.vector_dim) else None


def main(argv: list[str]) -> int:
    from ..hooks import log_line

    try:
        from ..config import load_config

        time.sleep(SETTLE_S)
        cfg = load_config()
        if cfg.sessions is None or not argv:
            return 0
        rels = [a for a in argv if (Path(cfg.sessions) / a).is_file()]
        index_transcripts(cfg, rels)
    except BaseException as exc:  # detached: nobody to tell but the hook log
        log_line(f"SessionEnd indexing: {type(exc).__name__}: {exc}")
    return 0
