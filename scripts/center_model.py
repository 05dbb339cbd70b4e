#!/usr/bin/env python3
"""Centre the bundled static model: subtract one fixed mean vector from every token row (issue 19).

    .venv/bin/python scripts/center_model.py [--model DIR] [--out DIR] [--check]

Static (mean-pooled) embeddings are anisotropic: every text's vector shares a large common component, so
the cosine of two unrelated notes is already high (mean pairwise document cosine 0.89-0.93 on xquad-de)
and the differences that rank are squeezed into the last few hundredths. Subtracting the mean token
vector from every row removes that component once, in the model file, so the index and the hook pay
nothing for it (same shape, same int8 rows, same code path).

The mean must not depend on the user's vault or on anything downloaded, so it is taken over text that
ships with Python: the docstrings of the running CPython's standard library (modules, classes and
functions, read with ``ast`` from the source files, never imported; the ``test`` packages left out),
weighted by how often each token occurs there (the mean of every token occurrence's row). The same
Python version gives the same text, hence the same mean; the text list's sha256 goes into PROVENANCE.md.

Input: the model ``scripts/build_model.py`` writes (``--model``, default the bundled folder). The script
refuses a model that is already centred (its mean over the same text is already small, see
``CENTRED_MAX_SHARE``), so running it twice does not subtract twice. Output: ``model.safetensors``
rewritten (int8, rescaled to the full int8 range; cosine is scale-free) in ``--out`` (default: in place),
``config.json`` with the evidence gate's vector floor for this model (``--vec-floor``/``--vec-known``), and a
"Centring" section appended to PROVENANCE.md with the hashes. ``--check`` only reports.
"""
from __future__ import annotations

import argparse
import ast
import datetime as _dt
import hashlib
import json
import os
import platform
import re
import sys
import sysconfig
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO / "vaultrag" / "models" / "minilm-l6-static-256"
# A model whose mean row (over the stdlib text) is at most this share of its mean row norm counts as
# centred already (the plain distillation: ~0.6; after centring: ~0.0 up to int8 rounding).
CENTRED_MAX_SHARE = 0.05
# The evidence gate's vector route for the centred model, written into its config.json (retrieve/channels.py
# model_vec_gate): measured with benchmarks/vec_floor.py (BENCHMARKS.md "Stop 16 — sem5").
VEC_FLOOR = 0.6
VEC_KNOWN = 0.9
SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"}


def stdlib_docstrings(root: Path | None = None) -> list[str]:
    """Every module, class and function docstring of the standard library's .py sources, in path order."""
    root = Path(root or sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            try:
                tree = ast.parse(Path(dirpath, name).read_bytes())
            except (SyntaxError, ValueError, OSError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node, clean=True)
                    if doc and doc.strip():
                        out.append(doc.strip())
    return out


def token_counts(encoder, texts: list[str]) -> Counter:
    counts: Counter = Counter()
    for text in texts:
        counts.update(encoder.tokenize(text))
    return counts


def mean_row(rows, counts: Counter):
    import numpy as np

    ids = np.fromiter(counts.keys(), dtype=np.int64)
    w = np.fromiter(counts.values(), dtype=np.float64)
    return (rows[ids].astype(np.float64) * w[:, None]).sum(axis=0) / w.sum()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=None, help="folder to write (default: --model, in place)")
    ap.add_argument("--check", action="store_true", help="report the mean's size, write nothing")
    ap.add_argument("--vec-floor", type=float, default=VEC_FLOOR, help="the gate's vector floor for config.json")
    ap.add_argument("--vec-known", type=float, default=VEC_KNOWN, help="the known-word share it wants")
    args = ap.parse_args(argv)

    import numpy as np
    from safetensors.numpy import load_file, save_file

    sys.path.insert(0, str(REPO))
    from vaultrag.lean_encoder import LeanEncoder
    from vaultrag.retrieve.channels import VEC_FLOOR_KEY, VEC_KNOWN_KEY

    src = args.model
    tensors = load_file(str(src / "model.safetensors"))
    if set(tensors) != {"embeddings"}:
        raise SystemExit(f"{src}: expected one 'embeddings' tensor, found {sorted(tensors)}")
    rows = tensors["embeddings"]
    if rows.dtype != np.int8:
        raise SystemExit(f"{src}: expected int8 rows, found {rows.dtype}")
    texts = stdlib_docstrings()
    text_sha = hashlib.sha256("\n\x00".join(texts).encode("utf-8")).hexdigest()
    counts = token_counts(LeanEncoder.from_folder(src), texts)
    mean = mean_row(rows, counts)
    row_norm = float(np.linalg.norm(rows.astype(np.float64), axis=1).mean())
    share = float(np.linalg.norm(mean)) / row_norm
    facts = {"python": platform.python_version(), "docstrings": len(texts), "tokens": int(sum(counts.values())),
             "distinct_tokens": len(counts), "text_sha256": text_sha, "mean_norm_share": round(share, 4)}
    print(json.dumps(facts))
    if args.check:
        return 0
    if share <= CENTRED_MAX_SHARE:
        raise SystemExit(f"{src} is centred already (mean row {share:.3f} of the mean row norm): nothing to do")

    centred = rows.astype(np.float64) - mean
    scale = 127.0 / float(np.abs(centred).max())
    new = np.clip(np.rint(centred * scale), -127, 127).astype(np.int8)
    f = centred / (np.linalg.norm(centred, axis=1, keepdims=True) + 1e-12)
    q = new.astype(np.float64) / (np.linalg.norm(new.astype(np.float64), axis=1, keepdims=True) + 1e-12)
    worst = float((f * q).sum(axis=1).min())  # int8 rounding, row by row

    out = args.out or src
    out.mkdir(parents=True, exist_ok=True)
    if out != src:
        for p in sorted(src.iterdir()):
            if p.is_file() and p.name != "model.safetensors":
                (out / p.name).write_bytes(p.read_bytes())
    source_sha = _sha256(src / "model.safetensors")
    save_file({"embeddings": new}, str(out / "model.safetensors"))
    os.chmod(out / "model.safetensors", 0o644)
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    config[VEC_FLOOR_KEY], config[VEC_KNOWN_KEY] = args.vec_floor, args.vec_known
    (out / "config.json").write_text(json.dumps(config, indent=4), encoding="utf-8")
    after = float(np.linalg.norm(mean_row(new, counts))) / float(np.linalg.norm(new.astype(np.float64), axis=1).mean())
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section = f"""
## Centring (issue 19) — `scripts/center_model.py`

The int8 rows above, minus one fixed mean vector, re-quantised to int8 (one scale for the whole table,
{scale:.4f} x the centred float rows; cosine is scale-free): the mean of every token occurrence's row over the
docstrings of CPython {facts['python']}'s standard library ({facts['docstrings']:,} module/class/function docstrings
read with `ast`, the `test` packages left out; {facts['tokens']:,} tokens, {facts['distinct_tokens']:,} distinct; text list
sha256 `{text_sha}`). It removes the component every text shares (anisotropy), so cosines spread over
[-1, 1] instead of crowding near 1; the evidence gate's vector route was recalibrated for it:
`config.json` declares `{VEC_FLOOR_KEY}: {args.vec_floor}` and `{VEC_KNOWN_KEY}: {args.vec_known}` (read by
retrieve/channels.py `model_vec_gate`; models that declare nothing keep the pipeline's 0.95 / 0.5).

- input `model.safetensors` sha256 `{source_sha}` (the output table above lists the centred files)
- mean row norm / mean row norm of the table: {share:.4f} before, {after:.4f} after
- int8 rounding of the centred rows: worst row cosine to its float row {worst:.5f}
- output `model.safetensors` {(out / 'model.safetensors').stat().st_size:,} bytes, sha256 `{_sha256(out / 'model.safetensors')}`
- built: {when}, Python {facts['python']}, numpy {np.__version__}
"""
    prov = out / "PROVENANCE.md"
    if prov.exists():
        text = prov.read_text(encoding="utf-8")
        for name in ("config.json", "model.safetensors"):  # the output table: the files as they are now
            f = out / name
            text = re.sub(rf"^\| `{re.escape(name)}` \|.*$", f"| `{name}` | {f.stat().st_size:,} | `{_sha256(f)}` |", text,
                          flags=re.M)
        prov.write_text(text.rstrip("\n") + "\n" + section, encoding="utf-8")
    print(json.dumps({"out": str(out), "scale": round(scale, 4), "after_share": round(after, 4),
                      "worst_row_cosine": round(worst, 5)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
