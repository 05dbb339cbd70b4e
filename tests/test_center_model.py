"""scripts/center_model.py and the bundled model it centred (issue 19)."""
from __future__ import annotations

import sysconfig
from collections import Counter
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("safetensors")

from conftest import load_script  # noqa: E402
from vaultrag.lean_encoder import LeanEncoder  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "vaultrag" / "models" / "minilm-l6-static-256"


def _script():
    return load_script("scripts/center_model.py")


def _rows():
    from safetensors.numpy import load_file

    return load_file(str(BUNDLED / "model.safetensors"))["embeddings"]


def test_mean_row_weights_by_occurrence():
    cm = _script()
    rows = np.array([[2, 0], [0, 4], [9, 9]], dtype=np.int8)
    assert np.allclose(cm.mean_row(rows, Counter({0: 3, 1: 1})), [1.5, 1.0])


def test_docstrings_are_read_not_imported_and_skip_tests(tmp_path):
    cm = _script()
    (tmp_path / "mod.py").write_text('"""Module doc."""\nclass A:\n    """Class doc."""\n    def f(self):\n'
                                     '        """Method doc."""\nraise SystemExit("imported!")\n')
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "t.py").write_text('"""Test doc."""\n')
    (tmp_path / "broken.py").write_text("def (:\n")
    assert cm.stdlib_docstrings(tmp_path) == ["Module doc.", "Class doc.", "Method doc."]


def test_bundled_model_is_centred_on_text_it_was_not_centred_on():
    """The shipped rows have (almost) no common component: the mean token row over docstrings of one
    stdlib package is small beside the rows themselves (the plain distillation: ~0.36 of a row's norm)."""
    cm = _script()
    texts = cm.stdlib_docstrings(Path(sysconfig.get_paths()["stdlib"]) / "email")
    assert len(texts) > 100
    rows = _rows()
    counts = cm.token_counts(LeanEncoder.from_folder(BUNDLED), texts)
    share = np.linalg.norm(cm.mean_row(rows, counts)) / np.linalg.norm(rows.astype(np.float64), axis=1).mean()
    assert share < 0.15, share


def test_refuses_to_centre_twice(tmp_path):
    cm = _script()
    with pytest.raises(SystemExit, match="centred already"):
        cm.main(["--model", str(BUNDLED), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
