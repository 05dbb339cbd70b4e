"""Full and incremental reindex: vault files -> scrub -> parse -> chunk -> embed -> store.

Incremental by (mtime_ns, size), confirmed by content hash: a touched but unchanged file only gets
its mtime updated. Vectors are reused by the hash of the embedded input, so a renamed or moved
note, or an edit to one section, is not re-embedded. One transaction per file: an interrupted run
leaves every file either fully old or fully new. Full rebuilds write a shadow copy and swap it in
at once (store/: a new file beside the old one; a new generation of the collection), so a failed
rebuild never loses the existing index and readers never see a half-built one.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import time
import stat as stat_mode
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from . import __version__, chunker, markdown, notelang
from .config import Config
from .errors import VaultNotFound
from .paths import KEY_META, display_path, new_key, resolve, shown_part, stored_path
from .scan import allowed, exclude_patterns, scan, snapshot, too_large
from .scrubber import ruleset_id, scrub
from .sessions import is_session_path
from .store import ChunkRow, FileWrite, LinkRow, Store, backend_for
from .store.base import FILES_SNAPSHOT_META
from .textutil import meta_key
from .tokens import load_counter
from .index_vectors import embed_batch as _embed_batch, embed_input, embed_missing as _embed_missing
from .index_vectors import setup_vectors as _setup_vectors

READ_SKIPS_META = "read_skips"  # JSON: the files the last runs read and skipped (Report.read_skips)
log = logging.getLogger(__name__)

BINARY_SNIFF_BYTES = 8192  # a NUL byte in the first 8 KB means binary, as git decides
OPTIMIZE_AFTER_FILES = 200  # FTS queries slowed 95 -> 150 ms after many small batches until 'optimize'
# Files read, chunked and embedded together, then written in one transaction. One commit per file
# cost ~1 ms each (38k files: ~15% of a full index on this machine); a killed run loses at most
# this many files' work and every file stays fully old or fully new.
FILES_PER_GROUP = 128
# The same in a full rebuild, whose shadow copy a kill discards whole (it is never published): the
# group only bounds the results held in memory and how soon Ctrl-C is seen. Fewer commits cost the
# writer less (tldr, writer alone: commits 1.12 -> 0.6-0.8 s CPU with 512-2048 files a group).
REBUILD_FILES_PER_GROUP = 1024
# Vector reuse key: 64 bits of sha256 of the embedded input. A collision (~1e-10 at 100k chunks)
# would only give one chunk another's vector; the file hash stays full length (live citations).
EMBED_HASH_HEX = 16
# Bump when the stored form of chunks changes (FTS transform, key normalisation, embed input):
# a new value re-processes every file on the next reindex.
# "2" (issue 20): terms made by script (marks kept, fold, stems): PostgreSQL's stored tsvectors are
# remade from the vault (SQLite's schema version 4 rebuilds its index anyway).
# "3" (issue 20 second round, issue 15 third round): Latin/Cyrillic notes stemmed by their language,
# two-letter lexemes for Thai/Lao/Khmer/Myanmar on PostgreSQL (SQLite's schema 5 rebuilds anyway).
# "4" (issue 20 third round): a note's words kept beside their stems; agglutinative notes detected.
# "5" (issue 20 fifth round): Arabic stemmed before alef forms are folded.
INDEX_FORMAT = "5"
# Meta row: a digest of the stored paths whose names this vaultrag scrubbed (stored_path) when it
# wrote them. While it matches the index, a file whose real path is stored as itself and whose
# (mtime, size) still match is skipped without scrubbing its name again; a row written otherwise (an
# older vaultrag kept raw names) breaks the match and every name is checked once more.
PATHS_VERIFIED_META = "paths_verified"

Progress = Callable[[int, int, str], None]


@dataclass
class EmbeddingReport:
    available: bool = False
    model: str | None = None
    embedded: int = 0
    reused: int = 0
    skipped: int = 0
    reason: str | None = None
    fallback_reason: str | None = None
    reembedded_all: bool = False


@dataclass
class Report:
    db: str = ""
    vault: str = ""
    full: bool = False
    scanned: int = 0
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    touched: int = 0
    not_read: int = 0  # scanned notes whose reading failed (binary, unreadable...): in `skipped` too
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    chunks_written: int = 0
    chunks_total: int = 0
    secrets: dict[str, int] = field(default_factory=dict)
    embedding: EmbeddingReport = field(default_factory=EmbeddingReport)
    sessions: dict | None = None  # issue 17: sessions.index.SessionsReport, when `sessions:` is set
    interrupted: bool = False
    workers: int = 0  # worker processes that read, chunked and embedded (0: all in this process)
    seconds: float = 0.0
    # Files read and skipped (binary, unreadable...): stored path -> [mtime_ns, size, reason], kept in
    # READ_SKIPS_META so that `status` lists them as skipped, not as changes waiting for a reindex.
    read_skips: dict = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("read_skips")
        d["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        d["warnings"] = [{"path": p, "warning": w} for p, w in self.warnings]
        return d


# -- reading and building rows ----------------------------------------------------------------
def read_note(root: Path, rel: str, max_bytes: int) -> tuple[bytes | None, str | None, str | None]:
    """(raw bytes, text, None) or (None, None, reason to skip). Text has the BOM removed.

    Read through `safe_io.read_in_vault`: the scan skips symlinks, but a note swapped for a link
    (or a FIFO) after the scan must not be read either (it could pull a file from outside the vault
    into the index)."""
    from .safe_io import RefusedFile, read_in_vault

    try:
        why = too_large(os.lstat(root / rel).st_size, max_bytes)
        if why:
            return None, None, why
        raw = read_in_vault(root, rel, max_bytes)
    except RefusedFile as exc:
        return None, None, f"not read: {exc}"
    except OSError as exc:
        return None, None, f"unreadable: {exc.strerror or exc}"
    if b"\x00" in raw[:BINARY_SNIFF_BYTES]:
        return None, None, "binary content (NUL bytes), not Markdown"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("utf-8-sig", errors="replace")
    return raw, text, None


def build_file(rel: str, st: os.stat_result, raw: bytes, text: str, cfg: Config,
               count_tokens: Callable[[str], int], stored: str | None = None
               ) -> tuple[FileWrite, list[str], Counter, list[str]]:
    """Scrub, parse and chunk one note. Returns (rows, embed inputs, secrets by rule, warnings).

    `stored` is the path as the index keeps it (see vaultrag/paths.py); the real `rel` is used
    for nothing else: title, note-name keys and link keys come from its display form."""
    clean, findings = scrub(text)
    secrets = Counter(f.rule for f in findings)
    stored = rel if stored is None else stored
    shown = shown_part(stored)
    doc = markdown.parse(clean, shown)
    chunks = chunker.chunk_document(doc, chunker.settings_for(cfg))
    rows: list[ChunkRow] = []
    inputs: list[str] = []
    for ch in chunks:
        heading = " > ".join(ch.heading_path)
        inp = embed_input(doc.title, heading, ch.text)
        inputs.append(inp)
        rows.append(ChunkRow(
            section_index=ch.section_index, chunk_index=ch.chunk_index, heading_path=heading,
            context=ch.context, text=ch.text, search_text=ch.search_text if ch.search_text != ch.text else None,
            line_start=ch.line_start, line_end=ch.line_end, content_hash=ch.content_hash,
            embed_hash=hashlib.sha256(inp.encode()).hexdigest()[:EMBED_HASH_HEX], tokens=count_tokens(ch.text),
            block_ids=" ".join(ch.block_ids)))

    def chunk_at(line: int) -> int | None:
        for pos, ch in enumerate(chunks):
            if ch.line_start <= line <= ch.line_end:
                return pos
        return None

    links = tuple(LinkRow(chunk_at(ln.line), ln.target, markdown.link_key(ln.target), ln.anchor, ln.kind,
                          ln.text, ln.line) for ln in doc.links)
    keys: list[tuple[str, str, int | None]] = []
    stem = shown.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    for kind, values in (("title", [doc.title]), ("alias", doc.aliases), ("file", [stem]), ("tag", doc.tags)):
        for v in values:
            k = meta_key(v)
            if k:
                keys.append((k, kind, None))
    for h in doc.headings:
        k = meta_key(h.text)
        pos = chunk_at(h.line)
        if k and pos is not None:
            keys.append((k, "heading", pos))
    fw = FileWrite(path=stored, mtime_ns=st.st_mtime_ns, size=st.st_size, hash=hashlib.sha256(raw).hexdigest(),
                   title=doc.title, note_type=doc.note_type, stem_key=markdown.link_key(shown),
                   chunks=tuple(rows), links=links, keys=tuple(dict.fromkeys(keys)),
                   lang=notelang.note_stemmer(doc.frontmatter, clean) if rows else None)
    return fw, inputs, secrets, list(doc.warnings)


# -- the run ----------------------------------------------------------------------------------
class _Interrupt:
    """Turn the first Ctrl-C into a flag checked between files; a second one aborts at once."""

    def __init__(self):
        self.flag = False
        self.prev = None

    def __enter__(self):
        try:
            self.prev = signal.signal(signal.SIGINT, self._handle)
        except ValueError:  # not the main thread
            self.prev = None
        return self

    def _handle(self, *_):
        if self.flag:
            raise KeyboardInterrupt
        self.flag = True

    def __exit__(self, *exc):
        if self.prev is not None:
            signal.signal(signal.SIGINT, self.prev)


def settings_fingerprint(cfg: Config, tokenizer: str) -> str:
    return json.dumps({"format": INDEX_FORMAT, "min_chars": cfg.min_chars, "max_chars": cfg.max_chars,
                       "overlap_chars": cfg.overlap_chars, "skip": sorted(s.casefold() for s in cfg.skip_sections),
                       "tokenizer": tokenizer, "scrubber": ruleset_id(), "chunker": chunker.CHUNKER_VERSION},
                      sort_keys=True)


def _vault_root(cfg: Config) -> Path:
    if cfg.vault is None:
        raise VaultNotFound("no vault configured: pass --vault PATH or set `vault:` in the config file")
    root = Path(cfg.vault).expanduser().resolve()
    if not root.is_dir():
        raise VaultNotFound(f"vault folder {root} does not exist or is not a folder; check --vault / `vault:`")
    return root


def reindex(cfg: Config, *, full: bool = False, progress: Progress | None = None, lock_wait_s: float = 30.0,
            embed: bool = True, workers: int | None = None) -> Report:
    """Bring the index in line with the vault. `embed=False` builds the lexical index only.
    `workers`: processes that read, chunk and embed notes (None: `cfg.workers`; 0: one per core;
    1: all in this process); the index is the same whatever the number."""
    return _reindex(cfg, full, progress, lock_wait_s, embed, None, workers)


def reindex_paths(cfg: Config, paths: Iterable[str | os.PathLike], *, progress: Progress | None = None,
                  lock_wait_s: float = 30.0, embed: bool = True, workers: int | None = None) -> Report:
    """Reindex only `paths` (absolute, or relative to the vault): files added, changed, deleted or
    renamed (both names), and folders (a folder that appeared is walked; one that went takes the
    notes indexed under it along). The same scrub/chunk/embed and one transaction per group of
    files as `reindex`; the rest of the vault is not walked (`vaultrag serve --watch` calls this
    with each batch of file events). Paths outside the vault or not covered by the config are
    ignored. When the index settings changed since the last run, the whole vault is reindexed."""
    return _reindex(cfg, False, progress, lock_wait_s, embed, [os.fspath(p) for p in paths], workers)


def _reindex(cfg: Config, full: bool, progress: Progress | None, lock_wait_s: float, embed: bool,
             changes: list[str] | None, workers: int | None = None) -> Report:
    started = time.monotonic()
    root = _vault_root(cfg)
    backend = backend_for(cfg)
    report = Report(db=backend.location, vault=str(root), full=full)
    with backend.lock(lock_wait_s) as lock:
        stale, stale_bytes = backend.remove_leftovers(lock)  # SQLite: files of a killed --full
        if stale:
            report.warnings.append(("", f"removed {stale} files ({stale_bytes / 1e6:.1f} MB) left by an "
                                        f"interrupted full rebuild"))
        # A damaged index (pages that do not read) cannot be updated in place, nor trusted to say
        # what is unchanged: a whole-vault run rebuilds it, into a shadow copy as --full does, so the
        # damaged file serves until the new one replaces it (SQLite: ~0.1 s at 38k chunks to check).
        damage = None if full or changes is not None else backend.damage()
        if damage:
            full = report.full = True
            report.warnings.append(("", f"the index was damaged ({damage}): rebuilt from the vault"))
        if full:  # into a shadow copy, published at once when the run completes
            with backend.rebuild() as rebuild, _Interrupt() as stop:
                _run_on(rebuild.store, cfg, root, report, progress, stop, embed, full, None, workers)
                if not report.interrupted:
                    rebuild.publish()
        else:
            with backend.open() as store, _Interrupt() as stop:
                _run_on(store, cfg, root, report, progress, stop, embed, full, changes, workers)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _run_on(store: Store, cfg: Config, root: Path, report: Report, progress: Progress | None, stop: _Interrupt,
            embed: bool, full: bool, changes: list[str] | None, workers: int | None = None) -> None:
    if store.rebuilt_from is not None:
        report.warnings.append(("", f"index schema {store.rebuilt_from} is from an older vaultrag: "
                                    f"rebuilt from the vault"))
        changes = None
    _run(store, cfg, root, report, progress, stop, embed, full, changes, workers)
    compact = full and not report.interrupted
    optimize = compact or report.added + report.updated + report.deleted >= OPTIMIZE_AFTER_FILES
    if report.interrupted:
        if optimize:
            store.optimize()
    else:  # issue 12: hooks' per-vault injection threshold, measured while the index is optimized
        _optimize_and_recalibrate(store, cfg, optimize, compact)
    report.chunks_total = store.counts()["chunks"]


def _optimize_and_recalibrate(store: Store, cfg: Config, optimize: bool, compact: bool) -> None:
    """`store.optimize(compact=...)` when `optimize`, and the injection calibration when due. Both
    cost ~1 s at 40k chunks and the optimize is SQLite's C code (the GIL released), so where the
    store can open a second, read-only connection (SQLite in WAL mode) the calibration's searches
    run on it in a thread meanwhile: they see the same committed rows before and after the merge
    and the VACUUM, and the calibration is stored once both are done (issue 18). A store with a
    `pack_chunk_text` step (SQLite's deflate of chunk text, threads of zlib) runs it before that."""
    from .retrieve.inject import needs_recalibration, recalibrate

    if not (optimize and needs_recalibration(store) and hasattr(store, "open_reader")):
        if optimize:
            store.optimize(compact=compact)
        recalibrate(cfg, store)
        return
    import threading

    pack_text = getattr(store, "pack_chunk_text", None)
    if pack_text is not None:  # SQLite: every chunk deflated first, on both cores (zlib releases the GIL);
        pack_text()  # beside the calibration's Python it contended for the GIL (SciFact: 1.40 -> 1.28 s CPU)
    reader = store.open_reader()
    measured: list = []
    thread = threading.Thread(target=lambda: measured.append(_calibrate_quietly(cfg, reader)),
                              name="vaultrag-calibrate", daemon=True)
    thread.start()
    try:
        store.optimize(compact=compact)
    finally:
        thread.join()
        reader.close()
    recalibrate(cfg, store, force=True, measured=measured[0] if measured else None)  # due: checked above


def _calibrate_quietly(cfg: Config, reader):
    from .retrieve.inject import calibrate

    try:
        return calibrate(cfg, reader)
    except Exception as exc:  # recalibrate() measures again on the writer's store and logs there
        return exc


def _run(store: Store, cfg: Config, root: Path, report: Report, progress: Progress | None, stop: _Interrupt,
         embed: bool, full: bool, changes: list[str] | None, workers: int | None = None) -> None:
    # The token counter (tiktoken's tables: ~0.4 s) is loaded only when a file must be processed; until
    # then the name recorded by the last run stands in for it in the settings fingerprint.
    meta = store.meta()
    lazy_counter = _COUNTER is None and changes is None and bool(meta.tokenizer)  # (changes need it anyway)
    tok_name = meta.tokenizer if lazy_counter else token_counter()[0]
    fingerprint = settings_fingerprint(cfg, tok_name)
    reprocess_all = meta.settings != fingerprint
    embedder = _setup_vectors(store, cfg, report) if embed else None
    if not embed:
        report.embedding.reason = "disabled (--no-embed)"
        store.drop_vectors()
    if reprocess_all or (embedder is not None and report.embedding.reembedded_all):
        changes = None  # new settings or model: the whole vault

    key = path_key(store)
    report.warnings.extend(("", w) for w in exclude_patterns(cfg.exclude, root)[1])
    digest = store.get_meta(PATHS_VERIFIED_META) or ""
    snap = None
    if changes is None:
        found, skipped = scan(cfg, root)
        snap = snapshot(found, f"{__version__}/{INDEX_FORMAT}/{key}")
        if not reprocess_all and store.files_snapshot and store.get_meta(FILES_SNAPSHOT_META) == snap:
            # Nothing written since a whole-vault run left the index in line with this very scan.
            todo, stored_of, indexed, gone = [], {}, {}, []
        else:
            todo, stored_of, indexed, gone, digest = _compare_vault(store, found, key, reprocess_all, digest)
    else:
        rels = [r for r in dict.fromkeys(_vault_rel(c, str(root)) for c in changes) if r]
        indexed = store.files_at([stored_path(r, key) for r in rels], [display_path(r) for r in rels])
        found, skipped, gone = plan_paths(cfg, root, rels, indexed, key)
        stored_of = {rel: stored_path(rel, key) for rel in found}
        todo = [rel for rel, st in found.items() if is_stale(indexed.get(stored_of[rel]), st)]
    if todo and token_counter()[0] != tok_name:  # the counter changed since the last run: redo all
        assert changes is None
        tok_name = token_counter()[0]
        fingerprint = settings_fingerprint(cfg, tok_name)
        reprocess_all = True
        todo = list(found)
        stored_of = {rel: stored_of.get(rel) or stored_path(rel, key) for rel in found}
        indexed = store.files_at(list(stored_of.values()))
    count_tokens = token_counter()[1] if todo else None
    report.skipped.extend(skipped)
    report.scanned = len(found)
    report.unchanged += len(found) - len(todo)

    skips_before = len(report.skipped)
    written = _index_files(store, cfg, root, report, progress, stop, embedder, count_tokens, todo, found,
                           stored_of, indexed, reprocess_all, workers,
                           group=REBUILD_FILES_PER_GROUP if full else FILES_PER_GROUP)
    if len(report.skipped) != skips_before:
        snap = None  # a file the index lacks (unreadable, too large...): the next run looks at it again
    if not report.interrupted:
        for start in range(0, len(gone), FILES_PER_GROUP):
            with store.transaction():
                for rel in gone[start:start + FILES_PER_GROUP]:
                    report.deleted += bool(store.delete_file(rel))
        if cfg.sessions is not None and changes is None:  # issue 17: past Claude Code sessions, same store
            report.sessions = _index_sessions(store, cfg, embedder, report, stop)
        if embedder is not None and report.embedding.reembedded_all:
            _embed_missing(store, embedder, cfg, report)
        with store.transaction():
            store.update_meta(settings=fingerprint, tokenizer=tok_name, vault=str(root),
                              last_reindex={"at": time.time(), "report": _brief(report)},
                              embedding=asdict(report.embedding))
            if written or gone:  # the note languages change only with the notes (a no-op reads no files table)
                langs = notelang.vault_languages(store.note_languages(), store.note_count())
                store.set_meta(notelang.NOTE_LANGS_META, langs)
            delta = paths_digest([p for p in written if p not in indexed] + gone)
            if digest and (delta != paths_digest(()) or changes is None):
                # XOR is its own inverse: a digest that did not match the index still does not after this
                store.set_meta(PATHS_VERIFIED_META, format(int(digest, 16) ^ int(delta, 16), "032x"))
            skips = {} if changes is None else {  # a run by path keeps the skips of the files it did not look at
                k: v for k, v in json.loads(store.get_meta(READ_SKIPS_META) or "{}").items() if k not in stored_of.values()}
            skips.update(report.read_skips)
            if skips or store.get_meta(READ_SKIPS_META):
                store.set_meta(READ_SKIPS_META, json.dumps(skips, sort_keys=True))
            if snap is not None and store.files_snapshot:  # after every file write of this run
                store.set_meta(FILES_SNAPSHOT_META, snap)


def _compare_vault(store: Store, found: dict[str, os.stat_result], key: str, reprocess_all: bool, digest: str
                   ) -> tuple[list[str], dict[str, str], dict, list[str], str]:
    """The whole-vault comparison: (todo, stored path of each found path, the records of the todo
    paths, stored paths gone from the vault, the paths digest this run leaves). One query of
    (path, mtime, size) for every file; full records only for the files to process."""
    stats = store.file_stats()
    actual = paths_digest(p for p in stats if not is_session_path(p))  # sessions: their own offsets
    todo, stored_of = plan_vault(found, stats, key, reprocess_all, trusted=digest == actual)
    live = set(stored_of.values())
    gone = [p for p in stats if p not in live and not is_session_path(p)]  # sessions: _index_sessions
    indexed = store.files_at([stored_of[rel] for rel in todo if stored_of[rel] in stats]) if todo else {}
    return todo, stored_of, indexed, gone, actual  # every name was checked (or trusted) on this run


def paths_digest(paths: Iterable[str]) -> str:
    """Order-free digest of a set of stored paths (with the version that checked them): the XOR of a
    128-bit hash of each, so adding or removing paths updates it without reading the others."""
    acc = 0
    salt = f"{__version__}/{INDEX_FORMAT}/".encode()
    for p in paths:
        acc ^= int.from_bytes(hashlib.blake2b(salt + p.encode("utf-8", "surrogateescape"), digest_size=16).digest(), "big")
    return format(acc, "032x")


_COUNTER: tuple[str, Callable[[str], int]] | None = None  # loaded once a process (the counter is pure)


def token_counter() -> tuple[str, Callable[[str], int]]:
    global _COUNTER
    if _COUNTER is None:
        _COUNTER = load_counter()
    return _COUNTER


def plan_vault(found: dict[str, os.stat_result], indexed: dict[str, tuple[int, int]], key: str, reprocess_all: bool = False,
               trusted: bool = False) -> tuple[list[str], dict[str, str]]:
    """(paths to (re)process, stored path of every found path) for a whole-vault `scan`, against
    `indexed` as `Store.file_stats` gives it (stored path -> (mtime_ns, size)).

    `trusted` (PATHS_VERIFIED_META matches): a path the index holds as itself was clean when this
    vaultrag stored it (a redacted name is stored tagged, and a tagged path never ends in .md), so
    an unchanged one skips `stored_path`, which scrubs every part of the name: most of the cost of
    a reindex with nothing changed."""
    todo: list[str] = []
    stored_of: dict[str, str] = {}
    for rel, st in found.items():
        rec = indexed.get(rel) if trusted else None
        if rec is not None and rec == (st.st_mtime_ns, st.st_size):
            stored_of[rel] = rel
            if reprocess_all:
                todo.append(rel)
            continue
        stored = stored_of[rel] = stored_path(rel, key)
        rec = indexed.get(stored)
        if reprocess_all or rec is None or rec != (st.st_mtime_ns, st.st_size):
            todo.append(rel)
    return todo, stored_of


def _vault_rel(path: str, root: str) -> str | None:
    """`path` (absolute, or relative to the vault) as a vault-relative POSIX path, or None."""
    full = os.path.normpath(path if os.path.isabs(path) else os.path.join(root, path))
    if not full.startswith(root + os.sep):
        return None
    return full[len(root) + 1:].replace(os.sep, "/")


def plan_paths(cfg: Config, root: Path, rels: list[str], indexed: dict, key: str
               ) -> tuple[dict[str, os.stat_result], list[tuple[str, str]], list[str]]:
    """(files to check, skips, stored paths to delete) for reported changes (see `reindex_paths`).

    A file is taken when it is a regular Markdown file the config covers, reached through real
    folders only (no symlink on the way, as `scan` never follows one); a folder is walked as `scan`
    would. Indexed notes at or under a reported path that is not (or no longer) such a file go."""
    root_s = str(root)
    found: dict[str, os.stat_result] = {}
    skipped: list[tuple[str, str]] = []
    gone: dict[str, None] = {}
    by_shown: dict[str, list[str]] | None = None
    for rel in rels:
        full = os.path.join(root_s, *rel.split("/"))
        try:
            st = os.lstat(full)
            real = os.path.realpath(full) == full
        except OSError:
            st, real = None, False
        if st is not None and real and stat_mode.S_ISDIR(st.st_mode):
            if allowed(cfg, root, rel + "/x.md"):
                sub, sub_skipped = scan(cfg, root, start=rel)
                found.update(sub)
                skipped.extend(sub_skipped)
        elif st is not None and real and stat_mode.S_ISREG(st.st_mode) and allowed(cfg, root, rel):
            found[rel] = st
            continue
        # Not (or no longer) a note the index may hold: what was indexed at or under it goes.
        if by_shown is None:
            by_shown = {}
            for p in indexed:
                by_shown.setdefault(shown_part(p), []).append(p)
        shown = display_path(rel)
        for sp, stored_list in by_shown.items():
            if sp == shown or sp.startswith(shown + "/"):
                for stored in stored_list:
                    real_rel = resolve(root_s, stored, key)
                    if real_rel is None or real_rel not in found and not _still_note(cfg, root, real_rel):
                        gone[stored] = None
    kept = {stored_path(r, key) for r in found}
    return found, skipped, [p for p in gone if p not in kept]


def _still_note(cfg: Config, root: Path, rel: str) -> bool:
    """Whether `rel` is still a regular Markdown file the index covers (no symlink on the way)."""
    full = os.path.join(str(root), *rel.split("/"))
    try:
        return (stat_mode.S_ISREG(os.lstat(full).st_mode) and os.path.realpath(full) == full
                and allowed(cfg, root, rel))
    except OSError:
        return False


def _index_files(store: Store, cfg: Config, root: Path, report: Report, progress: Progress | None,
                 stop: _Interrupt, embedder, count_tokens, todo: list[str], found: dict, stored_of: dict,
                 indexed: dict, reprocess_all: bool, workers: int | None = None, group: int = FILES_PER_GROUP
                 ) -> list[str]:
    """Read, scrub, chunk and embed `todo` (in worker processes when there are many: index_pool),
    writing each group of files in one transaction (every file stays fully old or fully new when a
    run is killed; the group only sets how much work a kill loses). Progress is reported after each
    commit, so what it reports is stored."""
    from contextlib import closing

    from .index_pool import Job, pool_size, prepared_files, resolve_workers, start_method

    jobs = []
    for rel in todo:
        rec = indexed.get(stored_of[rel])
        jobs.append(Job(rel, stored_of[rel], found[rel], None if rec is None or reprocess_all else rec.hash))
    method = start_method()
    size = pool_size(len(jobs), resolve_workers(cfg.workers if workers is None else workers), method)
    report.workers = max(report.workers, size)
    written: list[str] = []
    forms = getattr(store, "precompute_forms", None)  # search forms (FTS5 text, tsvectors) made by the workers
    pack = getattr(store, "precompute_vectors", None)  # and vectors in the store's form (SQLite: int8 blobs)
    with closing(prepared_files(jobs, root, cfg, count_tokens, embedder, size, method, forms, pack)) as items:
        for start in range(0, len(jobs), group):
            if stop.flag:
                break
            done = [next(items) for _ in jobs[start:start + group]]
            _write_group(store, cfg, report, progress, embedder, done, indexed, written, len(jobs), pack is not None)
    if stop.flag:
        report.interrupted = True
    return written


def _write_group(store: Store, cfg: Config, report: Report, progress: Progress | None, embedder, group: list,
                 indexed: dict, written: list[str], total: int, packed: bool = False) -> None:
    """Write the prepared files of `group` in one transaction. `packed`: the vectors workers computed
    come in the store's form (index_pool's `pack`)."""
    batch = []
    touched: list[tuple[str, os.stat_result]] = []
    computed: dict = {}
    for p, rows in group:
        shown = shown_part(p.job.stored)
        if p.skip:
            report.skipped.append((shown, p.skip))
            report.not_read += 1
            report.read_skips[p.job.stored] = [p.job.st.st_mtime_ns, p.job.st.st_size, p.skip]
            continue
        if p.touched:
            touched.append((p.job.stored, p.job.st))
            continue
        if rows is not None:
            computed.update(rows)
        if p.invalid_utf8:
            report.warnings.append((shown, "invalid UTF-8; undecodable bytes replaced with U+FFFD"))
        if p.job.stored != p.job.rel:
            report.warnings.append((shown, "file or folder name holds a secret or control characters: "
                                           "indexed and shown under this redacted name"))
        for rule, n in p.secrets.items():
            report.secrets[rule] = report.secrets.get(rule, 0) + n
        report.warnings.extend((shown, w) for w in p.warnings)
        batch.append((p.fw, list(p.inputs), p.job.stored in indexed))
    vectors = _embed_batch(store, embedder, [b[1] for b in batch], [b[0] for b in batch], cfg, report,
                           computed=computed if computed else None, packed=packed)
    with store.transaction():
        for stored, st in touched:
            store.touch_file(stored, st.st_mtime_ns, st.st_size)
        pairs = [(fw, vecs) for (fw, _inputs, _existed), vecs in zip(batch, vectors)]
        write_files = getattr(store, "write_files", None)  # SQLite: the files rows first (store.py)
        chunk_counts = write_files(pairs) if write_files else [store.write_file(fw, vecs) for fw, vecs in pairs]
    report.touched += len(touched)
    report.unchanged += len(touched)
    report.chunks_written += sum(chunk_counts)
    for fw, _inputs, existed in batch:
        if existed:
            report.updated += 1
        else:
            report.added += 1
        written.append(fw.path)
        if progress:
            progress(len(written), total, fw.path)


def _index_sessions(store: Store, cfg: Config, embedder, report: Report, stop: _Interrupt, only=None) -> dict:
    from .sessions.index import index_sessions

    def count_tokens(text: str) -> int:  # tiktoken's tables load only when a transcript has news
        return token_counter()[1](text)

    sess = index_sessions(store, Path(cfg.sessions), max_chars=cfg.max_chars, count_tokens=count_tokens,
                          embed=lambda inputs, files: _embed_batch(store, embedder, inputs, files, cfg, report),
                          only=only, stop=lambda: stop.flag)
    for rule, n in sess.secrets.items():
        report.secrets[rule] = report.secrets.get(rule, 0) + n
    report.chunks_written += sess.chunks_written
    return sess.to_dict()


def _brief(report: Report) -> dict:
    return {k: getattr(report, k) for k in ("scanned", "added", "updated", "deleted", "unchanged")} | \
        {"skipped": len(report.skipped)} | ({"sessions": report.sessions} if report.sessions else {})


def path_key(store: Store) -> str:
    """The index's key for tagging redacted paths (created on first use; see vaultrag/paths.py)."""
    key = store.get_meta(KEY_META)
    if not key:
        key = new_key()
        with store.transaction():
            store.set_meta(KEY_META, key)
    return key


def is_stale(rec, st: os.stat_result) -> bool:
    """True when a file on disk is new or differs (mtime_ns, size) from its index record."""
    return rec is None or (rec.mtime_ns, rec.size) != (st.st_mtime_ns, st.st_size)


def changed_paths(found: dict[str, os.stat_result], indexed: dict, key: str | None = None) -> list[str]:
    """New and changed paths of a `scan` result, then indexed paths no longer on disk (as stored
    and shown: redacted where a name holds a secret)."""
    stored_of = {rel: stored_path(rel, key) if key else rel for rel in found}
    live = set(stored_of.values())
    return [shown_part(stored_of[rel]) for rel, st in found.items() if is_stale(indexed.get(stored_of[rel]), st)] + \
        [shown_part(p) for p in indexed if p not in live and not is_session_path(p)]
