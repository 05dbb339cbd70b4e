"""A per-user cache of the query encoder's vocabulary, so a fresh hook process does not parse tokenizer.json.

Parsing the bundled model's 445 KB tokenizer.json (30k entries) is the largest single cost of a fresh
UserPromptSubmit hook after the imports (BENCHMARKS.md, "Issue 18: cold hook and warm query, round 2").
A query looks up a few dozen WordPiece candidates, so the vocabulary does not need to be a dict: the
cache file holds the tokens sorted by their UTF-8 bytes, and `SortedVocab.get` bisects them inside
the file's bytes (~5 us a lookup; opening it reads one file and builds no objects per token).

The file lives under `$XDG_CACHE_HOME/vaultrag/encoders/` (0700 folder, 0600 files), named by a digest
of the model files' paths, sizes and mtimes: a changed model gets a new file. Anything unexpected
in it (wrong magic, truncated, another byte order) makes `cached_encoder` fall back to parsing
tokenizer.json and rewrite the cache. Standard library only (hook path).
"""
from __future__ import annotations

import json
import os
import struct
import sys

from .lean_encoder import LeanEncoder, LeanEncoderError, model_files

__all__ = ["SortedVocab", "cached_encoder", "encode_vocab_file"]

MAGIC = b"VRVOCAB1"
FORMAT_VERSION = 1  # bump when the layout below changes (old files are then simply not found)
MAX_CACHE_BYTES = 64 * 1024 * 1024  # a vocabulary file past this is not ours: parse tokenizer.json
_HEAD = struct.Struct("<8sII")  # magic, header JSON length, token count
_U32 = 4


class SortedVocab:
    """Read-only token -> id mapping over the bytes of a cache file (see `encode_vocab_file`).

    Supports what the lean encoder needs on the query path: `get`, `in`, `len`."""

    __slots__ = ("_blob", "_offsets", "_ids", "_n")

    def __init__(self, data: bytes, start: int, n: int) -> None:
        view = memoryview(data)
        end_off = start + (n + 1) * _U32
        end_ids = end_off + n * _U32
        self._offsets = view[start:end_off].cast("I")
        self._ids = view[end_off:end_ids].cast("I")
        self._blob = data[end_ids:]
        self._n = n
        if len(self._offsets) != n + 1 or len(self._ids) != n or self._offsets[n] != len(self._blob):
            raise ValueError("vocabulary cache is truncated")

    def _index(self, key: bytes) -> int:
        offsets, blob = self._offsets, self._blob
        lo, hi = 0, self._n
        while lo < hi:
            mid = (lo + hi) >> 1
            if blob[offsets[mid]:offsets[mid + 1]] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self._n and blob[offsets[lo]:offsets[lo + 1]] == key:
            return lo
        return -1

    def get(self, token: str, default=None):
        try:
            i = self._index(token.encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate is in no vocabulary
            return default
        return self._ids[i] if i >= 0 else default

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.get(token) is not None

    def __len__(self) -> int:
        return self._n


def encode_vocab_file(enc: LeanEncoder, key: str) -> bytes:
    """The cache file's bytes for `enc`: header (magic, JSON of the tokenizer settings without the
    vocabulary, `key`, byte order), then uint32 offsets and ids (native order) and the sorted tokens."""
    tables = enc.export_tables()
    items = sorted((tok.encode("utf-8"), i) for tok, i in tables.pop("vocab").items())
    head = json.dumps({**tables, "key": key, "byteorder": sys.byteorder}).encode()
    head += b" " * (-(_HEAD.size + len(head)) % _U32)  # keep the arrays 4-byte aligned
    offsets, pos = [], 0
    for tok, _ in items:
        offsets.append(pos)
        pos += len(tok)
    offsets.append(pos)
    from array import array

    return b"".join((_HEAD.pack(MAGIC, len(head), len(items)), head, array("I", offsets).tobytes(),
                     array("I", [i for _, i in items]).tobytes(), *[t for t, _ in items]))


def _load(data: bytes, key: str, weights_path: str, tensor_name: str) -> LeanEncoder:
    magic, head_len, n = _HEAD.unpack_from(data, 0)
    if magic != MAGIC:
        raise ValueError("not a vocabulary cache")
    head = json.loads(data[_HEAD.size:_HEAD.size + head_len])
    if head.get("key") != key or head.get("byteorder") != sys.byteorder:
        raise ValueError("vocabulary cache for another model or machine")
    vocab = SortedVocab(data, _HEAD.size + head_len, n)
    return LeanEncoder.from_tables(
        tokenizer_config=head["tokenizer_config"], config={"max_length": head["max_length"]},
        weights_path=weights_path, tensor_name=tensor_name, vocab=vocab,
        median_token_length=head["median_token_length"], max_token_chars=head["max_token_chars"])


def _cache_key(files: tuple[str, str, str, str]) -> str:
    parts: list = [FORMAT_VERSION]
    for f in files[:3]:
        st = os.stat(f)
        parts.append([os.path.realpath(f), st.st_size, st.st_mtime_ns])
    parts.append(files[3])
    return json.dumps(parts)


def cached_encoder(model_path: str, cache_dir) -> LeanEncoder:
    """The lean encoder of the Model2Vec folder `model_path`, its vocabulary read from the cache under
    `cache_dir` (written there on a miss; a cache that cannot be written only costs the parse)."""
    files = model_files(model_path)
    if files is None:
        return LeanEncoder.from_folder(model_path)  # raises its clear error
    from .digest import sha256
    from .safe_io import read_regular

    key = _cache_key(files)
    path = os.path.join(os.fspath(cache_dir), sha256(key.encode()).hexdigest()[:32] + ".vocab")
    try:
        return _load(read_regular(path, MAX_CACHE_BYTES), key, files[0], files[3])
    except (OSError, ValueError, KeyError, TypeError, struct.error, LeanEncoderError):
        pass  # missing, stale or damaged: rebuild it below
    enc = LeanEncoder.from_folder(model_path)
    if not isinstance(enc, LeanEncoder):  # a Unigram model (lean_unigram): no WordPiece vocabulary to cache
        return enc
    try:
        from .safe_io import private_dir, write_private

        private_dir(cache_dir)
        write_private(path, encode_vocab_file(enc, key))
    except OSError:
        pass  # read-only or full cache folder: the next process parses again
    return enc
