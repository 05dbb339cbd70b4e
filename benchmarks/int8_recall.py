"""Recall@10 of int8 vector storage against float32, same model, same queries (vector channel only).

    HF_HUB_OFFLINE=1 python benchmarks/int8_recall.py [--set scifact]
Reads ../shared/eval/beir/<set>; exits cleanly if absent.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

from vaultrag.config import load_config
from vaultrag.indexer import reindex
from vaultrag.retrieve.channels import vec_channel
from vaultrag.store import Store

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "beir"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--set", default="scifact")
    a = p.parse_args()
    d = EVAL / a.set
    if not d.exists():
        print(f"{d} not found; nothing measured")
        return 0
    work = Path(tempfile.mkdtemp())
    vault = work / "vault"
    vault.mkdir()
    for i, line in enumerate(open(d / "corpus.jsonl", encoding="utf-8")):
        doc = json.loads(line)
        (vault / f"{i}.md").write_text(f"# {doc.get('title') or doc['_id']}\n\n{doc['text']}\n", encoding="utf-8")
    queries = [json.loads(x)["text"] for x in open(d / "queries.jsonl", encoding="utf-8")][:300]
    tops, sizes = {}, {}
    for vt in ("float32", "int8"):
        cfg = load_config(vault=str(vault), db=str(work / f"{vt}.sqlite"), model="bundled", vector_type=vt)
        reindex(cfg)
        with Store(cfg.db_path(), readonly=True) as s:
            sizes[vt] = s.conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'chunks_vec%'").fetchone()[0]
            tops[vt] = [[s.chunks_by_id([c])[c].path for c, _ in vec_channel(s, q, 10)[0]] for q in queries]
    rec = [len(set(i) & set(f)) / max(1, len(f)) for i, f in zip(tops["int8"], tops["float32"])]
    print(f"{a.set}: {len(queries)} queries, int8 recall@10 vs float32 = {sum(rec) / len(rec):.3f}; "
          f"vec0 size float32 {sizes['float32'] / 1e6:.1f} MB, int8 {sizes['int8'] / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
