"""JAX (CPU) through ``safe_open(framework="jax"/"flax")`` and DLPack (issue 25).

Skipped when JAX is missing, unless TPACK_REQUIRE_FRAMEWORKS=1 (CI), which makes that a failure.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import tpack
import tpack.numpy as tp_numpy
from conftest import mapping_of, require_framework

jax = require_framework("jax")
jnp = pytest.importorskip("jax.numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")
st_numpy = pytest.importorskip("safetensors.numpy")
safetensors = pytest.importorskip("safetensors")


def _arrays():
    rng = np.random.default_rng(25)
    values = rng.standard_normal((4, 6)).astype(np.float32)
    arrays = {
        "f32": values,
        "f16": values.astype(np.float16),
        "bf16": values.astype(ml_dtypes.bfloat16),
        "f8e4m3": values.astype(ml_dtypes.float8_e4m3fn),
        "f8e5m2": values.astype(ml_dtypes.float8_e5m2),
        "mask": values > 0,
        "scalar": np.array(-2.5, np.float32),
        "empty": np.zeros((0, 3), np.float32),
    }
    for t in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32):
        arrays[f"int.{np.dtype(t).name}"] = rng.integers(np.iinfo(t).min, np.iinfo(t).max, (3, 5), dtype=t)
    return arrays


def script(safe_open, path, framework):
    """One script written for safetensors' JAX reader: only ``safe_open`` differs."""
    out = {}
    with safe_open(path, framework=framework) as f:
        out["keys"] = f.keys()
        out["metadata"] = f.metadata()
        out["tensors"] = {k: f.get_tensor(k) for k in f.keys()}
        out["slices"] = {}
        for k in f.keys():
            s = f.get_slice(k)
            if len(s.get_shape()) == 0 or 0 in s.get_shape():
                continue  # safetensors 0.8 cannot slice these
            out["slices"][k] = [s[0], s[1:], s[2:]]
            if len(s.get_shape()) == 2:
                out["slices"][k] += [s[:, 1:3], s[1:, :1]]
    return out


def _assert_same(got, want, what="out"):
    if isinstance(want, jax.Array):
        assert isinstance(got, jax.Array), what
        assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
        assert np.array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8)) if got.ndim \
            else np.asarray(got).tobytes() == np.asarray(want).tobytes(), what
    elif isinstance(want, dict):
        assert set(got) == set(want), what
        for k in want:
            _assert_same(got[k], want[k], f"{what}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), what
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{what}[{i}]")
    else:
        assert got == want, what


@pytest.mark.parametrize("framework", ["jax", "flax"])
def test_a_safetensors_jax_script_runs_unchanged_but_for_the_import(tmp_path, framework):
    arrays = _arrays()
    # safetensors 0.8 cannot give FP8 to JAX (it looks for numpy.float8_e4m3fn): compared with the source only.
    fp8 = {k: arrays.pop(k) for k in ("f8e4m3", "f8e5m2")}
    st_numpy.save_file(arrays, str(tmp_path / "m.safetensors"), metadata={"format": "flax"})
    tp_numpy.save_file(arrays, tmp_path / "m.tpack", metadata={"format": "flax"})
    want = script(safetensors.safe_open, str(tmp_path / "m.safetensors"), framework)
    got = script(tpack.safe_open, tmp_path / "m.tpack", framework)
    _assert_same(got, want)
    for name, array in arrays.items():  # equal to the source, not merely to each other
        _assert_same(got["tensors"][name], jnp.asarray(array), name)
    assert got["metadata"] == {"format": "flax"}
    tp_numpy.save_file(fp8, tmp_path / "fp8.tpack")
    with tpack.safe_open(tmp_path / "fp8.tpack", framework=framework) as f:
        for name, array in fp8.items():
            _assert_same(f.get_tensor(name), jnp.asarray(array), name)
            _assert_same(f.get_slice(name)[1:, ::2], jnp.asarray(array[1:, ::2]), name)


def test_jax_arrays_share_a_private_mapping_of_the_file(tmp_path):
    arrays = _arrays()
    path = tmp_path / "m.tpack"
    tpack.save(path, arrays)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    shared = 0
    with tpack.safe_open(path, framework="jax") as f:
        for name in f.keys():
            a = f.get_tensor(name)
            if a.size == 0 or name in ("bf16", "f8e4m3", "f8e5m2"):  # those are copied (see get_tensor)
                continue
            where = mapping_of(a.unsafe_buffer_pointer())
            assert where is not None and where[-1] == str(path), (name, where)
            assert where[1].endswith("p"), (name, where)  # a private mapping, never the file's shared one
            shared += 1
    assert shared >= 10
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_jax_from_dlpack_shares_a_writable_view_and_refuses_a_read_only_one(tmp_path):
    arrays = {k: v for k, v in _arrays().items() if k not in ("bf16", "f8e4m3", "f8e5m2")}
    path = tmp_path / "m.tpack"
    tpack.save(path, arrays)
    with tpack.open(path) as f:
        for name, want in arrays.items():
            view = f.get(name, writable=True)
            j = jnp.from_dlpack(view)
            assert np.array_equal(np.asarray(j), want), name
            if view.size:
                assert j.unsafe_buffer_pointer() == view.ctypes.data, name  # no copy
                assert mapping_of(j.unsafe_buffer_pointer())[-1] == str(path), name
        # JAX asks for DLPack < 1.0, which cannot say "read-only": numpy refuses to export the shared map then,
        # rather than hand out a writable alias of it.
        with pytest.raises(BufferError):
            jnp.from_dlpack(f.get("f32"))


def test_jax_is_cpu_only(tmp_path):
    tpack.save(tmp_path / "m.tpack", {"w": np.zeros(2, np.float32)})
    with pytest.raises(ValueError, match="device='cuda'"):
        tpack.safe_open(tmp_path / "m.tpack", "jax", device="cuda")
