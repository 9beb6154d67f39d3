"""The torch-free reader of ``torch.save`` files agrees with ``torch.load(weights_only=True)``
and refuses what it cannot read safely."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minidl.store import CorruptFileError, PytorchStore, StoreError
from minidl.store.torch_reader import read_torch_file

from .support import craft_torch_file


def _as_numpy(tensor: torch.Tensor) -> np.ndarray:
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.detach().contiguous().numpy()


def test_every_dtype_and_view_reads_like_torch_load(tmp_path):
    gen = torch.Generator().manual_seed(0)
    base = torch.randn(5, 6, generator=gen)
    sd = {
        "f32": torch.randn(3, 4, generator=gen),
        "f64": torch.randn(2, 2, generator=gen, dtype=torch.float64),
        "f16": torch.randn(7, generator=gen).half(),
        "bf16": torch.randn(2, 3, generator=gen).bfloat16(),
        "i64": torch.arange(-3, 9),
        "i32": torch.arange(6, dtype=torch.int32).reshape(2, 3),
        "i8": torch.tensor([-128, 0, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 255], dtype=torch.uint8),
        "bool": torch.tensor([[True, False], [False, True]]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "sliced": base[1:, ::2],  # a view with an offset and strides: torch saves the storage
        "transposed": base.t(),
        "param": torch.nn.Parameter(torch.randn(2, generator=gen)),
    }
    path = tmp_path / "all.pt"
    torch.save(sd, path)
    want = torch.load(path, weights_only=True)
    got = read_torch_file(path)
    assert got.keys() == want.keys()
    for name, tensor in want.items():
        expected = _as_numpy(tensor)
        assert got[name].dtype == expected.dtype, name
        assert got[name].shape == expected.shape, name
        np.testing.assert_array_equal(got[name], expected, err_msg=name)
        assert got[name].flags.c_contiguous and got[name].flags.writeable


def test_nested_checkpoint_is_flattened_and_top_level_key_selects(tmp_path):
    model = torch.nn.Linear(2, 3)
    path = tmp_path / "ckpt.pt"
    torch.save({"model": model.state_dict(), "epoch": 4, "note": "hi", "hist": [torch.ones(1)]}, path)
    flat = read_torch_file(path)
    assert set(flat) == {"model.weight", "model.bias", "hist.0"}
    only_model = PytorchStore.from_file(path, top_level_key="model")
    assert only_model.keys() == ["bias", "weight"]
    assert PytorchStore.from_file(path).with_top_level_key("model").keys() == ["bias", "weight"]
    with pytest.raises(StoreError, match="top-level key 'state_dict' not found"):
        PytorchStore.from_file(path, top_level_key="state_dict").keys()


def test_legacy_non_zip_format_is_refused_clearly(tmp_path):
    path = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(CorruptFileError, match="legacy format"):
        read_torch_file(path)


def test_view_reaching_past_its_storage_is_refused(tmp_path):
    storage = np.arange(4, dtype=np.float32).tobytes()
    ok = craft_torch_file(tmp_path / "ok.pt", size=(2, 2), stride=(1, 2), numel=4, storage_bytes=storage)
    np.testing.assert_array_equal(read_torch_file(ok)["w"], np.array([[0, 2], [1, 3]], np.float32))

    far = craft_torch_file(tmp_path / "far.pt", size=(1000,), stride=(1,), numel=4, storage_bytes=storage)
    with pytest.raises(CorruptFileError, match="view reaches element 999 but the storage holds 4"):
        read_torch_file(far)
    offset = craft_torch_file(tmp_path / "offset.pt", size=(2,), stride=(1,), numel=4,
                              storage_bytes=storage, offset=3)
    with pytest.raises(CorruptFileError, match="storage holds 4"):
        read_torch_file(offset)


def test_big_endian_archive_is_read_in_native_order(tmp_path):
    values = np.array([1.5, -2.0, 3.25, 1e-3], dtype=">f4")
    path = craft_torch_file(tmp_path / "big.pt", size=(4,), stride=(1,), numel=4,
                            storage_bytes=values.tobytes(), byteorder="big")
    got = read_torch_file(path)["w"]
    assert got.dtype == np.dtype("float32") and got.dtype.isnative
    np.testing.assert_array_equal(got, values.astype(np.float32))


def test_storage_shorter_than_announced_is_refused(tmp_path):
    short = craft_torch_file(tmp_path / "short.pt", size=(4,), stride=(1,), numel=4,
                             storage_bytes=np.zeros(3, np.float32).tobytes())
    with pytest.raises(CorruptFileError, match="expected 4 float32 elements"):
        read_torch_file(short)


def test_state_dict_in_memory_is_copied(plain):
    weight = torch.zeros(2, 3)
    store = PytorchStore.from_state_dict({"weight": weight, "bias": torch.zeros(2)})
    weight.fill_(7.0)  # a later change to the torch tensor must not leak into the store
    assert np.all(store.get("weight") == 0.0)
    with pytest.raises(StoreError, match="expects a mapping"):
        PytorchStore.from_state_dict([weight])


_TORCH_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool]


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dtype=st.sampled_from(_TORCH_DTYPES), shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       transpose=st.booleans(), start=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_random_views_read_like_torch_load(tmp_path, dtype, shape, transpose, start, seed):
    gen = torch.Generator().manual_seed(seed)
    full = (torch.randn([s + start for s in shape], generator=gen) * 50).to(dtype)
    view = full[tuple(slice(start, None) for _ in shape)]  # an offset into the storage
    if transpose and view.dim() > 1:
        view = view.transpose(0, -1)
    path = tmp_path / "view.pt"
    torch.save({"v": view}, path)
    got = read_torch_file(path)["v"]
    want = _as_numpy(torch.load(path, weights_only=True)["v"])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
