"""Param: lazy init at the first val() and only once, lazy_shape/lazy_device, mappers, Flag."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.dispatch import Device
from minidl.module import Flag, Initializer, Param
from minidl.nn import LinearConfig, LinearLayout
from minidl.tensor import Tensor

from .support import arr


def _counting_param(device: Device, shape=(2, 3), require_grad=True):
    calls = []

    def init(dev, rg):
        calls.append((dev, rg))
        return Tensor.full(shape, float(len(calls)), device=dev)

    return Param.uninitialized("p0", init, device, require_grad, shape), calls


def test_lazy_init_runs_once_at_the_first_val():
    param, calls = _counting_param(Device.ndarray())
    assert not param.is_initialized() and calls == []
    first = param.val()
    assert param.is_initialized() and len(calls) == 1
    second = param.val()
    assert second is first and len(calls) == 1
    assert np.all(arr(first) == 1.0)


def test_lazy_shape_and_lazy_device_do_not_initialize():
    param, calls = _counting_param(Device.ndarray().autodiff(), shape=(4, 5))
    assert param.lazy_shape() == (4, 5)
    assert param.lazy_device().is_autodiff()
    assert calls == [] and not param.is_initialized()


def test_value_requires_grad_only_on_an_autodiff_device():
    plain, _ = _counting_param(Device.ndarray())
    assert plain.require_grad and not plain.val().is_require_grad()
    tracked, _ = _counting_param(Device.ndarray().autodiff())
    assert tracked.val().is_require_grad()
    assert tracked.is_require_grad()


def test_initializer_params_are_lazy_and_initialize_inside_persistent_allocations():
    device = Device.ndarray()
    depths = []

    param = Initializer.Zeros.init([3], device)
    assert not param.is_initialized()
    original = Tensor.zeros

    def spy(*args, **kwargs):
        depths.append(device.persistent_depth)
        return original(*args, **kwargs)

    Tensor.zeros = spy
    try:
        param.val()
    finally:
        Tensor.zeros = original
    assert depths == [1]
    assert device.persistent_depth == 0


def test_col_layout_lazy_shape_is_the_pre_mapper_shape_until_initialized():
    # the pitfall the nn-modules chapter teaches: [d_output, d_input] while lazy, [d_input, d_output] after
    linear = LinearConfig(6, 12).with_layout(LinearLayout.Col).init(Device.ndarray())
    assert linear.weight.lazy_shape() == (12, 6)
    assert linear.weight.val().shape == (6, 12)
    assert linear.weight.lazy_shape() == (6, 12)


def test_col_layout_weight_is_a_tracked_leaf_after_the_init_mapper():
    linear = LinearConfig(3, 2).with_layout(LinearLayout.Col).init(Device.ndarray().autodiff())
    weight = linear.weight.val()
    assert weight.is_require_grad()
    x = Tensor.ones((1, 3), device=Device.ndarray().autodiff())
    grads = linear(x).sum().backward()
    assert weight.grad(grads) is not None and weight.grad(grads).shape == (3, 2)


def test_save_and_load_mappers_transpose_for_col():
    linear = LinearConfig(3, 2).with_layout(LinearLayout.Col).init(Device.ndarray())
    saved = linear.weight.transform_for_save()
    assert saved.shape == (2, 3)
    np.testing.assert_array_equal(arr(saved).T, arr(linear.weight.val()))
    assert linear.weight.apply_load_mapper(saved).shape == (3, 2)


def test_map_keeps_the_id_and_gives_a_new_param():
    param = Param.initialized("abc", Tensor.ones((2,), device=Device.ndarray()))
    doubled = param.map(lambda t: t * 2.0)
    assert doubled.id == "abc" and doubled is not param
    assert np.all(arr(doubled.val()) == 2.0) and np.all(arr(param.val()) == 1.0)


def test_lazily_derived_params_share_one_initialization():
    param, calls = _counting_param(Device.ndarray().autodiff())
    frozen = param.with_require_grad(False)
    assert not frozen.is_initialized()
    a, b = frozen.val(), param.val()
    assert len(calls) == 1
    np.testing.assert_array_equal(arr(a), arr(b))
    assert b.is_require_grad() and not a.is_require_grad()


def test_flag_param_reports_enabled():
    flag = Param.flag(True)
    assert flag.is_enabled() and flag.is_flag()
    off = flag.with_value(Flag(False, True))
    assert not off.is_enabled() and flag.is_enabled() and off.id == flag.id
    with pytest.raises(TypeError, match="Param\\[Flag\\]"):
        Param.initialized("t", Tensor.ones((1,), device=Device.ndarray())).is_enabled()


def test_param_ids_are_unique():
    ids = {Initializer.Ones.init([1], Device.ndarray()).id for _ in range(200)}
    assert len(ids) == 200


def test_param_refuses_a_tensor_as_its_id():
    """Param(t), as nn.Parameter(t) is written, names the calls that keep or make an id."""
    t = Tensor.ones((2,), device=Device.ndarray())
    with pytest.raises(TypeError, match=r"got a Tensor.*with_value.*from_tensor"):
        Param(t)
    assert Param("abc", t).id == "abc" and Param(7, t).id == "7"
