"""Single-query embedding cost: vaultrag.lean_encoder (stdlib) vs model2vec's StaticModel.encode.

    .venv/bin/python benchmarks/encoder_bench.py                 # prints a Markdown report
    .venv/bin/python benchmarks/encoder_bench.py --rounds 15 --write benchmarks/results/encoder.md

Fresh-process rows run each variant as a new interpreter, round-robin over --rounds rounds (so load from
other jobs hits every variant alike), and report min / median wall time of the whole process, plus the
child's own breakdown (import, load, first encode). Warm rows time one more query in a process that has
already encoded one. --model picks the model folder (default: the bundled one).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO / "vaultrag" / "models" / "minilm-l6-static-256"
QUERY = "how does reindex fall back to the bundled model when the hub cannot be reached?"

# Each child prints JSON {phase: ms}. REPO, MODEL, QUERY, TABLES, VOCABDB are substituted.
CHILDREN = {
    "python -c pass (baseline)": "import json; print(json.dumps({}))",
    "lean: import + from_folder + encode": """
import time; t0 = time.perf_counter()
import sys; sys.path.insert(0, REPO)
from vaultrag.lean_encoder import LeanEncoder
t1 = time.perf_counter()
enc = LeanEncoder.from_folder(MODEL)
t2 = time.perf_counter()
v = enc.encode(QUERY)
t3 = time.perf_counter()
import json; print(json.dumps({"import": (t1-t0)*1e3, "load": (t2-t1)*1e3, "encode": (t3-t2)*1e3}))
""",
    "lean, tables from a marshal file": """
import time; t0 = time.perf_counter()
import sys; sys.path.insert(0, REPO)
import marshal
from vaultrag.lean_encoder import LeanEncoder
t1 = time.perf_counter()
with open(TABLES, "rb") as fh:
    tab = marshal.load(fh)
enc = LeanEncoder.from_tables(tokenizer_config=tab["tokenizer_config"], config={"max_length": tab["max_length"]},
                              weights_path=MODEL + "/model.safetensors", vocab=tab["vocab"],
                              median_token_length=tab["median_token_length"])
t2 = time.perf_counter()
v = enc.encode(QUERY)
t3 = time.perf_counter()
import json; print(json.dumps({"import": (t1-t0)*1e3, "load": (t2-t1)*1e3, "encode": (t3-t2)*1e3}))
""",
    "lean, vocabulary looked up in SQLite per candidate": """
import time; t0 = time.perf_counter()
import sys; sys.path.insert(0, REPO)
import sqlite3, marshal
from vaultrag.lean_encoder import LeanEncoder
t1 = time.perf_counter()
conn = sqlite3.connect("file:" + VOCABDB + "?mode=ro", uri=True)
class Vocab:
    def get(self, token, default=None):
        row = conn.execute("SELECT id FROM vocab WHERE token = ?", (token,)).fetchone()
        return default if row is None else row[0]
settings = marshal.loads(conn.execute("SELECT value FROM meta WHERE key = 'lean'").fetchone()[0])
enc = LeanEncoder.from_tables(tokenizer_config=settings["tokenizer_config"], config={"max_length": settings["max_length"]},
                              weights_path=MODEL + "/model.safetensors", vocab=Vocab(),
                              median_token_length=settings["median_token_length"],
                              max_token_chars=settings["max_token_chars"])
t2 = time.perf_counter()
v = enc.encode(QUERY)
t3 = time.perf_counter()
import json; print(json.dumps({"import": (t1-t0)*1e3, "load": (t2-t1)*1e3, "encode": (t3-t2)*1e3}))
""",
    "model2vec: import + from_pretrained + encode": """
import time; t0 = time.perf_counter()
from model2vec import StaticModel
t1 = time.perf_counter()
m = StaticModel.from_pretrained(MODEL)
t2 = time.perf_counter()
v = m.encode([QUERY], normalize=True)
t3 = time.perf_counter()
import json; print(json.dumps({"import": (t1-t0)*1e3, "load": (t2-t1)*1e3, "encode": (t3-t2)*1e3}))
""",
}


def fresh_process(rounds: int, model: str, tables: str, vocabdb: str) -> dict[str, dict]:
    results: dict[str, dict] = {name: {"wall": [], "phases": []} for name in CHILDREN}
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="0")
    for _ in range(rounds):
        for name, body in CHILDREN.items():
            code = (f"REPO={str(REPO)!r}; MODEL={model!r}; QUERY={QUERY!r}; TABLES={tables!r}; "
                    f"VOCABDB={vocabdb!r}\n{body}")
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
            results[name]["wall"].append((time.perf_counter() - t0) * 1e3)
            results[name]["phases"].append(json.loads(out.stdout.strip().splitlines()[-1]))
    return results


def make_vocab_db(path: str, exported: dict) -> None:
    """The shape the index database could give the hook: a vocab table and the tokenizer settings."""
    import marshal
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE vocab (token TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID")
    conn.executemany("INSERT INTO vocab VALUES (?, ?)", exported["vocab"].items())
    settings = {k: v for k, v in exported.items() if k != "vocab"}
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB)")
    conn.execute("INSERT INTO meta VALUES ('lean', ?)", (marshal.dumps(settings),))
    conn.commit()
    conn.close()


def warm(model: str, n: int) -> dict[str, float]:
    sys.path.insert(0, str(REPO))
    from vaultrag.lean_encoder import LeanEncoder

    queries = [f"{QUERY} variant {i} café 日本" if i % 3 == 0 else f"note about topic {i} and its links"
               for i in range(n)]
    enc = LeanEncoder.from_folder(model)
    enc.encode(queries[0])
    t0 = time.perf_counter()
    for q in queries:
        enc.encode(q)
    lean_ms = (time.perf_counter() - t0) * 1e3 / n
    long_text = " ".join(["semantic retrieval over a markdown vault with headings and links"] * 60)
    t0 = time.perf_counter()
    for _ in range(20):
        enc.encode(long_text)
    lean_long_ms = (time.perf_counter() - t0) * 1e3 / 20
    from model2vec import StaticModel

    m = StaticModel.from_pretrained(model)
    m.encode([queries[0]])
    t0 = time.perf_counter()
    for q in queries:
        m.encode([q], normalize=True)
    m2v_ms = (time.perf_counter() - t0) * 1e3 / n
    t0 = time.perf_counter()
    for _ in range(20):
        m.encode([long_text], normalize=True)
    m2v_long_ms = (time.perf_counter() - t0) * 1e3 / 20
    return {"lean": lean_ms, "model2vec": m2v_ms, "lean_long": lean_long_ms, "model2vec_long": m2v_long_ms,
            "long_chars": len(long_text)}


def report(res: dict, w: dict, rounds: int, model: str, cmd: str) -> str:
    size = sum(p.stat().st_size for p in Path(model).iterdir() if p.is_file())
    lines = [
        "# Query encoder: lean (stdlib) vs model2vec",
        "",
        f"Command: `{cmd}`",
        "",
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}. Model: `{Path(model).name}` ({size / 1e6:.1f} MB folder). "
        f"Fresh processes round-robin over {rounds} rounds; times in ms, min / median. Measured while other",
        "jobs shared the machine, so read them as upper bounds.",
        "",
        "## Fresh process: one query, from interpreter start to vector",
        "",
        "| variant | wall (process) | import | load | first encode |",
        "|---|---|---|---|---|",
    ]

    def mm(xs):
        return f"{min(xs):.1f} / {statistics.median(xs):.1f}"

    for name, r in res.items():
        ph = r["phases"]
        cells = [mm(r["wall"])]
        for key in ("import", "load", "encode"):
            vals = [p[key] for p in ph if key in p]
            cells.append(mm(vals) if vals else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Warm, in process (per query)",
        "",
        "| variant | short query (ms) | ~%d-char text (ms) |" % w["long_chars"],
        "|---|---|---|",
        f"| lean encoder | {w['lean']:.3f} | {w['lean_long']:.2f} |",
        f"| StaticModel.encode | {w['model2vec']:.3f} | {w['model2vec_long']:.2f} |",
        "",
        "## Reading",
        "",
    ]
    base = min(res["python -c pass (baseline)"]["wall"])
    lean = min(res["lean: import + from_folder + encode"]["wall"])
    sql = min(res["lean, vocabulary looked up in SQLite per candidate"]["wall"])
    m2v = min(res["model2vec: import + from_pretrained + encode"]["wall"])
    lines += [
        f"- A fresh process pays {lean - base:.0f} ms over a bare interpreter for a lean query vector "
        f"(min), against {m2v - base:.0f} ms with model2vec: about {(m2v - base) / max(lean - base, 0.1):.0f}x less.",
        "- Most of the lean cost is parsing tokenizer.json (the `load` column). Looking tokens up in a SQLite",
        f"  table one WordPiece candidate at a time brings it to {sql - base:.0f} ms over the interpreter, "
        "`import sqlite3` included",
        "  (which a hook needs anyway). A marshal dump of the vocabulary dict is slower to load than the JSON.",
        "- Warm, StaticModel.encode is faster per call (numpy, Rust tokenizer), but a hook encodes one query per",
        "  process, so start-up dominates. The lean vectors equal StaticModel.encode's within 1e-5",
        "  (tests/test_lean_encoder.py).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--warm-queries", type=int, default=300)
    ap.add_argument("--model", default=str(DEFAULT_MODEL))
    ap.add_argument("--write", help="also write the Markdown report to this file")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    import marshal

    from vaultrag.lean_encoder import LeanEncoder

    with tempfile.TemporaryDirectory() as tmp:
        tables = os.path.join(tmp, "tables.marshal")
        exported = LeanEncoder.from_folder(args.model).export_tables()
        with open(tables, "wb") as fh:
            marshal.dump(exported, fh)
        vocabdb = os.path.join(tmp, "vocab.sqlite")
        make_vocab_db(vocabdb, exported)
        res = fresh_process(args.rounds, args.model, tables, vocabdb)
    w = warm(args.model, args.warm_queries)
    cmd = "python benchmarks/encoder_bench.py " + " ".join(sys.argv[1:])
    text = report(res, w, args.rounds, args.model, cmd.strip())
    print(text)
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
