"""`vaultrag status`: what the index holds and how far the vault has moved since."""
from __future__ import annotations

from pathlib import Path

from .config import Config
from .errors import damaged_index
from .indexer import changed_paths, scan
from .leftovers import rebuild_leftovers
from .store import is_postgres, open_store, store_location

SKIPPED_LISTED = 50  # skipped files a scope's coverage lists (the first ones; the count says when capped)


def status(cfg: Config) -> dict:
    """Database path and size, counts, last reindex, embedding state, and drift from the vault."""
    with open_store(cfg, readonly=True) as store:
        damage = store.check()  # SQLite: every page, ~0.1 s at 38k chunks
        if damage:
            raise damaged_index(store.location, damage)
        meta = store.meta()
        counts = store.counts()
        found, skipped = scan(cfg, Path(cfg.vault).resolve()) if cfg.vault and Path(cfg.vault).is_dir() else (None, [])
        key = meta.path_key
        indexed = store.files()
        waiting, skipped = still_skipped(store, found, indexed, key, skipped)
        changed = sorted(changed_paths(waiting, indexed, key)) if found is not None else []
        scopes = scope_coverage(cfg, store, indexed, found, skipped, meta.last_reindex.get("report") or {})
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
        "coverage": {"markdown_files_in_vault": on_disk, "files_indexed": scopes["vault"]["indexed"],
                     "sessions": scopes.get("sessions"), "scopes": scopes},
        "changed_since_reindex": len(changed), "changed_paths": changed[:20],
        "rebuild_leftovers": _leftovers(cfg),
        "sqlite": _sqlite(cfg),
        **_collections(cfg),
    }


def still_skipped(store, found: dict | None, indexed: dict, key: str | None, skipped: list) -> tuple[dict | None, list]:
    """(`found` without the files the last reindex read and skipped that are unchanged since, the
    scan's skips plus those, with the reindex's reason): a binary or unreadable note is not a change
    a reindex would take in (doctor used to name `vaultrag reindex` for them, which changed nothing)."""
    import json

    from .indexer import READ_SKIPS_META
    from .paths import shown_part, stored_path

    skips = json.loads(store.get_meta(READ_SKIPS_META) or "{}") if found else {}
    if not skips:
        return found, skipped
    waiting, skipped = dict(found), list(skipped)
    for rel, st in found.items():
        stored = stored_path(rel, key) if key else rel
        was = skips.get(stored)
        if was and stored not in indexed and was[:2] == [st.st_mtime_ns, st.st_size]:
            del waiting[rel]
            skipped.append((shown_part(stored), was[2]))
    return waiting, skipped


def scope_coverage(cfg: Config, store, indexed: dict, found: dict | None, skipped: list, last: dict) -> dict:
    """Issue 17: per scope, what is indexed of what is present, and what was skipped and why.
    vault: Markdown files; each `scopes:` rule: the files it matches; sessions: transcript files."""
    from .sessions import is_session_path, sessions_root
    from .sessions.index import indexed_segments, scan_transcripts
    from .sessions.scopes import _matches

    files = [p for p in indexed if not is_session_path(p)]
    out = {"vault": {"unit": "Markdown files", "indexed": len(files), "present": len(found) if found is not None else None,
                     "skipped": [{"path": p, "reason": r} for p, r in skipped[:SKIPPED_LISTED]]}}
    for name, globs in cfg.scopes:
        out[name] = {"unit": "Markdown files", "indexed": sum(_matches(p, globs) for p in files),
                     "present": sum(_matches(p, globs) for p in found) if found is not None else None,
                     "skipped": [{"path": p, "reason": r} for p, r in skipped if _matches(p, globs)][:SKIPPED_LISTED]}
    segs = indexed_segments(store)
    root = sessions_root(cfg, store)
    if root is not None or segs:
        present, why = scan_transcripts(root) if root is not None and root.is_dir() else (None, [])
        if root is not None and not root.is_dir():
            why = [(str(root), "sessions folder does not exist")]
        report = last.get("sessions") or {}
        out["sessions"] = {"unit": "transcript files", "folder": str(root) if root else None,
                           "indexed": len(segs), "present": len(present) if present is not None else None,
                           "skipped": [{"path": p, "reason": r} for p, r in why[:SKIPPED_LISTED]]
                           + list(report.get("skipped", []))[:SKIPPED_LISTED],
                           "left_out": report.get("left_out", {}),
                           "not_indexed_yet": sorted(set(present) - set(segs))[:20] if present is not None else []}
    return out


def _leftovers(cfg: Config) -> list[dict]:
    """SQLite: files of killed full rebuilds beside the index (PostgreSQL rebuilds leave none)."""
    if is_postgres(store_location(cfg)):
        return []
    return [{"path": str(r.path), "pid": r.pid, "bytes": r.bytes, "state": "in progress" if r.alive else "stale"}
            for r in rebuild_leftovers(cfg.db_path())]


def _sqlite(cfg: Config) -> dict | None:
    """SQLite index: which SQLite library this Python reads it with (store/sqlite/connection.py's
    library_report: sqlite3 or sqlean, version, extensions, sqlite-vec); PostgreSQL: None."""
    if is_postgres(store_location(cfg)):
        return None
    from .store.sqlite.connection import library_report

    return library_report()


def _collections(cfg: Config) -> dict:
    """PostgreSQL: every collection in the database, with its size (status reports per collection)."""
    loc = store_location(cfg)
    if not is_postgres(loc):
        return {}
    from .store.postgres import list_collections

    return {"collections": list_collections(str(loc))}
