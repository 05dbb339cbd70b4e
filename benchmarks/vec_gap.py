"""Issue 19: why the pipeline's vectors-only ranking is weaker than the bundled model's own vectors.

    TMPDIR=T HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/vec_gap.py --set xquad-en --set scifact [--max-queries 400]

Starts from a proxy outside the pipeline (whole documents "# title\\ntext" embedded by the model as
the indexer loads it, the query by the same model, float32 cosine, every document scored) and moves one
factor at a time toward what `search(channels=["vec"])` does, printing nDCG@10 of each step:

  proxy            documents "# title\\ntext", query by the index-time embedder, exact float32 cosine
  lean query       ... the query by the hook's stdlib encoder (channels.encoder_for)
  chunk inputs     the index's own chunks as the indexer embeds them (embed_input), float32, a note
                   scored by its best chunk
  stored int8      the vectors as stored (rotated int8), exact cosine over every chunk
  knn depth D      the store's two-stage KNN (L1 candidates, exact int8 re-rank) at depth D, notes in
                   order of their first chunk (the rest of the top 10 empty)
  pipeline vec     search(channels=["vec"], gate off), as eval.py's "vec only" row

The indexes are model_probe.py's (cached under $TMPDIR/vaultrag-model-probe/bundled/<set>/).
Data: ../shared/eval at run time, nothing of it copied.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"vaultrag_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def unit(m):
    import numpy as np

    m = np.asarray(m, dtype=np.float64)
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)


def ranked_notes(scores, chunk_note, k=10):
    """Note ids by their best chunk's score, best first (ties by note id)."""
    import numpy as np

    best: dict = {}
    for i in np.argsort(-scores, kind="stable"):
        note = chunk_note[i]
        if note not in best:
            best[note] = scores[i]
            if len(best) >= k:
                break
    return list(best)


def stored_int8(store):
    """(chunk ids, int8 matrix as float64) of the vec0 table."""
    import numpy as np

    rows = store.conn.execute("SELECT rowid, embedding FROM chunks_vec ORDER BY rowid").fetchall()
    ids = [r[0] for r in rows]
    mat = np.stack([np.frombuffer(r[1], dtype=np.int8) for r in rows]).astype(np.float64)
    return ids, mat


_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")
_ID_WORD = re.compile(r"\b(?=[0-9a-f-]*[0-9])(?=[0-9a-f-]*[a-f])[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b", re.I)


def _fold(s: str) -> str:
    return " ".join(s.casefold().split())


def v_text(title, heading, text):
    return text


def v_dedup(title, heading, text):
    """title, heading path, then the text without heading lines the prefix already says."""
    said = {_fold(title)} | {_fold(h) for h in heading.split(" > ") if h}
    lines = [ln for ln in text.split("\n") if not ((m := _HEADING_LINE.match(ln)) and _fold(m.group(1)) in said)]
    return "\n".join(p for p in (title, heading, "\n".join(lines)) if p)


def v_noid(title, heading, text):
    return _ID_WORD.sub(" ", v_dedup(title, heading, text))


def v_curnoid(title, heading, text):
    return _ID_WORD.sub(" ", "\n".join(p for p in (title, heading, text) if p))


_MARKUP = re.compile(r"[#*`|>\[\]]+|^\s*(?:[-+]|\d+\.)\s+(?:\[[ xX]\]\s+)?", re.M)


def v_markup(title, heading, text):
    """as indexed, hex ids dropped, Markdown markup characters (# * ` | > [ ]) and list markers left out"""
    return _MARKUP.sub(" ", v_curnoid(title, heading, text))


def v_notitle(title, heading, text):
    return v_dedup("", heading, text)


VARIANTS = {"input: text only": v_text, "input: dedup": v_dedup, "input: dedup, ids dropped": v_noid,
            "input: dedup, no title": v_notitle, "input: as indexed, ids dropped": v_curnoid,
            "input: ids dropped, markup dropped": v_markup}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", required=True, dest="sets")
    ap.add_argument("--max-queries", type=int, default=0, help="fixed-seed subsample (0 = all)")
    ap.add_argument("--depth", default="30,60,300", help="KNN depths to measure")
    ap.add_argument("--steps", default="", help="semicolon-separated subset of steps (default: all; \"variants\" = every input variant)")
    args = ap.parse_args(argv)
    ev = _module("eval")
    mp = _module("model_probe")
    import numpy as np

    from vaultrag.embedder import load_embedder
    from vaultrag.index_vectors import embed_input
    from vaultrag.retrieve.channels import encoder_for
    from vaultrag.store import Store
    from vaultrag.store.sqlite.vectors import quantize_int8

    emb = load_embedder("bundled")
    want = set(args.steps.split(";")) if args.steps else None
    for name in args.sets:
        t0 = time.monotonic()
        cfg, items, mapping, facts = mp.prepare(ev, name, "bundled")
        if args.max_queries:
            items = ev.subsample(items, args.max_queries)
        corpus = [] if name.startswith("obs-") else ev.load_beir(name)[0]  # obs-*: no proxy steps
        store = Store(cfg.db_path(), readonly=True)
        store.resident_vectors = False
        lean = encoder_for(store.meta().model_path)
        rows = store.conn.execute(
            "SELECT c.id, f.path, f.title, c.heading_path, c.text FROM chunks c JOIN files f ON f.id = c.file_id "
            "ORDER BY c.id").fetchall()
        cids = [r[0] for r in rows]
        mapping = mapping if mapping is not None else {}
        chunk_doc = [mapping.get(r[1], r[1]) for r in rows]
        inputs = [embed_input(r[2], r[3], store.unpack(r[4])) for r in rows]
        doc_ids = [str(d["_id"]) for d in corpus]
        doc_text = [f"# {(d.get('title') or '').strip() or d['_id']}\n{d.get('text', '')}" for d in corpus]
        queries = [text for text, _, _ in items]
        qrels = [rels for _, rels, _ in items]

        types = [typ for _, _, typ in items]

        def report(label, ranked_lists, **extra):
            score = sum(ev.ndcg(r, rel) for r, rel in zip(ranked_lists, qrels)) / max(1, len(qrels))
            got = {"ndcg@10": round(score, 4)}
            if corpus == []:  # obsidian-help: MRR@10 per query type, as eval.py reports them
                for typ in sorted(set(types)):
                    pairs = [(r, rel) for r, rel, t in zip(ranked_lists, qrels, types) if t == typ]
                    got[f"{typ} mrr@10"] = round(sum(ev.mrr(r, rel) for r, rel in pairs) / len(pairs), 4)
            print(json.dumps({"set": name, "step": label, "queries": len(qrels), **got, **extra}), flush=True)
            return score

        def on(step):
            return want is None or step in want

        q_model = unit(emb.encode(queries))
        q_lean = unit(np.array([lean.encode(q) for q in queries]))
        if corpus and (on("proxy") or on("lean query") or on("body only")):
            d = unit(emb.encode(doc_text))
            if on("proxy"):
                report("proxy", [ranked_notes(d @ q, doc_ids) for q in q_model])
            if on("body only"):
                b = unit(emb.encode([d.get("text", "") for d in corpus]))
                report("body only (no title line; reference)", [ranked_notes(b @ q, doc_ids) for q in q_model])
            if on("lean query"):
                report("lean query", [ranked_notes(d @ q, doc_ids) for q in q_lean],
                       query_cos_model_vs_lean=round(float(np.mean(np.sum(q_model * q_lean, axis=1))), 6))
        if on("chunk inputs"):
            c = unit(emb.encode(inputs))
            report("chunk inputs", [ranked_notes(c @ q, chunk_doc) for q in q_lean],
                   chunks=len(cids), notes=len(set(chunk_doc)))
        for label, fn in VARIANTS.items():
            if on(label) or on("variants"):
                c = unit(emb.encode([fn(r[2], r[3], store.unpack(r[4])) for r in rows]))
                report(label, [ranked_notes(c @ q, chunk_doc) for q in q_lean])
        if on("stored int8"):
            ids, mat = stored_int8(store)
            pos = {cid: i for i, cid in enumerate(cids)}
            note_of = [chunk_doc[pos[i]] for i in ids]
            mat = unit(mat)
            qi = unit(np.stack([np.frombuffer(quantize_int8(list(q)) or bytes(mat.shape[1]), dtype=np.int8)
                                for q in q_lean]).astype(np.float64))
            report("stored int8", [ranked_notes(mat @ q, note_of) for q in qi])
        path_of = {r[0]: chunk_doc[i] for i, r in enumerate(rows)}
        for depth in (int(x) for x in args.depth.split(",")):
            if not on(f"knn depth {depth}") and not on("knn"):
                continue
            lists = []
            for q in q_lean:
                if not q.any():
                    lists.append([])
                    continue
                hits = store.knn(tuple(float(x) for x in q), depth)
                lists.append(list(dict.fromkeys(path_of[cid] for cid, _ in hits))[:10])
            report(f"knn depth {depth}", lists)
        if on("pipeline vec"):
            lists = []
            for text in queries:
                paths, _ = ev.ranked_paths(text, cfg, store, ["vec"], True)
                lists.append([mapping.get(p, p) for p in paths])
            report("pipeline vec", lists)
        store.close()
        print(f"# {name}: {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
