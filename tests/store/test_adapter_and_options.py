"""The adapter's key and shape logic on plain slots and arrays, and the store options:
key remapping by regex, contiguous indices, ``allow_partial``, ``validate``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.module import Module
from minidl.nn.layer_norm import LayerNormConfig
from minidl.nn.linear import LinearConfig
from minidl.store import (
    ApplyFailed,
    KeyRemapper,
    PytorchStore,
    PyTorchToMinidlAdapter,
    ShapeMismatch,
    StoreError,
    TensorSlot,
    map_indices_contiguous,
    plan_apply,
)

from .support import Small, TorchSmall, fingerprint


def _slot(path, module_type, shape, dtype="float32"):
    return TensorSlot(path, ("Net", module_type), tuple(shape), dtype)


def test_plan_transposes_linear_weight_and_finds_norm_params_under_torch_names():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 2)).astype(np.float32)  # PyTorch [out, in]
    gamma = rng.standard_normal(4).astype(np.float32)
    source = {"fc.weight": w, "norm.weight": gamma, "norm.bias": np.zeros(4, np.float32),
              "norm.num_batches_tracked": np.array(3)}
    slots = [_slot("fc.weight", "Linear", (2, 4)), _slot("norm.gamma", "LayerNorm", (4,)),
             _slot("norm.beta", "LayerNorm", (4,))]

    result = plan_apply(slots, source, PyTorchToMinidlAdapter())

    np.testing.assert_array_equal(result.values["fc.weight"], w.T)
    assert result.values["fc.weight"].flags.c_contiguous
    np.testing.assert_array_equal(result.values["norm.gamma"], gamma)
    assert result.applied == ["fc.weight", "norm.gamma", "norm.beta"]
    assert result.ignored == ["norm.num_batches_tracked"] and result.unused == []
    assert "Matched and checked:    3 tensors" in result.summary()


def test_only_linear_weights_are_transposed():
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    slots = [_slot("emb.weight", "Embedding", (2, 3)), _slot("fc.bias", "Linear", (2, 3))]
    result = plan_apply(slots, {"emb.weight": w, "fc.bias": w}, PyTorchToMinidlAdapter())
    np.testing.assert_array_equal(result.values["emb.weight"], w)
    np.testing.assert_array_equal(result.values["fc.bias"], w)


def test_without_the_adapter_torch_names_and_layouts_do_not_fit():
    source = {"fc.weight": np.zeros((4, 2), np.float32), "norm.weight": np.ones(4, np.float32)}
    slots = [_slot("fc.weight", "Linear", (2, 4)), _slot("norm.gamma", "LayerNorm", (4,))]
    result = plan_apply(slots, source)
    assert result.errors == [ShapeMismatch("fc.weight", (2, 4), (4, 2))]
    assert result.missing == ["norm.gamma"] and result.unused == ["norm.weight"]


def test_error_message_has_burns_exact_form():
    assert str(ShapeMismatch("fc.weight", (4, 2), (2, 4))) == \
        "Shape mismatch for 'fc.weight': expected [4, 2], found [2, 4]"


def test_key_remapper_applies_rules_in_order_with_python_or_rust_groups():
    remapper = (KeyRemapper().add_pattern(r"^model\.(.*)$", r"\1")
                .add_pattern(r"^encoder\.(\d+)\.", "layers.$1.").add_pattern(r"\.g$", ".gamma"))
    assert remapper.remap_key("model.encoder.3.g") == "layers.3.gamma"
    assert remapper.remap_key("head.weight") == "head.weight"
    with pytest.raises(StoreError, match="sends both"):
        KeyRemapper().add_pattern(r"^(a|b)\.", "x.").remap(["a.w", "b.w"])
    with pytest.raises(StoreError, match="invalid key remapping pattern"):
        KeyRemapper().add_pattern("(", "x")


def test_map_indices_contiguous_renumbers_each_list_independently():
    renamed = map_indices_contiguous(["fc.0.weight", "fc.2.weight", "fc.4.bias", "enc.1.blk.3.w", "enc.5.blk.3.w"])
    assert renamed == {"fc.0.weight": "fc.0.weight", "fc.1.weight": "fc.2.weight", "fc.2.bias": "fc.4.bias",
                       "enc.0.blk.0.w": "enc.1.blk.3.w", "enc.1.blk.0.w": "enc.5.blk.3.w"}


class Stack(Module):
    """Two Linears in a list (paths ``layers.0.*``, ``layers.1.*``) and a LayerNorm."""

    def __init__(self, device):
        self.layers = [LinearConfig(3, 4).init(device), LinearConfig(4, 2).init(device)]
        self.norm = LayerNormConfig(2).init(device)


def test_torch_sequential_with_activations_loads_via_remapping_and_contiguous_indices(plain):
    torch.manual_seed(0)
    seq = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2), torch.nn.LayerNorm(2))
    sd = {f"net.{k}": v for k, v in seq.state_dict().items()}  # net.0, net.2, net.3

    plain_store = PytorchStore.from_state_dict(sd)
    with pytest.raises(ApplyFailed, match="Missing keys"):
        plain_store.load_into(Stack(plain))

    # burn's order: the rules see the file's names (net.3 is the norm), then layers.0 and
    # layers.2 close their gap
    store = (PytorchStore.from_state_dict(sd).map_indices_contiguous(True)
             .with_key_remapping(r"^net\.3\.", "norm.").with_key_remapping(r"^net\.", "layers."))
    assert store.keys() == ["layers.0.bias", "layers.0.weight", "layers.1.bias",
                            "layers.1.weight", "norm.bias", "norm.weight"]
    model = store.load_into(Stack(plain))
    np.testing.assert_array_equal(model.layers[1].weight.val().to_numpy(), seq[2].weight.detach().numpy().T)
    np.testing.assert_array_equal(model.norm.gamma.val().to_numpy(), seq[3].weight.detach().numpy())


def test_allow_partial_loads_what_is_there_and_keeps_the_rest(plain):
    torch.manual_seed(0)
    torch_model = TorchSmall()
    sd = {k: v for k, v in torch_model.state_dict().items() if k.startswith("fc.")}
    sd["extra.weight"] = torch.ones(1)
    module = Small(plain)
    before = fingerprint(module)

    with pytest.raises(ApplyFailed):
        PytorchStore.from_state_dict(sd).load_into(module)
    loaded, result = PytorchStore.from_state_dict(sd).allow_partial(True).apply_to(module)

    assert fingerprint(module) == before
    assert result.missing == ["norm.gamma", "norm.beta", "norm.running_mean", "norm.running_var"]
    assert result.unused == ["extra.weight"]
    np.testing.assert_array_equal(loaded.fc.weight.val().to_numpy(), torch_model.fc.weight.detach().numpy().T)
    assert loaded.norm.gamma is module.norm.gamma  # untouched params are shared, still lazy
    assert not loaded.norm.gamma.is_initialized()


def test_validate_false_skips_mismatched_tensors(plain):
    torch_model = TorchSmall()
    sd = torch_model.state_dict()
    sd["fc.bias"] = torch.zeros(5)  # wrong shape
    module = Small(plain)
    module.fc.bias.val()
    with pytest.raises(ApplyFailed, match=r"Shape mismatch for 'fc.bias': expected \[4\], found \[5\]"):
        PytorchStore.from_state_dict(sd).load_into(module)
    loaded, result = PytorchStore.from_state_dict(sd).validate(False).apply_to(module)
    assert result.errors == [ShapeMismatch("fc.bias", (4,), (5,))]
    assert loaded.fc.bias is module.fc.bias
    np.testing.assert_array_equal(loaded.fc.weight.val().to_numpy(), torch_model.fc.weight.detach().numpy().T)


def test_builders_return_new_stores(plain):
    store = PytorchStore.from_state_dict({"a": torch.ones(1)})
    remapped = store.with_key_remapping("a", "b")
    assert store.keys() == ["a"] and remapped.keys() == ["b"]
    assert store.allow_partial(True).partial and not store.partial


def test_torch_sequential_loads_into_minidl_sequential_with_the_same_indices(plain):
    from minidl.nn import Relu, Sequential
    from minidl.tensor import Tensor

    torch.manual_seed(1)
    seq = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2), torch.nn.LayerNorm(2))
    model = Sequential(LinearConfig(3, 4).init(plain), Relu(), LinearConfig(4, 2).init(plain),
                       LayerNormConfig(2).init(plain))
    # torch names "0.weight", "2.weight", "3.weight"; minidl's paths are "layers.<i>.<name>"
    store = PytorchStore.from_state_dict(seq.state_dict()).with_key_remapping(r"^", "layers.")
    loaded = store.load_into(model)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(loaded(Tensor.from_numpy(x, plain)).to_numpy(),
                               seq(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
