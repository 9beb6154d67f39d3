"""What Autodiff records, and the burn facts the book teaches: Dispatch's linear splits into
matmul / reshape / add, Autodiff's own linear is one step, layer_norm decomposes, a frozen
weight makes the linear step keep nothing of x, graphs are consumed by backward."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ad_helpers import INNER, ad, inner_array, leaf, needs_float64, spy_linear, tolerance, value

from minidl.autodiff import (
    Autodiff,
    AutodiffTensor,
    Requirement,
    autodiff_backend,
    graph,
    graph_memory,
)
from minidl.autodiff.ops.base import record
from minidl.autodiff.step import Step
from minidl.backend import PRIMITIVE_TYPES, ModuleOps, defines, defining_class
from minidl.dispatch import Device, Dispatch, DispatchTensor, backend_for


def device(inner: str) -> Device:
    return getattr(Device, inner)().autodiff()


def dispatch_leaf(array, dev, grad=True) -> DispatchTensor:
    tensor = Dispatch.float_from_data(np.asarray(array, dtype=np.float32), dev)
    return Dispatch.float_require_grad(tensor) if grad else tensor


# ----- the class the factory makes -----------------------------------------------------------
@pytest.mark.parametrize("inner", INNER)
def test_autodiff_class_is_cached_named_and_subclasses_the_protocol(inner):
    from ad_helpers import inner_backend

    B = inner_backend(inner)
    AD = Autodiff[B]
    assert AD is autodiff_backend(B, None) is Autodiff[B]
    assert Autodiff[B, "balanced"] is autodiff_backend(B, "balanced") is not AD
    assert AD.__name__ == AD.__qualname__ == f"Autodiff[{B.__name__}]"
    assert AD.name == f"autodiff<{B.name}>"
    assert AD.ad_enabled() and not B.ad_enabled()
    assert not issubclass(AD, B)
    assert re.search(r"Autodiff.*\.linear$", f"{AD.__qualname__}.linear")
    assert AutodiffTensor in PRIMITIVE_TYPES


def test_autodiff_overrides_as_burn_does():
    AD = ad("ndarray")
    for op in ("linear", "conv2d", "conv1d", "conv_transpose2d", "max_pool2d", "avg_pool2d", "interpolate",
               "embedding", "relu", "gelu", "sigmoid", "float_matmul", "float_add", "float_mean_dim"):
        assert defines(AD, op), op
    for op in ("layer_norm", "batch_norm", "batch_norm_train", "attention", "softmax", "log_softmax"):
        assert not defines(AD, op), op
        assert defining_class(AD, op).__name__ in ("ModuleOps", "ActivationOps")
    assert defining_class(AD, "layer_norm") is ModuleOps


def test_factory_refuses_unknown_strategy_and_second_order():
    AD = ad("ndarray")
    with pytest.raises(ValueError, match="unknown checkpointing strategy"):
        autodiff_backend(AD.inner_backend(), "eager")
    with pytest.raises(RuntimeError, match="Only first-order autodiff is supported"):
        autodiff_backend(AD)


# ----- linear: Dispatch's default vs Autodiff's dedicated step -------------------------------
@pytest.mark.parametrize("inner", INNER)
def test_dispatch_linear_records_matmul_reshape_add_and_never_calls_autodiff_linear(inner, monkeypatch):
    dev = device(inner)
    AD = backend_for(dev)
    calls = spy_linear(monkeypatch, AD)
    rng = np.random.default_rng(0)
    x, w, b = (dispatch_leaf(rng.standard_normal(s), dev) for s in ((5, 4), (4, 3), (3,)))

    via_dispatch = Dispatch.linear(x, w, b)
    assert graph(via_dispatch).ops == ["Matmul", "Reshape", "Add"]
    assert calls == []

    direct = AD.linear(x.backend_tensor, w.backend_tensor, b.backend_tensor)
    assert graph(direct).ops == ["LinearWithBias"]
    assert calls == [AD]

    np.testing.assert_allclose(value(AD, direct), value(AD, via_dispatch.backend_tensor), rtol=1e-6)
    weights = AD.from_inner(inner_array(AD, rng.standard_normal((5, 3)).astype(np.float32)))
    grads_dispatch = AD.backward(AD.float_sum(AD.float_mul(via_dispatch.backend_tensor, weights)))
    grads_direct = AD.backward(AD.float_sum(AD.float_mul(direct, weights)))
    for tensor in (x, w, b):
        np.testing.assert_allclose(AD.grad(tensor.backend_tensor, grads_direct),
                                   AD.grad(tensor.backend_tensor, grads_dispatch), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("inner", INNER)
def test_linear_step_keeps_nothing_of_x_when_the_weight_is_frozen(inner):
    AD = ad(inner)
    rng = np.random.default_rng(1)
    x = leaf(AD, rng.standard_normal((64, 32)).astype(np.float32))
    frozen_w = leaf(AD, rng.standard_normal((32, 8)).astype(np.float32), grad=False)
    frozen_b = leaf(AD, rng.standard_normal(8).astype(np.float32), grad=False)
    out = AD.linear(x, frozen_w, frozen_b)
    record = graph(out).steps[0]
    assert record.op == "LinearWithBias"
    assert set(record.saved) == {"weight"}
    assert graph_memory(out) == frozen_w.inner.nbytes

    # the other way round: data that needs no gradient, a trainable weight → only x is kept
    data = leaf(AD, x.inner, grad=False)
    w = leaf(AD, frozen_w.inner)
    out = AD.linear(data, w)
    assert graph(out).ops == ["LinearNoBias"]
    assert set(graph(out).steps[0].saved) == {"x"}
    assert graph_memory(out) == data.inner.nbytes


# ----- layer_norm and batch_norm decompose ---------------------------------------------------
@pytest.mark.parametrize("inner", INNER)
def test_layer_norm_on_autodiff_device_records_the_decomposed_steps_and_matches_torch(inner):
    dev = device(inner)
    AD = backend_for(dev)
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((3, 4, 6)), rng.standard_normal(6), rng.standard_normal(6)]
    x, gamma, beta = (dispatch_leaf(a, dev) for a in arrays)
    out = Dispatch.layer_norm(x, gamma, beta, 1e-5)
    ops = graph(out).ops
    assert ops[:7] == ["MeanDim", "Sub", "Mul", "MeanDim", "AddScalar", "Sqrt", "Div"]
    assert not any("Norm" in op for op in ops)

    weights = rng.standard_normal((3, 4, 6)).astype(np.float32)
    grads = AD.backward(AD.float_sum(AD.float_mul(out.backend_tensor, AD.from_inner(inner_array(AD, weights)))))
    theirs = [torch.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    expected = F.layer_norm(theirs[0], (6,), theirs[1], theirs[2], 1e-5)
    (expected * torch.from_numpy(weights)).sum().backward()
    np.testing.assert_allclose(value(AD, out.backend_tensor), expected.detach().numpy(), rtol=1e-5, atol=1e-5)
    for ours, torch_in in zip((x, gamma, beta), theirs):
        np.testing.assert_allclose(AD.grad(ours.backend_tensor, grads), torch_in.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("inner", INNER)
def test_batch_norm_train_decomposes_and_matches_torch(inner):
    dev = device(inner)
    AD = backend_for(dev)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((4, 3, 2, 2)), rng.standard_normal(3), rng.standard_normal(3)]
    x, gamma, beta = (dispatch_leaf(a, dev) for a in arrays)
    out, mean, var = Dispatch.batch_norm_train(x, gamma, beta, 1e-5)
    assert "MeanDim" in graph(out).ops and "Sqrt" in graph(out).ops

    weights = rng.standard_normal(out.shape).astype(np.float32)
    grads = AD.backward(AD.float_sum(AD.float_mul(out.backend_tensor, AD.from_inner(inner_array(AD, weights)))))
    theirs = [torch.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    expected = F.batch_norm(theirs[0], None, None, theirs[1], theirs[2], training=True, eps=1e-5)
    (expected * torch.from_numpy(weights)).sum().backward()
    np.testing.assert_allclose(value(AD, out.backend_tensor), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    for ours, torch_in in zip((x, gamma, beta), theirs):
        np.testing.assert_allclose(AD.grad(ours.backend_tensor, grads), torch_in.grad.numpy(), rtol=1e-4, atol=1e-4)


# ----- Gradients: accumulation, broadcasting, intermediates ----------------------------------
@pytest.mark.parametrize("inner", INNER)
def test_gradients_accumulate_where_a_tensor_feeds_several_ops(inner):
    AD = ad(inner)
    array = np.random.default_rng(4).standard_normal((3, 4))
    x = leaf(AD, array)
    y = AD.float_add(AD.float_mul(x, x), AD.float_exp(x))  # x used three times
    y = AD.float_add(y, AD.float_mul_scalar(x, 3.0))
    grads = AD.backward(AD.float_sum(y))
    np.testing.assert_allclose(AD.grad(x, grads), 2 * array + np.exp(array) + 3.0, **tolerance(inner, 1e-12))


@pytest.mark.parametrize("inner", INNER)
def test_broadcast_gradients_are_summed_back_to_each_shape(inner):
    AD = ad(inner)
    a = leaf(AD, np.ones((3, 1)))
    b = leaf(AD, np.ones((2, 1, 4)))
    grads = AD.backward(AD.float_sum(AD.float_add(a, b)))  # out is [2, 3, 4]
    np.testing.assert_array_equal(AD.grad(a, grads), np.full((3, 1), 8.0))
    np.testing.assert_array_equal(AD.grad(b, grads), np.full((2, 1, 4), 3.0))


@pytest.mark.parametrize("inner", INNER)
def test_intermediate_gradients_are_dropped_and_leaf_gradients_can_be_removed(inner):
    AD = ad(inner)
    x = leaf(AD, np.arange(4.0))
    hidden = AD.float_mul_scalar(x, 2.0)
    grads = AD.backward(AD.float_sum(AD.float_exp(hidden)))
    assert hidden.node.requirement is Requirement.GRAD_IN_BACKWARD
    assert AD.grad(hidden, grads) is None
    assert len(grads) == 1 and x in grads
    np.testing.assert_allclose(AD.grad_remove(x, grads), 2 * np.exp(2 * np.arange(4.0)), **tolerance(inner, 1e-7))
    assert AD.grad(x, grads) is None and len(grads) == 0


# ----- consumed graphs, plain devices ----------------------------------------------------------
@pytest.mark.parametrize("inner", INNER)
def test_backward_twice_through_a_consumed_graph_says_what_happened(inner):
    AD = ad(inner)
    x = leaf(AD, np.arange(3.0))
    loss = AD.float_sum(AD.float_exp(x))
    AD.backward(loss)
    with pytest.raises(RuntimeError, match=r"consumed by a previous backward\(\).*retain_graph=True"):
        AD.backward(loss)
    # a new forward from the same leaf records a new graph
    again = AD.backward(AD.float_sum(AD.float_exp(x)))
    np.testing.assert_allclose(AD.grad(x, again), np.exp(np.arange(3.0)))


@pytest.mark.parametrize("inner", INNER)
def test_retain_graph_allows_a_second_backward(inner):
    AD = ad(inner)
    x = leaf(AD, np.arange(3.0))
    loss = AD.float_sum(AD.float_sin(x))
    first = AD.grad(x, AD.backward(loss, retain_graph=True))
    second = AD.grad(x, AD.backward(loss))
    np.testing.assert_array_equal(first, second)
    assert graph(loss).steps[0].consumed


def test_backward_on_a_plain_tensor_requires_an_autodiff_tensor():
    plain = Dispatch.float_from_data(np.ones(3, dtype=np.float32), Device.ndarray())
    with pytest.raises(RuntimeError, match="Requires autodiff tensor"):
        Dispatch.backward(plain)
    with pytest.raises(TypeError, match="autodiff device"):
        graph(plain)


# ----- require_grad, detach, no_grad ------------------------------------------------------------
@pytest.mark.parametrize("inner", INNER)
def test_require_grad_detach_and_set_require_grad_follow_burn(inner):
    AD = ad(inner)
    x = leaf(AD, np.ones(2))
    assert AD.float_is_require_grad(x) and x.node.requirement is Requirement.GRAD
    y = AD.float_exp(x)
    assert not AD.float_is_require_grad(y)  # burn: only Grad leaves "require grad"
    with pytest.raises(RuntimeError, match="non leaf"):
        AD.float_require_grad(y)
    assert AD.float_detach(y).node.requirement is Requirement.NONE
    detached_leaf = AD.float_detach(x)  # burn keeps a leaf's require_grad across detach
    assert detached_leaf.node.requirement is Requirement.GRAD and detached_leaf.node.id != x.node.id
    assert AD.float_set_require_grad(x, False).node.requirement is Requirement.NONE
    assert AD.float_require_grad(AD.from_inner(inner_array(AD, np.ones(2)))).node.requirement is Requirement.GRAD


@pytest.mark.parametrize("inner", INNER)
def test_no_grad_records_nothing_and_restores_itself(inner):
    from minidl.autodiff import is_grad_enabled, no_grad

    AD = ad(inner)
    x = leaf(AD, np.ones(2))
    with no_grad():
        y = AD.float_mul(AD.float_exp(x), x)
        assert not is_grad_enabled()
    assert y.node.requirement is Requirement.NONE and graph(y).ops == []
    assert len(AD.backward(AD.float_sum(y))) == 0
    with pytest.raises(KeyError), no_grad():
        raise KeyError("boom")
    assert is_grad_enabled()
    assert graph(AD.float_exp(x)).ops == ["Exp"]


# ----- plain inputs, masks and ints on an autodiff device --------------------------------------
@pytest.mark.parametrize("inner", INNER)
def test_plain_float_inputs_join_as_constants_and_masks_stay_inner(inner):
    dev = device(inner)
    x = dispatch_leaf([-1.0, 2.0, -3.0], dev)
    plain = Dispatch.float_from_data(np.array([10.0, 20.0, 30.0], dtype=np.float32), dev.inner())
    y = Dispatch.float_mul(x, plain)  # the plain tensor is lifted as a constant
    assert isinstance(y.backend_tensor, AutodiffTensor) and y.device.is_autodiff()
    mask = Dispatch.float_lower_elem(y, 0.0)
    # an inner primitive (a NumPy array, or Fusion's lazy handle), never an AutodiffTensor
    assert isinstance(mask.backend_tensor, tuple(PRIMITIVE_TYPES)) and not isinstance(mask.backend_tensor, AutodiffTensor)
    assert np.asarray(mask.backend_tensor).dtype == np.bool_
    z = Dispatch.float_mask_fill(y, mask, 0.0)
    ints = Dispatch.bool_into_int(mask, dev.settings().int_dtype)
    assert not isinstance(ints.backend_tensor, AutodiffTensor) and np.asarray(ints.backend_tensor).tolist() == [1, 0, 1]
    as_float = Dispatch.bool_into_float(mask)
    assert isinstance(as_float.backend_tensor, AutodiffTensor) and not as_float.backend_tensor.node.tracked
    grads = Dispatch.backward(Dispatch.float_sum(z))
    np.testing.assert_allclose(Dispatch.grad(x, grads).backend_tensor, [0.0, 20.0, 0.0])
    assert graph(z).ops == ["Mul", "MaskFill"]


@pytest.mark.parametrize("inner", INNER)
def test_backward_helpers_refuse_second_order(inner):
    from minidl.backend import ConvOptions

    AD = ad(inner)
    x, w = leaf(AD, np.ones((1, 1, 3, 3))), leaf(AD, np.ones((1, 1, 2, 2)))
    grad = AD.from_inner(inner_array(AD, np.ones((1, 1, 2, 2))))
    with pytest.raises(RuntimeError, match="Only first-order autodiff is supported"):
        AD.conv2d_x_backward(x, w, grad, ConvOptions())
    untracked = AD.conv2d_x_backward(AD.float_detach(AD.float_exp(x)), AD.from_inner(inner_array(AD, np.ones((1, 1, 2, 2)))),
                                     grad, ConvOptions())
    assert untracked.shape == (1, 1, 3, 3)


# ----- inspection -----------------------------------------------------------------------------
@pytest.mark.parametrize("inner", INNER)
def test_graph_lists_steps_parents_requirements_and_saved_shapes(inner):
    AD = ad(inner)
    x = leaf(AD, np.ones((2, 3), dtype=np.float32))
    w = leaf(AD, np.ones((3, 4), dtype=np.float32))
    y = AD.float_exp(AD.float_matmul(x, w))
    g = graph(y)
    assert g.ops == ["Matmul", "Exp"]
    matmul = g.steps[0]
    assert matmul.parents == (x.node.id, w.node.id)
    assert matmul.requirement is Requirement.GRAD_IN_BACKWARD
    assert set(matmul.saved) == {"lhs", "rhs"} and "float32[3, 4]" in matmul.saved["rhs"]
    assert g[x.node.id].op == "leaf" and g[x.node.id].requirement is Requirement.GRAD
    text = str(g)
    for needle in ("Matmul", "Exp", f"#{x.node.id}", "GradInBackward", "float32[2, 4]"):
        assert needle in text
    assert "<table" in g._repr_html_() and "Matmul" in g._repr_html_()
    assert graph_memory(y) == x.inner.nbytes + w.inner.nbytes + 2 * 4 * 4


@pytest.mark.parametrize("inner", INNER)
def test_graph_lists_an_array_a_step_keeps_twice_once(inner):
    """diff * diff keeps one array as lhs and rhs: the printed rows add up to the total."""
    AD = ad(inner)
    x = leaf(AD, np.ones((3, 2), dtype=np.float32))
    y = AD.float_mean(AD.float_mul(x, x))
    g = graph(y)
    mul = g.steps[0]
    assert set(mul.saved) == {"lhs", "rhs"} and mul.saved_bytes == 24 == g.memory
    row = next(line for line in str(g).splitlines() if " Mul " in line)
    assert row.endswith("lhs = rhs: float32[3, 2] (24 B, one array)")
    other = graph(AD.float_mean(AD.float_mul(x, AD.float_exp(x))))
    assert "lhs: float32[3, 2] (24 B)" in str(other) and "one array" not in str(other)


@pytest.mark.parametrize("inner", INNER)
def test_mixed_dtype_op_gives_each_input_a_gradient_of_its_own_dtype(inner):
    needs_float64(inner, "the second input")
    AD = ad(inner)
    a = leaf(AD, np.full(3, 3.0, dtype=np.float32))
    b = leaf(AD, np.full(3, 2.0, dtype=np.float64))
    out = AD.float_mul(a, b)
    assert out.dtype == np.float32  # the lhs's dtype, as the protocol says
    grads = AD.backward(AD.float_sum(out))
    assert AD.grad(a, grads).dtype == np.float32 and AD.grad(b, grads).dtype == np.float64
    np.testing.assert_array_equal(AD.grad(b, grads), [3.0, 3.0, 3.0])


# ----- a step's gradients must match its inputs ----------------------------------------------
class _TooFew(Step):
    def forward(self, B, lhs, rhs):
        return B.float_add(lhs, rhs)

    def backward(self, B, grad, state):
        return (grad,)  # one gradient for two inputs


class _NotATuple(_TooFew):
    def backward(self, B, grad, state):
        return grad


@pytest.mark.parametrize(("step", "error", "words"), [
    (_TooFew, ValueError, r"_TooFew\.backward returned 1 gradient\(s\) for 2 input\(s\)"),
    (_NotATuple, TypeError, r"_NotATuple\.backward returned ndarray"),
])
def test_backward_refuses_a_step_whose_gradients_do_not_match_its_inputs(step, error, words):
    AD = ad("ndarray")
    x, y = leaf(AD, np.ones(3, np.float32)), leaf(AD, np.ones(3, np.float32))
    out = record(AD, step(), x, y)
    with pytest.raises(error, match=words):
        AD.backward(AD.float_sum(out))
