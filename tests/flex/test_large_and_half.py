"""Flex on inputs the conformance suite keeps small: tensors big enough to take the parallel
kernels (>= 64K elements, >= 10^6 multiply-adds), non-contiguous views of them, and float16
through the fused kernels — each checked against NdArray (the NumPy reference backend) or
torch. Plus the seeded stream: the same seed gives the same numbers in another process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minidl.backend import ConvOptions, Distribution, DType, InterpolateOptions, PoolOptions
from minidl.backends.flex import Flex
from minidl.backends.flex.kernels._common import PARALLEL_MIN_ELEMS
from minidl.backends.ndarray import NdArray
from minidl.dispatch import Device

ROOT = Path(__file__).resolve().parents[2]


def _r(seed, *shape, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


BIG = _r(0, 96, 1024)  # 98304 elements: above the parallel threshold
assert BIG.size >= PARALLEL_MIN_ELEMS


def _same(op, rtol=1e-5, atol=1e-6, **kwargs):
    out, ref = getattr(Flex, op)(**kwargs), getattr(NdArray, op)(**kwargs)
    outs, refs = (out, ref) if isinstance(out, tuple) else ((out,), (ref,))
    for a, b in zip(outs, refs):
        assert a.shape == b.shape and a.dtype == b.dtype, op
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=op)


@pytest.mark.parametrize("view", ["contiguous", "transposed", "strided"])
def test_big_element_wise_reduce_and_layout_ops_match_the_reference(view):
    x = {"contiguous": BIG, "transposed": BIG.T, "strided": _r(1, 96, 2048)[:, ::2]}[view]
    y = _r(2, *x.shape)
    for op in ("float_add", "float_mul", "float_div", "float_max_pair", "float_greater"):
        _same(op, lhs=x, rhs=y)
    _same("float_add", lhs=x, rhs=y[:1])  # a broadcast row
    for op in ("float_exp", "float_tanh", "float_abs", "float_erf"):
        _same(op, tensor=x)
    for dim in (0, 1):
        _same("float_sum_dim", tensor=x, dim=dim, atol=1e-3)
        _same("float_max_dim_with_indices", tensor=x, dim=dim)
        _same("softmax", tensor=x, dim=dim)
    _same("float_sum", tensor=x, rtol=1e-4, atol=1e-2)
    _same("float_mask_fill", tensor=x, mask=y > 0, value=-1.0)
    _same("float_cat", tensors=[x, y], dim=1)
    _same("float_cast", tensor=x, dtype=DType.F64)
    _same("float_reshape", tensor=x, shape=(x.size,))
    _same("layer_norm", x=x, gamma=_r(3, x.shape[1]), beta=None, epsilon=1e-5, atol=1e-5)
    idx = np.random.default_rng(4).integers(0, x.shape[1], x.shape)
    _same("float_gather", dim=1, tensor=x, indices=idx)
    _same("float_scatter", dim=1, tensor=x, indices=idx, value=y, atol=1e-4)


def test_big_batched_and_transposed_matmul_match_torch():
    a, b = _r(5, 3, 1, 160, 200), _r(6, 4, 200, 170)  # batch dims broadcast; 10^7 multiply-adds
    np.testing.assert_allclose(Flex.float_matmul(lhs=a, rhs=b), torch.matmul(torch.tensor(a), torch.tensor(b)),
                               rtol=1e-4, atol=1e-3)
    w = _r(7, 300, 200)  # a Linear backward: grad @ weight.T, the weight read transposed in place
    g = _r(8, 2, 128, 200)
    np.testing.assert_allclose(Flex.float_matmul(lhs=g, rhs=w.T), g @ w.T, rtol=1e-4, atol=1e-3)


def test_big_conv_pool_and_interpolate_match_the_reference():
    x, w = _r(9, 4, 8, 32, 32), _r(10, 16, 4, 3, 3)
    options = ConvOptions(stride=(2, 1), padding=(1, 2), padding_end=(0, 1), groups=2)
    _same("conv2d", x=x, weight=w, bias=_r(11, 16), options=options, rtol=1e-4, atol=1e-4)
    grad = Flex.conv2d(x=x, weight=w, bias=None, options=options)
    _same("conv2d_x_backward", x=x, weight=w, output_grad=grad, options=options, rtol=1e-4, atol=1e-3)
    _same("conv2d_weight_backward", x=x, weight=w, output_grad=grad, options=options, rtol=1e-4, atol=1e-2)
    pool = PoolOptions(kernel_size=3, stride=2, padding=1)
    _same("max_pool2d_with_indices", x=x, options=pool)
    _same("avg_pool2d", x=x, options=pool)
    for mode in ("nearest", "bilinear"):
        _same("interpolate", x=x, output_size=(45, 50), options=InterpolateOptions(mode), atol=1e-5)


@pytest.mark.parametrize("op, kwargs, torch_fn", [
    ("layer_norm", dict(gamma=None, beta=None, epsilon=1e-5), lambda t: F.layer_norm(t, (t.shape[-1],))),
    ("softmax", dict(dim=1), lambda t: F.softmax(t, 1)),
    ("log_softmax", dict(dim=0), lambda t: F.log_softmax(t, 0)),
    ("float_sum_dim", dict(dim=1), lambda t: t.sum(1, keepdim=True)),
])
def test_float16_goes_through_the_fused_kernels_in_float32(op, kwargs, torch_fn):
    x = _r(12, 6, 300, dtype=np.float16)
    arg = "x" if op == "layer_norm" else "tensor"
    out = getattr(Flex, op)(**{arg: x}, **kwargs)
    expected = torch_fn(torch.tensor(x).float()).half().numpy()  # computed in f32, rounded once
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.astype(np.float32), expected.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_gather_out_of_range_names_the_index():
    with pytest.raises(IndexError, match="out of range"):
        Flex.float_gather(dim=1, tensor=_r(13, 2, 3), indices=np.array([[0, 3], [1, 1]]))


_STREAM = """
from minidl.backend import Distribution, DType
from minidl.backends.flex import Flex
from minidl.dispatch import Device
Flex.seed(device=Device.flex(), seed=2024)
x = Flex.float_random(shape=(100_000,), distribution=Distribution.normal(0.0, 1.0), dtype=DType.F32,
                      device=Device.flex())
print(x[:3].tolist(), float(x.sum()))
"""


def test_a_seed_gives_the_same_stream_in_another_process():
    Flex.seed(device=Device.flex(), seed=2024)
    x = Flex.float_random(shape=(100_000,), distribution=Distribution.normal(0.0, 1.0), dtype=DType.F32,
                          device=Device.flex())
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1")  # another thread count too
    out = subprocess.run([sys.executable, "-c", _STREAM], env=env, capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{x[:3].tolist()} {float(x.sum())}"
