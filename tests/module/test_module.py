"""Module: field discovery, visit/map, parameters, devices, clone/to_device/fork, display,
records, and the modes with burn 0.22's semantics (the train-vs-inference chapter)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.dispatch import Device
from minidl.module import Module, ModuleMapper, ModuleVisitor, Param, RecordError
from minidl.nn import (
    BatchNorm,
    BatchNormConfig,
    Dropout,
    DropoutConfig,
    Linear,
    LinearConfig,
    LinearLayout,
    Relu,
    Sequential,
)
from minidl.tensor import Tensor

from .support import T, arr

PLAIN = Device.ndarray()
AD = PLAIN.autodiff()


class Net(Module):
    """Linear(4, 3) → BatchNorm(3) → Dropout, plus containers and constants."""

    def __init__(self, device: Device):
        self.linear = LinearConfig(4, 3).init(device)
        self.norm = BatchNormConfig(3).init(device)
        self.dropout = DropoutConfig(0.5).init()
        self.heads = [LinearConfig(3, 2).init(device), LinearConfig(3, 1).with_bias(False).init(device)]
        self.extra = {"scale": LinearConfig(1, 1).init(device)}
        self.optional = None
        self.hidden_size = 3  # a constant
        self.name = "net"

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.norm(self.linear(x)))


def test_fields_are_discovered_in_definition_order_and_constants_skipped():
    names = [name for name, _ in Net(PLAIN).named_fields()]
    assert names == ["linear", "norm", "dropout", "heads", "extra"]


def test_parameters_have_dotted_paths_and_flags_are_separate():
    net = Net(PLAIN)
    assert list(net.parameters()) == [
        "linear.weight", "linear.bias", "norm.gamma", "norm.beta",
        "heads.0.weight", "heads.0.bias", "heads.1.weight", "extra.scale.weight", "extra.scale.bias"]
    assert list(net.flags()) == ["norm.training", "dropout.training"]
    assert list(net.running_states()) == ["norm.running_mean", "norm.running_var"]


def test_num_params_counts_tensor_params_without_initializing():
    net = Net(PLAIN)
    assert net.num_params() == (12 + 3) + (3 + 3) + (6 + 2) + 3 + (1 + 1)
    assert not any(p.is_initialized() for p in net.parameters().values())


def test_visit_sees_every_leaf_and_enters_every_module():
    seen, entered = [], []

    class V(ModuleVisitor):
        def enter_module(self, path, module):
            entered.append((path, type(module).__name__))

        def visit_param(self, path, param):
            seen.append(path)

        def visit_flag(self, path, param):
            seen.append(path)

        def visit_running_state(self, path, state):
            seen.append(path)

    Net(PLAIN).visit(V())
    assert ("", "Net") in entered and ("heads.1", "Linear") in entered
    assert "norm.running_var" in seen and "dropout.training" in seen and "extra.scale.bias" in seen
    paths = []
    Net(PLAIN).visit(lambda path, leaf: paths.append(path))
    assert paths == seen


def test_map_returns_a_new_module_and_never_mutates_the_original():
    net = Net(PLAIN)
    before = {k: p for k, p in net.parameters().items()}

    class Zero(ModuleMapper):
        def map_param(self, path, param):
            return param.with_value(Tensor.zeros(param.lazy_shape(), device=PLAIN))

    zeroed = net.map(Zero())
    assert zeroed is not net and zeroed.heads is not net.heads and zeroed.heads[0] is not net.heads[0]
    assert all(net.parameters()[k] is p for k, p in before.items())
    assert all(np.all(arr(p.val()) == 0) for p in zeroed.parameters().values())
    assert zeroed.hidden_size == 3 and zeroed.name == "net"


def test_clone_shares_params_and_running_states_but_not_module_objects():
    net = Net(PLAIN)
    copy = net.clone()
    assert copy is not net and copy.linear is not net.linear
    assert copy.linear.weight is net.linear.weight
    assert copy.norm.running_mean is net.norm.running_mean


def test_devices_lists_param_and_state_devices():
    assert Net(PLAIN).devices() == [PLAIN]
    devices = Net(AD).devices()
    assert [d.is_autodiff() for d in devices] == [True, False]  # params, then inner running stats


def test_to_device_moves_params_and_keeps_the_original():
    net = LinearConfig(2, 2).init(PLAIN)
    moved = net.to_device(AD)
    assert moved.weight.val().device.is_autodiff() and moved.weight.val().is_require_grad()
    assert not net.weight.val().device.is_autodiff()
    np.testing.assert_array_equal(arr(moved.weight.val()), arr(net.weight.val()))


def test_fork_gives_fresh_leaves_with_the_same_values():
    net = LinearConfig(2, 2).init(AD)
    forked = net.fork(AD)
    assert forked.weight.val() is not net.weight.val() and forked.weight.val().is_require_grad()
    np.testing.assert_array_equal(arr(forked.weight.val()), arr(net.weight.val()))


def test_call_runs_forward():
    linear = LinearConfig(2, 3).init(PLAIN)
    x = T(np.ones((1, 2)), PLAIN)
    np.testing.assert_array_equal(arr(linear(x)), arr(linear.forward(x)))


def test_display_shows_the_tree_with_shapes_and_param_counts():
    text = repr(Sequential(LinearConfig(4, 3).init(PLAIN), Relu(), DropoutConfig(0.1).init()))
    assert text.splitlines()[0] == "Sequential {"
    assert "0: Linear {d_input: 4, d_output: 3, bias: true, params: 15}" in text
    assert "2: Dropout {prob: 0.1, training: enabled}" in text
    assert text.splitlines()[-2].strip() == "params: 15"
    assert "<pre" in Sequential(Relu())._repr_html_()


def test_display_of_a_plain_module_lists_params_and_constants_without_initializing():
    class Tiny(Module):
        def __init__(self):
            self.weight = LinearConfig(2, 5).init(PLAIN).weight
            self.size = 5

    tiny = Tiny()
    text = repr(tiny)
    assert "weight: ParamTensor {rank: 2, shape: [2, 5], kind: float, lazy}" in text
    assert "size: 5" in text and "params: 10" in text
    assert not tiny.weight.is_initialized()


# ----- records ---------------------------------------------------------------------------------
def test_record_round_trip_restores_values_and_running_stats():
    net = Net(AD)
    x = T(np.random.default_rng(0).standard_normal((5, 4)), AD)
    net(x)
    record = net.into_record()
    assert set(record) == {"linear", "norm", "dropout", "heads", "extra"}
    assert record["dropout"] == {} and set(record["norm"]) == {"gamma", "beta", "running_mean", "running_var"}
    loaded = Net(AD).load_record(record)
    for path, param in net.parameters().items():
        np.testing.assert_array_equal(arr(loaded.parameters()[path].val()), arr(param.val()))
        assert loaded.parameters()[path].val().is_require_grad()
    np.testing.assert_array_equal(arr(loaded.norm.running_mean.value()), arr(net.norm.running_mean.value_sync()))


def test_col_layout_records_store_d_output_by_d_input_and_load_back():
    col = LinearConfig(3, 2).with_layout(LinearLayout.Col).with_bias(False).init(PLAIN)
    record = col.into_record()
    assert record["weight"].shape == (2, 3)
    fresh = LinearConfig(3, 2).with_layout(LinearLayout.Col).with_bias(False).init(PLAIN).load_record(record)
    np.testing.assert_array_equal(arr(fresh.weight.val()), arr(col.weight.val()))
    row = LinearConfig(2, 3).with_bias(False).init(PLAIN).load_record(record)  # burn's layout test
    np.testing.assert_array_equal(arr(row.weight.val()), arr(col.weight.val()).T)


def test_loading_into_a_materialized_col_param_reports_a_shape_mismatch():
    col = LinearConfig(3, 2).with_layout(LinearLayout.Col).init(PLAIN)
    record = col.into_record()
    target = LinearConfig(3, 2).with_layout(LinearLayout.Col).init(PLAIN)
    target.weight.val()  # materialized: lazy_shape is now [d_input, d_output]
    with pytest.raises(RecordError, match=r"Shape mismatch for 'weight': expected \[3, 2\], found \[2, 3\]"):
        target.load_record(record)


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["linear"].update(weight=np.zeros((3, 4), np.float32)), "Shape mismatch for 'linear.weight'"),
    (lambda r: r["linear"].update(bias=np.zeros(3, np.float64)), "Dtype mismatch for 'linear.bias'"),
    (lambda r: r["norm"].pop("running_var"), "missing 'norm.running_var'"),
    (lambda r: r["heads"][1].update(bias=np.zeros(1, np.float32)), "unexpected 'heads.1.bias'"),
])
def test_a_bad_record_raises_naming_the_parameter_and_leaves_the_module_unchanged(edit, message):
    source = Net(PLAIN)
    record = source.into_record()
    edit(record)
    target = Net(PLAIN)
    before = {k: p for k, p in target.parameters().items()}
    with pytest.raises(RecordError, match=message):
        target.load_record(record)
    assert all(target.parameters()[k] is p for k, p in before.items())
    assert not any(p.is_initialized() for p in target.parameters().values())


# ----- modes (burn 0.22) -----------------------------------------------------------------------
def test_valid_returns_a_copy_with_flags_off_and_params_on_the_inner_device():
    net = Net(AD)
    valid = net.valid()
    assert valid is not net
    assert not valid.dropout.training.is_enabled() and not valid.norm.training.is_enabled()
    assert net.dropout.training.is_enabled()  # the original keeps training
    for param in valid.parameters().values():
        assert not param.val().device.is_autodiff() and not param.val().is_require_grad()
    for param in net.parameters().values():
        assert param.val().device.is_autodiff()


def test_valid_output_is_a_plain_tensor_outside_any_graph():
    net = LinearConfig(4, 2).init(AD)
    out = net.valid()(T(np.ones((1, 4)), PLAIN))
    assert not out.device.is_autodiff()
    with pytest.raises(RuntimeError, match="Requires autodiff tensor"):
        out.sum().backward()


def test_train_on_a_module_built_on_a_plain_device_lifts_params_to_autodiff_with_grad():
    net = LinearConfig(4, 2).init(PLAIN)
    trained = net.train()
    weight = trained.weight.val()
    assert weight.device.is_autodiff() and weight.is_require_grad()
    assert not net.weight.val().device.is_autodiff()
    grads = trained(T(np.ones((2, 4)), PLAIN)).sum().backward()
    assert weight.grad(grads) is not None


def test_valid_then_train_restores_flags_and_grad():
    net = Net(AD).valid().train()
    assert net.dropout.training.is_enabled() and net.norm.training.is_enabled()
    assert all(p.val().is_require_grad() for p in net.parameters().values())


def test_freeze_turns_flags_and_grad_off_and_survives_valid_train():
    frozen = Net(AD).freeze()
    assert not frozen.dropout.training.is_enabled()
    assert not any(p.is_require_grad() for p in frozen.parameters().values())
    again = frozen.valid().train()
    assert not again.dropout.training.is_enabled() and not again.norm.training.is_enabled()
    assert not any(p.val().is_require_grad() for p in again.parameters().values())


def test_unfreeze_clears_the_frozen_mark():
    net = Net(AD).freeze().unfreeze()
    assert net.dropout.training.is_enabled()
    assert all(p.val().is_require_grad() for p in net.parameters().values())
    assert net.valid().train().dropout.training.is_enabled()


def test_no_grad_and_set_require_grad_touch_tensors_never_flags():
    net = Net(AD)
    quiet = net.no_grad()
    assert quiet.dropout.training.is_enabled()
    assert not any(p.val().is_require_grad() for p in quiet.parameters().values())
    loud = quiet.set_require_grad(True)
    assert all(p.val().is_require_grad() for p in loud.parameters().values())
    assert not Net(AD).freeze().set_require_grad(True).dropout.training.is_enabled()


def test_freeze_keeps_lazy_params_lazy():
    net = LinearConfig(3, 3).init(AD).freeze()
    assert not net.weight.is_initialized()
    assert not net.weight.val().is_require_grad()


def test_torch_eval_flips_flags_in_place_returns_self_and_keeps_recording():
    # the PyTorch contrast the book draws: eval() mutates, valid() copies
    model = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Dropout(0.5))
    assert model.eval() is model and not model[1].training
    assert model(torch.ones(1, 4)).requires_grad
    ours = Sequential(LinearConfig(4, 2).init(AD), DropoutConfig(0.5).init())
    valid = ours.valid()
    assert valid is not ours and ours[1].training.is_enabled() and not valid[1].training.is_enabled()
    assert not valid(T(np.ones((1, 4)), PLAIN)).device.is_autodiff()


def test_module_types_used_above_are_the_nn_ones():
    net = Net(PLAIN)
    assert isinstance(net.linear, Linear) and isinstance(net.norm, BatchNorm) and isinstance(net.dropout, Dropout)
    assert isinstance(net.linear.weight, Param)
