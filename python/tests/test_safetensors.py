"""Values equal to what safetensors reads: a model written by numpy + PyPI safetensors, converted with the
CLI, read through tpack; and back."""

from __future__ import annotations

import numpy as np
import pytest

import tpack
from conftest import run_cli

st_numpy = pytest.importorskip("safetensors.numpy")


def test_a_converted_safetensors_model_reads_the_same(tmp_path, cli):
    rng = np.random.default_rng(3)
    tensors = {
        "embed.weight": rng.standard_normal((50, 16)).astype(np.float32),
        "layers.0.attn.q": rng.standard_normal((16, 16)).astype(np.float16),
        "layers.0.bias": rng.standard_normal(16),
        "ids": rng.integers(-5, 5, (7,), dtype=np.int64),
        "u8": rng.integers(0, 255, (3, 3), dtype=np.uint8),
        "i32": rng.integers(-9, 9, (2, 2, 2), dtype=np.int32),
        "mask": rng.integers(0, 2, (4,)).astype(np.bool_),
        "scalar": np.array(1.5, np.float32),
    }
    source = tmp_path / "m.safetensors"
    st_numpy.save_file(tensors, str(source), metadata={"format": "np"})
    converted = tmp_path / "m.tpack"
    result = run_cli(cli, "convert", str(source), str(converted))
    assert result.returncode == 0, result.stderr
    expected = st_numpy.load_file(str(source))
    with tpack.open(converted) as f:
        f.verify()
        assert set(f.keys()) == set(expected)
        for name, want in expected.items():
            got = f.get(name)
            assert got.dtype == want.dtype and got.shape == want.shape, name
            assert np.array_equal(got, want), name
    # tpack.save → CLI → safetensors reads what tpack wrote.
    ours = tmp_path / "ours.tpack"
    tpack.save(ours, tensors)
    back = tmp_path / "back.safetensors"
    result = run_cli(cli, "convert", str(ours), str(back))
    assert result.returncode == 0, result.stderr
    for name, want in st_numpy.load_file(str(back)).items():
        assert np.array_equal(tensors[name], want), name
