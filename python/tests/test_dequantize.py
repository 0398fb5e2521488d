"""tpack.dequantize against gguf-py's dequantizers, on random blocks and on a GGUF converted with the CLI."""

from __future__ import annotations

import numpy as np
import pytest

import tpack
from conftest import REPO, run_cli

gguf = pytest.importorskip("gguf")
from gguf import GGMLQuantizationType as QT  # noqa: E402
from gguf import quants  # noqa: E402

RNG = np.random.default_rng(5)
# Byte offsets of the f16 scales in each block (ggml's block_* structs), overwritten with finite values so
# that the comparison is of numbers, not of NaN patterns.
SCALES = {"Q8_0": [0], "Q4_0": [0], "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2],
          "Q6_K": [208]}
BLOCK_BYTES = {"Q8_0": 34, "Q4_0": 18, "Q2_K": 84, "Q3_K": 110, "Q4_K": 144, "Q5_K": 176, "Q6_K": 210,
               "Q8_K": 292}


def random_blocks(dtype: str, rows: int, blocks: int) -> np.ndarray:
    data = RNG.integers(0, 256, size=(rows, blocks, BLOCK_BYTES[dtype]), dtype=np.uint8)
    for at in SCALES.get(dtype, []):
        scales = RNG.uniform(-2, 2, size=(rows, blocks)).astype("<f2")
        data[:, :, at:at + 2] = scales.view(np.uint8).reshape(rows, blocks, 2)
    return data.reshape(rows, blocks * BLOCK_BYTES[dtype])


@pytest.mark.parametrize("dtype", list(SCALES))
def test_equals_gguf_py(dtype):
    data = random_blocks(dtype, 3, 4)
    ours = tpack.dequantize(data, dtype)
    theirs = quants.dequantize(data, QT[dtype])
    assert ours.dtype == np.float32
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs.astype(np.float32))


def test_q8_k_equals_its_block_layout():
    """gguf-py has no Q8_K dequantizer: block_q8_K is an f32 scale, 256 int8 values and 16 int16 sums."""
    data = random_blocks("Q8_K", 2, 1)
    d = np.float32(0.125)
    data[:, :4] = np.array([d, d], "<f4").view(np.uint8).reshape(2, 4)
    expected = data[:, 4:260].view(np.int8).astype(np.float32) * d
    np.testing.assert_array_equal(tpack.dequantize(data, "Q8_K"), expected)


def test_a_gguf_model_converted_with_the_cli_dequantizes_like_gguf_py(tmp_path, cli):
    source = REPO / "cli" / "tests" / "fixtures" / "mixed.gguf"
    out = tmp_path / "mixed.tpack"
    result = run_cli(cli, "convert", str(source), str(out))
    assert result.returncode == 0, result.stderr
    reader = gguf.GGUFReader(str(source))
    checked = set()
    with tpack.open(out) as f:
        f.verify()
        for t in reader.tensors:
            e = f.entry(t.name)
            if e.dtype in BLOCK_BYTES:
                got = tpack.dequantize(f.get(t.name), e.dtype)
                want = quants.dequantize(t.data, t.tensor_type)
                np.testing.assert_array_equal(got.reshape(want.shape), want)
                checked.add(e.dtype)
    assert {"Q4_K", "Q6_K", "Q8_0"} <= checked


def test_refuses_what_it_cannot_dequantize():
    with pytest.raises(KeyError):
        tpack.dequantize(np.zeros((1, 18), np.uint8), "IQ4_NL")
    with pytest.raises(ValueError):
        tpack.dequantize(np.zeros((1, 35), np.uint8), "Q8_0")
    with pytest.raises(ValueError):
        tpack.dequantize(np.zeros((1, 34), np.float32), "Q8_0")
