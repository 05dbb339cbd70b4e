"""Model2Vec model resolution and batch embedding for reindex.

A model spec is one of:
- a Hugging Face hub id (default ``minishlab/potion-base-8M``): taken from the local Hugging Face cache when
  it is there (the same cache model2vec and huggingface_hub use), else downloaded;
- a local folder holding a Model2Vec model (``model.safetensors`` + ``tokenizer.json`` + ``config.json``);
- the word ``bundled``: the offline model shipped inside the package (``vaultrag/models/``).

A local folder may also hold a static model over a SentencePiece Unigram vocabulary (``tokenizer.json``
with ``"type": "Unigram"``, as ``scripts/build_multilingual_model.py`` writes from multilingual-e5-small):
``vaultrag.lean_unigram`` tokenizes for it at index and query time and numpy pools its rows
(``UnigramStaticModel``); model2vec is not used for it.

When a hub model cannot be had (``HF_HUB_OFFLINE`` set and not cached, the hub unreachable within
``HUB_PROBE_TIMEOUT_S``, or the download failing) the bundled model is used instead and
``Embedder.fallback_reason`` says why, so reindex can report it and record it with the index.
That decision is taken once: an unreachable hub is remembered for ``HUB_RECHECK_S`` (in
``$XDG_CACHE_HOME/vaultrag/hub.json``), so an offline machine is not probed on every reindex, and
the fallback is logged at INFO (the reindex report carries it; no warning on every run).

Resolution (``resolve_model``) and fingerprinting use the standard library only; numpy and model2vec are
imported inside ``load_embedder`` / ``Embedder.encode``. The query path uses ``vaultrag.lean_encoder``.
"""
from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vaultrag.errors import ConfigError, DependencyMissing, VaultragError
from vaultrag.lean_encoder import model_files

logger = logging.getLogger(__name__)

__all__ = [
    "BUNDLED_MODEL_ID",
    "DEFAULT_MODEL",
    "Embedder",
    "ModelInfo",
    "ModelUnavailable",
    "bundled_model_path",
    "folder_fingerprint",
    "load_embedder",
    "resolve_model",
]

DEFAULT_MODEL = "minishlab/potion-base-8M"
BUNDLED_NAME = "minilm-l6-static-256"
BUNDLED_ID = f"bundled:{BUNDLED_NAME}"
BUNDLED_MODEL_ID = BUNDLED_ID
BUNDLED_SPECS = frozenset({"bundled", BUNDLED_ID, BUNDLED_NAME})
# The whole reachability check (DNS + TCP connect) runs in a thread joined with this timeout: an
# unreachable hub costs at most this long, even when DNS itself hangs.
HUB_PROBE_TIMEOUT_S = 2.0
# huggingface_hub's per-request metadata timeout for the download itself (its default is 10 s).
HUB_ETAG_TIMEOUT_S = 5.0
DEFAULT_HUB_ENDPOINT = "https://huggingface.co"
# An unreachable hub is not probed again for this long: an offline laptop reindexing every few
# minutes would otherwise pay the probe (up to HUB_PROBE_TIMEOUT_S) and a warning each time. A day
# is short enough that a machine back online gets the configured model by the next day.
HUB_RECHECK_S = 24 * 3600
HUB_VERDICT_FILE = "hub.json"
# What snapshot_download fetches: the files every Model2Vec layout can use, and nothing heavier.
HUB_ALLOW_PATTERNS = [
    "model.safetensors", "tokenizer.json", "config.json", "config_sentence_transformers.json", "modules.json",
    "0_StaticEmbedding/model.safetensors", "0_StaticEmbedding/tokenizer.json", "README.md",
]
# Texts per span-tokenizer call: one call collects the distinct new spans of the whole batch, so a
# larger batch means fewer, larger `encode_batch_fast` calls (the config's embed_batch_size, 64, is
# a floor; measured no different from 1024 with model2vec's own encode).
SPAN_BATCH = 1024
INSTALL_HINT = "pip install 'model2vec>=0.6' numpy  (or reinstall vaultrag: pip install vaultrag)"


class ModelUnavailable(VaultragError):
    """The configured embedding model cannot be loaded and falling back was not allowed."""


@dataclass(frozen=True)
class ModelInfo:
    """Where a model spec resolves to, before anything heavy is imported.

    ``source`` is ``bundled`` | ``local`` | ``hub-cache`` (found in the Hugging Face cache) | ``hub``
    (must be downloaded; ``path`` is None). ``requested`` is the spec as configured.
    """

    requested: str
    model_id: str
    source: str
    path: Path | None
    fallback_reason: str | None = None


def bundled_model_path() -> Path:
    """The folder of the model shipped inside the package."""
    return Path(__file__).resolve().parent / "models" / BUNDLED_NAME


def _is_true(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def _hf_hub_cache() -> Path:
    """huggingface_hub's cache folder, computed the way huggingface_hub.constants does."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    hf_home = os.environ.get("HF_HOME")
    if not hf_home:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        hf_home = os.path.join(xdg, "huggingface")
    return Path(hf_home).expanduser() / "hub"


def _cached_snapshot(repo_id: str) -> Path | None:
    """The newest cached snapshot of ``repo_id`` that holds a complete Model2Vec layout (as model2vec's
    ``maybe_get_cached_model_path`` picks it: latest modification time), or None."""
    if repo_id.count("/") != 1:
        return None
    snapshots = _hf_hub_cache() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    try:
        candidates = [p for p in snapshots.iterdir() if p.is_dir()]
    except OSError:
        return None
    for snap in sorted(candidates, key=lambda p: p.stat().st_mtime, reverse=True):
        if model_files(snap) is not None:
            return snap
    return None


def _probe_hub(timeout: float) -> str | None:
    """None if a TCP connection to the hub (or the HTTPS proxy) opens within ``timeout``, else why not."""
    endpoint = os.environ.get("HF_ENDPOINT") or DEFAULT_HUB_ENDPOINT
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    target = urlsplit(proxy if proxy else endpoint)
    host = target.hostname or ""
    port = target.port or (443 if target.scheme == "https" else 80)
    result: list[str | None] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result.append(None)
        except OSError as exc:
            result.append(f"{type(exc).__name__}: {exc}")

    worker = threading.Thread(target=attempt, name="vaultrag-hub-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    where = f"{host}:{port}" + (" (via HTTPS_PROXY)" if proxy else "")
    if not result:
        return f"hub unreachable: no connection to {where} within {timeout:g} s"
    if result[0] is not None:
        return f"hub unreachable: {where}: {result[0]}"
    return None


def _hub_target() -> str:
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy") or ""
    return f"{os.environ.get('HF_ENDPOINT') or DEFAULT_HUB_ENDPOINT}|{proxy}"


def _verdict_path() -> Path:
    from vaultrag.config import xdg_dir

    return xdg_dir("cache") / HUB_VERDICT_FILE


def _remembered_unreachable(now: float | None = None) -> str | None:
    """The reason from a recent failed probe of the same endpoint, or None (probe again)."""
    import json

    try:
        data = json.loads(_verdict_path().read_text(encoding="utf-8"))
        at, reason = float(data["at"]), str(data["reason"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    now = time.time() if now is None else now
    if data.get("target") != _hub_target() or not 0 <= now - at < HUB_RECHECK_S:
        return None
    checked = time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
    return f"{reason} (checked {checked}; not probed again for {HUB_RECHECK_S // 3600} h)"


def _remember_unreachable(reason: str | None) -> None:
    """Record a failed probe (or forget one after a successful probe). Never raises."""
    import json

    path = _verdict_path()
    try:
        if reason is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"target": _hub_target(), "at": time.time(), "reason": reason}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs a probe next time


def _looks_like_path(spec: str) -> bool:
    return (
        spec.startswith(("/", "./", "../", "~", "\\"))
        or (len(spec) > 1 and spec[1] == ":")  # a Windows drive
        or spec.count("/") > 1
        or os.sep in spec and os.sep != "/"
    )


def _bundled_info(requested: str, reason: str | None) -> ModelInfo:
    path = bundled_model_path()
    if model_files(path) is None:
        why = f"the bundled model is missing from {path} (a broken install? reinstall vaultrag)"
        raise ModelUnavailable(why if reason is None else f"{reason}; and {why}")
    return ModelInfo(requested=requested, model_id=BUNDLED_ID, source="bundled", path=path,
                     fallback_reason=reason)


def _fallback(requested: str, reason: str, allow_fallback: bool) -> ModelInfo:
    if not allow_fallback:
        raise ModelUnavailable(
            f"embedding model {requested!r} cannot be loaded: {reason}. Set `model: bundled` in the config, "
            f"or make the model available (download it once online, or point `model:` at a local folder)."
        )
    # INFO, not WARNING: the reindex report says it (once), and an offline machine is the normal case.
    logger.info("embedding model %r unavailable (%s); using the bundled model %s", requested, reason, BUNDLED_ID)
    return _bundled_info(requested, reason)


def resolve_model(
    spec: str | None, *, allow_fallback: bool = True, probe_timeout: float = HUB_PROBE_TIMEOUT_S
) -> ModelInfo:
    """Decide which model a spec means, without importing numpy or model2vec.

    A hub id found in the local Hugging Face cache resolves to that folder with no network access. An
    uncached hub id is probed (``probe_timeout`` seconds at most) unless ``HF_HUB_OFFLINE`` is set or a
    probe of the same endpoint failed less than ``HUB_RECHECK_S`` ago.
    Raises ``ModelUnavailable`` instead of falling back when ``allow_fallback`` is false, and
    ``ConfigError`` for a folder that exists but holds no Model2Vec model.
    """
    requested = (spec or "").strip() or DEFAULT_MODEL
    if requested in BUNDLED_SPECS:
        return _bundled_info(requested, None)
    local = Path(requested).expanduser()
    if local.exists() or _looks_like_path(requested):
        if not local.is_dir():
            return _fallback(requested, f"model folder {local} does not exist", allow_fallback)
        if model_files(local) is None:
            raise ConfigError(
                f"{local} holds no Model2Vec model (model.safetensors, tokenizer.json and config.json). "
                "Point `model:` at a Model2Vec folder, a hub id, or `bundled`."
            )
        folder = local.resolve()
        return ModelInfo(requested=requested, model_id=str(folder), source="local", path=folder)
    cached = _cached_snapshot(requested)
    if cached is not None:
        return ModelInfo(requested=requested, model_id=requested, source="hub-cache", path=cached)
    if _is_true(os.environ.get("HF_HUB_OFFLINE")):
        return _fallback(requested, "HF_HUB_OFFLINE is set and the model is not in the local Hugging Face cache",
                         allow_fallback)
    remembered = _remembered_unreachable()
    if remembered is not None:
        return _fallback(requested, remembered, allow_fallback)
    unreachable = _probe_hub(probe_timeout)
    _remember_unreachable(unreachable)
    if unreachable is not None:
        return _fallback(requested, unreachable, allow_fallback)
    return ModelInfo(requested=requested, model_id=requested, source="hub", path=None)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def folder_fingerprint(path: str | os.PathLike) -> dict[str, Any]:
    """``{dim, vocab_size, weights_sha256, dtype}`` of a model folder, with the standard library only
    (for ``vaultrag status`` and for checking an index against a model without loading it)."""
    import json
    import struct

    files = model_files(Path(path))
    if files is None:
        raise ConfigError(f"{path} holds no Model2Vec model")
    weights, tokenizer, _config, tensor = files
    with open(weights, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(n))
    info = header.get(tensor) or header["embeddings"]
    with open(tokenizer, encoding="utf-8") as fh:
        tok = json.load(fh)
    vocab = dict(tok.get("model", {}).get("vocab") or {})
    for added in tok.get("added_tokens") or []:
        vocab.setdefault(added["content"], added["id"])
    return {"dim": int(info["shape"][1]), "vocab_size": len(vocab), "weights_sha256": _sha256(Path(weights)),
            "dtype": info["dtype"]}


@dataclass
class Embedder:
    """A loaded Model2Vec model and what identifies it (record these fields with the index).

    ``model_id``: what was actually loaded (``bundled:minilm-l6-static-256``, the hub id, or the absolute
    folder); ``path``: the local folder whose files were used (give it to ``LeanEncoder.from_folder``);
    ``weights_sha256``: sha256 of the weights file's bytes; ``fallback_reason``: None, or why the requested
    model was replaced by the bundled one; ``requested``: the spec as configured.
    """

    model_id: str
    path: Path
    dim: int
    vocab_size: int
    weights_sha256: str
    fallback_reason: str | None
    requested: str
    dtype: str
    model: Any = field(repr=False, compare=False)
    _spans: Any = field(default=None, repr=False, compare=False)

    @property
    def fell_back(self) -> bool:
        return self.fallback_reason is not None

    def fingerprint(self) -> dict[str, Any]:
        """What the index records about its model (all plain values)."""
        return {"model_id": self.model_id, "dim": self.dim, "vocab_size": self.vocab_size,
                "weights_sha256": self.weights_sha256, "dtype": self.dtype, "requested": self.requested,
                "fallback_reason": self.fallback_reason}

    def encode(self, texts: list[str], batch_size: int = 64):
        """Embed ``texts`` as a float32 array of shape (len(texts), dim), each row L2-normalised (a text with
        no known token gives a zero row, as model2vec does)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        spans = self.span_encoder()
        if spans is not None:  # the same vectors, the tokenizer's work cached by span
            return np.ascontiguousarray(spans.encode(list(texts), batch_size=max(batch_size, SPAN_BATCH)),
                                        dtype=np.float32)
        out = self.model.encode(list(texts), normalize=True, batch_size=batch_size, show_progress_bar=False)
        return np.ascontiguousarray(out, dtype=np.float32)

    def span_encoder(self):
        """A `span_tokens.SpanEncoder` for this model, or None when its tokenizer is not BERT-style."""
        if self._spans is None:
            from vaultrag import span_tokens

            if span_tokens.supports(self.model):
                try:
                    lean = self.lean_encoder()
                except Exception:  # a layout the lean encoder does not read: tokenizers for every span
                    lean = None
                self._spans = span_tokens.SpanEncoder(self.model, lean)
            else:
                self._spans = False
        return self._spans or None

    def lean_encoder(self):
        """A ``LeanEncoder`` over the same files (the query-time twin of this embedder)."""
        from vaultrag.lean_encoder import LeanEncoder

        return LeanEncoder.from_folder(self.path)


def _import_static_model():
    try:
        from model2vec import StaticModel
    except ImportError as exc:
        raise DependencyMissing(
            f"model2vec is needed to embed notes at reindex but cannot be imported ({exc}). Install it: "
            f"{INSTALL_HINT}. Without it vaultrag still answers with BM25 only."
        ) from exc
    return StaticModel


def _download(repo_id: str) -> Path:
    import huggingface_hub

    return Path(huggingface_hub.snapshot_download(
        repo_id, repo_type="model", allow_patterns=HUB_ALLOW_PATTERNS, etag_timeout=HUB_ETAG_TIMEOUT_S))


class UnigramStaticModel:
    """Index-time twin of ``vaultrag.lean_unigram.LeanUnigram``: the same tokenizer (so stored and query
    vectors agree by construction), the rows pooled with numpy. ``encode`` has StaticModel's signature."""

    def __init__(self, folder: Path) -> None:
        import numpy as np

        from vaultrag.lean_unigram import LeanUnigram

        self.lean = LeanUnigram.from_folder(folder)
        rows = _as_array(self.lean._rows)  # the tensors LeanUnigram mapped, viewed by numpy
        scale = None if self.lean._weights is None else _as_array(self.lean._weights).astype(np.float32).reshape(-1)
        self.embedding = rows.astype(np.float32) * (scale[:, None] if scale is not None else np.float32(1.0))
        self.stored_dtype = str(rows.dtype)
        self.dim = int(self.embedding.shape[1])
        self.tokens = range(self.embedding.shape[0])

    def encode(self, texts: list[str], normalize: bool = True, batch_size: int = 64, show_progress_bar: bool = False):
        import numpy as np

        from vaultrag.lean_encoder import NORM_EPSILON

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = self.lean.tokenize(text)
            if ids:
                out[row] = self.embedding[ids].mean(axis=0)
        if normalize:
            out /= (np.linalg.norm(out, axis=1, keepdims=True) + NORM_EPSILON)
        return out


def _as_array(t):
    """A lean_encoder `_Tensor` (a region of its memory-mapped safetensors file) as a numpy array."""
    import numpy as np

    count = 1
    for n in t.shape:
        count *= n
    return np.frombuffer(t.buf, dtype=np.dtype("<" + t.code), count=count, offset=t.offset).reshape(t.shape)


def _is_unigram_folder(path: Path) -> bool:
    """A folder `scripts/build_multilingual_model.py` wrote (a Unigram model with vaultrag's flattened
    charmap normaliser). Another Unigram model (a Model2Vec one from the hub, whose normaliser is
    "Precompiled") stays model2vec's to load: lean_unigram reads only vaultrag_charmap."""
    import json

    files = model_files(path)
    if files is None:
        return False
    with open(files[1], encoding="utf-8") as fh:
        head = fh.read(4096)
    if '"Unigram"' not in head and '"vaultrag_charmap"' not in head:
        return False
    with open(files[1], encoding="utf-8") as fh:
        tok = json.load(fh)
    return ((tok.get("model") or {}).get("type") == "Unigram"
            and (tok.get("normalizer") or {}).get("type") == "vaultrag_charmap")


def _load_unigram(info: ModelInfo) -> Embedder:
    assert info.path is not None
    t0 = time.perf_counter()
    model = UnigramStaticModel(info.path)
    weights_file, _tok, _cfg, _tensor = model_files(info.path)
    emb = Embedder(
        model_id=info.model_id, path=info.path, dim=model.dim, vocab_size=len(model.tokens),
        weights_sha256=_sha256(Path(weights_file)), fallback_reason=info.fallback_reason,
        requested=info.requested, dtype=model.stored_dtype, model=model,
    )
    logger.info("loaded embedding model %s from %s (%d x %d Unigram, %s) in %.2f s", emb.model_id, emb.path,
                emb.vocab_size, emb.dim, emb.dtype, time.perf_counter() - t0)
    return emb


# What `_read_static_model` passes to StaticModel (model2vec >= 0.10's constructor; older ones load
# through from_pretrained).
_STATIC_MODEL_ARGS = ("vectors", "tokenizer", "config", "normalize", "weights", "token_mapping", "max_length")


def _read_static_model(folder: Path, StaticModel):
    """`StaticModel.from_pretrained(folder)` for a local Model2Vec folder, read here: model2vec's loader
    imports its persistence and model-card modules, and with them huggingface_hub's API (~0.3 s of CPU
    at the start of every reindex that embeds, before its first task: issue 18), for a folder it then
    reads as this does. The model is built by StaticModel itself from the same tensors, tokenizer and
    config with the values `_loading_helper` resolves; only the README's base model and language (a
    model card's fields, never read by encoding) are left out. None: this model2vec's constructor
    takes other arguments, or the folder's layout is not one of model_files' (from_pretrained loads)."""
    import inspect
    import json

    try:
        params = inspect.signature(StaticModel.__init__).parameters
    except (TypeError, ValueError):
        return None
    files = model_files(folder)
    if files is None or not all(name in params for name in _STATIC_MODEL_ARGS):
        return None
    import safetensors
    from tokenizers import Tokenizer

    weights_file, tokenizer_file, config_file, tensor = files
    with safetensors.safe_open(weights_file, framework="numpy") as tensors:
        names = set(tensors.keys())
        embeddings = tensors.get_tensor(tensor)
        weights = tensors.get_tensor("weights") if "weights" in names else None
        mapping = tensors.get_tensor("mapping") if "mapping" in names else None
    with open(config_file, encoding="utf-8") as fh:
        config = json.load(fh)
    return StaticModel(vectors=embeddings, tokenizer=Tokenizer.from_file(tokenizer_file), config=config,
                       normalize=config.get("normalize", False), weights=weights, token_mapping=mapping,
                       max_length=config.get("max_length", 512))


def _load_folder(info: ModelInfo, StaticModel) -> Embedder:
    import numpy as np

    assert info.path is not None
    if _is_unigram_folder(info.path):
        return _load_unigram(info)
    t0 = time.perf_counter()
    model = _read_static_model(info.path, StaticModel) or StaticModel.from_pretrained(info.path, force_download=False)
    dtype = str(np.dtype(model.embedding.dtype))
    if model.embedding.dtype == np.float16:
        # model2vec averages float16 rows in float16 and returns float16 vectors; float32 keeps the
        # stored vectors as precise as the query-time LeanEncoder (which works in double precision).
        model.embedding = model.embedding.astype(np.float32)
    weights_file, _tok, _cfg, _tensor = model_files(info.path)
    emb = Embedder(
        model_id=info.model_id, path=info.path, dim=int(model.dim), vocab_size=len(model.tokens),
        weights_sha256=_sha256(Path(weights_file)), fallback_reason=info.fallback_reason,
        requested=info.requested, dtype=dtype, model=model,
    )
    logger.info("loaded embedding model %s from %s (%d x %d, %s) in %.2f s", emb.model_id, emb.path,
                emb.vocab_size, emb.dim, dtype, time.perf_counter() - t0)
    return emb


def load_embedder(spec: str | None = None, *, allow_fallback: bool = True,
                  probe_timeout: float = HUB_PROBE_TIMEOUT_S) -> Embedder:
    """Resolve ``spec`` (see ``resolve_model``) and load the model with model2vec.

    Falls back to the bundled model, with ``fallback_reason`` set, when a hub model is unavailable or fails
    to load and ``allow_fallback`` is true. Raises ``DependencyMissing`` when model2vec is not installed,
    ``ModelUnavailable`` when the model cannot be had and falling back is not allowed.
    """
    StaticModel = _import_static_model()
    info = resolve_model(spec, allow_fallback=allow_fallback, probe_timeout=probe_timeout)
    if info.source == "hub":
        try:
            folder = _download(info.model_id)
            if model_files(folder) is None:
                raise ModelUnavailable(f"{info.model_id} on the hub holds no Model2Vec model")
            info = ModelInfo(requested=info.requested, model_id=info.model_id, source="hub", path=folder)
        except Exception as exc:  # network errors, missing repo, gated repo: all mean "not available"
            reason = f"download failed: {type(exc).__name__}: {exc}"
            _remember_unreachable(reason)  # a blocked or flaky hub: don't retry on every reindex either
            info = _fallback(info.requested, reason, allow_fallback)
    try:
        return _load_folder(info, StaticModel)
    except (OSError, ValueError, KeyError) as exc:
        if info.source == "bundled":
            raise ModelUnavailable(f"the bundled model at {info.path} cannot be loaded: {exc}") from exc
        reason = f"loading {info.path} failed: {type(exc).__name__}: {exc}"
        return _load_folder(_fallback(info.requested, reason, allow_fallback), StaticModel)
