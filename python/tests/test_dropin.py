"""The safetensors drop-in layer (issue 25, deliverable 1) and DLPack export of views (deliverable 2).

PyPI safetensors writes safetensors files, not tpack files, so each test gives both libraries the same dicts
and compares what a script written for ``safetensors.numpy`` gets from each, with only its import changed.
"""

from __future__ import annotations

import hashlib
import sys

import numpy as np
import pytest

import tpack
import tpack.numpy as tp_numpy

st_numpy = pytest.importorskip("safetensors.numpy")
safetensors = pytest.importorskip("safetensors")


def _tensors():
    rng = np.random.default_rng(25)
    return {
        "embed.weight": rng.standard_normal((6, 4)).astype(np.float32),
        "half": rng.standard_normal((3, 5)).astype(np.float16),
        "double": rng.standard_normal(7),
        "complex": (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64),
        "mask": rng.integers(0, 2, (2, 3)).astype(np.bool_),
        "empty": np.zeros((0, 3), np.float32),
        "scalar": np.array(-2.5, np.float32),
        **{f"int.{np.dtype(t).name}": rng.integers(np.iinfo(t).min, np.iinfo(t).max, (5,), dtype=t)
           for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)},
    }


#: A script written for safetensors.numpy; ``IMPORTS`` is the one line a migration changes.
SCRIPT = '''
IMPORTS
save_file(tensors, path, metadata={"format": "np", "note": "drop-in"})
out = {"load_file": load_file(path), "load": load(save(tensors)), "load_plain": load(save(tensors, metadata=None))}
with safe_open(path, framework="np") as f:
    out["keys"] = f.keys()
    out["metadata"] = f.metadata()
    out["tensors"] = {k: f.get_tensor(k) for k in f.keys()}
    out["slices"] = {}
    for k in f.keys():
        s = f.get_slice(k)
        shape = s.get_shape()
        parts = []
        if 0 in shape:  # safetensors 0.8 cannot slice an empty tensor at all
            out["slices"][k] = (shape, s.get_dtype(), parts)
            continue
        parts = [s[...]]
        if len(shape) >= 1 and shape[0] > 0:
            parts += [s[0], s[1:], s[-1], s[0:1]]
        if len(shape) == 2 and shape[1] > 1:
            parts += [s[:, 1], s[1:, :1], s[..., 0]]
        out["slices"][k] = (shape, s.get_dtype(), parts)
plain = safe_open(path_plain, framework="numpy")
out["no_metadata"] = plain.metadata()
'''


def _run(imports: str, tensors, path, path_plain):
    scope = {"tensors": tensors, "path": str(path), "path_plain": str(path_plain)}
    exec(SCRIPT.replace("IMPORTS", imports), scope)  # noqa: S102 - the test's own script
    return scope["out"]


def _save_plain(imports: str, tensors, path) -> None:
    exec(imports + "\nsave_file(tensors, path)", {"tensors": tensors, "path": str(path)})  # noqa: S102


ST_IMPORTS = "from safetensors.numpy import save, save_file, load, load_file\nfrom safetensors import safe_open"
TP_IMPORTS = "from tpack.numpy import save, save_file, load, load_file\nfrom tpack import safe_open"


def _assert_same_array(got, want, what):
    assert isinstance(got, np.ndarray), what
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    assert np.array_equal(got, want), what


def _assert_same(got, want, what="out"):
    if isinstance(want, np.ndarray):
        _assert_same_array(got, want, what)
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


def _both(tensors, tmp_path):
    _save_plain(ST_IMPORTS, tensors, tmp_path / "plain.safetensors")
    _save_plain(TP_IMPORTS, tensors, tmp_path / "plain.tpack")
    want = _run(ST_IMPORTS, tensors, tmp_path / "m.safetensors", tmp_path / "plain.safetensors")
    got = _run(TP_IMPORTS, tensors, tmp_path / "m.tpack", tmp_path / "plain.tpack")
    return got, want


def test_a_safetensors_numpy_script_runs_unchanged_but_for_the_import(tmp_path):
    tensors = _tensors()
    got, want = _both(tensors, tmp_path)
    _assert_same(got, want)
    assert got["metadata"] == {"format": "np", "note": "drop-in"}
    assert got["no_metadata"] is None
    # Both equal the source, not merely each other.
    _assert_same(got["load_file"], tensors, "load_file")
    # Where safetensors 0.8 refuses (slicing an empty tensor), tpack gives the empty array.
    with tpack.safe_open(tmp_path / "m.tpack", "np") as f:
        _assert_same_array(f.get_slice("empty")[...], tensors["empty"], "empty")
        _assert_same_array(f.get_slice("empty")[:, 1:], tensors["empty"][:, 1:], "empty")
    assert tpack.open(tmp_path / "m.tpack").version >= (1, 0)  # a tpack file, not a safetensors one


def test_ml_dtypes_read_back_as_written(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(8)
    values = rng.standard_normal((4, 3)).astype(np.float32)
    tensors = {
        "bf16": values.astype(ml_dtypes.bfloat16),
        "f8e4m3": values.astype(ml_dtypes.float8_e4m3fn),
        "f8e5m2": values.astype(ml_dtypes.float8_e5m2),
    }
    tp_numpy.save_file(tensors, tmp_path / "m.tpack")
    loaded = tp_numpy.load_file(tmp_path / "m.tpack")
    for name, want in tensors.items():
        _assert_same_array(loaded[name], want, name)
        assert loaded[name].view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), name
    with tpack.safe_open(tmp_path / "m.tpack", "np") as f:
        assert [f.get_slice(k).get_dtype() for k in f.keys()] == ["BF16", "F8E4M3", "F8E5M2"]
    # safetensors.numpy 0.8 writes these but cannot read them back (KeyError 'BF16' in load_file and
    # get_tensor): the values above are compared with the source; its dtype names are compared here.
    st_numpy.save_file(tensors, str(tmp_path / "m.safetensors"))
    with safetensors.safe_open(str(tmp_path / "m.safetensors"), "np") as f:
        assert [f.get_slice(k).get_dtype() for k in f.keys()] == ["BF16", "F8_E4M3", "F8_E5M2"]


@pytest.mark.parametrize("layout", ["fortran", "transposed", "strided", "negative stride"])
def test_non_contiguous_arrays_are_saved_by_value(tmp_path, layout):
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    array = {
        "fortran": np.asfortranarray(base),
        "transposed": base.T,
        "strided": base[::2, 1::3],
        "negative stride": base[::-1, ::-2],
    }[layout]
    assert not array.flags.c_contiguous
    tp_numpy.save_file({"w": array}, tmp_path / "m.tpack")
    _assert_same_array(tp_numpy.load_file(tmp_path / "m.tpack")["w"], array, layout)
    _assert_same_array(tp_numpy.load(tp_numpy.save({"w": array}))["w"], array, layout)
    with tpack.safe_open(tmp_path / "m.tpack", "np") as f:
        _assert_same_array(f.get_tensor("w"), array, layout)
        _assert_same_array(f.get_slice("w")[1:, :2], array[1:, :2], layout)


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_results_are_writable_and_writing_them_never_reaches_the_file(tmp_path):
    tensors = _tensors()
    path = tmp_path / "m.tpack"
    tp_numpy.save_file(tensors, path)
    before = _digest(path)
    written = []
    loaded = tp_numpy.load_file(path)
    written += list(loaded.values())
    written += list(tp_numpy.load(path.read_bytes()).values())
    with tpack.safe_open(path, "np") as f:
        written += [f.get_tensor(k) for k in f.keys()]
        written += [f.get_slice(k)[...] for k in f.keys()]
        written += [f.get_slice(k)[[0, -1]] for k in f.keys() if f.get_slice(k).get_shape()[:1] > [0]]
        written += [f.get_slice("embed.weight")[1, 2]]
        again = f.get_tensor("embed.weight")
        again *= 0  # the user's in-place update, on one tensor
        assert not np.array_equal(again, tensors["embed.weight"])
        # Another read of the same tensor is unaffected: each result is private.
        _assert_same_array(f.get_tensor("embed.weight"), tensors["embed.weight"], "re-read")
        with tpack.open(path) as z:
            _assert_same_array(z.get("embed.weight"), tensors["embed.weight"], "the map")
    for array in written:
        assert array.flags.writeable and array.flags.owndata
        if array.size:
            array[...] = np.zeros((), array.dtype) if array.dtype != np.bool_ else ~array
    assert _digest(path) == before
    _assert_same(tp_numpy.load_file(path), tensors, "after writes")


def test_metadata_is_str_to_str_or_none(tmp_path):
    path = tmp_path / "typed.tpack"
    tpack.save(path, {"w": np.zeros(2, np.float32)}, metadata={
        "arch": "llama", "layers": 32, "eps": 0.5, "tied": True, "ids": [1, 2], "blob": b"\x00\xff",
        "width": tpack.MetaValue("u16", 7),
    })
    with tpack.safe_open(path, "np") as f:
        assert f.metadata() == {"arch": "llama", "layers": "32", "eps": "0.5", "tied": "true", "ids": "[1, 2]",
                                "blob": "00ff", "width": "7"}
    # str metadata written by the drop-in reads back as strings, with tpack's own typed reader too.
    tp_numpy.save_file({"w": np.zeros(2, np.float32)}, tmp_path / "s.tpack", metadata={"format": "pt"})
    with tpack.open(tmp_path / "s.tpack") as f:
        assert f.metadata(typed=True) == {"format": tpack.MetaValue("string", "pt")}
    tp_numpy.save_file({"w": np.zeros(2, np.float32)}, tmp_path / "none.tpack", metadata={})
    with tpack.safe_open(tmp_path / "none.tpack", "np") as f:
        assert f.metadata() is None


def test_keys_are_sorted_and_offset_keys_follow_the_payloads(tmp_path):
    tensors = {"z": np.ones(3, np.float32), "a": np.ones(2, np.int8), "m": np.ones((), np.float64)}
    tp_numpy.save_file(tensors, tmp_path / "m.tpack")
    st_numpy.save_file(tensors, str(tmp_path / "m.safetensors"))
    with tpack.safe_open(tmp_path / "m.tpack", "np") as f, \
            safetensors.safe_open(str(tmp_path / "m.safetensors"), "np") as g:
        assert f.keys() == g.keys() == ["a", "m", "z"]
        assert sorted(f.offset_keys()) == sorted(g.offset_keys())
        offsets = {e.name: e.offset for e in tpack.open(tmp_path / "m.tpack").entries()}
        assert f.offset_keys() == sorted(offsets, key=offsets.get) == ["z", "a", "m"]
        _assert_same(f.get_tensors(), g.get_tensors(), "get_tensors")


def test_a_missing_tensor_is_a_safetensor_error_and_a_key_error(tmp_path):
    tp_numpy.save_file({"w": np.zeros(1, np.float32)}, tmp_path / "m.tpack")
    with tpack.safe_open(tmp_path / "m.tpack", "np") as f:
        for call in (f.get_tensor, f.get_slice):
            with pytest.raises(tpack.SafetensorError, match="does not contain tensor 'nope'") as info:
                call("nope")
            assert isinstance(info.value, KeyError)
            assert str(info.value) == "File does not contain tensor 'nope'"


def test_an_unknown_framework_is_refused_like_safetensors_refuses_it(tmp_path):
    tp_numpy.save_file({"w": np.zeros(1, np.float32)}, tmp_path / "m.tpack")
    st_numpy.save_file({"w": np.zeros(1, np.float32)}, str(tmp_path / "m.safetensors"))
    for framework in ("xx", "", "NP"):
        with pytest.raises(safetensors.SafetensorError, match="is invalid"):
            safetensors.safe_open(str(tmp_path / "m.safetensors"), framework)
        with pytest.raises(tpack.SafetensorError, match="is invalid"):
            tpack.safe_open(tmp_path / "m.tpack", framework)
    with pytest.raises(TypeError):
        safetensors.safe_open(str(tmp_path / "m.safetensors"), None)
    with pytest.raises(TypeError, match="framework must be a str"):
        tpack.safe_open(tmp_path / "m.tpack", None)
    assert tpack.SafetensorError is tpack.TpackError  # so that it catches a damaged file too
    (tmp_path / "bad.tpack").write_bytes(b"not a tpack file at all, not even close")
    with pytest.raises(tpack.SafetensorError):
        tpack.safe_open(tmp_path / "bad.tpack", "np")


@pytest.mark.parametrize("framework, package", [("pt", "torch"), ("torch", "torch"), ("jax", "jax"),
                                                ("flax", "jax")])
def test_a_framework_that_cannot_be_imported_is_named(tmp_path, monkeypatch, framework, package):
    tp_numpy.save_file({"w": np.zeros(1, np.float32)}, tmp_path / "m.tpack")
    monkeypatch.setitem(sys.modules, package, None)  # importing it now fails, installed or not
    with pytest.raises(ModuleNotFoundError, match=f"needs {package}") as info:
        tpack.safe_open(tmp_path / "m.tpack", framework)
    assert info.value.name == package


def test_numpy_arrays_live_on_the_cpu_only(tmp_path):
    tp_numpy.save_file({"w": np.zeros(1, np.float32)}, tmp_path / "m.tpack")
    with pytest.raises(ValueError, match="device='cuda'"):
        tpack.safe_open(tmp_path / "m.tpack", "np", device="cuda")
    with tpack.safe_open(tmp_path / "m.tpack", "np", device="cpu") as f:
        assert f.get_tensor("w").shape == (1,)


def test_load_file_refuses_an_unknown_backend(tmp_path):
    tp_numpy.save_file({"w": np.zeros(1, np.float32)}, tmp_path / "m.tpack")
    for backend in ("mmap", "pread"):
        _assert_same_array(tp_numpy.load_file(tmp_path / "m.tpack", backend=backend)["w"], np.zeros(1, np.float32),
                           backend)
    with pytest.raises(ValueError, match="backend"):
        tp_numpy.load_file(tmp_path / "m.tpack", backend="nope")


def test_a_closed_safe_open_refuses_reads(tmp_path):
    tp_numpy.save_file({"w": np.zeros(1, np.float32)}, tmp_path / "m.tpack")
    with tpack.safe_open(tmp_path / "m.tpack", "np") as f:
        s = f.get_slice("w")
    with pytest.raises(ValueError, match="closed"):
        f.get_tensor("w")
    with pytest.raises(ValueError, match="closed"):
        s[...]


# -- DLPack ----------------------------------------------------------------------------------------------------

needs_dlpack_1 = pytest.mark.skipif(
    tuple(int(p) for p in np.__version__.split(".")[:2]) < (2, 1),
    reason="numpy < 2.1 cannot export a read-only array through DLPack",
)


@needs_dlpack_1
def test_from_dlpack_shares_the_map_and_stays_read_only(tmp_path):
    tensors = _tensors()
    path = tmp_path / "m.tpack"
    tpack.save(path, tensors)
    with tpack.open(path) as f:
        for name, want in tensors.items():
            view = f.get(name)
            assert view.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
            shared = np.from_dlpack(view)
            _assert_same_array(shared, want, name)
            assert not shared.flags.writeable, name
            if view.size:
                assert np.shares_memory(shared, view), name
                # The same address as a second, independent view of the entry: the map itself, no copy.
                assert shared.ctypes.data == f.get(name).ctypes.data, name
        # A consumer that cannot be told "read-only" (DLPack < 1.0) gets nothing, never a writable alias.
        with pytest.raises(BufferError):
            f.get("embed.weight").__dlpack__()
    # The exported memory outlives the container, as the arrays do.
    with tpack.open(path) as f:
        shared = np.from_dlpack(f.get("double"))
    _assert_same_array(shared, tensors["double"], "after close")


def test_big_endian_arrays_read_back_as_safetensors_reads_them(tmp_path):
    tensors = {"f": np.arange(5, dtype=">f4") / 3, "i": np.arange(-3, 3, dtype=">i8").reshape(2, 3)}
    st_numpy.save_file(tensors, str(tmp_path / "m.safetensors"))
    tp_numpy.save_file(tensors, tmp_path / "m.tpack")
    want = st_numpy.load_file(str(tmp_path / "m.safetensors"))
    got = tp_numpy.load_file(tmp_path / "m.tpack")
    _assert_same(got, want, "big-endian")
    for name, source in tensors.items():
        assert got[name].dtype == source.dtype.newbyteorder("<") and np.array_equal(got[name], source), name


def test_a_missing_framework_skips_its_tests_unless_ci_requires_it(monkeypatch):
    from conftest import require_framework

    monkeypatch.setitem(sys.modules, "torch", None)  # importing it now fails, installed or not
    monkeypatch.delenv("TPACK_REQUIRE_FRAMEWORKS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="torch is not installed"):
        require_framework("torch")
    monkeypatch.setenv("TPACK_REQUIRE_FRAMEWORKS", "1")
    with pytest.raises(pytest.fail.Exception, match="TPACK_REQUIRE_FRAMEWORKS=1 but torch cannot be imported"):
        require_framework("torch")


def test_get_writable_maps_each_payload_privately_and_never_writes_the_file(tmp_path):
    tensors = _tensors()
    path = tmp_path / "m.tpack"
    tpack.save(path, tensors)
    before = _digest(path)
    with tpack.open(path) as f:
        for name, want in tensors.items():
            a, b = f.get(name, writable=True), f.get_tensor(name, writable=True)
            _assert_same_array(a, want, name)
            assert a.flags.writeable and not f.get(name).flags.writeable, name
            if a.size:
                assert not np.shares_memory(a, b) and not np.shares_memory(a, f.get(name)), name
                a[...] = np.zeros((), a.dtype) if a.dtype != np.bool_ else ~a
                _assert_same_array(b, want, name)  # the other mapping is unaffected
                _assert_same_array(f.get(name), want, name)  # and so is the shared map
    assert _digest(path) == before
    # A container in memory has no file to map: the writable array is a private copy.
    with tpack.open_bytes(path.read_bytes()) as f:
        a = f.get("embed.weight", writable=True)
        a[...] = 0
        _assert_same_array(f.get("embed.weight"), tensors["embed.weight"], "in memory")
