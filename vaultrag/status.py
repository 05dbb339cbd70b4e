"""`vaultrag status`: what the index holds and how far the vault has moved since."""
from __future__ import annotations

from pathlib import Path

from .config import Config
from .indexer import changed_paths, scan
from .leftovers import rebuild_leftovers
from .store import is_postgres, open_store, store_location


def status(cfg: Config) -> dict:
    """Database path and size, counts, last reindex, embedding state, and drift from the vault."""
    with open_store(cfg, readonly=True) as store:
        meta = store.meta()
        counts = store.counts()
        found = scan(cfg, Path(cfg.vault).resolve())[0] if cfg.vault and Path(cfg.vault).is_dir() else None
        key = meta.path_key
        changed = sorted(changed_paths(found, store.files(), key)) if found is not None else []
        on_disk = len(found) if found is not None else None
        size = store.size_bytes()
        where = store.location
    last = meta.last_reindex
    embedding = meta.embedding
    return {
        "db": where, "db_bytes": size, "vault": meta.vault, "schema_version": meta.schema_version,
        **counts,
        "last_reindex": last.get("at"), "last_report": last.get("report"),
        "embedding": {"available": bool(embedding.get("available")) and counts["vectors"] > 0,
                      "model": embedding.get("model"), "fallback_reason": embedding.get("fallback_reason"),
                      "reason": embedding.get("reason"), "vectors": counts["vectors"],
                      "vectors_invalid": meta.vectors_invalid},
        "tokenizer": meta.tokenizer,
        "coverage": {"markdown_files_in_vault": on_disk, "files_indexed": counts["files"]},
        "changed_since_reindex": len(changed), "changed_paths": changed[:20],
        "rebuild_leftovers": _leftovers(cfg),
        **_collections(cfg),
    }


def _leftovers(cfg: Config) -> list[dict]:
    """SQLite: files of killed full rebuilds beside the index (PostgreSQL rebuilds leave none)."""
    if is_postgres(store_location(cfg)):
        return []
    return [{"path": str(r.path), "pid": r.pid, "bytes": r.bytes, "state": "in progress" if r.alive else "stale"}
            for r in rebuild_leftovers(cfg.db_path())]


def _collections(cfg: Config) -> dict:
    """PostgreSQL: every collection in the database, with its size (status reports per collection)."""
    loc = store_location(cfg)
    if not is_postgres(loc):
        return {}
    from .store.postgres import list_collections

    return {"collections": list_collections(str(loc))}
