"""`vaultrag status`: what the index holds and how far the vault has moved since."""
from __future__ import annotations

import json
from pathlib import Path

from .config import Config
from .indexer import changed_paths, scan
from .leftovers import rebuild_leftovers
from .store import Store


def status(cfg: Config) -> dict:
    """Database path and size, counts, last reindex, embedding state, and drift from the vault."""
    db = cfg.db_path()
    with Store(db, readonly=True) as store:
        meta = store.all_meta()
        counts = store.counts()
        found = scan(cfg, Path(cfg.vault).resolve())[0] if cfg.vault and Path(cfg.vault).is_dir() else None
        key = meta.get("path_key")
        changed = sorted(changed_paths(found, store.files(), key)) if found is not None else []
        on_disk = len(found) if found is not None else None
    size = sum(p.stat().st_size for p in (db, Path(str(db) + "-wal")) if p.exists())
    last = json.loads(meta.get("last_reindex", "{}") or "{}")
    embedding = json.loads(meta.get("embedding", "{}") or "{}")
    return {
        "db": str(db), "db_bytes": size, "vault": meta.get("vault"), "schema_version": int(meta.get("schema_version", 0)),
        **counts,
        "last_reindex": last.get("at"), "last_report": last.get("report"),
        "embedding": {"available": bool(embedding.get("available")) and counts["vectors"] > 0,
                      "model": embedding.get("model"), "fallback_reason": embedding.get("fallback_reason"),
                      "reason": embedding.get("reason"), "vectors": counts["vectors"],
                      "vectors_invalid": meta.get("vectors_invalid") == "1"},
        "tokenizer": meta.get("tokenizer"),
        "coverage": {"markdown_files_in_vault": on_disk, "files_indexed": counts["files"]},
        "changed_since_reindex": len(changed), "changed_paths": changed[:20],
        "rebuild_leftovers": [{"path": str(r.path), "pid": r.pid, "bytes": r.bytes,
                               "state": "in progress" if r.alive else "stale"} for r in rebuild_leftovers(db)],
    }
