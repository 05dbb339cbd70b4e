"""`vaultrag serve --watch`: a saved note is searchable within ~2 s.

watchfiles (inotify / FSEvents / ReadDirectoryChangesW) reports changes; they are debounced and
batched, and each batch reindexes only the paths it names (`indexer.reindex_paths`: a rename is a
delete of the old name and an add of the new; a folder moved in is walked, one moved out takes its
notes along), instead of walking the whole vault (4-5 s at tldr scale). Changes that arrive during
a reindex are held by watchfiles and make the next batch: one reindex at a time. The first run, a
batch too large to be worth listing (MAX_BATCH_PATHS) and the poll fallback walk the whole vault.
A vault on a network share (NFS, SMB, sshfs...) gives no events; there, and wherever the OS
watcher cannot start, the vault is scanned every POLL_INTERVAL_S instead.
"""
from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from ..api import Busy, Service, Stopping
from ..errors import VaultragError

log = logging.getLogger("vaultrag.serve.watch")

DEBOUNCE_MS = 300  # longest a batch gathers: editors write a file in several steps (tmp, rename, chmod)
STEP_MS = 50  # ... and a batch closes once nothing new came for this long
POLL_INTERVAL_S = 5.0  # network shares: an incremental reindex with nothing new costs ~0.6 s at 38k notes
BUSY_RETRY_S = 0.5  # a reindex asked over HTTP is running: try the batch again this soon
NETWORK_FS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "fuse.sshfs", "sshfs", "9p", "afs", "davfs",
                        "fuse.rclone", "fuse.gcsfuse", "fuse.s3fs", "ncpfs", "ceph", "glusterfs", "fuse.glusterfs"})
MARKDOWN = (".md", ".markdown")
MAX_BATCH_PATHS = 5_000  # beyond this (a git checkout, a sync), one whole-vault incremental reindex is cheaper


def filesystem_type(path: Path, mounts: str = "/proc/mounts") -> str | None:
    """The type of the file system holding `path` (Linux: the longest matching mount point)."""
    try:
        with open(mounts, encoding="utf-8") as fh:
            rows = [line.split() for line in fh]
    except OSError:
        return None
    target, best, kind = str(path.resolve()), -1, None
    for row in rows:
        if len(row) < 3:
            continue
        point = row[1].replace("\\040", " ")
        if (target == point or target.startswith(point.rstrip("/") + "/")) and len(point) > best:
            best, kind = len(point), row[2]
    return kind


def wants(path: str, root: Path) -> bool:
    """A change worth a reindex: a Markdown file, or a folder (renamed or deleted), outside hidden folders."""
    try:
        rel = Path(path).relative_to(root)
    except ValueError:
        return False
    if any(part.startswith(".") for part in rel.parts):
        return False
    return path.lower().endswith(MARKDOWN) or not os.path.isfile(path)


class Watcher:
    """A daemon thread: watch (or poll) the vault, reindex after each batch of changes."""

    def __init__(self, service: Service, *, poll: bool | None = None, on_reindex=None):
        self.service = service
        self.root = Path(service.cfg.vault).expanduser().resolve()
        fs = filesystem_type(self.root)
        forced = os.environ.get("VAULTRAG_WATCH_POLL", "").lower() in ("1", "true", "yes")
        self.poll = poll if poll is not None else (forced or fs in NETWORK_FS)
        self.mode = "poll" if self.poll else "events"
        self.on_reindex = on_reindex  # called with each report (benchmarks, tests)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vaultrag-watch", daemon=True)

    def start(self) -> None:
        log.info("watching %s (%s)", self.root, self.mode)
        self.service.keep_embedder_loaded()
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        self._warm_model()
        self._reindex()  # catch up with what changed while nobody watched
        if not self.poll:
            try:
                self._watch_events()
            except Exception as exc:  # inotify watch limit, missing backend...: keep the vault fresh anyway
                log.warning("file events unavailable (%s: %s); scanning every %.0f s", type(exc).__name__, exc,
                            POLL_INTERVAL_S)
                self.mode = "poll"
        while not self._stop.wait(POLL_INTERVAL_S):
            self._reindex()

    def _warm_model(self) -> None:
        """Load the embedding model now (kept by `keep_embedder_loaded`): a reindex with nothing to
        embed no longer loads it, and the first saved note should not wait ~1.5 s for it."""
        try:
            from .. import embedder

            embedder.load_embedder(self.service.cfg.model)
        except Exception as exc:  # no model: the reindex says why and indexes without vectors
            log.info("watch: embedding model not preloaded (%s)", exc)

    def _watch_events(self) -> None:
        from watchfiles import watch

        root = self.root
        for changes in watch(root, watch_filter=lambda _c, p: wants(p, root), debounce=DEBOUNCE_MS, step=STEP_MS,
                             stop_event=self._stop, yield_on_timeout=False, raise_interrupt=False):
            paths = sorted({p for _change, p in changes})
            while not self._stop.is_set() and not self._reindex(paths if len(paths) <= MAX_BATCH_PATHS else None):
                self._stop.wait(BUSY_RETRY_S)
        if not self._stop.is_set():
            raise RuntimeError("the file watcher stopped")

    def _reindex(self, paths: list[str] | None = None) -> bool:
        """One incremental reindex (of `paths` only, when given); False when another one holds the
        index (try again)."""
        try:
            report = self.service.reindex(full=False, paths=paths)
        except Busy:
            return False
        except Stopping:
            return True
        except VaultragError as exc:
            log.warning("watch: reindex failed: %s", exc)
            return True
        changed = report.added + report.updated + report.deleted
        if changed:
            log.info("watch: %d added, %d updated, %d deleted in %.2f s", report.added, report.updated,
                     report.deleted, report.seconds)
        if self.on_reindex:
            self.on_reindex(report)
        return True
