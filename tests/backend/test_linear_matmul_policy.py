"""The default linear follows burn's body at v0.22.0-pre.2: burn_std's MatmulTransformPolicy
(BetterTiling) picks MergeBatches or Keep (crates/burn-std/src/tensor/matmul.rs:104-149), and
each branch records its own steps on an autodiff device (crates/burn-backend/src/backend/ops/
modules/linear.rs). Decisions are read off burn's rule; values and gradients against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minidl.autodiff import graph
from minidl.backend.modules.matmul_policy import KEEP, MergeBatches, matmul_transform
from minidl.dispatch import Device, Dispatch


@pytest.mark.parametrize(("lhs", "rhs", "expected"), [
    # burn_std's own unit tests (matmul.rs:194-265)
    ((16, 1, 4096), (4096, 14336), MergeBatches(16)),
    ((8, 512, 4096), (4096, 14336), KEEP),  # 512 rows fill the 32-row tiles
    ((1, 1, 4096), (4096, 14336), KEEP),  # one batch: nothing to merge
    ((16, 4096), (4096, 14336), KEEP),  # a matrix has no batch dims
    ((8, 1, 64), (8, 64, 32), KEEP),  # the rhs differs per batch
    ((8, 1, 64), (1, 64, 32), MergeBatches(8)),
    ((4, 1000, 64), (64, 64), KEEP),  # 4000 x 64 is less square than 1000 x 64
    ((2, 8, 1, 4096), (4096, 14336), MergeBatches(16)),
    # the book's shapes: [2, 3, 4] @ [4, 2]: 6 x 2 is not squarer than 3 x 2
    ((2, 3, 4), (4, 2), KEEP),
    ((5, 4), (4, 3), KEEP),
    ((8, 3, 4), (4, 16), MergeBatches(24)),  # 24 x 16 is squarer than 3 x 16
    ((2, 3, 4), (4, 8), MergeBatches(6)),  # 6 x 8 is squarer than 3 x 8
    ((2, 64, 4), (4, 8), KEEP),  # 64 rows: a multiple of 32
])
def test_policy_decision(lhs, rhs, expected):
    assert matmul_transform(lhs, rhs) == expected


STEPS = {  # (x's shape, bias?) -> the steps recorded, in order
    ((5, 4), True): ["Matmul", "Reshape", "Add"],  # rank 2: Keep, only the bias is reshaped
    ((5, 4), False): ["Matmul"],
    ((2, 3, 4), True): ["Reshape", "Matmul", "Reshape", "Add"],  # rank 3, Keep
    ((2, 3, 4), False): ["Reshape", "Matmul"],
    ((8, 3, 4), True): ["Reshape", "Matmul", "Reshape", "Add", "Reshape"],  # MergeBatches
    ((8, 3, 4), False): ["Reshape", "Matmul", "Reshape"],
}


@pytest.mark.parametrize(("x_shape", "bias"), list(STEPS))
def test_steps_values_and_grads_on_flex_autodiff(x_shape, bias):
    dev = Device.flex().autodiff()
    d_in, d_out = x_shape[-1], 16 if x_shape[0] == 8 else (2 if len(x_shape) == 3 else 3)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (x_shape, (d_in, d_out), (d_out,))]
    x, w, b = (Dispatch.float_require_grad(Dispatch.float_from_data(a, dev)) for a in arrays)
    out = Dispatch.linear(x, w, b if bias else None)

    steps = [r.op for r in sorted(graph(out).records, key=lambda r: r.id) if r.op != "leaf"]
    assert steps == STEPS[x_shape, bias]

    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in arrays)
    want = F.linear(tx, tw.T, tb if bias else None)
    got = np.asarray(Dispatch.float_into_data(out).array)
    np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-5, atol=1e-5)

    want.sum().backward()
    grads = Dispatch.backward(Dispatch.float_sum(out))
    for mine, theirs in ((x, tx), (w, tw)) + (((b, tb),) if bias else ()):
        np.testing.assert_allclose(np.asarray(Dispatch.float_into_data(Dispatch.grad(mine, grads)).array),
                                   theirs.grad.numpy(), rtol=1e-5, atol=1e-5)
