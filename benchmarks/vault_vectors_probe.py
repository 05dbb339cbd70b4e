"""Issue 19 (sem10): vectors trained on the vault itself, measured as a second vector signal.

    TMPDIR=T HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/vault_vectors_probe.py --set xquad-de \
        --mode lsi --units words --dims 128 --weight 0.3,0.6

Reads the index model_probe.py built for the set (same $TMPDIR cache), trains term vectors on the
index's own chunks (numpy, seeded, deterministic) and ranks every query with the default pipeline,
BM25's candidates re-scored by minmax(BM25) + vec_rerank * known * minmax(static cosine) + WEIGHT *
minmax(vault cosine) + title prior, the pipeline's own `rescore` otherwise unchanged. Modes:
- lsi: term x chunk matrix (log tf x idf, columns unit length), truncated SVD; chunk vectors V*S,
  a query folded in as U^T q.
- ppmi: word x word co-occurrence within +-WINDOW words of a chunk, PPMI (context counts to the
  0.75), truncated SVD, word vectors U*sqrt(S); a chunk or query is the IDF-weighted sum.
Units: words (textutil.words, stopwords dropped) or words+grams (plus each word's character
4-grams inside <word>, for compounds: "mitarbeiter" / "zusammenarbeiten" share "arbe").
A measurement harness only: it patches the pipeline's `rescore` for its own process (so the
gate's top 3 see the vault cosine too). Not shipped: BENCHMARKS.md "Stop 21 — sem10".
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import model_probe  # noqa: E402

MIN_COUNT = 2
MAX_UNITS = 40000
WINDOW = 5
SEED = 0


def units_of(text: str, grams: bool) -> list[str]:
    from vaultrag.textutil import is_run, is_stopword, query_terms, words

    out = []
    for tok in words(text):
        if is_run(tok):
            out.extend(query_terms(tok))
            continue
        if is_stopword(tok) or len(tok) < 2:
            continue
        out.append(tok)
        if grams and len(tok) >= 5:
            w = f"<{tok}>"
            out.extend("#" + w[i:i + 4] for i in range(len(w) - 3))
    return out


def _sparse_mm(rows, cols, vals, shape, x):
    """(rows, cols, vals) COO matrix of `shape` times dense x."""
    out = np.zeros((shape[0], x.shape[1]))
    for a in range(0, len(vals), 200_000):
        r, c, v = rows[a:a + 200_000], cols[a:a + 200_000], vals[a:a + 200_000]
        np.add.at(out, r, v[:, None] * x[c])
    return out


def rsvd(rows, cols, vals, shape, k, iters=3):
    """Randomized truncated SVD (Halko et al.), seeded."""
    rng = np.random.default_rng(SEED)
    omega = rng.standard_normal((shape[1], k + 10))
    y = _sparse_mm(rows, cols, vals, shape, omega)
    q, _ = np.linalg.qr(y)
    for _ in range(iters):
        z, _ = np.linalg.qr(_sparse_mm(cols, rows, vals, (shape[1], shape[0]), q))
        q, _ = np.linalg.qr(_sparse_mm(rows, cols, vals, shape, z))
    b = _sparse_mm(cols, rows, vals, (shape[1], shape[0]), q).T  # q^T A
    ub, s, vt = np.linalg.svd(b, full_matrices=False)
    return (q @ ub)[:, :k], s[:k], vt[:k].T


class VaultVectors:
    def __init__(self, texts: dict[int, str], mode: str, grams: bool, dims: int):
        t0 = time.process_time()
        self.grams, self.mode = grams, mode
        docs = {cid: units_of(t, grams) for cid, t in texts.items()}
        df = Counter(u for us in docs.values() for u in set(us))
        vocab = [u for u, n in df.most_common(MAX_UNITS) if n >= MIN_COUNT]
        self.index = {u: i for i, u in enumerate(vocab)}
        n = len(docs)
        self.idf = np.array([math.log(1 + n / df[u]) for u in vocab])
        ids = sorted(docs)
        if mode == "lsi":
            rows, cols, vals = [], [], []
            for j, cid in enumerate(ids):
                tf = Counter(u for u in docs[cid] if u in self.index)
                if not tf:
                    continue
                w = np.array([(1 + math.log(c)) * self.idf[self.index[u]] for u, c in tf.items()])
                w /= np.linalg.norm(w)
                rows += [self.index[u] for u in tf]
                cols += [j] * len(tf)
                vals += list(w)
            u, s, v = rsvd(np.array(rows), np.array(cols), np.array(vals), (len(vocab), len(ids)), dims)
            self.proj = u  # query fold-in
            docv = v * s
        else:
            co: Counter = Counter()
            for us in docs.values():
                seq = [self.index[u] for u in us if u in self.index]
                for i, a in enumerate(seq):
                    for b in seq[i + 1:i + 1 + WINDOW]:
                        if a != b:
                            co[(a, b)] += 1
                            co[(b, a)] += 1
            keys = np.array(list(co.keys()))
            cnt = np.array(list(co.values()), dtype=float)
            rows, cols = keys[:, 0], keys[:, 1]
            total = cnt.sum()
            wc = np.bincount(rows, weights=cnt, minlength=len(vocab))
            cc = np.bincount(cols, weights=cnt, minlength=len(vocab)) ** 0.75
            pmi = np.log(cnt * cc.sum() / (wc[rows] * cc[cols]))
            keep = pmi > 0
            u, s, _ = rsvd(rows[keep], cols[keep], pmi[keep], (len(vocab), len(vocab)), dims)
            self.wv = u * np.sqrt(s)
            self.wv /= np.linalg.norm(self.wv, axis=1, keepdims=True) + 1e-12
            docv = np.stack([self._sum(docs[cid]) for cid in ids])
        docv /= np.linalg.norm(docv, axis=1, keepdims=True) + 1e-12
        self.row = {cid: i for i, cid in enumerate(ids)}
        self.docv = docv
        self.train_cpu_s = time.process_time() - t0
        self.vocab_size = len(vocab)

    def _sum(self, units):
        tf = Counter(u for u in units if u in self.index)
        v = np.zeros(self.wv.shape[1])
        for u, c in tf.items():
            i = self.index[u]
            v += (1 + math.log(c)) * self.idf[i] * self.wv[i]
        return v

    def query(self, text: str):
        us = units_of(text, self.grams)
        if self.mode == "lsi":
            tf = Counter(u for u in us if u in self.index)
            if not tf:
                return None
            q = np.zeros(len(self.index))
            for u, c in tf.items():
                q[self.index[u]] = (1 + math.log(c)) * self.idf[self.index[u]]
            v = self.proj.T @ q
        else:
            v = self._sum(us)
        nv = np.linalg.norm(v)
        return v / nv if nv > 0 else None

    def cosines(self, qv, ids):
        return {cid: float(self.docv[self.row[cid]] @ qv) for cid in ids if cid in self.row}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", required=True, dest="sets")
    ap.add_argument("--mode", default="lsi", choices=("lsi", "ppmi"))
    ap.add_argument("--units", default="words", choices=("words", "words+grams"))
    ap.add_argument("--dims", type=int, default=128)
    ap.add_argument("--weight", default="0.3")
    ap.add_argument("--max-queries", type=int, default=0)
    ap.add_argument("--note-agg", type=float, default=0.0, help="config note_agg (0: as measured, before it shipped)")
    args = ap.parse_args(argv)
    ev = model_probe._eval_module()
    from vaultrag.retrieve import fusion, pipeline
    from vaultrag.store import Store

    state: dict = {}
    real_search, real_rescore = pipeline.search, fusion.rescore

    def search(query, *a, **kw):
        state["query"] = query
        return real_search(query, *a, **kw)

    def rescore(hits, sims, alpha, prior=None, gamma=0.0, *rest):
        w = state["weight"]
        qv = state["vv"].query(state["query"]) if w > 0 and hits else None
        if qv is None:
            return real_rescore(hits, sims, alpha, prior, gamma, *rest)
        vc = fusion._minmax({cid: c for cid, c in state["vv"].cosines(qv, [h[0] for h in hits]).items()})
        # the vault cosine rides in the prior slot's place: prior + (w / gamma) * cosine keeps rescore's own code
        g = gamma if gamma > 0 else 1.0
        merged = {cid: (prior or {}).get(cid, 0.0) * (gamma / g) + (w / g) * vc.get(cid, 0.0) for cid, _ in hits}
        return real_rescore(hits, sims, alpha, merged, g, *rest)

    pipeline.search, pipeline.rescore = search, rescore
    ev_lib = ev.lib
    ev.lib = lambda: (*ev_lib()[:2], search)
    for name in args.sets:
        cfg, items, mapping, facts = model_probe.prepare(ev, name, "bundled")
        cfg = dataclasses.replace(cfg, note_agg=args.note_agg)
        if args.max_queries:
            items = ev.subsample(items, args.max_queries)
        store = Store(cfg.db_path(), readonly=True)
        ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks")]
        chunks = store.chunks_by_id(ids)
        texts = {cid: " ".join((ch.title or "", ch.heading_path or "", ch.text)) for cid, ch in chunks.items()}
        state["vv"] = VaultVectors(texts, args.mode, args.units == "words+grams", args.dims)
        for w in [0.0] + [float(x) for x in args.weight.split(",")]:
            state["weight"] = w
            got = model_probe.measure(ev, cfg, items, mapping, ["meta", "bm25", "vec"], store)
            print(json.dumps({"set": name, "mode": args.mode, "units": args.units, "dims": args.dims, "weight": w,
                              "queries": len(items), **got, "train_cpu_s": round(state["vv"].train_cpu_s, 2),
                              "vocab": state["vv"].vocab_size, "chunks": len(texts),
                              "index_s": facts.get("index_s")}), flush=True)
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
