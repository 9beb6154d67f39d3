"""Which class's body runs an op, and how Dispatch routes: the burn facts the book traces."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backend import Backend, ModuleOps, defines, defining_class
from minidl.backends.cpu_common import CpuBoolOps, CpuHostOps, CpuIntOps
from minidl.backends.ndarray import NdArray
from minidl.backends.ndarray.conv import NdArrayConvOps
from minidl.backends.ndarray.float_ops import NdArrayFloatOps
from minidl.dispatch import ROUTE_LISTENERS, Device, Dispatch, DispatchTensor, write_forwarders

LEFT_TO_DEFAULTS = ("linear", "linear_x_backward", "linear_weight_backward", "linear_bias_backward",
                    "layer_norm", "batch_norm", "batch_norm_train", "embedding", "conv1d")


@pytest.mark.parametrize("op", LEFT_TO_DEFAULTS)
def test_ndarray_leaves_linear_layer_norm_and_friends_to_the_module_ops_defaults(op):
    assert not defines(NdArray, op)
    assert defining_class(NdArray, op) is ModuleOps


def test_ndarray_defines_conv2d_itself():
    assert defines(NdArray, "conv2d")
    assert defining_class(NdArray, "conv2d") is NdArrayConvOps


def test_dispatch_forwards_conv2d_and_layer_norm_but_not_linear():
    assert defines(Dispatch, "conv2d")
    assert defines(Dispatch, "layer_norm")
    assert not defines(Dispatch, "linear")
    assert defining_class(Dispatch, "linear") is ModuleOps


def test_a_backend_missing_a_required_op_raises_type_error_naming_it():
    with pytest.raises(TypeError, match=r"conv2d") as info:
        type("NoModules", (CpuHostOps, CpuIntOps, CpuBoolOps, NdArrayFloatOps, Backend), {"name": "ndarray"})
    assert "NoModules" in str(info.value)
    assert "max_pool2d" in str(info.value)
    assert "float_add" not in str(info.value)


def test_mixing_a_flex_and_an_ndarray_tensor_names_the_wrong_argument():
    a = DispatchTensor(np.ones(2, np.float32), Device.ndarray())
    b = DispatchTensor(np.ones(2, np.float32), Device.flex())
    with pytest.raises(ValueError, match=r"float_add: Input tensor rhs is on the wrong device"):
        Dispatch.float_add(a, b)
    with pytest.raises(ValueError, match=r"conv2d: Input tensor weight is on the wrong device"):
        Dispatch.conv2d(a, b, None, None)


@pytest.mark.parametrize("module", sorted(write_forwarders.FAMILIES))
def test_dispatch_forwarders_are_what_write_forwarders_writes(module):
    assert write_forwarders.target(module).read_text() == write_forwarders.render(module), (
        "dispatch/ops is stale: run `PYTHONPATH=. python minidl/dispatch/write_forwarders.py`"
    )


def test_dispatch_linear_on_ndarray_runs_matmul_reshape_and_add_there():
    seen = []
    ROUTE_LISTENERS.append(lambda op, backend, args: seen.append((op, backend)))
    try:
        device = Device.ndarray()
        x = DispatchTensor(np.ones((2, 3), np.float32), device)
        w = DispatchTensor(np.ones((3, 4), np.float32), device)
        b = DispatchTensor(np.ones(4, np.float32), device)
        out = Dispatch.linear(x, w, b)
    finally:
        ROUTE_LISTENERS.pop()
    assert [op for op, _ in seen] == ["float_matmul", "float_reshape", "float_add"]
    assert all(backend is NdArray for _, backend in seen)
    np.testing.assert_array_equal(out.backend_tensor, np.full((2, 4), 4.0, np.float32))


def test_dispatch_layer_norm_is_one_routed_op_that_runs_the_default_on_ndarray():
    seen = []
    ROUTE_LISTENERS.append(lambda op, backend, args: seen.append((op, backend)))
    try:
        x = DispatchTensor(np.arange(6, dtype=np.float32).reshape(2, 3), Device.ndarray())
        Dispatch.layer_norm(x, None, None, 1e-5)
    finally:
        ROUTE_LISTENERS.pop()
    assert seen == [("layer_norm", NdArray)]


def test_importing_ndarray_does_not_import_numba():
    import subprocess
    import sys

    code = "import sys, minidl.backends.ndarray, minidl.dispatch; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_device_kind_has_its_backend_import_in_route_and_the_cache_lives_there():
    from minidl.backend import device as device_module
    from minidl.dispatch import route

    assert set(route.PLAIN_BACKENDS) == set(device_module._KINDS)
    for kind in device_module._KINDS:
        plain = Device(kind)
        assert route.plain_backend(plain) is route.backend_for(plain) is route.ROUTED[id(plain)]
        ad = plain.autodiff()
        assert route.backend_for(ad) is route.ROUTED[id(ad)] is not route.ROUTED[id(plain)]
        assert route.backend_for(ad).inner_backend() is route.plain_backend(ad)
    assert not hasattr(Device.flex(), "__dict__")  # Device holds no backend of its own
