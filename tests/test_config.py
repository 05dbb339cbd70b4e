import os
from pathlib import Path

import pytest

from vaultrag.config import Config, default_db_path, load_config
from vaultrag.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[1] / "vaultrag" / "config.example.yaml"


def test_defaults_without_file():
    cfg = load_config()
    assert cfg.max_chars == 2000 and cfg.k == 10 and cfg.vault is None
    with pytest.raises(ConfigError, match="no vault configured"):
        cfg.db_path()


def test_example_config_is_valid(tmp_path):
    cfg = load_config(EXAMPLE)
    assert cfg.exclude == ("Templates", "*.excalidraw.md")
    assert cfg.weight_vec == 0.25 and cfg.hook_max_tokens == 500


def test_precedence_file_env_args(tmp_path, monkeypatch):
    f = tmp_path / "c.yaml"
    f.write_text("vault: /from/file\nretrieval:\n  k: 7\nhooks:\n  max_tokens: 300\n")
    assert load_config(f).k == 7
    monkeypatch.setenv("VAULTRAG_VAULT", str(tmp_path))
    cfg = load_config(f)
    assert cfg.vault == tmp_path.resolve() and cfg.hook_max_tokens == 300
    assert load_config(f, vault=str(tmp_path / "x"), k=3).k == 3
    monkeypatch.setenv("VAULTRAG_CONFIG", str(f))
    assert load_config().k == 7


@pytest.mark.parametrize("text, needle", [
    ("vualt: /x\n", "unknown key `vualt`"),
    ("retrieval:\n  kk: 3\n", "unknown key `retrieval.kk`"),
    ("retrieval:\n  k: many\n", "`k`"),
    ("chunking:\n  max_chars: -5\n", "`max_chars`"),
    ("index:\n  vector_type: int4\n", "vector_type"),
    ("index:\n  exclude: 5\n", "`exclude`"),
    ("- a\n- b\n", "top level must be a mapping"),
    ("vault: [unclosed\n", "not valid YAML"),
])
def test_bad_config_names_the_key(tmp_path, text, needle):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=needle.replace("`", "`").replace("[", r"\[")):
        load_config(f)


def test_missing_explicit_config_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_db_default_is_per_vault_and_outside_it(tmp_path):
    a, b = default_db_path(tmp_path / "a"), default_db_path(tmp_path / "b")
    assert a != b and a.parent == b.parent
    assert not str(a).startswith(str(tmp_path / "a"))
    assert load_config(vault=str(tmp_path / "a")).db_path() == a


def test_config_cache_skips_yaml_on_second_load(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("retrieval:\n  k: 4\n")
    load_config(f)
    code = ("import sys; from vaultrag.config import load_config; "
            f"assert load_config({str(f)!r}).k == 4; print('yaml' in sys.modules)")
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    f.write_text("retrieval:\n  k: 5\n")  # a changed file is parsed again
    assert load_config(f).k == 5
