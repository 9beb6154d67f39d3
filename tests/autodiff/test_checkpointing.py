"""Balanced gradient checkpointing: memory-bound steps keep nothing computed and recompute in
backward; compute-bound steps keep their inputs; gradients are bit-identical."""

from __future__ import annotations

import numpy as np
import pytest
from ad_helpers import INNER, ad, leaf, tolerance

from minidl.autodiff import Autodiff, Recompute, graph, graph_memory
from minidl.dispatch import Device, backend_for


def elementwise_chain(AD, x, length: int):
    """``length`` element-wise steps mixing unary, scalar and binary ops (x feeds several)."""
    y = x
    for i in range(length):
        kind = i % 5
        if kind == 0:
            y = AD.float_sin(y)
        elif kind == 1:
            y = AD.float_mul(y, x)
        elif kind == 2:
            y = AD.float_exp(AD.float_mul_scalar(y, 0.1))
        elif kind == 3:
            y = AD.float_tanh(y)
        else:
            y = AD.float_add_scalar(AD.float_sqrt(AD.float_add_scalar(AD.float_abs(y), 1.0)), -0.5)
    return y


def grad_of(AD, build, array):
    x = leaf(AD, array)
    out = build(AD, x)
    memory = graph_memory(out)
    grads = AD.backward(AD.float_sum(out))
    return AD.grad(x, grads), memory, out


@pytest.mark.parametrize("inner", INNER)
def test_long_elementwise_chain_keeps_much_less_with_checkpointing(inner):
    array = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    build = lambda AD, x: elementwise_chain(AD, x, 40)  # noqa: E731
    plain_grad, plain_bytes, _ = grad_of(ad(inner), build, array)
    ckpt_grad, ckpt_bytes, _ = grad_of(ad(inner, "balanced"), build, array)
    assert plain_bytes >= 30 * array.nbytes  # every step keeps an intermediate
    assert ckpt_bytes == array.nbytes  # only the leaf x: everything else is recomputed
    np.testing.assert_array_equal(ckpt_grad, plain_grad)


@pytest.mark.parametrize("inner", INNER)
def test_compute_bound_steps_keep_their_inputs_under_checkpointing(inner):
    rng = np.random.default_rng(1)
    array, w = rng.standard_normal((8, 16)), rng.standard_normal((16, 16))

    def build(AD, x):
        h = AD.float_tanh(AD.float_mul_scalar(x, 0.5))
        h = AD.float_matmul(h, AD.from_inner(w))  # compute-bound: keeps its lhs
        return AD.float_exp(AD.float_sin(h))

    plain_grad, plain_bytes, _ = grad_of(ad(inner), build, array)
    AD = ad(inner, "balanced")
    ckpt_grad, ckpt_bytes, out = grad_of(AD, build, array)
    np.testing.assert_array_equal(ckpt_grad, plain_grad)
    assert ckpt_bytes < plain_bytes

    x = leaf(AD, array)
    steps = {r.op: r for r in graph(build(AD, x)).steps}
    assert "recompute" not in steps["Matmul"].saved["rhs"]  # matmul keeps real arrays
    assert steps["Tanh"].saved["tensor"].startswith("recompute")  # element-wise: recompute marker
    assert not steps["Sin"].saved["tensor"].startswith("recompute")  # matmul's output is kept


@pytest.mark.parametrize("inner", INNER)
def test_checkpointed_steps_save_recompute_markers_not_arrays(inner):
    AD = ad(inner, "balanced")
    x = leaf(AD, np.ones(4))
    y = AD.float_exp(AD.float_sin(x))
    exp_step = y.node.step
    assert exp_step.recomputable and isinstance(exp_step.saved["tensor"], Recompute)
    assert exp_step.saved["tensor"].node is y.node.parents[0]
    assert "out" not in exp_step.saved  # Exp's output is recomputed from its input


@pytest.mark.parametrize("inner", INNER)
@pytest.mark.parametrize("checkpointing", [None, "balanced"])
def test_very_long_chains_do_not_hit_the_recursion_limit(inner, checkpointing):
    AD = ad(inner, checkpointing)
    x = leaf(AD, np.ones(3))
    y = x
    for _ in range(3000):
        y = AD.float_mul_scalar(AD.float_sin(y), 1.0)
    grads = AD.backward(AD.float_sum(y))
    expected = np.ones(3)
    value = np.ones(3)
    for _ in range(3000):
        expected = expected * np.cos(value)
        value = np.sin(value)
    np.testing.assert_allclose(AD.grad(x, grads), expected, **tolerance(inner, 1e-9))


@pytest.mark.parametrize("inner", INNER)
def test_gradient_checkpointing_device_routes_to_the_balanced_class(inner):
    dev = getattr(Device, inner)().autodiff().gradient_checkpointing()
    B = backend_for(getattr(Device, inner)())  # the plain device's backend (Fusion[Flex] for fusion)
    assert backend_for(dev) is Autodiff[B, "balanced"]
    assert backend_for(dev).checkpointing == "balanced"
    assert backend_for(getattr(Device, inner)().autodiff()) is Autodiff[B]


@pytest.mark.parametrize("inner", INNER)
def test_retained_checkpointed_graph_runs_backward_twice(inner):
    AD = ad(inner, "balanced")
    x = leaf(AD, np.linspace(-1, 1, 5))
    loss = AD.float_sum(elementwise_chain(AD, x, 12))
    first = AD.grad(x, AD.backward(loss, retain_graph=True))
    second = AD.grad(x, AD.backward(loss))
    np.testing.assert_array_equal(first, second)


def test_step_kinds_are_marked_as_burn_marks_them():
    """burn-autodiff (ops/tensor.rs at v0.22.0-pre.2) marks every reduction, gather/scatter,
    mask_where/mask_fill, cast and to_device ``.compute_bound()``; element-wise, layout,
    slice and select ops ``.memory_bound()``."""
    from minidl.autodiff.ops import arithmetic, layout, math, reduce, tensor

    compute = [reduce.Sum, reduce.SumDim, reduce.Mean, reduce.MeanDim, reduce.ProdDim,
               reduce.MaxDim, reduce.MinDim, layout.Gather, layout.Scatter,
               layout.MaskWhere, layout.MaskFill, tensor.Cast, tensor.ToDevice,
               arithmetic.Matmul]
    memory = [arithmetic.Add, arithmetic.Mul, math.Exp, layout.Reshape, layout.Slice,
              layout.Select, layout.SelectAssign, layout.Expand]
    assert [c.__name__ for c in compute if c.memory_bound] == []
    assert [c.__name__ for c in memory if not c.memory_bound] == []


@pytest.mark.parametrize("inner", INNER)
def test_a_reduction_caches_its_output_under_checkpointing(inner):
    """A sum along a dim is compute-bound: the exp after it keeps the sum's output as an
    array instead of recomputing it, while the sin before it is still recomputed."""
    array = np.random.default_rng(2).standard_normal((8, 16)).astype(np.float32)

    def build(AD, x):
        return AD.float_exp(AD.float_sum_dim(AD.float_sin(x), 1))

    AD = ad(inner, "balanced")
    x = leaf(AD, array)
    out = build(AD, x)
    saved = {r.op: r.saved for r in graph(out).steps}
    assert saved["SumDim"] == {}  # keeps nothing: its backward needs only the shape
    assert not saved["Exp"]["tensor"].startswith("recompute")  # the sums, kept
    assert graph_memory(out) == array.nbytes + 8 * 4  # the leaf and the [8, 1] sums
    plain_grad, _, _ = grad_of(ad(inner), build, array)
    ckpt_grad, _, _ = grad_of(AD, build, array)
    np.testing.assert_array_equal(ckpt_grad, plain_grad)
