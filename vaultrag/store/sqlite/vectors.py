"""How int8 vectors are stored and searched: a fixed random rotation, one global scale, and a
two-stage KNN (int8 L1 candidates, then exact cosine on the same int8 vectors). Standard library only.

Why (figures in BENCHMARKS.md, "int8 vs float32 vector storage"; 38k tldr chunks, 2 cores):
- sqlite-vec 0.1.9's PyPI wheel has no SIMD. Its int8 *cosine* KNN costs ~12 ms at 38k chunks, int8
  *L1* ~2-4 ms (the L1 loop is the only one the compiler vectorises). So the vec0 table ranks by L1
  and we re-rank `VEC_CANDIDATE_FACTOR * k` candidates by exact cosine, computed in the same query
  from the same stored int8 vectors: no second copy of the vectors.
- L1 is only a good stand-in for cosine when every vector has the same length and no coordinate
  dominates. Model2Vec vectors have a few large coordinates (peak/RMS ~12), so before quantising we
  apply a fixed randomised Hadamard rotation (random signs, then the Walsh-Hadamard transform).
  It is orthogonal, so cosine similarities are unchanged, and it spreads every vector's energy
  evenly over the coordinates. Then one global scale (not per vector, which L1 could not compare)
  maps unit vectors onto int8: coordinates are ~N(0, 1/n), and `INT8_PEAK_RMS` RMS units map to 127.
- The spread also makes int8 rounding kinder: exact int8 top-10 agreement with float32 rose from
  0.948 (schema 1: per-vector scaling, no rotation) to 0.980 on tldr queries (scifact 0.924 -> 0.976).
- Binary (bit[256]) coarse KNN was tried first: sign bits of these vectors kept at most 0.82 of the
  float32 top 30 even with 8x candidates, and vec0's KNN cost grows with k (~0.04 ms per k at 38k),
  so 8x candidates cost 9 ms. IVF clustering and PCA-reduced coarse vectors did no better.
"""
from __future__ import annotations

import math
import struct
import sys
from collections.abc import Sequence

from ...digest import sha256

# Coarse candidates per requested neighbour. tldr, 38k chunks, k=30 (the retriever's default):
# 2x keeps 0.931 of the exact float32 top 30 in 5.1 ms (median), 3x 0.955 in 6.4 ms, 4x 0.963 in
# 7.8 ms; schema 1's exact int8 kept 0.958 in ~12.5 ms. 2x is what fits a 10 ms query.
VEC_CANDIDATE_FACTOR = 2
# int8 range in units of the coordinate RMS (1/sqrt(n) for a unit vector after rotation): 4 RMS
# clips ~1e-4 of coordinates at tldr scale (largest seen: 4.4 RMS), while a wider range would
# waste resolution on every other coordinate.
INT8_PEAK_RMS = 4.0
ROTATION_SEED = b"vaultrag-hadamard-v1"  # changing it invalidates every stored int8 vector


def padded_dim(dim: int) -> int:
    """The Walsh-Hadamard transform needs a power of two: vectors are zero-padded up to one."""
    return 1 << max(0, (int(dim) - 1).bit_length())


def rotation_signs(n: int) -> list[float]:
    """n fixed pseudo-random +-1.0 (sha256 of the seed: the same on every platform and Python)."""
    bits = b""
    counter = 0
    while len(bits) * 8 < n:
        bits += sha256(ROTATION_SEED + counter.to_bytes(4, "big")).digest()
        counter += 1
    return [1.0 if (bits[i // 8] >> (i % 8)) & 1 else -1.0 for i in range(n)]


def int8_scale(n: int) -> float:
    return 127.0 * math.sqrt(n) / INT8_PEAK_RMS


_SIGNS: dict[int, list[float]] = {}


def rotate(vec: Sequence[float]) -> list[float]:
    """Unit-normalise, zero-pad to a power of two, flip signs, Walsh-Hadamard transform (orthonormal)."""
    n = padded_dim(len(vec))
    signs = _SIGNS.get(n) or _SIGNS.setdefault(n, rotation_signs(n))
    norm = math.sqrt(math.fsum(x * x for x in vec))
    if norm == 0.0:
        return [0.0] * n
    v = [x * s / norm for x, s in zip(vec, signs)] + [0.0] * (n - len(vec))
    h = 1
    while h < n:
        for i in range(0, n, 2 * h):
            for j in range(i, i + h):
                a, b = v[j], v[j + h]
                v[j], v[j + h] = a + b, a - b
        h *= 2
    r = 1.0 / math.sqrt(n)
    return [x * r for x in v]


def quantize_int8(vec: Sequence[float]) -> bytes | None:
    """The stored (and query) int8 form of a vector; None for an all-zero vector. Where numpy is
    already imported (a resident process) the same operations run on arrays: the same bytes."""
    np = sys.modules.get("numpy")
    return _quantize_int8_np(vec, np) if np is not None else _quantize_int8_py(vec)


def _quantize_int8_py(vec: Sequence[float]) -> bytes | None:
    rot = rotate(vec)
    if not any(rot):
        return None
    scale = int8_scale(len(rot))
    return struct.pack(f"{len(rot)}b", *(max(-127, min(127, round(x * scale))) for x in rot))


def _quantize_int8_np(vec: Sequence[float], np) -> bytes | None:
    """`quantize_int8` with numpy, operation for operation (the same IEEE results: the norm by
    math.fsum, each butterfly's a + b and a - b, round half to even), ~4x less CPU (0.05 ms)."""
    n = padded_dim(len(vec))
    signs = _SIGNS.get(n) or _SIGNS.setdefault(n, rotation_signs(n))
    norm = math.sqrt(math.fsum(x * x for x in vec))
    if norm == 0.0:
        return None
    v = np.zeros((1, n))
    v[0, :len(vec)] = np.asarray(vec, dtype=np.float64) * np.asarray(signs[:len(vec)]) / norm
    rot = _butterflies(v)[0] * (1.0 / math.sqrt(n))
    if not rot.any():
        return None
    return np.clip(np.rint(rot * int8_scale(n)), -127, 127).astype(np.int8).tobytes()


def _butterflies(v):
    """The unnormalised Walsh-Hadamard transform of each row of a (rows, n) float64 array, n a
    power of two: each butterfly's a + b and a - b, as `rotate` computes them one by one."""
    rows, n = v.shape
    h = 1
    while h < n:
        v = v.reshape(rows, n // (2 * h), 2, h)
        a, b = v[:, :, 0, :].copy(), v[:, :, 1, :].copy()
        v[:, :, 0, :], v[:, :, 1, :] = a + b, a - b
        v = v.reshape(rows, n)
        h *= 2
    return v


def quantize_int8_batch(matrix) -> list[bytes | None]:
    """`quantize_int8` for a numpy matrix (one vector a row): the indexer's fast path, same bytes
    up to float rounding (a test checks they agree within one unit)."""
    import numpy as np

    m = np.asarray(matrix, dtype=np.float64)
    rows, dim = m.shape
    n = padded_dim(dim)
    norms = np.sqrt((m * m).sum(axis=1, keepdims=True))
    zero = norms[:, 0] == 0.0
    v = np.zeros((rows, n))
    v[:, :dim] = m / np.where(norms == 0.0, 1.0, norms) * np.asarray(rotation_signs(n)[:dim])
    v = _butterflies(v)
    q = np.clip(np.rint(v / math.sqrt(n) * int8_scale(n)), -127, 127).astype(np.int8)
    return [None if z else row.tobytes() for row, z in zip(q, zero)]


def query_int8(blob: bytes, dim: int) -> bytes | None:
    """The stored int8 form of a query handed over as float32 (4*dim bytes) or, from an older
    caller, as a per-vector-scaled int8 blob (dim bytes): both are unpacked and re-quantised."""
    if len(blob) == 4 * dim:
        vec = struct.unpack(f"<{dim}f", blob)
    elif len(blob) == dim:
        vec = struct.unpack(f"{dim}b", blob)
    else:
        raise ValueError(f"query vector of {len(blob)} bytes for a {dim}-dimensional index")
    return quantize_int8(vec)
