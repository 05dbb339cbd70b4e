"""The stdlib query encoder against model2vec's StaticModel.encode (the oracle), plus import hygiene.

Run ``python tests/test_lean_encoder.py --print-tables`` to print the Unicode tables of
vaultrag/lean_encoder.py regenerated from the installed ``tokenizers``.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "vaultrag" / "models" / "minilm-l6-static-256"
TOLERANCE = 1e-5

np = pytest.importorskip("numpy")
model2vec = pytest.importorskip("model2vec")

from vaultrag.lean_encoder import LeanEncoder, LeanEncoderError, model_files  # noqa: E402


# ------------------------------------------------------------------------------------------ corpus
def varied_strings(seed: int = 20261130) -> list[str]:
    """>= 300 strings covering what a vault holds, plus the tokenizer's edge cases."""
    rnd = random.Random(seed)
    fixed = [
        "", " ", "   ", "\t\n\r ", "\u3000\u2003\u00a0", "\x00", "\ufffd", "\u200b\u200c\u200d\ufeff",
        "Hello, world!", "café crème brûlée à la carte", "naïve façade coöperate résumé", "Ærøskøbing Ångström",
        "São Paulo, Łódź, Kraków, Dvořák, Gdańsk", "ΟΔΟΣ Σίσυφος ἀρχή", "İstanbul ıi Iİ", "Straße ß ẞ",
        "ﬁle ﬂow ＦＵＬＬＷＩＤＴＨ ｋａｔａｋａｎａ ｶﾀｶﾅ", "①②③ ⅷ ²³ ½", "日本語のテキストです。", "中文分词测试，标点符号！",
        "한국어 텍스트 처리", "Привет, мир! Ёжик в тумане.", "Україна, Київ; ґанок", "مرحبا بالعالم", "שלום עולם",
        "हिन्दी पाठ परीक्षण", "ภาษาไทย", "ᚠᛇᚻ᛫ᛒᛦᚦ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙 𝐛𝐨𝐥𝐝", "e\u0301 a\u0308 o\u0302\u0323",
        "emoji 😀 😂 🥰 🫠 👍🏽 👨‍👩‍👧‍👦 🇫🇷 🏳️‍🌈 ✔️ ❤", "🙂🙃🙂🙃", "Mixed 日本 and English 混合",
        "def encode(self, text: str) -> list[float]:\n    return [x / n for x in acc]",
        "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }", "SELECT * FROM chunks WHERE id = :id;",
        "x = {'a': [1, 2.5e-3, None], \"b\": (True, False)}", "`inline code` and ```fenced```",
        "https://example.com/path/to/page?query=1&x=%20y#frag", "mailto:someone@example.org",
        "C:\\Users\\name\\Documents\\vault\\note.md", "/home/user/.config/vaultrag/config.yaml",
        "[[Wiki Link|alias]] #tag #nested/tag ^block-id", "---\ntitle: Note\ntags: [a, b]\n---",
        "foo [PAD] bar [UNK] baz [CLS] [SEP] [MASK]", "[UNK][UNK][PAD][PAD]", "[pad] [unk] (not special)",
        "a" * 99, "b" * 100, "c" * 101, "supercalifragilisticexpialidocious" * 4,
        "pneumonoultramicroscopicsilicovolcanoconiosis " * 3, "x" * 500, "ab" * 300,
        "Ｈｅｌｌｏ　ｗｏｒｌｄ", "«quotes» „German“ “curly” ‘single’ — dash – en … ellipsis",
        "⁂ ※ ‽ ⸘ ⹃ ⹅ ⹎ ⹕ ៘ ᙭ ꧁ ꧂", "a\x0bb\x0cc\x85d\x1fe\x7ff", "tab\tseparated\tvalues\n",
        "1,234,567.89 $100 €50 ¥1000 £20", "2026-11-30T19:06:00Z", "v0.10.0-rc.1+build.5",
        "CamelCaseIdentifier snake_case_identifier kebab-case-identifier SCREAMING_CASE",
        "\U00011938 \U00010d50 \ua7cb \u1c89", "\U0002a6d6 \U0002b734 \U0002ceb0 \U00030000",
        "\uf900\uf901 \u2f800 \U0002f800", "test\u0300\u0301\u0302\u0303", "\u0344\u0345 \u0951\u0952",
    ]
    vocab_words = (
        "search index vault note markdown heading chunk embedding vector query model token retrieval "
        "semantic lexical hybrid fusion ranking citation section line file hash database sqlite table "
        "the of and to in is that for with as on by be at this from or an are it not which have"
    ).split()
    alphabets = [
        "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "àáâãäåçèéêëìíîïñòóôõöùúûüýÿœæ",
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюя", "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώ", "日本語中文字漢字仮名かなカナ한국어",
        "0123456789", "!@#$%^&*()_+-=[]{};':\",./<>?\\|`~", "😀😂🥰🫠👍🏽🇫🇷✔️❤🚀🔥💡", " \t\n",
    ]
    out = list(fixed)
    for _ in range(180):  # random mixtures of words and scripts
        parts = []
        for _ in range(rnd.randint(1, 30)):
            r = rnd.random()
            if r < 0.5:
                parts.append(rnd.choice(vocab_words).capitalize() if rnd.random() < 0.2 else rnd.choice(vocab_words))
            else:
                alpha = rnd.choice(alphabets)
                parts.append("".join(rnd.choice(alpha) for _ in range(rnd.randint(1, 12))))
        out.append(rnd.choice([" ", "", "\n", ", "]).join(parts))
    for _ in range(60):  # random code points from all planes (surrogates excluded)
        chars = []
        for _ in range(rnd.randint(1, 40)):
            cp = rnd.choice([rnd.randint(0x20, 0x2FF), rnd.randint(0x300, 0x3000), rnd.randint(0x3000, 0xFFFF),
                             rnd.randint(0x10000, 0x10FFFF), rnd.randint(0x1F300, 0x1FAFF)])
            if 0xD800 <= cp <= 0xDFFF:
                cp = 0x41
            chars.append(chr(cp))
        out.append("".join(chars))
    # over the truncation limits: > 512 tokens, and > max_length * median_token_length characters
    prose = " ".join(rnd.choice(vocab_words) for _ in range(900))
    out += [prose, prose.upper(), "word " * 3000, "日本語" * 2000, ("é" * 50 + " ") * 100, "a" * 5000,
            "[PAD] " * 600, "x" * 3071 + " tail", "y" * 3073 + " tail", ("token " * 511) + "last extra words"]
    return out


@pytest.fixture(scope="module")
def static_model():
    return model2vec.StaticModel.from_pretrained(BUNDLED)


@pytest.fixture(scope="module")
def lean():
    return LeanEncoder.from_folder(BUNDLED)


def test_corpus_is_big_and_varied():
    strings = varied_strings()
    assert len(strings) >= 300
    assert "" in strings and any(len(s) > 5000 for s in strings) and any(s.isspace() for s in strings)


def test_vectors_match_static_model_encode(static_model, lean):
    strings = varied_strings()
    expected = static_model.encode(strings, normalize=True)
    got = np.array([lean.encode(s) for s in strings])
    assert got.shape == expected.shape == (len(strings), 256)
    diff = np.abs(got - expected).max(axis=1)
    worst = int(diff.argmax())
    assert diff.max() < TOLERANCE, f"string #{worst} {strings[worst][:60]!r}: max abs diff {diff.max()}"
    norms = np.linalg.norm(got, axis=1)
    nonzero = np.abs(expected).sum(axis=1) > 0
    assert np.allclose(norms[nonzero], 1.0, atol=1e-6)
    assert (got[~nonzero] == 0).all()


def test_token_ids_match(static_model, lean):
    median = static_model.median_token_length
    assert lean.median_token_length == median
    for s in varied_strings():
        expected = static_model.tokenize([s[: static_model.max_length * median]])[0]
        assert lean.tokenize(s) == expected, repr(s[:80])


def test_empty_and_unknown_give_zeros(lean, static_model):
    for s in ["", "   ", "\x00\x01", "z" * 150, "[UNK]"]:
        v = lean.encode(s)
        assert v == [0.0] * 256
        assert not static_model.encode([s], normalize=True).any()


def test_every_code_point_normalises_and_splits_like_tokenizers(lean):
    tokenizers = pytest.importorskip("tokenizers")
    norm = tokenizers.normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    pre = tokenizers.pre_tokenizers.BertPreTokenizer()
    bad_norm, bad_split = [], []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        if norm.normalize_str(ch) != lean._normalize(ch):
            bad_norm.append(hex(cp))
        probe = "a" + ch + "b"
        if [w for w, _ in pre.pre_tokenize_str(probe)] != lean._pre_tokenize(probe):
            bad_split.append(hex(cp))
    assert not bad_norm, f"normaliser differs on {len(bad_norm)} code points, e.g. {bad_norm[:10]}"
    assert not bad_split, f"pre-tokeniser differs on {len(bad_split)} code points, e.g. {bad_split[:10]}"


def _write_variant(folder: Path, dtype: str, *, with_weights: bool = False, seed: int = 7) -> Path:
    """A copy of the bundled model with other row dtypes (and optionally weights + a token mapping)."""
    from safetensors.numpy import load_file, save_file

    folder.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "config.json"):
        shutil.copy(BUNDLED / name, folder / name)
    rows = load_file(str(BUNDLED / "model.safetensors"))["embeddings"].astype(np.float32) / 127.0
    tensors = {}
    if with_weights:
        rng = np.random.default_rng(seed)
        n_clusters = 4096
        mapping = (np.arange(len(rows)) * 7919) % n_clusters
        tensors["embeddings"] = rows[:n_clusters].astype(dtype)
        tensors["mapping"] = mapping.astype(np.int64)
        tensors["weights"] = rng.uniform(0.2, 2.0, len(rows)).astype(np.float32)
    else:
        tensors["embeddings"] = rows.astype(dtype)
    save_file(tensors, str(folder / "model.safetensors"))
    cfg = json.loads((folder / "config.json").read_text())
    cfg["embedding_dtype"] = dtype
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


@pytest.mark.parametrize("dtype,with_weights", [("float32", False), ("float16", False), ("float32", True)])
def test_other_dtypes_and_vocabulary_quantised_models(tmp_path, dtype, with_weights):
    folder = _write_variant(tmp_path / f"{dtype}-{with_weights}", dtype, with_weights=with_weights)
    model = model2vec.StaticModel.from_pretrained(folder)
    enc = LeanEncoder.from_folder(folder)
    strings = varied_strings()[::3]
    expected = model.encode(strings, normalize=True).astype(np.float32)
    got = np.array([enc.encode(s) for s in strings], dtype=np.float32)
    # model2vec averages float16 rows in float16 and returns float16 vectors (about 3 decimal digits);
    # the lean encoder (and vaultrag.embedder, which upcasts) keep full precision.
    tol = 2e-3 if dtype == "float16" else TOLERANCE
    assert np.abs(got - expected).max() < tol
    if dtype == "float16":
        model.embedding = model.embedding.astype(np.float32)
        exact = model.encode(strings, normalize=True)
        assert np.abs(got - exact).max() < TOLERANCE


def test_export_tables_round_trip(lean, tmp_path):
    import marshal

    tables = marshal.loads(marshal.dumps(lean.export_tables()))
    weights, _tok, cfg, tensor = model_files(BUNDLED)
    again = LeanEncoder.from_tables(
        tokenizer_config=tables["tokenizer_config"], config={"max_length": tables["max_length"]},
        weights_path=weights, tensor_name=tensor, vocab=tables["vocab"],
        median_token_length=tables["median_token_length"])
    for s in varied_strings()[:80]:
        assert again.encode(s) == lean.encode(s)
    rows = list(lean.vocab_rows())
    assert len(rows) == len(lean.vocab) and len(rows[0][2]) == lean.dim
    assert rows[0][1] == 0 and rows[-1][1] == len(rows) - 1


class SqliteVocab:
    """A vocabulary that is only ever asked ``get``: one indexed SQLite lookup per WordPiece candidate."""

    def __init__(self, vocab: dict[str, int]) -> None:
        import sqlite3

        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE TABLE vocab (token TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID")
        self.conn.executemany("INSERT INTO vocab VALUES (?, ?)", vocab.items())
        self.lookups = 0

    def get(self, token, default=None):
        self.lookups += 1
        row = self.conn.execute("SELECT id FROM vocab WHERE token = ?", (token,)).fetchone()
        return default if row is None else row[0]

    def __iter__(self):
        raise AssertionError("the encoder must not iterate a get-only vocabulary")


def test_get_only_vocabulary_gives_the_same_vectors(lean):
    tables = lean.export_tables()
    vocab = SqliteVocab(tables["vocab"])
    weights, _tok, _cfg, tensor = model_files(BUNDLED)
    enc = LeanEncoder.from_tables(
        tokenizer_config=tables["tokenizer_config"], config={"max_length": tables["max_length"]},
        weights_path=weights, tensor_name=tensor, vocab=vocab, median_token_length=tables["median_token_length"],
        max_token_chars=tables["max_token_chars"])
    for s in varied_strings():
        assert enc.encode(s) == lean.encode(s), repr(s[:60])
    assert vocab.lookups > 0


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(LeanEncoderError, match="model.safetensors"):
        LeanEncoder.from_folder(tmp_path)


def test_query_path_imports_nothing_heavy():
    code = textwrap.dedent(f"""
        import sys
        from vaultrag.lean_encoder import LeanEncoder
        enc = LeanEncoder.from_folder({str(BUNDLED)!r})
        v = enc.encode("how does the reindex fall back to the bundled model? café 日本 😀")
        assert len(v) == 256 and abs(sum(x * x for x in v) - 1) < 1e-9
        heavy = sorted(m for m in ("numpy", "model2vec", "tokenizers", "tiktoken", "safetensors", "torch",
                                   "huggingface_hub", "socket", "urllib.request", "http.client")
                       if m in sys.modules)
        print(",".join(heavy))
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "", f"the query path imported: {res.stdout.strip()}"


# ------------------------------------------------------------------------------------------ tables
def generate_tables() -> str:
    """Source text of the Unicode tables in lean_encoder.py, from the installed tokenizers."""
    import unicodedata

    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    clean = BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    strip = BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    lower = BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)
    pre = BertPreTokenizer()
    cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]

    def ranges(xs):
        out = []
        for x in xs:
            if out and out[-1][1] == x - 1:
                out[-1][1] = x
            else:
                out.append([x, x])
        return [v for r in out for v in (r[0], r[1] + 1)]

    def fmt(name, flat):
        text, line = f"{name} = (\n", "   "
        for v in flat:
            item = f" 0x{v:X},"
            if len(line) + len(item) > 110:
                text, line = text + line + "\n", "   "
            line += item
        return text + line + "\n)\n"

    control = [c for c in cps if clean.normalize_str(chr(c)) == ""]
    marks = [c for c in cps if strip.normalize_str(chr(c)) == ""]
    punct = [c for c in cps if [w for w, _ in pre.pre_tokenize_str("a" + chr(c) + "b")] == ["a", chr(c), "b"]]
    mark_set = set(map(chr, marks))
    low = {c: lower.normalize_str(chr(c)) for c in cps if lower.normalize_str(chr(c)) != chr(c).lower()}
    nfd = {}
    for c in cps:
        a = strip.normalize_str(chr(c))
        if a != "".join(x for x in unicodedata.normalize("NFD", chr(c)) if x not in mark_set):
            nfd[c] = a
    out = fmt("_CONTROL", ranges(control)) + fmt("_NONSPACING_MARK", ranges(marks)) + fmt("_PUNCTUATION", ranges(punct))
    out += "_LOWER_OVERRIDES = {" + ", ".join(f"0x{c:X}: {ascii(a)}" for c, a in low.items()) + "}\n"
    out += "_STRIP_OVERRIDES = {" + ", ".join(f"0x{c:X}: {ascii(a)}" for c, a in nfd.items()) + "}\n"
    return out


if __name__ == "__main__":
    if "--print-tables" in sys.argv:
        print(generate_tables())
