"""Every bad input gives a clear error AND leaves the module exactly as it was: truncated and
corrupt files, wrong dtype, wrong shape, missing keys, extra keys, a pickle that would run code."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
import torch

from minidl.store import (
    ApplyFailed,
    CorruptFileError,
    DTypeMismatch,
    PytorchStore,
    StoreError,
    UnsafeFileError,
    load_module,
    save_module,
)

from .support import Small, TorchSmall, fingerprint, torch_sd_numpy


@pytest.fixture(params=["lazy", "materialized"])
def target(request, plain):
    """The module a bad load is tried on, with its fingerprint before the attempt."""
    module = Small(plain)
    if request.param == "materialized":
        for param in module.parameters().values():
            param.val()
    return module, fingerprint(module)


def _unchanged(target) -> None:
    module, before = target
    assert fingerprint(module) == before


@pytest.fixture
def good_pt(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "small.pt"
    torch.save(TorchSmall().state_dict(), path)
    return path


@pytest.fixture
def good_st(tmp_path, plain):
    return save_module(Small(plain), tmp_path / "small.safetensors")


def _write_st(path, tensors):
    import safetensors.numpy

    safetensors.numpy.save_file(tensors, path)
    return path


# ----- files that cannot be read ------------------------------------------------------------
@pytest.mark.parametrize("keep", [0.5, 0.95])
def test_truncated_pytorch_file(good_pt, tmp_path, target, keep):
    data = good_pt.read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(CorruptFileError, match="truncated or damaged"):
        PytorchStore.from_file(cut).load_into(target[0])
    _unchanged(target)


def test_corrupt_bytes_inside_a_pytorch_storage(good_pt, tmp_path, target):
    with zipfile.ZipFile(good_pt) as archive:
        info = next(i for i in archive.infolist() if i.filename.endswith("data/0"))
    data = bytearray(good_pt.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 64 : start + 66] = b"\xff\xff"  # past any local-header padding, inside the bytes
    bad = tmp_path / "flipped.pt"
    bad.write_bytes(bytes(data))
    with pytest.raises(CorruptFileError, match="damaged"):
        PytorchStore.from_file(bad).load_into(target[0])
    _unchanged(target)


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_truncated_safetensors_file(good_st, tmp_path, target, keep):
    data = good_st.read_bytes()
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(CorruptFileError, match="not a valid safetensors file"):
        load_module(target[0], cut)
    _unchanged(target)


def test_not_a_file_of_that_format(tmp_path, target):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"hello, I am not a checkpoint")
    with pytest.raises(CorruptFileError):
        PytorchStore.from_file(junk).load_into(target[0])
    with pytest.raises(CorruptFileError):
        load_module(target[0], junk)
    _unchanged(target)


def test_missing_file_is_a_file_not_found_error(tmp_path, target):
    with pytest.raises(FileNotFoundError, match="nope.pt"):
        PytorchStore.from_file(tmp_path / "nope.pt").load_into(target[0])
    _unchanged(target)


# ----- a pickle that would run code -----------------------------------------------------------
class _Evil:
    """Unpickling this runs ``exec`` — which writes a marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('pwned')",))


def test_pickle_that_would_run_code_is_refused_and_the_code_does_not_run(tmp_path, target):
    marker = tmp_path / "pwned.txt"
    path = tmp_path / "evil.pt"
    torch.save({"fc.weight": torch.zeros(2, 4), "payload": _Evil(marker)}, path)

    with pytest.raises(UnsafeFileError, match="non-tensor objects.*refused as unsafe"):
        PytorchStore.from_file(path).load_into(target[0])
    assert not marker.exists()
    _unchanged(target)

    # the control: unrestricted unpickling of the very same file DOES run the payload
    torch.load(path, weights_only=False)
    assert marker.read_text() == "pwned"


def test_a_whole_pickled_model_is_refused(tmp_path, target):
    path = tmp_path / "model.pt"
    torch.save(TorchSmall(), path)  # the module object, not its state_dict
    with pytest.raises(UnsafeFileError, match="TorchSmall.*refused as unsafe"):
        PytorchStore.from_file(path).load_into(target[0])
    _unchanged(target)


# ----- files that can be read but do not fit ---------------------------------------------------
def test_wrong_dtype(tmp_path, target, plain):
    module, _ = target
    tensors = {k: np.zeros(s.shape, np.float32) for k, s in _shapes(module).items()}
    tensors["fc.bias"] = tensors["fc.bias"].astype(np.float64)
    with pytest.raises(ApplyFailed, match=r"DType mismatch for 'fc.bias': expected float32, found float64") as info:
        load_module(module, _write_st(tmp_path / "f64.safetensors", tensors))
    assert info.value.result.errors == [DTypeMismatch("fc.bias", "float32", "float64")]
    _unchanged(target)

    sd = {k: torch.from_numpy(v) for k, v in torch_sd_numpy(TorchSmall().double()).items()}
    with pytest.raises(ApplyFailed, match="DType mismatch for 'fc.weight'"):
        PytorchStore.from_state_dict(sd).load_into(module)
    _unchanged(target)


def test_wrong_shape(tmp_path, target):
    module, _ = target
    tensors = {k: np.zeros(s.shape, np.float32) for k, s in _shapes(module).items()}
    tensors["norm.running_var"] = np.ones((5,), np.float32)
    with pytest.raises(ApplyFailed, match=r"Shape mismatch for 'norm.running_var': expected \[4\], found \[5\]"):
        load_module(module, _write_st(tmp_path / "shape.safetensors", tensors))
    _unchanged(target)

    torch_model = torch.nn.Module()
    torch_model.fc, torch_model.norm = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)
    with pytest.raises(ApplyFailed, match=r"Shape mismatch for 'fc.weight': expected \[2, 4\], found \[3, 4\]"):
        PytorchStore.from_state_dict(torch_model.state_dict()).load_into(module)
    _unchanged(target)


def test_missing_keys_are_listed(good_pt, target):
    module, _ = target
    sd = torch.load(good_pt, weights_only=True)
    del sd["fc.bias"], sd["norm.running_mean"]
    with pytest.raises(ApplyFailed, match="Missing keys") as info:
        PytorchStore.from_state_dict(sd).load_into(module)
    assert "'fc.bias'" in str(info.value) and "'norm.running_mean'" in str(info.value)
    assert info.value.result.missing == ["fc.bias", "norm.running_mean"]
    _unchanged(target)


def test_extra_keys_are_listed(good_st, tmp_path, target):
    module, _ = target
    import safetensors.numpy

    tensors = safetensors.numpy.load_file(good_st)
    tensors["fc.scale"] = np.ones(4, np.float32)
    tensors["head.weight"] = np.ones((4, 2), np.float32)
    with pytest.raises(ApplyFailed, match="Unexpected keys") as info:
        load_module(module, _write_st(tmp_path / "extra.safetensors", tensors))
    assert info.value.result.unused == ["fc.scale", "head.weight"]
    assert "'fc.scale', 'head.weight'" in str(info.value)
    _unchanged(target)


def test_every_problem_is_reported_at_once(tmp_path, target):
    module, _ = target
    tensors = {"fc.weight": np.zeros((4, 2), np.float32), "fc.bias": np.zeros(4, np.float16),
               "extra": np.zeros(1, np.float32)}
    with pytest.raises(ApplyFailed) as info:
        load_module(module, _write_st(tmp_path / "all.safetensors", tensors))
    message = str(info.value)
    assert "Shape mismatch for 'fc.weight': expected [2, 4], found [4, 2]" in message
    assert "DType mismatch for 'fc.bias'" in message
    assert "'norm.gamma'" in message and "'extra'" in message
    assert "the module was not changed" in message
    _unchanged(target)


def test_store_errors_are_value_errors():
    for error in (ApplyFailed, CorruptFileError, UnsafeFileError):
        assert issubclass(error, StoreError) and issubclass(error, ValueError)


def _shapes(module):
    from minidl.store import collect_slots

    return {slot.path: slot for slot in collect_slots(module)}
