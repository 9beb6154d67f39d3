"""A sample of ops called through ``Dispatch`` on the backend's device: the same results as the
primitive level, wrapped in ``DispatchTensor``s on the right device (tuples included), host
data and scalars passed through unwrapped."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from minidl.backend import ConvOptions, Distribution, DType, PoolOptions, TensorData
from minidl.dispatch import Dispatch, DispatchTensor

from .support import assert_close, randn, sum_atol, tt

#: device kinds whose primitives live on the GPU (eager and fused)
GPU_KINDS = ("wgpu", "fusion_wgpu")


def on(device, array):
    if device.kind in GPU_KINDS and isinstance(array, np.ndarray):  # the GPU's primitive: a device buffer
        from minidl.backends.wgpu import ops

        if array.dtype.kind == "i":
            array = array.astype(np.int32)  # the device's int (Device.settings()); it refuses int64
        array = ops._upload("on", array, {"f": "f", "b": "b"}.get(array.dtype.kind, "i"), device)
    return DispatchTensor(array, device)


def unwrap(result, device):
    assert isinstance(result, DispatchTensor), f"expected a DispatchTensor, found {type(result)}"
    assert result.device == device
    prim = result.backend_tensor
    if device.kind in GPU_KINDS:  # read back; the device's int32 compared as the CPU's int64
        array = np.asarray(prim)
        return array.astype(np.int64) if array.dtype.kind == "i" else array
    # Fusion's primitive is a lazy handle: reading its value is the sync point
    return prim.value if hasattr(prim, "pending") else prim


def test_float_ops_through_dispatch_match_torch(B, device):
    a, b = randn(0, (2, 3, 4)), randn(1, (4, 5))
    assert_close(unwrap(Dispatch.float_add(on(device, a), on(device, a[0])), device), tt(a) + tt(a[0]))
    assert_close(unwrap(Dispatch.float_matmul(on(device, a), on(device, b)), device), tt(a) @ tt(b),
                 atol=sum_atol(4, 4.0))
    assert_close(unwrap(Dispatch.float_sum_dim(on(device, a), 1), device), tt(a).sum(1, keepdim=True))
    assert_close(unwrap(Dispatch.float_exp(on(device, a)), device), tt(a).exp())
    assert_close(unwrap(Dispatch.float_greater_elem(on(device, a), 0.0), device), tt(a) > 0)
    assert_close(unwrap(Dispatch.float_argmax(on(device, a), 2), device), tt(a).argmax(2, keepdim=True))


def test_creation_ops_route_by_their_device_argument(B, device):
    wide = DType.F32 if device.kind in GPU_KINDS else DType.F64  # the GPU refuses float64
    zeros = unwrap(Dispatch.float_zeros((2, 2), wide, device), device)
    assert_close(zeros, np.zeros((2, 2), wide.numpy))
    ints = unwrap(Dispatch.int_arange(0, 5, 1, device.settings().int_dtype, device), device)
    assert_close(ints, torch.arange(5))
    device.seed(42)
    first = unwrap(Dispatch.float_random((3,), Distribution.default(), DType.F32, device), device)
    device.seed(42)
    again = unwrap(Dispatch.float_random((3,), Distribution.default(), DType.F32, device), device)
    np.testing.assert_array_equal(first, again)


def test_host_data_and_devices_are_not_wrapped(B, device):
    x = on(device, randn(0, (2, 2)))
    data = Dispatch.float_into_data(x)
    assert isinstance(data, TensorData)
    np.testing.assert_array_equal(data.array, np.asarray(x.backend_tensor))
    assert Dispatch.float_device(x) == device


def test_module_ops_through_dispatch_match_torch(B, device):
    x, w, bias = randn(0, (2, 4, 6, 6)), randn(1, (6, 2, 3, 3)), randn(2, (6,))
    options = ConvOptions(stride=2, padding=(1, 0), padding_end=(0, 2), groups=2)
    out = unwrap(Dispatch.conv2d(on(device, x), on(device, w), on(device, bias), options), device)
    expected = F.conv2d(F.pad(tt(x), (0, 2, 1, 0)), tt(w), tt(bias), stride=2, groups=2)
    assert_close(out, expected, atol=sum_atol(18, 4.0))
    # a tuple result: both parts wrapped on the device
    values, indices = Dispatch.max_pool2d_with_indices(on(device, x), PoolOptions(kernel_size=2))
    tv, ti = F.max_pool2d(tt(x), 2, return_indices=True)
    assert_close(unwrap(values, device), tv)
    assert_close(unwrap(indices, device), ti)


def test_linear_and_layer_norm_through_dispatch_match_torch(B, device):
    x, w, b = randn(0, (3, 5)), randn(1, (5, 4)), randn(2, (4,))
    out = unwrap(Dispatch.linear(on(device, x), on(device, w), on(device, b)), device)
    assert_close(out, F.linear(tt(x), tt(w).T, tt(b)), atol=sum_atol(5, 4.0))
    gamma, beta = randn(3, (5,)), randn(4, (5,))
    out = unwrap(Dispatch.layer_norm(on(device, x), on(device, gamma), on(device, beta), 1e-5), device)
    assert_close(out, F.layer_norm(tt(x), (5,), tt(gamma), tt(beta), 1e-5), atol=1e-5)


def test_int_and_bool_ops_through_dispatch(B, device):
    x = np.array([[-7, 3], [5, -2]], dtype=np.int64)
    y = np.array([[2, -2], [-3, 2]], dtype=np.int64)
    out = unwrap(Dispatch.int_div(on(device, x), on(device, y)), device)
    assert_close(out, torch.div(tt(x), tt(y), rounding_mode="trunc"))
    mask = unwrap(Dispatch.int_greater_elem(on(device, x), 0), device)
    assert_close(unwrap(Dispatch.bool_not(on(device, mask)), device), ~(tt(x) > 0))
    assert_close(unwrap(Dispatch.bool_into_float(on(device, mask)), device), (tt(x) > 0).float())
