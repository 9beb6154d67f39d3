"""Gradients of every differentiable float op and activation on Autodiff[B]: against
torch.autograd in float32, and against central finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from ad_helpers import INNER, ad, leaf, needs_float64, value, weighted_loss
from hypothesis import given, settings
from hypothesis import strategies as st
from op_cases import CASE_IDS, CASES

SEEDS = st.integers(0, 2**32 - 1)


def shapes(min_rank: int, max_dim: int):
    return st.lists(st.integers(1, max_dim), min_size=max(min_rank, 1), max_size=3).map(tuple)


def run_ours(AD, case, inputs, extra, weights_rng):
    leaves = [leaf(AD, x) for x in inputs]
    out = case.ours(AD, leaves, extra)
    weights = weights_rng.standard_normal(out.shape)
    grads = AD.backward(weighted_loss(AD, out, weights))
    return value(AD, out), weights, [AD.grad(x, grads) for x in leaves]


@pytest.mark.parametrize("inner", INNER)
@pytest.mark.parametrize("checkpointing", [None, "balanced"], ids=["keep", "balanced"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=5, deadline=None)
@given(data=st.data(), seed=SEEDS)
def test_gradient_matches_torch(inner, checkpointing, case, data, seed):
    """Under balanced checkpointing the loss's Mul recomputes the op's output from its
    recorded forward, so every memory-bound step's forward is exercised a second time."""
    if case.name == "cast":
        needs_float64(inner, "the cast's other float dtype")
    AD = ad(inner, checkpointing)
    shape = data.draw(shapes(case.min_rank, 4), label="shape")
    rng = np.random.default_rng(seed)
    inputs, extra = case.make(rng, shape)
    inputs = [x.astype(np.float32) for x in inputs]
    out, weights, grads = run_ours(AD, case, inputs, extra, rng)

    theirs_in = [torch.tensor(x, requires_grad=True) for x in inputs]
    theirs = case.theirs(theirs_in, extra)
    (theirs * torch.from_numpy(weights).to(theirs.dtype)).sum().backward()

    assert out.shape == tuple(theirs.shape)
    np.testing.assert_allclose(out, theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    for ours_grad, torch_in in zip(grads, theirs_in):
        assert ours_grad is not None and ours_grad.dtype == np.float32
        np.testing.assert_allclose(ours_grad, torch_in.grad.numpy(), rtol=1e-5, atol=1e-5)


def finite_difference(AD, case, inputs, extra, weights, eps=1e-6):
    """Central differences of sum(op(inputs) * weights), one element at a time (float64)."""
    def loss(arrays):
        out = case.ours(AD, [AD.from_inner(a) for a in arrays], extra)
        return float(np.sum(value(AD, out) * weights))

    result = []
    for i, x in enumerate(inputs):
        grad = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            plus, minus = [a.copy() for a in inputs], [a.copy() for a in inputs]
            plus[i][index] += eps
            minus[i][index] -= eps
            grad[index] = (loss(plus) - loss(minus)) / (2 * eps)
        result.append(grad)
    return result


FD_CASES = [c for c in CASES if c.finite_differences]


@pytest.mark.parametrize("inner", INNER)
@pytest.mark.parametrize("case", FD_CASES, ids=[c.name for c in FD_CASES])
@settings(max_examples=4, deadline=None)
@given(data=st.data(), seed=SEEDS)
def test_gradient_matches_finite_differences(inner, case, data, seed):
    needs_float64(inner, "the finite differences")
    AD = ad(inner)
    shape = data.draw(shapes(case.min_rank, 3), label="shape")
    rng = np.random.default_rng(seed)
    inputs, extra = case.make(rng, shape)
    inputs = [x.astype(np.float64) for x in inputs]
    _, weights, grads = run_ours(AD, case, inputs, extra, rng)
    expected = finite_difference(AD, case, inputs, extra, weights)
    for ours_grad, numeric in zip(grads, expected):
        assert ours_grad.dtype == np.float64
        np.testing.assert_allclose(ours_grad, numeric, rtol=1e-5, atol=1e-6)
