"""``name in state``: a step's backward may ask what was kept, as burn's asks
``rhs.is_some()`` of the ``Option<NodeId>`` fields of its ``ops.state``."""

from __future__ import annotations

import numpy as np
from ad_helpers import ad, leaf, value

from minidl.autodiff.ops.base import record
from minidl.autodiff.step import Step


class _GuardedMatmul(Step):
    """A matmul whose backward tests what it kept with ``in`` (a reader's Matmul)."""

    memory_bound = False

    def forward(self, B, lhs, rhs):
        return B.float_matmul(lhs, rhs)

    def keeps(self, tracked):
        return (("lhs",) if tracked[1] else ()) + (("rhs",) if tracked[0] else ())

    def backward(self, B, grad, state):
        d_lhs = d_rhs = None
        if "rhs" in state:
            d_lhs = B.float_matmul(grad, B.float_transpose(state["rhs"]))
        if "lhs" in state:
            d_rhs = B.float_matmul(B.float_transpose(state["lhs"]), grad)
        return d_lhs, d_rhs


def _run(lhs_tracked: bool):
    AD = ad("ndarray")
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    w = np.arange(4, dtype=np.float32).reshape(2, 2) - 1
    x, y = leaf(AD, a, grad=lhs_tracked), leaf(AD, w)
    seen = {}

    class Spy(_GuardedMatmul):
        def backward(self, B, grad, state):
            seen.update({name: name in state for name in ("lhs", "rhs", "out", 0)})
            return super().backward(B, grad, state)

    grads = AD.backward(AD.float_sum(record(AD, Spy(), x, y)))
    return AD, x, y, a, grads, seen


def test_in_state_names_exactly_what_the_step_kept():
    *_, seen = _run(lhs_tracked=False)  # only the weight wants a gradient: lhs kept
    assert seen == {"lhs": True, "rhs": False, "out": False, 0: False}
    *_, seen = _run(lhs_tracked=True)
    assert seen["lhs"] and seen["rhs"] and not seen["out"]


def test_a_backward_guarded_with_in_gives_the_gradients():
    AD, x, y, a, grads, _ = _run(lhs_tracked=True)
    ones = np.ones((3, 2), np.float32)
    w = np.arange(4, dtype=np.float32).reshape(2, 2) - 1
    np.testing.assert_allclose(value(AD, AD.grad(y, grads)), a.T @ ones)
    np.testing.assert_allclose(value(AD, AD.grad(x, grads)), ones @ w.T)
