"""Scopes and origins of hits. Standard library only (the hook path).

A hit's scope is `sessions` for a transcript message; for a vault file, the first configured
path rule (`scopes:` in the config, e.g. `adr: "docs/adr/**"`) its path matches, else `vault`.
A search scope selects: `all` (everything), `vault` (every vault file, whatever rule it
matches), `sessions` (transcript messages), or a rule's name (the files it matches). Several may
be given, comma-separated. Rules are read at query time, so changing them needs no reindex.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase

from . import ALL_SCOPE, RESERVED_SCOPES, SESSIONS_SCOPE, VAULT_SCOPE, is_session_path, parse_segment_path

Rules = tuple[tuple[str, tuple[str, ...]], ...]


def _matches(path: str, globs: tuple[str, ...]) -> bool:
    # fnmatch's `*` already crosses `/`; `docs/adr/**` also names the folder's own files
    return any(fnmatchcase(path, g) or (g.endswith("/**") and path.startswith(g[:-2])) for g in globs)


def scope_of(path: str, rules: Rules) -> str:
    if is_session_path(path):
        return SESSIONS_SCOPE
    for name, globs in rules:
        if _matches(path, globs):
            return name
    return VAULT_SCOPE


def known_scopes(rules: Rules) -> tuple[str, ...]:
    return RESERVED_SCOPES + tuple(name for name, _ in rules)


def parse_scope(scope: str | Iterable[str] | None, rules: Rules) -> frozenset[str]:
    """The scope names asked for (`all` when None); raises ValueError naming the known ones."""
    names = [ALL_SCOPE] if scope is None else (
        [s.strip() for s in scope.split(",") if s.strip()] if isinstance(scope, str) else [str(s) for s in scope])
    known = known_scopes(rules)
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise ValueError(f"unknown scope {', '.join(bad) or '(none)'}; choose from {', '.join(known)}")
    return frozenset(names)


def selector(wanted: frozenset[str], rules: Rules) -> Callable[[str], bool] | None:
    """path -> whether a chunk of it is in the wanted scopes; None when everything is."""
    if ALL_SCOPE in wanted:
        return None
    globs = {name: g for name, g in rules}

    def keep(path: str) -> bool:
        if is_session_path(path):
            return SESSIONS_SCOPE in wanted
        return VAULT_SCOPE in wanted or any(_matches(path, globs[n]) for n in wanted if n in globs)
    return keep


def session_id_of(path: str) -> str | None:
    if not is_session_path(path):
        return None
    rel, _ = parse_segment_path(path)
    return rel.rsplit("/", 1)[-1].removesuffix(".jsonl")


def file_origin(path: str, heading_path: str, title: str) -> dict:
    return {"kind": "file", "path": path, "heading_path": heading_path, "title": title}


def session_origin(stored: str | None, path: str) -> dict:
    """The origin of a transcript chunk from its stored JSON (session id and project from the path
    when the JSON is missing)."""
    try:
        d = json.loads(stored) if stored else {}
    except ValueError:
        d = {}
    rel, _ = parse_segment_path(path)
    parts = rel.split("/")
    return {"kind": "session", "session_id": d.get("session_id") or session_id_of(path),
            "message_uuid": d.get("message_uuid"), "role": d.get("role"), "timestamp": d.get("timestamp"),
            "project": d.get("project") or (parts[-2] if len(parts) > 1 else "")}
