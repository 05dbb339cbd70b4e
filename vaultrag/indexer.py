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
from collections import Counter
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Callable

from . import chunker, markdown
from .config import ALWAYS_EXCLUDED, Config
from .errors import VaultNotFound
from .paths import KEY_META, display_path, new_key, shown_part, stored_path
from .scrubber import scrub
from .sessions import is_session_path
from .store import ChunkRow, FileWrite, LinkRow, Store, backend_for
from .textutil import meta_key
from .tokens import load_counter

log = logging.getLogger(__name__)

MARKDOWN_SUFFIXES = (".md", ".markdown")
BINARY_SNIFF_BYTES = 8192  # a NUL byte in the first 8 KB means binary, as git decides
OPTIMIZE_AFTER_FILES = 200  # FTS queries slowed 95 -> 150 ms after many small batches until 'optimize'
FILES_PER_EMBED_GROUP = 64  # parse this many files, embed their chunks in batches, then write each
# Vector reuse key: 64 bits of sha256 of the embedded input. A collision (~1e-10 at 100k chunks)
# would only give one chunk another's vector; the file hash stays full length (live citations).
EMBED_HASH_HEX = 16
# Bump when the stored form of chunks changes (FTS transform, key normalisation, embed input):
# a new value re-processes every file on the next reindex.
INDEX_FORMAT = "1"

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
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    chunks_written: int = 0
    chunks_total: int = 0
    secrets: dict[str, int] = field(default_factory=dict)
    embedding: EmbeddingReport = field(default_factory=EmbeddingReport)
    sessions: dict | None = None  # issue 17: sessions.index.SessionsReport, when `sessions:` is set
    interrupted: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        d["warnings"] = [{"path": p, "warning": w} for p, w in self.warnings]
        return d


# -- scanning ---------------------------------------------------------------------------------
def scan(cfg: Config, root: Path) -> tuple[dict[str, os.stat_result], list[tuple[str, str]]]:
    """Markdown files under `root` allowed by the config, as {relative path: stat}, plus skips.

    Symlinks are never followed: a link out of the vault could leak other files into the index,
    and a link inside it would index its target twice or loop. Hidden folders are skipped, as
    Obsidian itself hides them.
    """
    found: dict[str, os.stat_result] = {}
    skipped: list[tuple[str, str]] = []
    exclude = exclude_patterns(cfg.exclude, root)[0]
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skipped.append((display_path(_rel(Path(folder), root)) + "/", f"folder unreadable: {exc.strerror}"))
            continue
        for entry in entries:
            rel = _rel(Path(entry.path), root)
            if entry.is_symlink():
                if entry.name.lower().endswith(MARKDOWN_SUFFIXES) or _is_dir(entry.path):
                    target = os.path.realpath(entry.path)
                    inside = Path(target).is_relative_to(root)
                    skipped.append((display_path(rel), "symlink not followed" + ("" if inside else " (points outside the vault)")))
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") or entry.name in ALWAYS_EXCLUDED or _excluded(rel, exclude):
                    continue
                stack.append(Path(entry.path))
                continue
            if not entry.name.lower().endswith(MARKDOWN_SUFFIXES) or not entry.is_file(follow_symlinks=False):
                continue
            if _excluded(rel, exclude) or not _included(rel, cfg.include):
                continue
            try:
                found[rel] = entry.stat(follow_symlinks=False)
            except OSError as exc:
                skipped.append((display_path(rel), f"cannot stat: {exc.strerror}"))
    return found, skipped


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except OSError:
        return False


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def exclude_patterns(patterns: tuple[str, ...], root: Path) -> tuple[tuple[str, ...], list[str]]:
    """`exclude` as vault-relative patterns, plus a warning per pattern that cannot apply.

    An absolute pattern (or `~/...`) inside the vault becomes relative to it (it used to match
    nothing, silently); one outside the vault is dropped with a warning."""
    out: list[str] = []
    warnings: list[str] = []
    for pat in patterns:
        expanded = os.path.expanduser(pat)
        if not os.path.isabs(expanded):
            out.append(pat)
            continue
        for base in (root, Path(os.path.realpath(root))):
            try:
                rel = Path(os.path.normpath(expanded)).relative_to(base).as_posix()
                break
            except ValueError:
                rel = None
        if rel is None or rel == ".":
            warnings.append(f"exclude pattern {pat!r} is outside the vault {root} (or is the vault itself); "
                            f"ignored. Use a path relative to the vault, e.g. 'Private' or 'Archive/*'")
        else:
            out.append(rel)
    return tuple(out), warnings


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    parts = rel.split("/")
    return any(fnmatch(rel, p) or any(fnmatch(part, p) for part in parts) for p in patterns)


def _included(rel: str, include: tuple[str, ...]) -> bool:
    if not include:
        return True
    return any(inc in (".", "/") and "/" not in rel or rel == inc.strip("/") or
               rel.startswith(inc.strip("/") + "/") for inc in include)


# -- reading and building rows ----------------------------------------------------------------
def read_note(root: Path, rel: str, max_bytes: int) -> tuple[bytes | None, str | None, str | None]:
    """(raw bytes, text, None) or (None, None, reason to skip). Text has the BOM removed.

    Read through `safe_io.read_in_vault`: the scan skips symlinks, but a note swapped for a link
    (or a FIFO) after the scan must not be read either (it could pull a file from outside the vault
    into the index)."""
    from .safe_io import RefusedFile, read_in_vault

    try:
        size = os.lstat(root / rel).st_size
        if size > max_bytes:
            return None, None, f"larger than max_file_bytes ({size / 1e6:.1f} MB > {max_bytes / 1e6:.1f} MB)"
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


def embed_input(title: str, heading_path: str, text: str) -> str:
    """What the embedding model sees for a chunk: note title and heading give it its topic."""
    return "\n".join(p for p in (title, heading_path, text) if p)


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
                   chunks=tuple(rows), links=links, keys=tuple(dict.fromkeys(keys)))
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
                       "tokenizer": tokenizer}, sort_keys=True)


def reindex(cfg: Config, *, full: bool = False, progress: Progress | None = None, lock_wait_s: float = 30.0,
            embed: bool = True) -> Report:
    """Bring the index in line with the vault. `embed=False` builds the lexical index only."""
    started = time.monotonic()
    if cfg.vault is None:
        raise VaultNotFound("no vault configured: pass --vault PATH or set `vault:` in the config file")
    root = Path(cfg.vault).expanduser().resolve()
    if not root.is_dir():
        raise VaultNotFound(f"vault folder {root} does not exist or is not a folder; check --vault / `vault:`")
    backend = backend_for(cfg)
    report = Report(db=backend.location, vault=str(root), full=full)
    with backend.lock(lock_wait_s) as lock:
        stale, stale_bytes = backend.remove_leftovers(lock)  # SQLite: files of a killed --full
        if stale:
            report.warnings.append(("", f"removed {stale} files ({stale_bytes / 1e6:.1f} MB) left by an "
                                        f"interrupted full rebuild"))
        if full:  # into a shadow copy, published at once when the run completes
            with backend.rebuild() as rebuild, _Interrupt() as stop:
                _run_on(rebuild.store, cfg, root, report, progress, stop, embed, full)
                if not report.interrupted:
                    rebuild.publish()
        else:
            with backend.open() as store, _Interrupt() as stop:
                _run_on(store, cfg, root, report, progress, stop, embed, full)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _run_on(store: Store, cfg: Config, root: Path, report: Report, progress: Progress | None, stop: _Interrupt,
            embed: bool, full: bool) -> None:
    if store.rebuilt_from is not None:
        report.warnings.append(("", f"index schema {store.rebuilt_from} is from an older vaultrag: "
                                    f"rebuilt from the vault"))
    _run(store, cfg, root, report, progress, stop, embed, full)
    if not report.interrupted:  # issue 12: hooks' per-vault injection threshold
        from .retrieve.inject import recalibrate
        recalibrate(cfg, store)


def _run(store: Store, cfg: Config, root: Path, report: Report, progress: Progress | None, stop: _Interrupt,
         embed: bool, full: bool) -> None:
    tok_name, count_tokens = load_counter()
    fingerprint = settings_fingerprint(cfg, tok_name)
    reprocess_all = store.meta().settings != fingerprint
    embedder = _setup_vectors(store, cfg, report) if embed else None
    if not embed:
        report.embedding.reason = "disabled (--no-embed)"
        store.drop_vectors()

    found, skipped = scan(cfg, root)
    report.warnings.extend(("", w) for w in exclude_patterns(cfg.exclude, root)[1])
    report.skipped.extend(skipped)
    report.scanned = len(found)
    indexed = store.files()
    key = path_key(store)
    stored_of = {rel: stored_path(rel, key) for rel in found}
    todo = [rel for rel, st in found.items() if reprocess_all or is_stale(indexed.get(stored_of[rel]), st)]
    report.unchanged += len(found) - len(todo)

    done = 0
    total = len(todo)
    for start in range(0, len(todo), FILES_PER_EMBED_GROUP):
        if stop.flag:
            report.interrupted = True
            break
        batch: list[tuple[FileWrite, list[str], bool]] = []
        for rel in todo[start:start + FILES_PER_EMBED_GROUP]:
            st = found[rel]
            raw, text, reason = read_note(root, rel, cfg.max_file_bytes)
            stored = stored_of[rel]
            rec = indexed.get(stored)
            shown = shown_part(stored)
            if reason:
                report.skipped.append((shown, reason))
                continue
            digest = hashlib.sha256(raw).hexdigest()
            if rec is not None and rec.hash == digest and not reprocess_all:
                with store.transaction():
                    store.touch_file(stored, st.st_mtime_ns, st.st_size)
                report.touched += 1
                report.unchanged += 1
                continue
            if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
                report.warnings.append((shown, "invalid UTF-8; undecodable bytes replaced with U+FFFD"))
            fw, inputs, secrets, warnings = build_file(rel, st, raw, text, cfg, count_tokens, stored)
            if stored != rel:
                report.warnings.append((shown, "file or folder name holds a secret or control characters: "
                                               "indexed and shown under this redacted name"))
            for rule, n in secrets.items():
                report.secrets[rule] = report.secrets.get(rule, 0) + n
            report.warnings.extend((shown, w) for w in warnings)
            batch.append((fw, inputs, rec is not None))
        vectors = _embed_batch(store, embedder, [b[1] for b in batch], [b[0] for b in batch], cfg, report)
        for (fw, _inputs, existed), vecs in zip(batch, vectors):
            with store.transaction():
                report.chunks_written += store.write_file(fw, vecs)
            if existed:
                report.updated += 1
            else:
                report.added += 1
            done += 1
            if progress:
                progress(done, total, fw.path)
            if stop.flag:
                break
        if stop.flag:
            report.interrupted = True
            break

    if not report.interrupted:
        live = set(stored_of.values())
        gone = [p for p in indexed if p not in live and not is_session_path(p)]  # sessions: below
        for rel in gone:
            with store.transaction():
                store.delete_file(rel)
            report.deleted += 1
        if cfg.sessions is not None:  # issue 17: past Claude Code sessions, through the same store
            report.sessions = _index_sessions(store, cfg, embedder, count_tokens, report, stop)
        if embedder is not None and report.embedding.reembedded_all:
            _embed_missing(store, embedder, cfg, report)
        with store.transaction():
            store.update_meta(settings=fingerprint, tokenizer=tok_name, vault=str(root),
                              last_reindex={"at": time.time(), "report": _brief(report)},
                              embedding=asdict(report.embedding))
    if full and not report.interrupted:
        store.optimize(compact=True)  # one VACUUM (optimize alone may run one when pages freed)
    elif report.added + report.updated + report.deleted >= OPTIMIZE_AFTER_FILES:
        store.optimize()
    report.chunks_total = store.counts()["chunks"]


def _index_sessions(store: Store, cfg: Config, embedder, count_tokens, report: Report, stop: _Interrupt,
                    only=None) -> dict:
    from .sessions.index import index_sessions

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


# -- vectors ----------------------------------------------------------------------------------
def _setup_vectors(store: Store, cfg: Config, report: Report):
    """Load the embedder and make sure the vector table belongs to it. None when unavailable."""
    emb = report.embedding
    if store.vec_error is not None:
        emb.reason = store.vec_error
        if store.meta().vector_dim is not None:  # vectors exist but can't be kept in step now
            with store.transaction():
                store.update_meta(vectors_invalid=True)
        return None
    try:
        from .embedder import load_embedder

        embedder = load_embedder(cfg.model)
    except Exception as exc:  # missing model2vec, unreadable model folder, ...
        emb.reason = f"embedding model unavailable: {exc}"
        log.warning("%s", emb.reason)
        return None
    emb.available = True
    emb.model = embedder.model_id
    emb.fallback_reason = embedder.fallback_reason
    fp = json.dumps({"model": embedder.model_id, "dim": embedder.dim, "vocab": embedder.vocab_size,
                     "weights_sha256": embedder.weights_sha256, "vector_type": cfg.vector_type}, sort_keys=True)
    meta = store.meta()
    if meta.model_fingerprint != fp or not store.has_vectors() or meta.vectors_invalid:
        previous = meta.model()
        with store.transaction():
            store.reset_vectors(embedder.dim, cfg.vector_type)
            store.update_meta(model_fingerprint=fp, model_path=str(embedder.path), vectors_invalid=False)
        if store.counts()["chunks"]:
            emb.reembedded_all = True
            log.info("embedding model changed (%s -> %s): re-embedding every chunk", previous, embedder.model_id)
    return embedder


def _embed_batch(store: Store, embedder, inputs_per_file: list[list[str]], files: list[FileWrite], cfg: Config,
                 report: Report) -> list[list[bytes] | None]:
    if embedder is None:
        report.embedding.skipped += sum(len(i) for i in inputs_per_file)
        return [None] * len(files)
    hashes = [ch.embed_hash for fw in files for ch in fw.chunks]
    known = store.vectors_by_embed_hash(hashes)
    todo: dict[str, str] = {}
    for fw, inputs in zip(files, inputs_per_file):
        for ch, inp in zip(fw.chunks, inputs):
            if ch.embed_hash not in known:
                todo.setdefault(ch.embed_hash, inp)
    if todo:
        vecs = embedder.encode(list(todo.values()), batch_size=cfg.embed_batch_size)
        for h, blob in zip(todo, store.pack_vectors(vecs, cfg.vector_type)):
            known[h] = blob
    report.embedding.embedded += len(todo)
    report.embedding.reused += len(hashes) - len(todo)
    return [[known[ch.embed_hash] for ch in fw.chunks] for fw in files]


def _embed_missing(store: Store, embedder, cfg: Config, report: Report) -> None:
    rows = list(store.chunks_without_vectors())
    for i in range(0, len(rows), 1024):
        part = rows[i:i + 1024]
        vecs = embedder.encode([embed_input(t, h, x) for _, t, h, x in part], batch_size=cfg.embed_batch_size)
        with store.transaction():
            for (cid, *_), blob in zip(part, store.pack_vectors(vecs, cfg.vector_type)):
                if blob is not None:
                    store.put_vector(cid, blob)
        report.embedding.embedded += len(part)


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
