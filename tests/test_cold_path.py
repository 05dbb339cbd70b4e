"""Issue 18: what the cold hook path imports, and that making imports lazy changed no behaviour."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from vaultrag.digest import sha256
from vaultrag.indexer import reindex

# Standard-library modules the UserPromptSubmit hook does without (each costs a fresh process
# 1-6 ms at import; BENCHMARKS.md "Cold paths"), and what the hook-path records do without
# (vaultrag.frozen: `dataclasses` pulls in inspect, ast, dis and tokenize).
LAZY_STDLIB = ("logging", "hashlib", "difflib", "secrets", "hmac", "dataclasses", "inspect", "ast", "dis", "typing",
               "datetime", "signal",  # round 4: the SQLite C module without its dbapi2; _signal
               "threading", "weakref")  # stop 31: the resident vectors' lock and shared matrices (_thread)


@pytest.fixture
def env(vault, cfg_for, isolated_env):
    cfg = cfg_for(vault)
    reindex(cfg)
    # A loaded machine can push a fresh hook past its 1.5 s deadline, where it fails open (no output).
    return {**os.environ, "VAULTRAG_VAULT": str(vault), "VAULTRAG_DB": str(cfg.db_path()),
            "VAULTRAG_HOOK_TIMEOUT_MS": "60000"}


def _modules_after_hook(env, event_payload: dict) -> tuple[bytes, list[str]]:
    code = ("import io, sys, json\n"
            f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(event_payload).encode()!r}))\n"
            "from vaultrag.hooks import main\n"
            "main('UserPromptSubmit')\n"
            f"print(json.dumps(sorted(m for m in {LAZY_STDLIB!r} if m in sys.modules)), file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout, json.loads(p.stderr.decode().strip().splitlines()[-1])


def test_prompt_hook_answers_without_the_lazy_stdlib_modules(env):
    out, loaded = _modules_after_hook(env, {"session_id": "cold-1", "hook_event_name": "UserPromptSubmit",
                                             "prompt": "daily snapshots retention"})
    assert b"Relevant Memory Context" in out
    assert loaded == []


def _after_a_hook(env, session: str, probe: str) -> str:
    """Run one UserPromptSubmit hook in a fresh `python -I` process, then `probe` (code that prints
    one line to stderr) in the same process; the hook must have injected. Returns that line."""
    code = ("import io, sys\n"
            "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"session_id\": \"" + session + "\", \"hook_event_name\": "
            "\"UserPromptSubmit\", \"prompt\": \"daily snapshots retention\"}'))\n"
            "from vaultrag.hooks import main\nmain('UserPromptSubmit')\n" + probe)
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert b"Relevant Memory Context" in p.stdout
    return p.stderr.decode().strip().splitlines()[-1]


def test_session_memory_uses_the_index_driver_not_a_second_sqlite(env):
    from vaultrag.store.sqlite.connection import driver_name

    loaded = _after_a_hook(env, "cold-2", "print(sorted(m for m in ('sqlite3', 'sqlean', 'sqlean._sqlite3', "
                                          "'datetime') if m in sys.modules), file=sys.stderr)\n")
    # one SQLite library, its C module only: neither package's dbapi2 (which imports datetime)
    assert loaded == ("['sqlean._sqlite3']" if driver_name() == "sqlean" else "[]")
    state = os.path.join(env.get("XDG_STATE_HOME", ""), "vaultrag", "sessions.sqlite")
    assert os.path.exists(state)  # the decision was recorded with that driver


def test_library_logger_is_quiet_when_logging_is_imported_later():
    code = ("import sys\nimport vaultrag\nassert 'logging' not in sys.modules\nimport logging\n"
            "hs = logging.getLogger('vaultrag').handlers\n"
            "print(len(hs), type(hs[0]).__name__ if hs else '')\n"
            "logging.getLogger('vaultrag.x').warning('must not reach stderr')\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["1", "NullHandler"]
    assert "must not reach stderr" not in p.stderr


def test_library_logger_is_quiet_when_logging_came_first():
    code = ("import logging\nimport vaultrag\n"
            "print(sum(isinstance(h, logging.NullHandler) for h in logging.getLogger('vaultrag').handlers))\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "1"


def test_builtin_sha256_matches_hashlib():
    for data in (b"", b"abc", "Grüße, 世界".encode(), bytes(range(256)) * 1000):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    h = sha256(b"part one, ")
    h.update(b"part two")
    assert h.digest() == hashlib.sha256(b"part one, part two").digest()


def test_cli_logging_configuration_waits_for_the_import():
    code = ("import sys\nimport vaultrag\n"
            "vaultrag._when_logging(lambda logging: logging.basicConfig(format='%(levelname)s %(name)s: %(message)s'))\n"
            "assert 'logging' not in sys.modules\n"
            "import logging\nlogging.getLogger('vaultrag.x').warning('shown')\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr.strip() == "WARNING vaultrag.x: shown"


def test_search_cli_does_not_import_logging(env):
    code = ("import sys\nfrom vaultrag.cli import main\n"
            "rc = main(['search', 'daily snapshots retention', '--json'])\n"
            f"print('logging' in sys.modules, sorted(m for m in {LAZY_STDLIB!r} if m in sys.modules), file=sys.stderr)\n"
            "sys.exit(rc)\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["status"] == "ok"
    assert p.stderr.strip().splitlines()[-1] == "False []"


def test_identity_header_is_the_json_of_the_environment(monkeypatch):
    from vaultrag.serve_client import IDENTITY_ENV, identity

    values = ['/tmp/a "quoted" \\ path', "/home/jürgen/Notizen/日本語 🗒", "/tmp/tab\there\nnl\x7f",
              "/srv/idx/ünï.sqlite", "team \"notes\" 📒"]
    assert len(values) == len(IDENTITY_ENV)
    for key, value in zip(IDENTITY_ENV, values):
        monkeypatch.setenv(key, value)
    header = identity()
    assert header.isascii()
    assert json.loads(header) == dict(zip(IDENTITY_ENV, values))
    assert list(json.loads(header)) == sorted(IDENTITY_ENV)
    monkeypatch.delenv(IDENTITY_ENV[0])
    assert json.loads(identity()) == dict(zip(IDENTITY_ENV[1:], values[1:]))
    for key in IDENTITY_ENV:
        monkeypatch.delenv(key, raising=False)
    assert identity() == "{}"


def test_forwarding_imports_neither_json_nor_signal():
    code = ("import sys\nimport vaultrag.hooks, vaultrag.serve_client\n"
            "vaultrag.serve_client.identity()\n"
            "print(sorted(m for m in ('json', 'signal', 'logging', 'hashlib') if m in sys.modules))\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


# -- the query encoder's vocabulary cache (vaultrag.lean_vocab) --------------------------------
BUNDLED_MODEL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "vaultrag", "models", "minilm-l6-static-256")


def _vocab_texts(vocab: dict) -> list[str]:
    import random

    rng = random.Random(18)
    words = sorted(vocab)
    return (["compress a directory into a tar archive", "Grüße, 世界 naïve café", "xyzzyplugh qqq zzzzzz",
             "[UNK] [CLS] hello [SEP]", "", "   ", "a" * 300, "\ud800 lone surrogate", "ŁÓDŹ Ελληνικά 日本語のテキスト"]
            + [" ".join(rng.sample(words, 8)) for _ in range(200)])


def test_cached_vocabulary_encodes_exactly_like_tokenizer_json(tmp_path):
    from vaultrag.lean_encoder import LeanEncoder
    from vaultrag.lean_vocab import SortedVocab, cached_encoder

    ref = LeanEncoder.from_folder(BUNDLED_MODEL)
    first = cached_encoder(BUNDLED_MODEL, tmp_path / "c")  # miss: parses, writes the cache
    cached = cached_encoder(BUNDLED_MODEL, tmp_path / "c")  # hit
    assert isinstance(cached.vocab, SortedVocab) and not isinstance(first.vocab, SortedVocab)
    assert [p.suffix for p in (tmp_path / "c").iterdir()] == [".vocab"]
    assert (tmp_path / "c").stat().st_mode & 0o777 == 0o700
    for text in _vocab_texts(ref.vocab):
        assert cached.tokenize(text) == ref.tokenize(text), text
        assert cached.encode(text) == ref.encode(text), text
        assert cached.known_share(text.split()) == ref.known_share(text.split()), text
    assert all(cached.vocab.get(tok) == i for tok, i in ref.vocab.items())
    assert len(cached.vocab) == len(ref.vocab) and "##ing" in cached.vocab and "notawordatall" not in cached.vocab
    assert cached.vocab.get("notawordatall", -1) == -1
    assert (cached.max_token_chars, cached.median_token_length, cached.unk_id, cached.max_length) == \
        (ref.max_token_chars, ref.median_token_length, ref.unk_id, ref.max_length)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "other-key"])
def test_damaged_vocabulary_cache_is_rebuilt(tmp_path, damage):
    from vaultrag.lean_encoder import LeanEncoder
    from vaultrag.lean_vocab import SortedVocab, cached_encoder

    cached_encoder(BUNDLED_MODEL, tmp_path)
    (path,) = tmp_path.glob("*.vocab")
    good = path.read_bytes()
    data = {"truncate": good[: len(good) // 2], "garbage": os.urandom(len(good)), "empty": b"",
            "other-key": good.replace(b'"key": "[1', b'"key": "[9', 1)}[damage]
    assert data != good
    path.write_bytes(data)
    enc = cached_encoder(BUNDLED_MODEL, tmp_path)  # falls back to tokenizer.json and rewrites the file
    ref = LeanEncoder.from_folder(BUNDLED_MODEL)
    assert enc.encode("restore drill snapshots") == ref.encode("restore drill snapshots")
    assert path.read_bytes() == good
    assert isinstance(cached_encoder(BUNDLED_MODEL, tmp_path).vocab, SortedVocab)


def test_unwritable_vocabulary_cache_still_encodes(tmp_path):
    from vaultrag.lean_encoder import LeanEncoder
    from vaultrag.lean_vocab import cached_encoder

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    enc = cached_encoder(BUNDLED_MODEL, blocker / "cache")
    assert enc.encode("tar archive") == LeanEncoder.from_folder(BUNDLED_MODEL).encode("tar archive")


def test_similarities_after_knn_match_fresh_lookups(env):
    """The read-only store reuses the KNN's distances for the lexical candidates (issue 18): the
    values must be exactly those a store that ran no KNN looks up."""
    from vaultrag.retrieve.channels import encoder_for
    from vaultrag.store import Store

    with Store(env["VAULTRAG_DB"], readonly=True) as warm, Store(env["VAULTRAG_DB"], readonly=True) as cold:
        if warm.vec_error or not warm.has_vectors():
            pytest.skip(f"no vectors: {warm.vec_error}")
        vec = encoder_for(warm.meta().model_path).encode("daily snapshots retention")
        near = warm.knn(vec, 5)
        ids = [cid for cid, _ in near] + [cid for cid in range(1, 40) if cid not in dict(near)]
        reused = warm.similarities(vec, ids)
        assert len(warm._known_distances(warm._knn_distances[0])) >= len(near)  # the KNN's distances were kept
        assert reused == cold.similarities(vec, ids)
        assert set(dict(near)) <= set(reused) and len(reused) > len(near)


def test_english_prompt_compiles_no_script_pattern(env):
    probe = ("from vaultrag import textutil as t\n"
            "print([n for n in ('CJK_RE', 'SEG_RE', '_STEM_RE', '_FOLD_RE') if getattr(t, n)._compiled is not None],"
            " bool(t.CJK_RE.search('东京 tower')), bool(t.SEG_RE.match('ภาษา')), t.CJK_RE.search('ascii') is None,"
            " file=sys.stderr)\n")
    assert _after_a_hook(env, "cold-3", probe) == "[] True True True"
