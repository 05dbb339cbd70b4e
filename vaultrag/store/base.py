"""The storage seam: what the indexer and the retriever may ask of an index, in their own terms.

Two backends implement it: `store/sqlite/` (one file, FTS5 + sqlite-vec, the embedded default) and
`store/postgres/` (a shared database, tsvector + pgvector, many collections). Above this line
nothing knows FTS5 MATCH syntax, tsquery syntax, int8 rotation, WAL files or generations: the
retriever hands over backend-neutral `Term`s and query vectors and gets (chunk id, score) back.
Rows leave a backend as the frozen records below (vaultrag.frozen: dataclass-compatible, cheaper to build). Standard library only (hook path).

`Store(location, ...)` opens the backend the location names (a path: SQLite; `postgresql://`:
PostgreSQL), so `Store(path, readonly=True)` keeps working; `store.open` does the same from a
`Config`.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager

from ..frozen import field, fields, frozen


# -- what goes in ---------------------------------------------------------------------------------
@frozen
class ChunkRow:
    """One chunk ready to store (built by the indexer from a chunker.Chunk)."""
    section_index: int
    chunk_index: int
    heading_path: str
    context: str
    text: str
    search_text: str | None
    line_start: int
    line_end: int
    content_hash: str
    embed_hash: str
    tokens: int
    block_ids: str


@frozen
class LinkRow:
    chunk_pos: int | None  # position in FileWrite.chunks of the chunk holding the link
    target: str
    target_key: str
    anchor: str | None
    kind: str
    text: str | None
    line: int


@frozen
class FileWrite:
    """Everything stored for one document: its chunks, links and metadata keys."""
    path: str
    mtime_ns: int
    size: int
    hash: str
    title: str
    note_type: str | None
    stem_key: str
    chunks: tuple[ChunkRow, ...]
    links: tuple[LinkRow, ...]
    keys: tuple[tuple[str, str, int | None], ...]  # (key, kind, chunk_pos or None)
    lang: str | None = None  # Snowball stemmer of its Latin/Cyrillic words (notelang), None: none
    # Issue 18: each chunk's search forms as the store writes them, computed ahead by an index worker
    # (the store's `precompute_forms`): SQLite's FTS5 (text, heading, context) (sqlite/store.py
    # fts_forms), PostgreSQL's (tsvector, token count) (postgres/analyzer.py file_forms); None: the
    # store computes them.
    search_forms: tuple[tuple, ...] | None = field(default=None, compare=False)


# -- what comes out -------------------------------------------------------------------------------
@frozen
class FileRecord:
    id: int
    path: str
    mtime_ns: int
    size: int
    hash: str


@frozen
class StoredChunk:
    """A chunk as the retriever sees it, with its note's identity."""
    id: int
    file_id: int
    path: str
    title: str
    file_hash: str
    mtime_ns: int
    size: int
    section_index: int
    chunk_index: int
    heading_path: str
    context: str
    text: str
    line_start: int
    line_end: int
    content_hash: str
    tokens: int
    block_ids: str
    root: str | None = None  # the vault folder `path` is relative to, when a store reads several collections


@frozen
class LinkOut:
    file_id: int
    chunk_id: int | None
    target_key: str
    anchor: str | None
    kind: str
    text: str | None
    line: int


# -- query terms ----------------------------------------------------------------------------------
@frozen
class Term:
    """One lexical query term, backend-neutral. `text` is a word, or CJK characters separated by
    spaces (a bigram: the characters must stand next to each other); `prefix` matches every word
    that starts with `text` (after the index's own folding and stemming). Each backend turns a
    tuple of Terms into its own syntax (FTS5 MATCH strings, tsquery) and never sees user text."""
    text: str
    prefix: bool = False
    # Typo tolerance (retrieve/channels.typo_alternatives): index terms near `text`, each matched
    # as a prefix and OR-ed with it; the group counts as one term (document counts, coverage).
    alternatives: tuple[str, ...] = ()

    def __str__(self) -> str:  # for --explain and logs
        word = self.text + ("*" if self.prefix else "")
        return "(" + " OR ".join([word] + [a + "*" for a in self.alternatives]) + ")" if self.alternatives else word


# -- index metadata -------------------------------------------------------------------------------
@frozen
class IndexMeta:
    """What the index records about itself (one typed record instead of string keys)."""
    schema_version: int = 0
    vault: str | None = None
    settings: str | None = None  # indexer.settings_fingerprint(): chunking, tokenizer, format
    tokenizer: str | None = None
    model_fingerprint: str | None = None  # JSON: model id, dim, vocab, weights hash, vector type
    model_path: str | None = None  # folder the query encoder loads (the model the index was built with)
    vector_type: str = "int8"
    vector_dim: int | None = None
    vectors_invalid: bool = False  # vectors out of step with the chunks: the next reindex rebuilds them
    last_reindex: dict = field(default_factory=dict)  # {"at": epoch seconds, "report": {...}}
    embedding: dict = field(default_factory=dict)  # indexer.EmbeddingReport as a dict
    path_key: str | None = None  # hex HMAC key of redacted file names (vaultrag/paths.py, issue 14)
    inject_calibration: str | None = None  # JSON: this vault's injection calibration (retrieve/inject.py)

    def model(self) -> str | None:
        try:
            return json.loads(self.model_fingerprint or "{}").get("model")
        except ValueError:
            return None


# Issue 18: meta row holding a digest of the vault as the last whole-vault reindex left it in line
# with the index (paths, mtimes, sizes); backends with `files_snapshot` drop it on any document write.
FILES_SNAPSHOT_META = "files_snapshot"
META_FIELDS = tuple(f.name for f in fields(IndexMeta))
_JSON_FIELDS = ("last_reindex", "embedding")


def meta_to_strings(changes: dict) -> dict[str, str | None]:
    """IndexMeta field values as the key/value strings backends store (None: remove the key)."""
    out: dict[str, str | None] = {}
    for key, value in changes.items():
        if key not in META_FIELDS:
            raise KeyError(f"unknown index metadata field {key!r}; known: {', '.join(META_FIELDS)}")
        if value is None or value is False:
            out[key] = None
        elif key in _JSON_FIELDS:
            out[key] = json.dumps(value)
        elif value is True:
            out[key] = "1"
        else:
            out[key] = str(value)
    return out


def meta_from_strings(raw: dict[str, str]) -> IndexMeta:
    """The stored key/value strings as an IndexMeta (unknown keys ignored, bad JSON as empty)."""
    values: dict = {}
    for key in META_FIELDS:
        if key not in raw or raw[key] is None:
            continue
        value = raw[key]
        if key in _JSON_FIELDS:
            try:
                values[key] = json.loads(value) if value else {}
            except ValueError:
                values[key] = {}
        elif key in ("schema_version", "vector_dim"):
            values[key] = int(value)
        elif key == "vectors_invalid":
            values[key] = value == "1"
        else:
            values[key] = value
    return IndexMeta(**values)


# -- the store ------------------------------------------------------------------------------------
class Store(ABC):
    """An open index of one vault (SQLite file) or one collection (PostgreSQL).

    Writers wrap each document in `transaction()`; readers never see half a document. Scores
    are larger-is-better everywhere; ties break on chunk id (insertion order) inside a backend.
    """

    #: why vectors cannot be used at all here (extension missing...), else None
    vec_error: str | None = None
    #: schema version of an index this open replaced (a too-old SQLite file), else None
    rebuilt_from: int | None = None

    def __new__(cls, *args, **kwargs):
        if cls is Store:  # Store(location, ...) opens the backend the location names
            from .open import backend_class

            cls = backend_class(args[0] if args else kwargs.get("location", kwargs.get("path")))
        return super().__new__(cls)

    # -- lifecycle
    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        """Close; a driver error leaving the block that says the index is damaged or locked leaves
        as IndexCorrupt / IndexLocked, with the command that fixes it (every face shows one line)."""
        self.close()
        translated = self.translate(exc) if exc is not None else None
        if translated is not None:
            raise translated from exc

    def translate(self, exc: BaseException) -> Exception | None:
        """The IndexCorrupt / IndexLocked a driver error raised while using this store means, or None
        (it says nothing about the index; a backend that cannot tell says None): for callers that
        keep the store open (the resident service) and for `__exit__`."""
        return None

    def usable(self) -> bool:
        """False once this store cannot serve another call (its server closed the connection): a
        caller that keeps stores open (the resident service) opens a new one."""
        return True

    def check(self) -> str | None:
        """None when the stored index reads as written, else what is damaged (SQLite: every page;
        a backend that cannot tell says None)."""
        return None

    @abstractmethod
    def transaction(self) -> AbstractContextManager: ...

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the index lives, for reports (a path, or a URL without its password + collection)."""

    # -- metadata
    @abstractmethod
    def meta(self) -> IndexMeta: ...

    @abstractmethod
    def update_meta(self, **changes) -> None:
        """Set IndexMeta fields (None/False removes them). Call inside `transaction()`."""

    @abstractmethod
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """One metadata key as its stored string (the IndexMeta field names), else `default`."""

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None:
        """Store one metadata key as a string. Call inside `transaction()`."""

    # -- documents (write side)
    @abstractmethod
    def files(self) -> dict[str, FileRecord]: ...

    def file_stats(self) -> dict[str, tuple[int, int]]:
        """stored path -> (mtime_ns, size) of every document: what a whole-vault comparison needs
        (issue 18: cheaper than `files`). This default derives it from `files`."""
        return {p: (r.mtime_ns, r.size) for p, r in self.files().items()}

    #: issue 18: True when every document write removes the FILES_SNAPSHOT_META row in the same
    #: transaction (SQLite: triggers on `files`), so a stored snapshot proves nothing changed since
    files_snapshot: bool = False

    def files_at(self, paths: Sequence[str], folders: Sequence[str] = ()) -> dict[str, FileRecord]:
        """The records of `paths` and of every path under one of `folders` (stored forms; the
        indexer's watch path). Backends may answer with an indexed query; this default filters `files`."""
        want = set(paths)
        prefixes = tuple(f.rstrip("/") + "/" for f in folders)
        return {p: r for p, r in self.files().items() if p in want or (prefixes and p.startswith(prefixes))}

    @abstractmethod
    def touch_file(self, path: str, mtime_ns: int, size: int) -> None: ...

    @abstractmethod
    def delete_file(self, path: str) -> bool: ...

    @abstractmethod
    def write_file(self, fw: FileWrite, vectors: Sequence[object | None] | None) -> int:
        """Replace everything stored for `fw.path` (chunks, lexical index, vectors from
        `pack_vectors`, links, keys). Call inside `transaction()`. Returns the chunk count."""

    # -- vectors (write side)
    @abstractmethod
    def has_vectors(self) -> bool:
        """The index has a vector table/column this process can use."""

    @abstractmethod
    def pack_vectors(self, matrix, vector_type: str) -> list[object | None]:
        """Embedded vectors (one a row) in this backend's stored form; None: no vector (all zero)."""

    @abstractmethod
    def reset_vectors(self, dim: int, vector_type: str) -> None:
        """Forget every vector and prepare for `dim`-sized ones (a model change). In a transaction."""

    @abstractmethod
    def drop_vectors(self) -> None: ...

    @abstractmethod
    def vectors_by_embed_hash(self, hashes: Iterable[str]) -> dict[str, object]:
        """Stored vectors (packed form) of chunks whose embedded-input hash is in `hashes`."""

    @abstractmethod
    def chunks_without_vectors(self) -> Iterator[tuple[int, str, str, str]]:
        """(chunk id, title, heading path, text) of every chunk lacking a vector."""

    @abstractmethod
    def put_vector(self, chunk_id: int, packed: object) -> None: ...

    # -- maintenance
    @abstractmethod
    def optimize(self, *, compact: bool = False) -> None: ...

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """{"files", "chunks", "links", "vectors"}."""

    def size_bytes(self) -> int | None:
        """Bytes the index takes on disk, when the backend can say."""
        return None

    # -- origins (issue 17): where a chunk of a non-file source came from
    def put_origins(self, path: str, scope: str, origins: Sequence[str]) -> None:
        """Record the scope and origin (a JSON object, e.g. a transcript message's session id and
        uuid) of each chunk of `path`, in the order `write_file` stored them. Call inside the
        same `transaction()`, after `write_file`; deleting or rewriting the document drops them."""
        raise NotImplementedError(f"{type(self).__name__} does not store chunk origins")

    def origins(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """chunk id -> (scope, origin JSON) for those of `ids` that have one (files have none)."""
        return {}

    def note_languages(self) -> dict[str, int]:
        """Snowball stemmer -> how many notes were indexed with it (FileWrite.lang); {} when the
        backend does not stem by note language."""
        return {}

    def note_count(self) -> int:
        """Files (notes and other sources) in the index: the whole that note languages are a share of."""
        return self.counts()["files"]

    # -- read side: documents
    @abstractmethod
    def chunk_count(self) -> int: ...

    @abstractmethod
    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, StoredChunk]: ...

    @abstractmethod
    def chunks_of_files(self, file_ids: Sequence[int]) -> list[StoredChunk]: ...

    @abstractmethod
    def lead_chunks(self, file_ids: Sequence[int]) -> dict[int, int]:
        """file id -> id of its first chunk (the note's lead / summary)."""

    @abstractmethod
    def match_keys(self, keys: Sequence[str]) -> list[tuple[str, str, int, int | None]]:
        """(key, kind, file id, chunk id or None) for every stored metadata key in `keys`."""

    @abstractmethod
    def links_from(self, file_ids: Sequence[int]) -> list[LinkOut]: ...

    @abstractmethod
    def files_by_stem(self, stem_keys: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        """stem key -> [(file id, path)] sorted by path (several notes may share a name)."""

    # -- read side: lexical
    @abstractmethod
    def lexical(self, terms: Sequence[Term], limit: int,
                weights: tuple[float, float, float]) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, larger is better) of chunks holding any of `terms`, best first;
        `weights`: chunk text, heading path, context ('title | type | tags')."""

    @abstractmethod
    def doc_freq(self, term: Term, cap: int) -> int:
        """How many chunks hold `term`, counting at most `cap`."""

    @abstractmethod
    def contains(self, terms: Sequence[Term], ids: Sequence[int]) -> set[int]:
        """Which of `ids` hold any of `terms` (same folding and stemming as the index)."""

    # -- read side: vocabulary (typo tolerance). A backend without one corrects no typos.
    def stem(self, words: Sequence[str]) -> dict[str, str]:
        """word -> the term the index's own tokenizer makes of it (stemmed, folded); {} when the
        backend cannot say (then no typo correction)."""
        return {}

    def near_terms(self, term: str, max_distance: int, limit: int) -> list[tuple[str, int, int]]:
        """(index term, edit distance, chunk count) of the index terms within `max_distance` of
        `term` (a stemmed term), nearest first, then commonest; [] when the backend has no
        vocabulary to search (both backends have one)."""
        return []

    # -- read side: vectors
    @abstractmethod
    def knn(self, vector: Sequence[float], k: int) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the k nearest chunks, nearest first (ties by id)."""

    @abstractmethod
    def similarities(self, vector: Sequence[float], ids: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query vector to each of `ids` that has a vector."""


class Rebuild(AbstractContextManager):
    """A full rebuild in progress: `store` writes a shadow copy readers do not see;
    `publish()` swaps it in at once. Leaving the block without publishing discards it."""

    store: Store

    @abstractmethod
    def publish(self) -> None: ...


class Backend(ABC):
    """Where an index lives: opens stores on it, serialises writers, rebuilds it."""

    @property
    @abstractmethod
    def location(self) -> str: ...

    @abstractmethod
    def open(self, *, readonly: bool = False) -> Store: ...

    @abstractmethod
    def lock(self, wait_s: float) -> AbstractContextManager:
        """Exclusive writer lock (one reindex at a time per index); raises IndexLocked after `wait_s`."""

    @abstractmethod
    def rebuild(self) -> Rebuild: ...

    def damage(self) -> str | None:
        """Why the index cannot be updated in place (damaged pages: an incremental reindex then
        rebuilds it), or None; a backend that cannot tell says None."""
        return None

    def remove_leftovers(self, lock) -> tuple[int, int]:
        """Remove what an interrupted rebuild left behind, holding `lock` (this backend's writer lock):
        (files, bytes) removed. Only SQLite leaves files (`<db>.rebuild-<pid>`); by default nothing."""
        return 0, 0
