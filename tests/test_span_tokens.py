"""The span-cached encoder gives model2vec's own ids and vectors, bit for bit, on real text."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from vaultrag import span_tokens
from vaultrag.embedder import load_embedder

from conftest import shared_path

EDGE = [
    "", " ", "\n\n", "plain words only", "Tabs\tand\nnewlines\r\nand  doubles",
    "a\x0bb c\x0cd e\x85f g\x1cf", "nul\x00inside and \ufffd replaced", "zero\u200bwidth and nbsp\xa0here",
    "[UNK] literal and [PAD] too, x[UNK]y", "Café naïve résumé ÀÉÎ Straße ǅ İstanbul",
    "中文没有空格的句子，还有标点。", "日本語とカタカナ", "ภาษาไทยไม่มีช่องว่าง", "العربية مع التشكيل: كَتَبَ",
    "Ελληνικά με τόνους ΟΔΟΣ", "emoji 🙂👍🏽 and ✓ marks", "x" * 150 + " long word", "don't stop-it (now)!",
    "`code --flag=value` {{placeholder}} <tag/> \\path\\to", "1,234.56 and 10% of $5",
    " ".join(["token"] * 700),  # longer than max_length tokens: cut at 512
]


@pytest.fixture(scope="module")
def model():
    return load_embedder("bundled").model


def _real_texts() -> list[str]:
    texts: list[str] = []
    for part in ("scifact", "xquad-th", "xquad-zh", "xquad-ar", "xquad-de", "xquad-ru"):
        corpus = shared_path("eval", "beir", part, "corpus.jsonl")
        with corpus.open(encoding="utf-8") as fh:
            rows = [json.loads(line) for _, line in zip(range(150), fh)]
        texts += [f"{r.get('title', '')}\n{r['text']}" for r in rows]
    for md in sorted(shared_path("eval", "vaults", "obsidian-help").rglob("*.md"))[:150]:
        texts.append(md.read_text(encoding="utf-8", errors="replace")[:4000])
    import tarfile

    with tarfile.open(shared_path("corpora", "tldr-pages.tar.gz")) as tar:  # command pages, mostly ASCII
        for member in tar:
            if member.isfile() and member.name.endswith(".md") and len(texts) < 1400:
                texts.append(tar.extractfile(member).read().decode("utf-8", errors="replace"))
    return texts


@pytest.fixture(params=["tokenizers", "python-ascii"])
def make_encoder(request, model):
    """A SpanEncoder whose new spans go to `tokenizers` only, or to Python when ASCII."""
    lean = load_embedder("bundled").lean_encoder() if request.param == "python-ascii" else None
    return lambda: span_tokens.SpanEncoder(model, lean)


def _reference_ids(model, texts):
    cut = [t[:model.max_length * model.median_token_length] for t in texts]
    return [list(ids) for ids in model.tokenize(cut)]  # model2vec's tokenizer keeps its 512 truncation


def test_supports_the_bundled_model(model):
    assert span_tokens.supports(model)


def test_ids_equal_model2vec_on_edge_cases_and_real_text(model, make_encoder):
    texts = EDGE + _real_texts()
    enc = make_encoder()
    got = enc.token_ids(texts)
    again = enc.token_ids(texts)  # now from the cache
    want = _reference_ids(model, texts)
    assert got == want and again == want
    assert len(got[EDGE.index(" ".join(["token"] * 700))]) == model.max_length


def test_vectors_equal_model2vec_bit_for_bit_in_any_batch(model, make_encoder):
    texts = EDGE + _real_texts()
    want = model.encode(texts, normalize=True, batch_size=64)
    enc = make_encoder()
    for batch in (7, 64, 1024):
        got = enc.encode(texts, batch_size=batch)
        assert got.dtype == np.float32 and got.shape == want.shape
        assert np.array_equal(got, want), batch
    shuffled = texts[:]
    random.Random(3).shuffle(shuffled)
    got = dict(zip(shuffled, make_encoder().encode(shuffled, batch_size=50)))
    assert all(np.array_equal(got[t], w) for t, w in zip(texts, want))


def test_cache_is_bounded_and_results_survive_a_clear(model, make_encoder, monkeypatch):
    monkeypatch.setattr(span_tokens, "SPAN_CACHE_MAX", 50)
    texts = _real_texts()[:40] + _real_texts()[-40:]
    enc = make_encoder()
    got = [enc.token_ids([t])[0] for t in texts]
    assert len(enc.cache) <= 50 + max(len(set(t.split())) for t in texts)
    assert got == _reference_ids(model, texts)


def test_embedder_encode_uses_spans_and_matches(model):
    e = load_embedder("bundled")
    texts = _real_texts()[:200]
    assert np.array_equal(e.encode(texts), model.encode(texts, normalize=True, batch_size=64).astype(np.float32))
    assert e.span_encoder() is not None and len(e.span_encoder().cache) > 0
    assert e.span_encoder().lean is not None and len(e.span_encoder().words) > 0
