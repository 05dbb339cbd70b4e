"""The facade: search, reindex, status, coverage, get. Every face (CLI, hooks, HTTP, MCP) calls
these and renders what they return; none has logic of its own.

Module functions take a `Config` (and optionally an open `Store`); `Service` keeps one config,
one read-only `Store` per thread and one reindex at a time for a resident process (`vaultrag
serve`, `vaultrag mcp`). Nothing heavy is imported at module level: `vaultrag status` stays cheap.
"""
from __future__ import annotations

import inspect
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from .config import Config, load_config
from .errors import VaultragError

MAX_QUERY_CHARS = 4000  # a prompt-sized query; longer text is a paste, not a question
MAX_K = 50  # more hits than this exceed any context budget a client can use
MAX_TOKENS_CAP = 100_000  # the rendered answer's budget; 0 still means "no budget"
MAX_GET_LINES = 5000  # one get returns at most this many lines; ask for a range beyond


class BadRequest(VaultragError):
    """The caller's input is invalid (HTTP 400)."""


class NotFound(VaultragError):
    """The asked-for note does not exist in the vault, or may not be read (HTTP 404)."""


class Busy(VaultragError):
    """A reindex is already running in this process (HTTP 409)."""


class Stopping(VaultragError):
    """The resident process is shutting down; a running reindex stopped after its last file (HTTP 503)."""


@dataclass(frozen=True)
class Note:
    """A note or a line range of it, scrubbed: `text` holds lines `line_start`..`line_end` (1-based)."""
    path: str
    text: str
    line_start: int
    line_end: int
    total_lines: int
    redacted: dict[str, int] = field(default_factory=dict)  # secret rule -> count replaced

    def to_dict(self) -> dict:
        return {"path": self.path, "text": self.text, "line_start": self.line_start, "line_end": self.line_end,
                "total_lines": self.total_lines, "redacted": dict(self.redacted)}


# -- input checks ---------------------------------------------------------------------------------
def _int(name: str, value: Any, low: int, high: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"`{name}` must be an integer from {low} to {high}, got {value!r}")
    if not low <= value <= high:
        raise BadRequest(f"`{name}` must be from {low} to {high}, got {value}")
    return value


def check_query(query: Any) -> str:
    if not isinstance(query, str) or not query.strip():
        raise BadRequest("`query` must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise BadRequest(f"`query` is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    return query.encode("utf-8", "replace").decode("utf-8")  # lone surrogates (valid JSON) -> "?"


def _accepts(fn: Callable, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# -- the five operations -----------------------------------------------------------------------
def search(query: str, cfg: Config, *, k: int | None = None, max_tokens: int | None = None,
           scope: str | None = None, collection: str | None = None, gate: bool = True, store=None):
    """The `Answer` to `query` (the object `vaultrag search --json` prints, via `to_dict()`)."""
    from .retrieve.pipeline import search as pipeline_search

    query = check_query(query)
    k = _int("k", k, 1, MAX_K)
    max_tokens = _int("max_tokens", max_tokens, 0, MAX_TOKENS_CAP)
    if not isinstance(gate, bool):
        raise BadRequest(f"`gate` must be true or false, got {gate!r}")
    extra: dict[str, Any] = {}
    if scope is not None:
        from .sessions.scopes import known_scopes, parse_scope

        try:
            if not isinstance(scope, str):
                raise ValueError(scope)
            parse_scope(scope, cfg.scopes)
        except ValueError:
            raise BadRequest(f"`scope` must be one of {', '.join(known_scopes(cfg.scopes))} (or several, "
                             f"comma-separated), got {scope!r}") from None
        extra["scope"] = scope
    if collection is not None:
        if not isinstance(collection, str):
            raise BadRequest(f"`collection` must be a string, got {collection!r}")
        if not _accepts(pipeline_search, "collection"):
            raise BadRequest("this build has one collection per index: leave `collection` out")
        extra["collection"] = collection
    return pipeline_search(query, cfg, k=k, max_tokens=max_tokens, gate=gate, store=store, **extra)


def reindex(cfg: Config, *, full: bool = False, progress=None, embed: bool = True, paths=None, workers=None):
    """Bring the index in line with the vault (only `paths`, when given: see indexer.reindex_paths);
    returns the indexer's `Report`."""
    from .indexer import reindex as run, reindex_paths

    if paths is not None and not full:
        return reindex_paths(cfg, paths, progress=progress, embed=embed, workers=workers)
    return run(cfg, full=full, progress=progress, embed=embed, workers=workers)


def status(cfg: Config) -> dict:
    """What the index holds and how far the vault moved since (the `vaultrag status --json` object)."""
    from .status import status as run

    return run(cfg)


def coverage(cfg: Config, info: dict | None = None) -> dict:
    """Files present in the vault vs indexed, and the stale ones (the status numbers)."""
    info = info if info is not None else status(cfg)
    cov = info.get("coverage") or {}
    return {"vault": info.get("vault"), "markdown_files_in_vault": cov.get("markdown_files_in_vault"),
            "files_indexed": cov.get("files_indexed"), "stale_files": info.get("changed_since_reindex"),
            "stale_paths": info.get("changed_paths", []), "sessions": cov.get("sessions"),
            "last_reindex": info.get("last_reindex")}


def resolve_note(cfg: Config, path: Any) -> tuple[Path, str]:
    """(absolute file, normalised vault-relative path) for a note the indexer could index.

    Refused: absolute paths, `..`, hidden or excluded folders, symlinks anywhere on the way (the
    resolved file must be exactly the joined path), anything but a regular Markdown file."""
    from .scan import MARKDOWN_SUFFIXES, excluded as _excluded, included as _included
    from .config import ALWAYS_EXCLUDED

    if not isinstance(path, str) or not path.strip() or "\x00" in path or len(path) > 1024:
        raise BadRequest("`path` must be a vault-relative file path")
    if cfg.vault is None:
        raise BadRequest("no vault configured: pass --vault PATH or set `vault:` in the config file")
    rel = PurePosixPath(path.replace("\\", "/"))
    if rel.is_absolute() or any(p in ("..", "") or p.startswith(".") or p in ALWAYS_EXCLUDED for p in rel.parts):
        raise NotFound(f"{path!r} is not a note in the vault: give a vault-relative path like Notes/Idea.md")
    rel_s = rel.as_posix()
    if not rel_s.lower().endswith(MARKDOWN_SUFFIXES) or _excluded(rel_s, cfg.exclude) or not _included(rel_s, cfg.include):
        raise NotFound(f"{rel_s} is not a Markdown note the index covers")
    root = Path(cfg.vault).expanduser().resolve()
    joined = root.joinpath(*rel.parts)
    try:
        real = joined.resolve(strict=True)
        st = os.lstat(joined)
    except (OSError, RuntimeError):
        raise NotFound(f"{rel_s} does not exist in the vault {root}") from None
    if real != joined or not real.is_relative_to(root) or not stat.S_ISREG(st.st_mode):
        raise NotFound(f"{rel_s} is not a regular file inside the vault (symlinks are not followed)")
    return real, rel_s


def get(cfg: Config, path: Any, line_start: Any = None, line_end: Any = None) -> Note:
    """A note, or lines `line_start`..`line_end` of it (1-based, inclusive), with secrets redacted."""
    from .indexer import read_note
    from .scrubber import scrub

    _, rel = resolve_note(cfg, path)
    start = _int("line_start", line_start, 1, 10**9) or 1
    end = _int("line_end", line_end, 1, 10**9)
    if end is not None and end < start:
        raise BadRequest(f"`line_end` ({end}) is before `line_start` ({start})")
    raw, text, reason = read_note(Path(cfg.vault).expanduser().resolve(), rel, cfg.max_file_bytes)
    if text is None:
        raise NotFound(f"{rel}: {reason}")
    clean, findings = scrub(text)  # scrub the whole note: a secret may span the range's edge
    lines = clean.splitlines()
    total = len(lines)
    if start > max(total, 1):
        raise BadRequest(f"`line_start` {start} is past the end of {rel} ({total} lines)")
    end = min(end if end is not None else total, total, start + MAX_GET_LINES - 1)
    redacted: dict[str, int] = {}
    for f in findings:
        if start <= f.line <= max(end, start):
            redacted[f.rule] = redacted.get(f.rule, 0) + 1
    return Note(rel, "\n".join(lines[start - 1:end]), start, max(end, start - 1), total, redacted)


# -- a resident process ------------------------------------------------------------------------
class Service:
    """One config, a read-only Store per thread (reopened when a full rebuild swapped the file),
    one reindex at a time (`Busy` for the others). Thread-safe; used by `vaultrag serve` and `mcp`."""

    def __init__(self, cfg: Config, config_file: str | None = None):
        self.cfg = cfg
        self.config_file = config_file  # the file cfg came from, if any (hooks naming another are refused)
        self.identity: dict = {}  # set by the server: what a forwarded hook's environment must match
        self._local = threading.local()
        self._reindexing = threading.Lock()
        self._stopping = threading.Event()
        self._stores: list = []
        self._stores_lock = threading.Lock()

    @classmethod
    def from_args(cls, config_file: str | None = None, **overrides: Any) -> "Service":
        from .config import config_file_path

        cfg = load_config(config_file, **{k: v for k, v in overrides.items() if v is not None})
        path, _ = config_file_path(config_file)
        return cls(cfg, str(Path(path).expanduser().resolve()))

    def _store(self):
        """This thread's Store, reopened when the database file changed identity (full rebuild) or the
        store lost its server (a PostgreSQL restart: every request failed until serve was restarted)."""
        from .store import open_store

        db = self.cfg.db_path()
        try:
            st = os.stat(db)
            ident = (st.st_dev, st.st_ino)
        except OSError:
            ident = None
        cur = getattr(self._local, "store", None)
        if cur is not None and self._local.ident == ident and cur.usable():
            return cur
        if cur is not None:
            self._drop(cur)
        store = open_store(self.cfg, readonly=True)  # raises IndexMissing with the command to run
        self._local.store, self._local.ident = store, ident
        with self._stores_lock:
            self._stores.append(store)
        return store

    def _drop(self, store) -> None:
        with self._stores_lock:
            if store in self._stores:
                self._stores.remove(store)
        try:
            store.close()
        except Exception:
            pass

    def search(self, query: str, **opts: Any):
        store = self._store()
        try:
            return search(query, self.cfg, store=store, **opts)
        except VaultragError:
            raise
        except Exception as exc:
            self._translated(store, exc)

    def _translated(self, store, exc: Exception):
        """Raise what a driver error means: a damaged or locked file, a lost database connection:
        the same one-line error (and HTTP 503 / 409) as the CLI's, and this thread's store is
        dropped so the next call opens whatever the index is by then."""
        err = store.translate(exc)
        if err is None:
            raise exc
        self._drop(store)
        self._local.store = None
        raise err from exc

    def get(self, path: Any, line_start: Any = None, line_end: Any = None) -> Note:
        return get(self.cfg, path, line_start, line_end)

    def status(self) -> dict:
        return status(self.cfg)

    def coverage(self) -> dict:
        return coverage(self.cfg)

    @property
    def reindexing(self) -> bool:
        return self._reindexing.locked()

    def reindex(self, *, full: bool = False, progress=None, paths=None):
        if not isinstance(full, bool):
            raise BadRequest(f"`full` must be true or false, got {full!r}")
        if not self._reindexing.acquire(blocking=False):
            raise Busy("a reindex is already running in this server; wait for it to finish")
        def checked(done: int, total: int, path: str) -> None:
            if self._stopping.is_set():  # raised between files: committed files stay, a full rebuild is dropped
                raise Stopping("the server is stopping; reindex again after it restarts")
            if progress:
                progress(done, total, path)

        try:
            if self._stopping.is_set():
                raise Stopping("the server is stopping")
            return reindex(self.cfg, full=full, progress=checked, paths=paths)
        finally:
            self._reindexing.release()

    @staticmethod
    def keep_embedder_loaded() -> None:
        """The indexer loads its model on each reindex (~1.5 s for the bundled one); a resident
        process keeps the first it loaded. (A seam for it in the indexer would be cleaner: it takes
        no embedder argument today.) Idempotent; a failed load is not kept, so it is retried."""
        from . import embedder

        if getattr(embedder.load_embedder, "keeps_loaded", False):
            return
        original, cache, lock = embedder.load_embedder, {}, threading.Lock()

        def load_embedder(spec=None, **kw):
            key = (spec, tuple(sorted(kw.items())))
            with lock:
                if key not in cache:
                    cache[key] = original(spec, **kw)
                return cache[key]

        load_embedder.keeps_loaded = True
        embedder.load_embedder = load_embedder

    def stop_reindex(self) -> None:
        """From now on no reindex starts, and a running one stops after the file it is writing."""
        self._stopping.set()

    def drain(self, timeout_s: float) -> bool:
        """Stop a running reindex after the file it is writing and wait (up to `timeout_s`) for it;
        True when none runs. No reindex starts afterwards."""
        self.stop_reindex()
        if self._reindexing.acquire(timeout=timeout_s):
            self._reindexing.release()
            return True
        return False

    def hook(self, event: str, payload: Any) -> str | None:
        """The line the command hook for `event` would print, or None (it would print nothing)."""
        from . import hooks

        if not isinstance(payload, dict):
            raise BadRequest("the hook input must be a JSON object")
        if _accepts(hooks.handle, "store"):
            store = self._store()
            try:
                return hooks.handle(payload, event, cfg=self.cfg, store=store)
            except VaultragError:
                raise
            except Exception as exc:
                self._translated(store, exc)
        if _accepts(hooks.handle, "cfg"):
            return hooks.handle(payload, event, cfg=self.cfg)
        return hooks.handle(payload, event)

    def close(self) -> None:
        with self._stores_lock:
            stores, self._stores = self._stores, []
        for s in stores:
            try:
                s.close()
            except Exception:
                pass
