"""tpack.convert and tpack.inspect: every format the CLI reads, from files the frameworks wrote
(cli/tests/fixtures), compared tensor by tensor with what those frameworks read back (each fixture's
expected JSON); hostile inputs raise ConvertError and run nothing."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

import tpack

FIXTURES = Path(__file__).resolve().parents[2] / "cli" / "tests" / "fixtures"


def sha256(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).view(np.uint8).tobytes()).hexdigest()


def converted(src: Path, tmp_path: Path) -> tpack.Container:
    out = tmp_path / "out.tpack"
    report = tpack.convert(src, out)
    assert "converted" in report and str(out) in report
    return tpack.open(out)


@pytest.mark.parametrize(
    "src, expected, key",
    [
        ("tensorflow/saved_model", "tensorflow/expected.json", "saved_model"),
        ("tensorflow/sharded/ckpt", "tensorflow/expected.json", "sharded"),
        ("onnx/model.onnx", "onnx/expected.json", "model.onnx"),
        ("pytorch/zip.pt", "pytorch/expected.json", "zip.pt"),
        ("pytorch/training_state.pt", "pytorch/expected_zoo.json", "training_state.pt"),
        ("pytorch/sharded_bin", "pytorch/expected_zoo.json", "sharded_bin"),
    ],
)
def test_every_format_converts_to_what_its_framework_reads(src, expected, key, tmp_path):
    want = json.loads((FIXTURES / expected).read_text())[key]["tensors"]
    c = converted(FIXTURES / src, tmp_path)
    assert sorted(c.keys()) == sorted(want)
    for name, t in want.items():
        a = c.get(name)
        assert list(a.shape) == t["shape"], name
        assert sha256(np.asarray(a)) == t["sha256"], name
    c.verify()


def test_a_numpy_array_converts_and_loads_equal(tmp_path):
    a = np.arange(12, dtype="<i4").reshape(3, 4)
    np.save(tmp_path / "w.npy", a)
    out = tmp_path / "w.tpack"
    tpack.convert(tmp_path / "w.npy", out)
    np.testing.assert_array_equal(tpack.load(out)["w"], a)


def test_inspect_reads_each_format_directly():
    doc = tpack.inspect(FIXTURES / "tensorflow" / "saved_model")
    assert doc["format"] == "TensorFlow checkpoint"
    names = {e["name"] for e in doc["entries"]}
    assert "dense/kernel/.ATTRIBUTES/VARIABLE_VALUE" in names
    doc = tpack.inspect(FIXTURES / "pytorch" / "training_state.pt")
    assert doc["format"] == "PyTorch"
    best = [m for m in doc["metadata"] if m["key"] == "extra_state.best_loss"]
    assert best == [{"key": "extra_state.best_loss", "type": "f64", "value": 3.25}]


def test_errors_are_typed(tmp_path):
    # A hostile pickle: refused by the global's name, as a ValueError, and its payload never runs.
    canary = "/tmp/tpack-pytorch-canary"
    with pytest.raises(tpack.ConvertError, match="os.system"):
        tpack.convert(FIXTURES / "pytorch" / "hostile_global_os_system.pt", tmp_path / "x.tpack")
    assert not os.path.exists(canary)
    assert issubclass(tpack.ConvertError, ValueError)
    with pytest.raises(tpack.ConvertError, match="complex128|DT_COMPLEX128"):
        tpack.inspect(FIXTURES / "tensorflow" / "unsupported" / "complex128.index")
    # A file that is missing, and an output that exists without force.
    with pytest.raises(OSError):
        tpack.convert(tmp_path / "missing.npy", tmp_path / "y.tpack")
    np.save(tmp_path / "w.npy", np.zeros(2, np.float32))
    (tmp_path / "y.tpack").write_bytes(b"keep")
    with pytest.raises(OSError, match="force"):
        tpack.convert(tmp_path / "w.npy", tmp_path / "y.tpack")
    assert (tmp_path / "y.tpack").read_bytes() == b"keep"
    tpack.convert(tmp_path / "w.npy", tmp_path / "y.tpack", force=True)
    # An invalid tpack input is a FormatError; an unknown output format a ValueError before anything runs.
    (tmp_path / "bad.tpack").write_bytes(b"\x89TPK\r\n\x1a\n" + bytes(200))
    with pytest.raises(tpack.FormatError):
        tpack.convert(tmp_path / "bad.tpack", tmp_path / "z.safetensors")
    with pytest.raises(ValueError, match="not an output format"):
        tpack.convert(tmp_path / "w.npy", tmp_path / "z.out", to="pickle")
