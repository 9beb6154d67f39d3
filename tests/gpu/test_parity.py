"""Tensor-level functions forward and backward on ``Device.wgpu().autodiff()`` against
``Device.flex().autodiff()``, on random shapes: composite functions (conv_transpose2d, layer_norm,
softmax, batch_norm, interpolate). The parity harness against torch, op by op, is
``test_torch_parity.py``. float32 tolerances: rtol 1e-4, atol 1e-5 (gradients pass through several
reductions in other orders)."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.tensor import functional as F

from .support import needs_adapter

pytestmark = needs_adapter


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


CASES = {
    "conv2d stride 2 groups 2 dilation": lambda x, p: F.conv2d(x, p[0], p[1], stride=2, padding=1, dilation=(1, 2),
                                                              groups=2),
    "conv_transpose2d": lambda x, p: F.conv_transpose2d(x, p[2], None, stride=2, padding=1),
    "max_pool2d pad ceil": lambda x, p: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
    "avg_pool2d": lambda x, p: F.avg_pool2d(x, 2, 1, 1, count_include_pad=False),
    "adaptive pools": lambda x, p: F.adaptive_avg_pool2d(x, (3, 2)) + F.adaptive_max_pool2d(x, (3, 2)),
    "interpolate bilinear": lambda x, p: F.interpolate(x, (7, 9), "bilinear"),
    "layer_norm gelu": lambda x, p: F.gelu(F.layer_norm(x, p[3], p[4])),
    "softmax log_softmax": lambda x, p: F.softmax(x, 1) * F.log_softmax(x, 3),
    "sigmoid tanh powf": lambda x, p: F.sigmoid(x).tanh() + (x * x + 1.0).powf_scalar(1.5),
    "batch_norm_train": lambda x, p: F.batch_norm_train(x, p[5], p[6], 1e-5)[0],
    "reductions": lambda x, p: x.max_dim(2) * x.mean_dim(3).exp() + x.min_dim(1).abs().sqrt(),
    "views and cat": lambda x, p: Tensor.cat([x.permute((0, 2, 1, 3)).flip((1,)), x.swap_dims(1, 2)], 3)[:, 1:5:2],
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_forward_and_backward_match_flex(case, seed):
    rng = np.random.default_rng(seed)
    n, c, h, w = (int(v) for v in rng.integers(1, 4, 1).tolist() + [4] + rng.integers(5, 9, 2).tolist())
    arrays = [rand(rng, n, c, h, w), rand(rng, 4, 2, 3, 3), rand(rng, 4), rand(rng, 4, 3, 3, 3),
              rand(rng, w), rand(rng, w), rand(rng, c), rand(rng, c)]
    results = {}
    for device in (Device.flex().autodiff(), Device.wgpu().autodiff()):
        ts = [Tensor.from_numpy(a, device).require_grad() for a in arrays]
        x, params = ts[0], [ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7]]
        out = CASES[case](x, params)
        weights = Tensor.from_numpy(np.random.default_rng(9).standard_normal(out.shape).astype(np.float32), device)
        grads = (out * weights).sum().backward()
        results[device.kind] = [out.to_numpy()] + [
            t.grad(grads).to_numpy() if t.grad(grads) is not None else None for t in ts]
    for flex, gpu in zip(results["flex"], results["wgpu"], strict=True):
        assert (flex is None) == (gpu is None)
        if flex is not None:
            np.testing.assert_allclose(gpu, flex, rtol=1e-4, atol=1e-5)
