"""The indexer's vectors: which model the index belongs to, embedding new chunks, reusing stored ones.

Loading the model costs more than a reindex with nothing to do (~1.5 s for the bundled one on a quiet
machine; model2vec and huggingface_hub imports are most of it). So the model is loaded only when a
chunk needs embedding, provided the index can tell it is still the model it was built with without
loading it: MODEL_SIGNATURE_META records where the model was found and the stat of its files when it
was last loaded; while that matches, the embedder is a `LazyEmbedder`. Anything else (a new spec, a
changed file, a hub model that must be downloaded) loads the model up front and checks its
fingerprint as before.
"""
from __future__ import annotations

import json
import logging
import os
import re

from .config import Config
from .store import FileWrite, Store

log = logging.getLogger("vaultrag.indexer")

MODEL_SIGNATURE_META = "model_signature"  # JSON: spec, resolved folder, fallback, stat of the model files
REEMBED_ROWS = 1024  # chunks re-embedded per transaction after a model change


# Identifiers written in hex (commit hashes, content hashes, UUIDs, Notion-style page ids): a word of
# 8+ hex digits, or dash-joined groups of them, holding both a digit and a letter a-f. A static model's
# vector is the mean of its word pieces' rows, and such a word is many pieces with no meaning
# (a 64-digit hash is ~40 of them, a paragraph ~150): one in a note's title, embedded twice (title, and
# the title H1 in the lead chunk's text), put xquad-en's vectors-only nDCG@10 at 0.766 where the same
# chunks without it reach 0.886 (de 0.459 -> 0.625, zh 0.129 -> 0.378; SciFact, no such words, equal:
# BENCHMARKS.md "Stop 34 — sem12"). Only the embedded input drops them: BM25 and names keep every word.
_HEX_ID = re.compile(r"\b[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b", re.IGNORECASE)
# Part of the model fingerprint: a new input recipe re-embeds every chunk of an existing index once.
EMBED_INPUT_VERSION = 2


def embed_input(title: str, heading_path: str, text: str) -> str:
    """What the embedding model sees for a chunk: note title and heading give it its topic; hex
    identifiers (_HEX_ID) are left out."""
    joined = "\n".join(p for p in (title, heading_path, text) if p)
    if not _HEX_RUN.search(joined):
        return joined
    kept = _HEX_ID.sub(_blank_id, joined)
    return kept if kept.strip() else joined  # nothing but identifiers: embedded as written


def _blank_id(m: re.Match) -> str:
    """A hex run is an identifier when it mixes digits and letters (a number or a word is not)."""
    word = m.group(0)
    letters = sum(c.isalpha() for c in word)
    return " " if letters and letters < len(word) - word.count("-") else word


_HEX_RUN = re.compile(r"[0-9a-fA-F]{8}")  # the cheap pre-check: most chunks hold no 8 hex characters in a row


def model_signature(cfg: Config) -> str | None:
    """Where `cfg.model` resolves and the (size, mtime) of its files, without importing model2vec;
    None when that cannot be known without loading (a hub model to download, an error)."""
    try:
        from .embedder import model_files, resolve_model

        info = resolve_model(cfg.model)
        if info.path is None:
            return None
        files = model_files(info.path)
        if files is None:
            return None
        files = files[:3]  # weights, tokenizer.json, config (the 4th is the tensor's name)
        stats = [(str(f), os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files]
    except Exception:  # resolve errors surface when the model is loaded for real
        return None
    sig = {"spec": cfg.model, "model_id": info.model_id, "path": str(info.path),
           "fallback": info.fallback_reason, "files": stats, "vector_type": cfg.vector_type}
    if EMBED_INPUT_VERSION > 1:  # an index embedded by another input recipe loads the model (and re-embeds)
        sig["input"] = EMBED_INPUT_VERSION
    return json.dumps(sig, sort_keys=True)


class LazyEmbedder:
    """Stands in for the `Embedder` the index was built with; loads it on the first `encode`."""

    def __init__(self, cfg: Config, fingerprint: str):
        self.cfg = cfg
        self.fingerprint = fingerprint
        self._loaded = None

    def loaded(self):
        """The real `Embedder`, loaded (and checked against the index's fingerprint) on first call."""
        if self._loaded is None:
            from .embedder import load_embedder

            emb = load_embedder(self.cfg.model)
            if model_fingerprint(emb, self.cfg) != self.fingerprint:
                raise RuntimeError(f"the embedding model at {emb.path} changed during the reindex; run it again")
            self._loaded = emb
        return self._loaded

    def encode(self, texts: list[str], batch_size: int = 64):
        return self.loaded().encode(texts, batch_size=batch_size)


def model_fingerprint(embedder, cfg: Config) -> str:
    fp = {"model": embedder.model_id, "dim": embedder.dim, "vocab": embedder.vocab_size,
          "weights_sha256": embedder.weights_sha256, "vector_type": cfg.vector_type}
    if EMBED_INPUT_VERSION > 1:  # version 1 (no key) is every index built before the inputs dropped hex ids
        fp["input"] = EMBED_INPUT_VERSION
    return json.dumps(fp, sort_keys=True)


def setup_vectors(store: Store, cfg: Config, report):
    """The embedder (maybe lazy) whose vectors the vector table holds, resetting the table for a new
    model. None when vectors are unavailable (`report.embedding.reason` says why)."""
    emb = report.embedding
    if store.vec_error is not None:
        emb.reason = store.vec_error
        if store.meta().vector_dim is not None:  # vectors exist but can't be kept in step now
            with store.transaction():
                store.update_meta(vectors_invalid=True)
        return None
    meta = store.meta()
    sig = model_signature(cfg)
    # The folder searches load must exist too: an index whose checkout moved (a new clone, the old one
    # deleted) kept the old folder, and queries ran without vectors, whatever `reindex` was run.
    if (sig is not None and sig == store.get_meta(MODEL_SIGNATURE_META) and meta.model_fingerprint
            and not meta.vectors_invalid and store.has_vectors() and meta.model_path
            and os.path.isdir(meta.model_path)):
        emb.available = True
        emb.model = meta.model()
        emb.fallback_reason = json.loads(sig).get("fallback")
        return LazyEmbedder(cfg, meta.model_fingerprint)
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
    fp = model_fingerprint(embedder, cfg)
    if meta.model_fingerprint != fp or not store.has_vectors() or meta.vectors_invalid:
        previous = meta.model()
        with store.transaction():
            store.reset_vectors(embedder.dim, cfg.vector_type)
            store.update_meta(model_fingerprint=fp, model_path=str(embedder.path), vectors_invalid=False)
        if store.counts()["chunks"]:
            emb.reembedded_all = True
            log.info("embedding model changed (%s -> %s): re-embedding every chunk", previous, embedder.model_id)
    with store.transaction():  # '' (never a signature) when unknown: the next run loads the model again
        store.set_meta(MODEL_SIGNATURE_META, sig or "")
        if embedder.path is not None and meta.model_path != str(embedder.path):  # the same model, another folder (a moved checkout)
            store.update_meta(model_path=str(embedder.path))
    return embedder


def embed_batch(store: Store, embedder, inputs_per_file: list[list[str]], files: list[FileWrite], cfg: Config,
                report, computed: dict | None = None, packed: bool = False) -> list[list[bytes] | None]:
    """Vectors for every chunk of `files`: stored ones reused by embed hash, the rest embedded (or
    taken from `computed`, embed hash -> float32 row, or the stored form when `packed`, which
    index_pool's workers filled; a file they embedded comes without its inputs)."""
    if embedder is None:
        report.embedding.skipped += sum(len(i) for i in inputs_per_file)
        return [None] * len(files)
    hashes = [ch.embed_hash for fw in files for ch in fw.chunks]
    known = store.vectors_by_embed_hash(hashes)
    todo = [h for h in dict.fromkeys(hashes) if h not in known]
    if todo:
        if computed is not None and all(h in computed for h in todo):
            if packed:
                blobs = [computed[h] for h in todo]
            else:
                import numpy as np

                blobs = store.pack_vectors(np.stack([computed[h] for h in todo]), cfg.vector_type)
        else:
            text_of: dict[str, str] = {}
            for fw, inputs in zip(files, inputs_per_file):
                for ch, inp in zip(fw.chunks, inputs):
                    text_of.setdefault(ch.embed_hash, inp)
            vecs = embedder.encode([text_of[h] for h in todo], batch_size=cfg.embed_batch_size)
            blobs = store.pack_vectors(vecs, cfg.vector_type)
        known.update(zip(todo, blobs))
    report.embedding.embedded += len(todo)
    report.embedding.reused += len(hashes) - len(todo)
    return [[known[ch.embed_hash] for ch in fw.chunks] for fw in files]


def embed_missing(store: Store, embedder, cfg: Config, report) -> None:
    """Embed every chunk lacking a vector (after a model change)."""
    rows = list(store.chunks_without_vectors())
    for i in range(0, len(rows), REEMBED_ROWS):
        part = rows[i:i + REEMBED_ROWS]
        vecs = embedder.encode([embed_input(t, h, x) for _, t, h, x in part], batch_size=cfg.embed_batch_size)
        with store.transaction():
            for (cid, *_), blob in zip(part, store.pack_vectors(vecs, cfg.vector_type)):
                if blob is not None:
                    store.put_vector(cid, blob)
        report.embedding.embedded += len(part)
