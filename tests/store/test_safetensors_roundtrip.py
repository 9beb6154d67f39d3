"""minidl → safetensors → minidl is bit-exact (every dtype kept); the config travels as JSON;
flags stay out of the file; save_mapper on save, load_mapper on load."""

from __future__ import annotations

import json

import numpy as np
import pytest
import safetensors.numpy
import torch

from minidl.backend.dtype import DType
from minidl.nn.linear import LinearConfig, LinearLayout
from minidl.store import (
    MinidlToPyTorchAdapter,
    SafetensorsFileRecorder,
    SafetensorsStore,
    config_path,
    load_model,
    load_module,
    save_module,
)
from minidl.tensor import Tensor

from .support import Cnn, Mixed, Mlp, TorchMlp, fingerprint, to_numpy


def _same_bits(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        assert a[name].shape == b[name].shape, name
        assert a[name].tobytes() == b[name].tobytes(), name


def test_round_trip_is_bit_exact_for_float32_float64_float16_and_int(device, tmp_path):
    refused = [d.value for d in (DType.F64, DType.F16, DType.I64) if not device.settings().supports(d)]
    if refused:  # Device.wgpu(): a float64 array would become float32 there, not round-trip
        pytest.skip(f"{device.kind} refuses {', '.join(refused)}, which this test round-trips "
                    f"(it holds {device.settings().supported_names()})")
    source = Mixed(device, seed=1)
    path = save_module(source, tmp_path / "mixed.safetensors")
    target = Mixed(device, seed=2)  # same structure, other values
    loaded = load_module(target, path)

    _same_bits(to_numpy(loaded), to_numpy(source))
    assert {v.dtype.name for v in to_numpy(loaded).values()} >= {"float32", "float64", "float16", "int64"}
    assert loaded.stats.value().to_numpy().dtype == np.float16


def test_file_holds_params_and_running_stats_under_their_paths_but_no_flags(device, tmp_path):
    model = Mlp(device)
    path = save_module(model, tmp_path / "mlp.safetensors")
    keys = set(safetensors.numpy.load_file(path))
    assert keys == set(model.parameters()) | set(model.running_states())
    assert {"fc1.weight", "bn.running_mean", "bn.running_var", "ln.gamma"} <= keys
    assert "bn.training" in model.flags() and "bn.training" not in keys


def test_loading_into_a_lazy_module_leaves_the_saved_module_untouched(device, tmp_path):
    source = Cnn(device)
    path = save_module(source, tmp_path / "cnn.safetensors")
    saved = fingerprint(source)
    fresh = Cnn(device)
    assert not fresh.conv1.weight.is_initialized()

    loaded = load_module(fresh, path)

    _same_bits(to_numpy(loaded), to_numpy(source))
    assert fingerprint(source) == saved
    assert not fresh.conv1.weight.is_initialized()  # the target was not changed either
    assert loaded.conv1.weight.id == fresh.conv1.weight.id  # the params keep their ids


def test_running_statistics_after_training_round_trip(device, tmp_path):
    model = Mlp(device).train()
    tokens = Tensor.from_numpy(np.random.default_rng(0).integers(0, 10, (8, 4)), device.autodiff())
    model(tokens)  # updates bn.running_mean / running_var
    path = save_module(model, tmp_path / "trained.safetensors")
    loaded = load_module(Mlp(device), path)
    np.testing.assert_array_equal(loaded.bn.running_var.value().to_numpy(),
                                  model.bn.running_var.value_sync().to_numpy())
    assert not np.all(loaded.bn.running_var.value().to_numpy() == 1.0)


def test_loading_onto_an_autodiff_module_keeps_it_trainable(device, tmp_path):
    path = save_module(Mlp(device), tmp_path / "mlp.safetensors")
    loaded = load_module(Mlp(device.autodiff()), path)
    weight = loaded.fc1.weight.val()
    assert weight.device.is_autodiff() and weight.is_require_grad()


def test_col_layout_saves_pytorch_layout_and_loads_back(device, tmp_path):
    config = LinearConfig(2, 4).with_layout(LinearLayout.Col)
    source = config.init(device)
    path = save_module(source, tmp_path / "col.safetensors")
    # save_mapper: the file holds [d_output, d_input]
    assert safetensors.numpy.load_file(path)["weight"].shape == (4, 2)
    loaded = load_module(config.init(device), path)  # lazy target: lazy_shape [4, 2] fits
    # load_mapper: the module holds [d_input, d_output] again, bit for bit
    _same_bits(to_numpy(loaded), to_numpy(source))


def test_config_is_saved_as_json_and_load_model_rebuilds_the_module(device, tmp_path):
    config = LinearConfig(3, 5).with_bias(False)
    source = config.init(device)
    path = save_module(source, tmp_path / "linear.safetensors", config=config)
    assert json.loads(config_path(path).read_text())["d_output"] == 5

    loaded = load_model(LinearConfig, path, device)

    assert loaded.bias is None
    _same_bits(to_numpy(loaded), to_numpy(source))


def test_in_memory_store_and_recorder_round_trip(device, tmp_path):
    source = Mixed(device, seed=3)
    store = SafetensorsStore.from_bytes().metadata("epoch", "7").collect_from(source)
    assert store.file_metadata()["epoch"] == "7" and store.file_metadata()["format"] == "minidl"
    _same_bits(to_numpy(store.load_into(Mixed(device, seed=4))), to_numpy(source))

    recorder = SafetensorsFileRecorder()
    path = recorder.record(source.into_record(), tmp_path / "record.safetensors")
    loaded = Mixed(device, seed=4).load_record(recorder.load(path))
    _same_bits(to_numpy(loaded), to_numpy(source))


def test_export_with_pytorch_adapter_loads_into_torch(plain, tmp_path):
    torch.manual_seed(0)
    model = Mlp(plain)
    path = tmp_path / "for_torch.safetensors"
    SafetensorsStore.from_file(path).with_to_adapter(MinidlToPyTorchAdapter()).collect_from(model)

    import safetensors.torch

    torch_model = TorchMlp()
    # strict: every torch key is there (torch fills in BatchNorm's num_batches_tracked itself)
    torch_model.load_state_dict(safetensors.torch.load_file(path), strict=True)
    tokens = np.random.default_rng(0).integers(0, 10, (3, 4))
    want = torch_model.eval()(torch.from_numpy(tokens)).detach().numpy()
    got = model.valid()(Tensor.from_numpy(tokens, plain)).to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_pytorch_store_cannot_save(plain):
    from minidl.store import PytorchStore, StoreError

    with pytest.raises(StoreError, match="not supported"):
        PytorchStore.from_state_dict({}).collect_from(Mlp(plain))
