"""Reading, scrubbing, parsing, chunking, counting and embedding notes on every core (issue 18).

A reindex spends nearly all its CPU on per-file work that needs nothing from the index: read the
note, scrub it, parse and chunk it, count tokens, embed the chunks. `prepared_files` hands that work
to worker processes in tasks of TASK_FILES files and yields the results in the order of the jobs; the
calling process stays the only writer and keeps the indexer's transactions (one per group of files:
each file fully old or fully new after a kill -9). Workers never open the index.

- Start-up: `fork` where the platform has it and the caller runs no other thread (a forked child of a
  threaded server could inherit a held lock); the model and the token counter loaded by the parent
  are then shared copy-on-write, so a worker starts in milliseconds. Otherwise `spawn`, and each
  worker loads the model itself (~1 s), so the pool waits for bigger batches (POOL_MIN_FILES_SPAWN).
- Small batches (a watched note, a 10-file reindex) run in process: below POOL_MIN_FILES a pool's
  start-up and the results' pickling cost more than the second core gives back.
- Workers ignore Ctrl-C (the parent's handler decides), and exit when the parent is gone (a killed
  reindex leaves no process behind).
- Vectors are the same with any number of workers: the embedding of a text does not depend on the
  texts batched with it (tests/test_index_pool.py compares 1 and 2 workers row for row).
"""
from __future__ import annotations

import hashlib
import os
import signal
import sys
import threading
import time
from collections import Counter, deque
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from .config import Config
from .store import FileWrite

# Worker processes when neither `--workers` nor `index.workers` says: one per core this process may
# run on (the work is CPU-bound Python and numpy; the writer mostly waits for results).
DEFAULT_WORKERS_CAP = 8  # beyond this the single writer (~15% of a file's cost) is the limit
# Files to (re)process below which the pool is not started. A fork pool costs ~30-60 ms to start and
# stop plus ~0.1 ms a file to pickle results back; a file costs ~1-3 ms of CPU. 256 files keeps a
# watched edit or a small incremental run in process while a few hundred changed notes use both cores.
POOL_MIN_FILES = 256
POOL_MIN_FILES_SPAWN = 2000  # a spawned worker loads the model (~1 s of CPU) before its first file
# Files per task: large enough that one embedding call covers several notes' chunks, small enough to
# spread a vault's big files over the workers and keep the writer fed.
TASK_FILES = 16
# Tasks queued per worker: bounds the finished results held in memory (~50-100 KB a task), and must
# outlast the writer's group commit, during which no new task is queued: with 4 a worker sat idle
# up to 0.1-0.24 s at each 1,024-file group of a SciFact rebuild, with 16 its longest wait was 0.03-0.05 s.
TASKS_AHEAD_PER_WORKER = 16
PARENT_CHECK_S = 0.5  # how often a worker checks that the reindex that started it is still alive


@dataclass(frozen=True)
class Job:
    """One file to (re)process: its real path, its stored path, its stat, and the content hash the
    index holds (None: build it whatever the content; a match means only the mtime changed)."""

    rel: str
    stored: str
    st: os.stat_result
    known_hash: str | None = None


@dataclass(frozen=True)
class Prepared:
    """What one file became: skipped (`skip` says why), touched (content as indexed), or built."""

    job: Job
    skip: str | None = None
    touched: bool = False
    fw: FileWrite | None = None
    inputs: tuple[str, ...] = ()
    secrets: Counter = field(default_factory=Counter)
    warnings: tuple[str, ...] = ()
    invalid_utf8: bool = False


def default_workers() -> int:
    try:
        n = len(os.sched_getaffinity(0))  # the cores this process may use (a container's limit)
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, DEFAULT_WORKERS_CAP))


def resolve_workers(requested: int | None) -> int:
    """`requested` (>= 1), or the default for 0 / None."""
    if requested is None or requested == 0:
        return default_workers()
    if requested < 0:
        raise ValueError(f"workers must be 0 (one per core) or more, got {requested}")
    return requested


def prepare(job: Job, root: Path, cfg: Config, count_tokens: Callable[[str], int]) -> Prepared:
    """Read, scrub, parse and chunk one file (the same code in process and in a worker)."""
    from .indexer import build_file, read_note

    raw, text, reason = read_note(root, job.rel, cfg.max_file_bytes)
    if reason:
        return Prepared(job, skip=reason)
    if job.known_hash is not None and job.known_hash == hashlib.sha256(raw).hexdigest():
        return Prepared(job, touched=True)
    invalid = "\ufffd" in text and b"\xef\xbf\xbd" not in raw
    fw, inputs, secrets, warnings = build_file(job.rel, job.st, raw, text, cfg, count_tokens, job.stored)
    return Prepared(job, fw=fw, inputs=tuple(inputs), secrets=secrets, warnings=tuple(warnings), invalid_utf8=invalid)


# -- in the worker ------------------------------------------------------------------------------
_STATE: dict = {}


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        if os.getppid() != parent:
            os._exit(1)


def _init(root: Path, cfg: Config, parent: int, shared, model_spec: str | None, fingerprint: str | None,
          forms: Callable | None = None, pack: Callable | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one thread a worker: the workers fill the cores
    threading.Thread(target=_watch_parent, args=(parent,), name="vaultrag-parent-watch", daemon=True).start()
    if shared is not None:  # fork: the parent's objects, shared copy-on-write
        count_tokens, embedder = shared
    else:  # spawn: load them here
        from .indexer import token_counter

        count_tokens, embedder = token_counter()[1], None
        if model_spec is not None:
            from .embedder import load_embedder
            from .index_vectors import model_fingerprint

            embedder = load_embedder(model_spec)
            if model_fingerprint(embedder, cfg) != fingerprint:
                raise RuntimeError(f"the embedding model at {embedder.path} changed during the reindex; run it again")
    _STATE.update(root=root, cfg=cfg, count_tokens=count_tokens, embedder=embedder, forms=forms, pack=pack)


def _task(jobs: list[Job]):
    """Prepared files, and the vectors of their distinct embed inputs: (hashes, float32 matrix), or
    (hashes, the store's packed vectors) when it gave a packer. Files whose chunks were all embedded
    here travel without their embed inputs (the writer needs only the vectors)."""
    root, cfg, embedder = _STATE["root"], _STATE["cfg"], _STATE["embedder"]
    done = [prepare(job, root, cfg, _STATE["count_tokens"]) for job in jobs]
    todo: dict[str, str] = {}
    if embedder is not None:
        for p in done:
            if p.fw is not None:
                for ch, inp in zip(p.fw.chunks, p.inputs):
                    todo.setdefault(ch.embed_hash, inp)
    forms = _STATE.get("forms")
    changes = {} if embedder is None else {"inputs": ()}
    if forms is not None or changes:  # one copy a file: the store's search forms (made here rather than in
        done = [p if p.fw is None else replace(  # the writer), the inputs dropped once embedded here
            p, **changes, **({} if forms is None else {"fw": replace(p.fw, search_forms=forms(p.fw))})) for p in done]
    if not todo:  # (none without an embedder)
        return done, [], None
    vectors = embedder.encode(list(todo.values()), batch_size=cfg.embed_batch_size)
    pack = _STATE.get("pack")
    return done, list(todo), vectors if pack is None else pack(vectors, cfg.vector_type)


# -- in the parent ------------------------------------------------------------------------------
def start_method(threads: int | None = None) -> str:
    """'fork' where it is safe (the platform has it, no other thread runs here), else 'spawn'."""
    import multiprocessing

    threads = threading.active_count() if threads is None else threads
    return "fork" if "fork" in multiprocessing.get_all_start_methods() and threads == 1 else "spawn"


def pool_size(jobs: int, workers: int, method: str) -> int:
    """How many worker processes to start for `jobs` files (0: run in process)."""
    if workers < 2 or jobs < (POOL_MIN_FILES if method == "fork" else POOL_MIN_FILES_SPAWN):
        return 0
    return min(workers, -(-jobs // TASK_FILES))


def prepared_files(jobs: list[Job], root: Path, cfg: Config, count_tokens: Callable[[str], int], embedder,
                   size: int, method: str = "fork", forms: Callable | None = None, pack: Callable | None = None
                   ) -> Iterator[tuple[Prepared, dict | None]]:
    """(Prepared, vectors computed for it by a worker keyed by embed hash, or None) for every job,
    in order, from `size` worker processes started with `method` (see `pool_size`, `start_method`).
    In process (`size` 0) nothing is embedded here: the caller embeds what the index lacks.
    `forms`: the store's `precompute_forms` (a module-level function of a FileWrite, so a spawned
    worker can unpickle it), which workers run on each built file (FileWrite.search_forms);
    `pack`: the store's `precompute_vectors` (matrix, vector type -> stored forms), which workers
    apply to what they embed, so the vectors come back packed."""
    if size == 0:
        for job in jobs:
            yield prepare(job, root, cfg, count_tokens), None
        return
    yield from _pooled(jobs, root, cfg, count_tokens, embedder, size, method, forms, pack)


@contextmanager
def _main_not_imported(hide: bool):
    """A spawned child imports the parent's `__main__` again (to find functions defined there), and a
    caller's script without an `if __name__ == "__main__"` guard would start the reindex again in
    every worker. The workers need nothing from it, so it is hidden while they start."""
    main = sys.modules.get("__main__")
    if not hide or main is None:
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__spec__", "__file__") if k in main.__dict__}
    main.__spec__ = None
    main.__dict__.pop("__file__", None)
    try:
        yield
    finally:
        main.__dict__.update(saved)


def _pool_class():
    import multiprocessing.pool

    class Pool(multiprocessing.pool.Pool):
        """The stdlib's pool, its worker-handler thread waking only when a worker exits or the pool
        changes state. The stdlib's also wakes whenever a result waits in the result pipe, and while
        the result thread reads one (SciFact: ~100 KB a task) it spun: 0.57 s of the writer's CPU
        on SciFact, taken from the GIL the writer needs (issue 18). Its replacing of exited
        workers, and closing once the tasks are done, need only these two."""

        def _get_sentinels(self):
            return [self._change_notifier._reader]

    return Pool


def _pooled(jobs, root, cfg, count_tokens, embedder, size, method, forms=None, pack=None):
    import multiprocessing

    if embedder is not None and hasattr(embedder, "loaded"):
        embedder = embedder.loaded()  # a LazyEmbedder: load once here, shared by the forked workers
    if method == "fork":
        initargs = (root, cfg, os.getpid(), (count_tokens, embedder), None, None, forms, pack)
    else:
        from .index_vectors import model_fingerprint

        spec = None if embedder is None else cfg.model
        initargs = (root, cfg, os.getpid(), None, spec, None if embedder is None else model_fingerprint(embedder, cfg),
                    forms, pack)
    ctx = multiprocessing.get_context(method)
    tasks = [jobs[i:i + TASK_FILES] for i in range(0, len(jobs), TASK_FILES)]
    saved = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # set before the fork: the children print no warning
    try:
        with _main_not_imported(method == "spawn"):
            pool = _pool_class()(size, initializer=_init, initargs=initargs, context=ctx)
    finally:
        if saved is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = saved
    try:
        pending: deque = deque()
        queued = 0
        while queued < len(tasks) or pending:
            while queued < len(tasks) and len(pending) < size * TASKS_AHEAD_PER_WORKER:
                pending.append(pool.apply_async(_task, (tasks[queued],)))
                queued += 1
            done, hashes, matrix = pending.popleft().get()
            rows = {} if matrix is None else dict(zip(hashes, matrix))
            for p in done:
                yield p, rows
        pool.close()
        pool.join()
    finally:
        pool.terminate()
