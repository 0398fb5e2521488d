"""The torch layer (issue 25): ``tpack.torch`` against ``safetensors.torch``, ``safe_open(framework="pt")``,
tensors backed by private mappings, and ``torch.from_dlpack`` sharing the map.

Skipped when torch is missing, unless TPACK_REQUIRE_FRAMEWORKS=1 (CI), which makes that a failure.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tpack
from conftest import mapping_of, require_framework

torch = require_framework("torch")
import tpack.torch as tp_torch  # noqa: E402

st_torch = pytest.importorskip("safetensors.torch")
safetensors = pytest.importorskip("safetensors")


def _state():
    """A state dict with every dtype the issue names, a scalar, an empty tensor, and two disjoint views of one
    storage (which safetensors accepts: they share no byte)."""
    g = torch.Generator().manual_seed(25)
    values = torch.randn(4, 6, generator=g)
    rows = torch.randn(4, 3, generator=g)
    state = {
        "f32": values.clone(),
        "f16": values.to(torch.float16),
        "f64": values.to(torch.float64),
        "bf16": values.to(torch.bfloat16),
        "f8e4m3": values.to(torch.float8_e4m3fn),
        "f8e5m2": values.to(torch.float8_e5m2),
        "mask": values > 0,
        "scalar": torch.tensor(-2.5),
        "empty": torch.zeros(0, 3),
        "row0": rows[0],
        "row1": rows[1],
    }
    for dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
        info = torch.iinfo(dtype)
        state[f"int.{dtype}"] = torch.randint(info.min, info.max, (3, 5), dtype=dtype, generator=g)
    return state


class Tied(torch.nn.Module):
    """A language-model head tied to its embedding, and a buffer."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.embed = torch.nn.Embedding(10, 4)
        self.hidden = torch.nn.Linear(4, 4).to(torch.bfloat16)
        self.head = torch.nn.Linear(4, 10, bias=False)
        self.head.weight = self.embed.weight
        self.register_buffer("steps", torch.tensor([seed], dtype=torch.int64))


def scribble(t):
    """Writes to every byte of ``t`` (any dtype, any rank)."""
    if t.numel() == 0:
        return
    if t.dtype == torch.bool:
        t.logical_not_()
    elif t.dim():
        t.view(torch.uint8).fill_(0xA5)
    else:
        t.fill_(7)


def script(lib, safe_open, state, tmp):
    """One script written for safetensors.torch: only ``lib`` (the module) and ``safe_open`` differ."""
    out = {}
    path = f"{tmp}/m"
    lib.save_file(state, path, metadata={"format": "pt"})
    out["load_file"] = lib.load_file(path)
    out["load"] = lib.load(lib.save(state))
    with safe_open(path, framework="pt") as f:
        out["keys"] = f.keys()
        out["metadata"] = f.metadata()
        out["get_tensor"] = {k: f.get_tensor(k) for k in f.keys()}
        out["shapes"] = {k: f.get_slice(k).get_shape() for k in f.keys()}
        out["slices"] = {}
        for k in f.keys():
            s = f.get_slice(k)
            if len(s.get_shape()) == 0 or 0 in s.get_shape():
                continue  # safetensors 0.8 cannot slice these
            out["slices"][k] = [s[0], s[1:], s[-1:], s[:2]]
            if len(s.get_shape()) == 2:
                out["slices"][k] += [s[:, 1:3], s[1:, :1]]
    # Writing to what was read never reaches the file.
    with safe_open(path, framework="pt") as f:
        for k in f.keys():
            scribble(f.get_tensor(k))
    out["after_writes"] = lib.load_file(path)
    # Tied weights: save_file refuses them.
    try:
        lib.save_file({"a": state["f32"], "b": state["f32"], "c": state["f32"][1:]}, f"{tmp}/tied")
        out["tied"] = "saved"
    except RuntimeError:
        out["tied"] = "RuntimeError"
    # A model with tied weights: save_model stores the group once, load_model fills the whole group.
    lib.save_model(Tied(seed=1), f"{tmp}/model")
    fresh = Tied(seed=2)
    missing, unexpected = lib.load_model(fresh, f"{tmp}/model")
    out["model"] = (fresh.state_dict(), sorted(missing), sorted(unexpected))
    out["model_still_tied"] = fresh.head.weight is fresh.embed.weight
    with safe_open(f"{tmp}/model", framework="pt") as f:
        out["model_file"] = (f.keys(), f.metadata())
    out["model_strict"] = None
    try:
        lib.load_model(torch.nn.Linear(2, 2), f"{tmp}/model")
    except RuntimeError as e:
        out["model_strict"] = str(e)
    return out


def _assert_same(got, want, what="out"):
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor), what
        assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
        assert torch.equal(_bytes(got), _bytes(want)), what  # bit for bit (fp8 too)
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


def _bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8)


def test_a_safetensors_torch_script_runs_unchanged_but_for_the_import(tmp_path):
    state = _state()
    (tmp_path / "st").mkdir()
    (tmp_path / "tp").mkdir()
    want = script(st_torch, safetensors.safe_open, state, tmp_path / "st")
    got = script(tp_torch, tpack.safe_open, state, tmp_path / "tp")
    _assert_same(got, want)
    # Both equal the source, not merely each other; and what was read again after the writes is the source.
    _assert_same(got["load_file"], state, "load_file")
    _assert_same(got["after_writes"], state, "after_writes")
    assert got["tied"] == "RuntimeError"
    assert got["model_still_tied"]
    assert got["model_file"] == (["embed.weight", "hidden.bias", "hidden.weight", "steps"],
                                 {"head.weight": "embed.weight"})
    assert "Missing key(s)" in got["model_strict"] and "Unexpected key(s)" in got["model_strict"]
    assert tpack.open(tmp_path / "tp" / "m").version >= (1, 0)  # a tpack file


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_get_tensor_is_backed_by_a_private_mapping_of_the_file(tmp_path):
    state = _state()
    path = tmp_path / "m.tpack"
    tp_torch.save_file(state, path)
    before = _digest(path)
    with tpack.safe_open(path, framework="pt") as f:
        for name in f.keys():
            t = f.get_tensor(name)
            if t.numel() == 0:
                continue
            where = mapping_of(t.data_ptr())
            assert where is not None and where[-1] == str(path), (name, where)
            assert where[1].startswith("rw") and where[1].endswith("p"), (name, where)  # writable, private
            again = f.get_tensor(name)
            assert again.data_ptr() != t.data_ptr(), name  # each result is its own mapping
            scribble(t)
            _assert_same(again, state[name], name)  # ... so a write to one is not seen by the other
        with tpack.open(path) as z:
            assert np.array_equal(z.get("f32"), state["f32"].numpy())
    assert _digest(path) == before
    _assert_same(tp_torch.load_file(path), state, "after writes")


def test_safetensors_gives_one_mapping_that_repeated_reads_share(tmp_path):
    """What tpack does better: safetensors' get_tensor of one name twice gives two tensors over the same
    memory, so a write to one shows in the other (tpack gives each read its own private mapping)."""
    st_torch.save_file({"w": torch.zeros(4)}, str(tmp_path / "m.safetensors"))
    with safetensors.safe_open(str(tmp_path / "m.safetensors"), framework="pt") as f:
        a, b = f.get_tensor("w"), f.get_tensor("w")
        a += 1
        assert torch.equal(b, torch.ones(4))
    tp_torch.save_file({"w": torch.zeros(4)}, tmp_path / "m.tpack")
    with tpack.safe_open(tmp_path / "m.tpack", framework="pt") as f:
        a, b = f.get_tensor("w"), f.get_tensor("w")
        a += 1
        assert torch.equal(b, torch.zeros(4))


def test_load_file_and_load_give_tensors_of_their_own(tmp_path):
    state = _state()
    path = tmp_path / "m.tpack"
    tp_torch.save_file(state, path)
    before = _digest(path)
    for loaded in (tp_torch.load_file(path), tp_torch.load(path.read_bytes())):
        _assert_same(loaded, state)
        assert list(loaded) == sorted(state)
        for t in loaded.values():
            assert mapping_of(t.data_ptr()) is None or mapping_of(t.data_ptr())[-1] != str(path)
            scribble(t)
    assert _digest(path) == before


def test_load_file_opens_the_file_once(tmp_path, monkeypatch):
    # Regression: it opened the file for the dtypes, then again to read (two opens, and a file replaced in
    # between gave the second file's bytes with the first's dtypes).
    path = tmp_path / "m.tpack"
    tp_torch.save_file({"a": torch.ones(3, dtype=torch.bfloat16), "b": torch.zeros(2)}, path)
    opened = []
    for name in ("open_file", "open_file_for_load"):
        real = getattr(tpack._native, name)
        monkeypatch.setattr(tpack._native, name, lambda p, _real=real, _name=name: opened.append(_name) or _real(p))
    loaded = tp_torch.load_file(path)
    assert opened == ["open_file_for_load"]
    assert loaded["a"].dtype == torch.bfloat16 and torch.equal(loaded["a"], torch.ones(3, dtype=torch.bfloat16))


@pytest.mark.parametrize("layout", ["transposed", "strided", "expanded", "column"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float8_e4m3fn, torch.int16, torch.bool])
def test_non_contiguous_tensors_are_stored_by_value_where_safetensors_refuses(tmp_path, layout, dtype):
    base = torch.arange(48, dtype=torch.float32).reshape(6, 8).to(dtype)
    tensor = {
        "transposed": lambda: base.t(),
        "strided": lambda: base[::2, 1::3],
        "expanded": lambda: base[0, :3].expand(4, 3),
        "column": lambda: base[:, 2],
    }[layout]()
    assert not tensor.is_contiguous()
    with pytest.raises(ValueError, match="non contiguous"):
        st_torch.save_file({"w": tensor}, str(tmp_path / "m.safetensors"))
    tp_torch.save_file({"w": tensor}, tmp_path / "m.tpack")
    _assert_same(tp_torch.load_file(tmp_path / "m.tpack"), {"w": tensor.contiguous()}, layout)
    _assert_same(tp_torch.load(tp_torch.save({"w": tensor})), {"w": tensor.contiguous()}, layout)


@pytest.mark.parametrize("case", ["same", "overlapping view", "transposed view"])
def test_shared_tensors_are_refused_naming_each_group(tmp_path, case):
    w = torch.zeros(4, 4)
    other = {"same": w, "overlapping view": w[1:3], "transposed view": w.t()}[case]
    tensors = {"w": w, "v": other, "alone": torch.ones(2)}
    with pytest.raises(RuntimeError, match=r"share memory.*\['v', 'w'\]"):
        tp_torch.save_file(tensors, tmp_path / "m.tpack")
    with pytest.raises(RuntimeError, match=r"\['v', 'w'\]"):
        tp_torch.save(tensors)
    assert not (tmp_path / "m.tpack").exists()
    # Disjoint views of one storage share no byte: stored, as safetensors stores them.
    tp_torch.save_file({"a": w[0], "b": w[1]}, tmp_path / "d.tpack")
    st_torch.save_file({"a": w[0], "b": w[1]}, str(tmp_path / "d.safetensors"))


def test_save_model_refuses_a_group_that_no_tensor_covers(tmp_path):
    model = torch.nn.Module()
    storage = torch.zeros(10)
    model.register_buffer("a", storage[:6])
    model.register_buffer("b", storage[4:])
    for lib, path in ((st_torch, str(tmp_path / "m.safetensors")), (tp_torch, tmp_path / "m.tpack")):
        with pytest.raises(RuntimeError, match="cover"):
            lib.save_model(model, path)


def test_save_model_keeps_the_callers_metadata_and_does_not_change_it(tmp_path):
    metadata = {"head.weight": "mine", "arch": "tied"}
    tp_torch.save_model(Tied(seed=3), tmp_path / "m.tpack", metadata=metadata)
    assert metadata == {"head.weight": "mine", "arch": "tied"}
    with tpack.safe_open(tmp_path / "m.tpack", "pt") as f:
        assert f.metadata() == {"head.weight": "mine", "arch": "tied"}


def test_errors_name_the_tensor(tmp_path):
    with pytest.raises(TypeError, match="tensor 'z'.*complex128"):
        tp_torch.save({"ok": torch.zeros(1), "z": torch.zeros(2, dtype=torch.complex128)})
    with pytest.raises(ValueError, match="`n` is invalid"):
        tp_torch.save({"n": np.zeros(2)})
    with pytest.raises(ValueError, match="sparse"):
        tp_torch.save({"s": torch.zeros(3, 3).to_sparse()})
    with pytest.raises(ValueError, match="dict"):
        tp_torch.save([torch.zeros(1)])


def test_tensors_that_need_grad_are_saved(tmp_path):
    p = torch.nn.Parameter(torch.randn(3, 3))
    tp_torch.save_file({"p": p}, tmp_path / "m.tpack")
    _assert_same(tp_torch.load_file(tmp_path / "m.tpack")["p"], p.detach())


def test_torch_from_dlpack_shares_the_map(tmp_path):
    state = {k: v for k, v in _state().items() if v.dtype not in (torch.bfloat16, torch.float8_e4m3fn,
                                                                    torch.float8_e5m2)}
    path = tmp_path / "m.tpack"
    tp_torch.save_file(state, path)
    with tpack.open(path) as f:
        for name, want in state.items():
            view = f.get(name)
            shared = torch.from_dlpack(view)
            _assert_same(shared, want, name)
            if view.size:
                assert shared.data_ptr() == view.ctypes.data, name
                where = mapping_of(shared.data_ptr())
                assert where[-1] == str(path) and where[1].startswith("r-"), (name, where)  # the read-only map
            # A writable view shares its own private mapping, which torch may write to.
            mine = torch.from_dlpack(f.get(name, writable=True))
            if mine.numel():
                assert mapping_of(mine.data_ptr())[1].startswith("rw"), name
                scribble(mine)
            _assert_same(torch.from_dlpack(f.get(name)), want, name)
        # BF16 and FP8 (ml_dtypes arrays, which DLPack cannot describe) cross as their bits.
        tpack.save(tmp_path / "bf.tpack", {"w": tpack.Typed("BF16", state["f32"].to(torch.bfloat16)
                                                              .view(torch.int16).numpy().view(np.uint16))})
    with tpack.open(tmp_path / "bf.tpack") as f:
        bits = f.get("w").view(np.uint16)
        t = torch.from_dlpack(bits).view(torch.bfloat16)
        assert t.data_ptr() == bits.ctypes.data
        _assert_same(t, state["f32"].to(torch.bfloat16), "bf16")


def test_a_write_through_torch_from_dlpack_of_a_view_faults_and_never_reaches_the_file(tmp_path):
    """torch has no read-only tensors: a tensor over the read-only map takes the write as a fault (SIGSEGV)
    that kills the process, never as a change to the file. ``safe_open(..., "pt")`` is the writable way."""
    path = tmp_path / "m.tpack"
    tp_torch.save_file({"w": torch.zeros(16)}, path)
    before = _digest(path)
    child = textwrap.dedent(f"""
        import tpack, torch
        with tpack.open({str(path)!r}) as f:
            t = torch.from_dlpack(f.get("w"))
            print("shared", flush=True)
            t += 1
        print("survived", flush=True)
    """)
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "shared" and run.returncode == -11, (run.returncode, run.stdout, run.stderr)
    assert _digest(path) == before


def test_get_slice_gives_writable_tensors_of_their_own(tmp_path):
    state = _state()
    path = tmp_path / "m.tpack"
    tp_torch.save_file(state, path)
    before = _digest(path)
    with tpack.safe_open(path, framework="pt") as f:
        part = f.get_slice("bf16")[1:3, ::2]
        _assert_same(part, state["bf16"][1:3, ::2].contiguous(), "bf16 slice")
        part.fill_(1)
        want = state["f8e5m2"].view(torch.uint8)[[0, 2]].view(torch.float8_e5m2)
        _assert_same(f.get_slice("f8e5m2")[[0, 2]], want, "fp8 fancy index")
    assert _digest(path) == before


def test_a_closed_safe_open_still_backs_its_tensors(tmp_path):
    tp_torch.save_file({"w": torch.arange(6.0)}, tmp_path / "m.tpack")
    with tpack.safe_open(tmp_path / "m.tpack", framework="pt") as f:
        t = f.get_tensor("w")
    (tmp_path / "m.tpack").unlink()
    _assert_same(t * 2, torch.arange(6.0) * 2, "after close and unlink")


def test_import_tpack_does_not_import_torch():
    child = "import sys, tpack, tpack.torch, tpack.numpy; print('torch' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "False", run.stderr


def test_tpack_torch_names_torch_when_it_is_missing(tmp_path, monkeypatch):
    tpack.save(tmp_path / "m.tpack", {"w": np.zeros(1, np.float32)})
    monkeypatch.setitem(sys.modules, "torch", None)
    for call in (lambda: tp_torch.load_file(tmp_path / "m.tpack"), lambda: tp_torch.save({})):
        with pytest.raises(ModuleNotFoundError, match="needs torch") as info:
            call()
        assert info.value.name == "torch"


def test_bf16_and_fp8_reach_torch_as_their_dtype_without_ml_dtypes(tmp_path, monkeypatch):
    """Without ml_dtypes numpy holds BF16 and FP8 as same-width unsigned integers; torch still gets its dtype."""
    import tpack._dtypes

    state = {k: v for k, v in _state().items() if k in ("bf16", "f8e4m3", "f8e5m2", "f32", "int.torch.uint8")}
    path = tmp_path / "m.tpack"
    tp_torch.save_file(state, path)
    monkeypatch.setattr(tpack._dtypes, "_ml", None)
    with tpack.open(path) as f:
        assert f.get("bf16").dtype == np.uint16  # what numpy gets without ml_dtypes
    _assert_same(tp_torch.load_file(path), state, "load_file")
    _assert_same(tp_torch.load(path.read_bytes()), state, "load")
    with tpack.safe_open(path, "pt") as f:
        _assert_same({k: f.get_tensor(k) for k in f.keys()}, state, "get_tensor")
        _assert_same(f.get_slice("bf16")[1:], state["bf16"][1:], "get_slice")
    tp_torch.save_file(state, tmp_path / "again.tpack")  # saving needs no ml_dtypes either
    _assert_same(tp_torch.load_file(tmp_path / "again.tpack"), state, "saved again")
