"""Model2Vec embedding for the indexer with the tokenizer's work cached by whitespace-free span.

A profile of a full index put the Hugging Face tokenizer (`encode_batch_fast`) at about a third of
the run: ~1 ms of CPU per 1,400-character chunk, most of it building one `Encoding` per text. A
BERT-style tokenizer (BertNormalizer, BertPreTokenizer, WordPiece) works character by character and
splits at whitespace, so the ids of a text are the ids of its whitespace-separated spans, one after
the other. Vault text repeats the same spans ("the", "files,", "`--help`") thousands of times, so
each distinct span is tokenized once (by the same `tokenizers` object, in one batch call) and looked
up afterwards; a span not seen yet is tokenized in Python when it is ASCII (vaultrag.lean_encoder's
WordPiece, words cached), by `tokenizers` in one batch call otherwise. Measured on 3,465 SciFact
chunks, CPU: `encode_batch_fast` 2.9 s; spans with `tokenizers` for the new ones 2.3 s cold / 0.87 s
warm; tldr 6,004 chunks 1.8 s against 1.2 s / 0.32 s (BENCHMARKS.md, "Issue 18: worker pool").

The result is the same as `StaticModel.encode` (model2vec 0.10): the text cut to `max_length *
median_token_length` characters, the ids cut to `max_length` tokens, unknown ids dropped, the token
rows averaged and L2-normalised (tests compare ids and vectors bit for bit on real text).

Only the split needs care: the spans must be cut where BertNormalizer's clean_text turns a character
into a space (whitespace in Rust's sense, minus the three controls it drops instead). A span holding
an added token (`[UNK]`) stays whole, and the tokenizer matches it inside the span as it would in the
text. Models with a token mapping or per-token weights (vocabulary-quantised ones) and tokenizers
that are not BERT-style keep model2vec's own encode.
"""
from __future__ import annotations

import re

# Where BertNormalizer(clean_text) leaves a space: Rust char::is_whitespace without \x0b \x0c \x85,
# which it removes as control characters (so "a\x0bb" is one word, not two).
_SPACES = re.compile("[\t\n\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
# Distinct spans kept per process: ~200 bytes each (the string and its ids), so ~40 MB at most; the
# cache is emptied when full (a vault's common spans come back within the next batch). tldr's 38k
# pages hold ~300k distinct spans, SciFact's 5k abstracts ~100k.
SPAN_CACHE_MAX = 200_000


def supports(model) -> bool:
    """Whether `model` (a model2vec StaticModel) can be encoded span by span: a BERT-style tokenizer
    and plain token rows (no mapping, no weights)."""
    try:
        import json

        spec = json.loads(model.tokenizer.to_str())
    except Exception:
        return False
    norm, pre = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}
    return (norm.get("type") == "BertNormalizer" and norm.get("clean_text") is True
            and pre.get("type") in ("BertPreTokenizer", "Whitespace", "WhitespaceSplit")
            and (spec.get("model") or {}).get("type") == "WordPiece"
            and getattr(model, "token_mapping", None) is None and getattr(model, "weights", None) is None)


class SpanEncoder:
    """`encode(texts)` equal to `model.encode(texts, normalize=True)` for a model `supports` accepts."""

    def __init__(self, model, lean=None):
        import copy

        self.model = model
        # A span the cache lacks is tokenized in Python when it is ASCII (the LeanEncoder's tested
        # ASCII path, ~5x cheaper than one `Encoding` a span) and by `tokenizers` otherwise.
        self.lean = lean
        self.words: dict[str, tuple[int, ...]] = {}
        self.added = tuple(a for a in (lean._added_raw + lean._added_norm) if a[0]) if lean is not None else ()
        self.tokenizer = copy.deepcopy(model.tokenizer)  # its own copy: truncation off for the spans
        self.tokenizer.no_truncation()
        self.max_length = model.max_length
        self.chars = None if self.max_length is None else self.max_length * model.median_token_length
        self.unk = model.unk_token_id
        self.cache: dict[str, tuple[int, ...]] = {}

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Ids per text, as `StaticModel.tokenize` gives them after model2vec's two truncations."""
        cache = self.cache
        chars = self.chars
        spans = [_SPACES.split(t if chars is None else t[:chars]) for t in texts]
        missing = list({s for sp in spans for s in sp if s not in cache})
        if missing:
            if len(cache) + len(missing) > SPAN_CACHE_MAX:  # start again: this batch's spans only
                cache.clear()
                missing = list({s for sp in spans for s in sp})
            if self.lean is not None:
                missing = self._python_spans(missing)
            if missing:
                for s, enc in zip(missing, self.tokenizer.encode_batch_fast(missing, add_special_tokens=False)):
                    cache[s] = tuple(enc.ids)
        out: list[list[int]] = []
        limit, unk = self.max_length, self.unk
        for sp in spans:
            ids: list[int] = []
            for s in sp:
                ids += cache[s]
                if limit is not None and len(ids) >= limit:
                    del ids[limit:]
                    break
            if unk is not None and unk in ids:
                ids = [i for i in ids if i != unk]
            out.append(ids)
        return out

    def _python_spans(self, spans: list[str]) -> list[str]:
        """Tokenize the ASCII spans holding no added token into the cache; returns the others."""
        lean, words, cache, added = self.lean, self.words, self.cache, self.added
        rest = []
        for span in spans:
            if not span.isascii() or any(a in span or a in span.lower() for a, _ in added):
                rest.append(span)
                continue
            ids: list[int] = []
            for word in lean._pre_tokenize(lean._normalize(span)):
                got = words.get(word)
                if got is None:
                    piece: list[int] = []
                    lean._wordpiece(word, piece)
                    if len(words) >= SPAN_CACHE_MAX:
                        words.clear()
                    got = words[word] = tuple(piece)
                ids += got
            cache[span] = tuple(ids)
        return rest

    def encode(self, texts: list[str], batch_size: int = 1024):
        """float32 rows, L2-normalised, as model2vec's `_encode_batch` computes them."""
        import numpy as np

        parts = [self._encode_batch(texts[i:i + batch_size]) for i in range(0, len(texts), batch_size)]
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, self.model.dim), dtype=np.float32)

    def _encode_batch(self, texts: list[str]):
        import numpy as np

        ids = self.token_ids(texts)
        emb = self.model.embedding
        dtype = np.dtype(np.float32) if emb.dtype == np.int8 else emb.dtype
        out = np.zeros((len(ids), self.model.dim), dtype=dtype)
        buckets: dict[int, list[int]] = {}
        for i, row in enumerate(ids):
            if row:
                buckets.setdefault(len(row), []).append(i)
        for indices in buckets.values():
            out[indices] = emb[np.array([ids[i] for i in indices], dtype=np.int64)].mean(axis=1)
        out32 = out.astype(np.float32)
        norm = np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32
        return (out32 / norm).astype(out.dtype)
