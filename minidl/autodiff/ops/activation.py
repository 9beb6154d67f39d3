"""Autodiff's activations with a dedicated backward: relu, gelu, sigmoid (burn-autodiff
``ops/activation.rs``).

Their backward calls the inner backend's ``relu_backward`` / ``gelu_backward`` /
``sigmoid_backward`` (ActivationOps helpers a backend may fuse). ``softmax``,
``log_softmax`` and ``leaky_relu`` are deliberately not overridden, as in burn: on an
autodiff device they run the ActivationOps defaults and record the ops those are made of.
"""

from __future__ import annotations

from minidl.autodiff.ops.base import AutodiffOpsBase, record
from minidl.autodiff.step import Step


class Relu(Step):
    """``max(x, 0)``: the gradient passes where the output is positive. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.relu(tensor)

    def backward(self, B, grad, state):
        return (B.relu_backward(state["out"], grad),)


class Gelu(Step):
    """Exact GELU ``x Φ(x)``: ``grad * (Φ(x) + x φ(x))``. Keeps its input."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.gelu(tensor)

    def backward(self, B, grad, state):
        return (B.gelu_backward(state["tensor"], grad),)


class Sigmoid(Step):
    """``1 / (1 + e^-x)``: ``grad * out * (1 - out)``. Keeps its output."""

    saves = ("out",)

    def forward(self, B, tensor):
        return B.sigmoid(tensor)

    def backward(self, B, grad, state):
        return (B.sigmoid_backward(state["out"], grad),)


class AutodiffActivationOps(AutodiffOpsBase):
    """Activations of ``Autodiff[B]`` that record one step each."""

    # ----- activations with a dedicated backward ----------------------------------------
    @classmethod
    def relu(cls, tensor):
        return record(cls, Relu(), tensor)

    @classmethod
    def gelu(cls, tensor):
        return record(cls, Gelu(), tensor)

    @classmethod
    def sigmoid(cls, tensor):
        return record(cls, Sigmoid(), tensor)
