"""Note-level aggregation (config note_agg), off (0) against on (0.5) in one process, on an index
model_probe.py built for the set (same $TMPDIR cache):

    TMPDIR=T HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/note_agg_check.py cost obs-en
    TMPDIR=T HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/note_agg_check.py evidence obs-en

cost: CPU per search() of the set's first 400 queries, 3 rounds, off and on interleaved query by
query (the order alternating per round). evidence: the gate's evidence and the answer status for
the set's queries plus this repository's `git log` subjects (off-topic prompts), which must be the
same either way (the gate and the hook's injection routes read the chunk-level ranking).
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import model_probe  # noqa: E402


def main(argv=None) -> int:
    what, name = (argv or sys.argv[1:])[:2]
    ev = model_probe._eval_module()
    from vaultrag.retrieve import search
    from vaultrag.store import Store

    cfg, items, _, _ = model_probe.prepare(ev, name, "bundled")
    store = Store(cfg.db_path(), readonly=True)
    cfgs = {"off": dataclasses.replace(cfg, note_agg=0.0), "on": dataclasses.replace(cfg, note_agg=0.5)}
    if what == "evidence":
        prompts = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%s"], capture_output=True,
                                 text=True).stdout.splitlines() + [t for t, _, _ in items]
        differ = 0
        for p in prompts:
            a, b = (search(p, cfgs[k], store=store) for k in ("off", "on"))
            differ += a.evidence != b.evidence or a.status != b.status
        print(json.dumps({"set": name, "prompts": len(prompts), "evidence_or_status_differs": differ}))
        return 0
    cpu = {"off": 0.0, "on": 0.0}
    qs = [t for t, _, _ in items][:400]
    for q in qs[:20]:
        search(q, cfgs["on"], store=store, gate=False, max_tokens=0)
    for r in range(3):
        for q in qs:
            for k in (("off", "on") if r % 2 == 0 else ("on", "off")):
                t = time.process_time()
                search(q, cfgs[k], store=store, gate=False, max_tokens=0)
                cpu[k] += time.process_time() - t
    n = 3 * len(qs)
    print(json.dumps({"set": name, "queries": len(qs), "rounds": 3,
                      "cpu_ms_per_query_off": round(cpu["off"] / n * 1000, 3),
                      "cpu_ms_per_query_on": round(cpu["on"] / n * 1000, 3), "ratio": round(cpu["on"] / cpu["off"], 4)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
