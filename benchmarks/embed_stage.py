"""The indexer's embedding stage alone: model2vec's encode against vaultrag.span_tokens (issue 18).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/embed_stage.py --vault DIR [--files 4000] [--rounds 3]

Builds the embedding inputs of --files random notes of the vault (as the indexer does: read, scrub,
chunk), then, in one process with the tokenizer on one thread (as in a worker), times the CPU of:
model2vec's `StaticModel.encode` (batch 64, what the indexer called before), the span encoder with
new spans sent to `tokenizers`, and with new ASCII spans tokenized in Python; "cold" is a fresh
encoder (empty span cache), "warm" the same encoder again. Rounds are interleaved; medians printed
as JSON, with a check that every variant gives model2vec's vectors bit for bit.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path


def inputs_of(vault: Path, files: int, seed: int) -> list[str]:
    from vaultrag import indexer
    from vaultrag.config import load_config

    cfg = load_config(vault=str(vault), db=os.devnull, model="bundled")
    rels = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    random.Random(seed).shuffle(rels)
    count = indexer.token_counter()[1]
    out: list[str] = []
    for rel in rels[:files]:
        raw, text, reason = indexer.read_note(vault, rel, cfg.max_file_bytes)
        if reason is None:
            out += indexer.build_file(rel, os.stat(vault / rel), raw, text, cfg, count)[1]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", required=True)
    ap.add_argument("--files", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one thread, as in an index_pool worker
    import numpy as np

    from vaultrag import span_tokens
    from vaultrag.embedder import load_embedder

    texts = inputs_of(Path(args.vault).resolve(), args.files, args.seed)
    emb = load_embedder("bundled")
    model, lean = emb.model, emb.lean_encoder()
    want = model.encode(texts, batch_size=64, normalize=True)
    times: dict[str, list[float]] = {}

    def timed(name: str, fn):
        t = time.process_time()
        got = fn()
        times.setdefault(name, []).append(time.process_time() - t)
        assert np.array_equal(np.asarray(got, dtype=np.float32), want.astype(np.float32)), name

    for _ in range(args.rounds):
        timed("model2vec encode, batch 64", lambda: model.encode(texts, batch_size=64, normalize=True))
        for name, helper in (("spans, new ones by tokenizers", None), ("spans, new ASCII ones in Python", lean)):
            enc = span_tokens.SpanEncoder(model, helper)
            timed(f"{name}, cold", lambda: enc.encode(texts))
            timed(f"{name}, warm", lambda: enc.encode(texts))
    print(json.dumps({"vault": args.vault, "chunks": len(texts), "rounds": args.rounds, "load": os.getloadavg(),
                      "cpu_s_median": {k: round(statistics.median(v), 3) for k, v in times.items()}}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
