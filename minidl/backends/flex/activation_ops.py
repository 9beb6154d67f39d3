"""``FlexActivationOps``: Flex's activations (burn-flex's ``ops/activation.rs``): ``relu``, ``gelu`` and ``sigmoid`` as one
element-wise kernel each, and ``softmax``/``log_softmax`` as one fused kernel (max, exp-sum
and normalisation per row, no intermediate tensors).

``relu_backward`` is one kernel pass too (the default compares, then fills: two passes, two
outputs). ``gelu_backward``, ``sigmoid_backward`` and ``leaky_relu`` stay the
``ActivationOps`` defaults, written with Flex's own float ops.
"""

from __future__ import annotations

from minidl.backends.flex.kernels import softmax as sm
from minidl.backends.flex.kernels.copy import contiguous
from minidl.backends.flex.kernels.unary import relu_backward, unary


class FlexActivationOps:
    """Activations of Flex on numba kernels."""

    @classmethod
    def relu(cls, tensor):
        return unary("relu", contiguous(tensor))

    @classmethod
    def relu_backward(cls, output, grad):
        """``grad`` where ``output > 0``, else 0 (a NaN output lets the gradient through, as
        torch's ``threshold_backward``); one kernel for same-shape contiguous f32/f64 pairs,
        else the default's ``mask_fill(grad, output <= 0, 0)`` (broadcasting, f16, casts)."""
        out = relu_backward(output, grad)
        if out is None:
            return cls.float_mask_fill(grad, cls.float_lower_equal_elem(output, 0.0), 0.0)
        return out

    @classmethod
    def gelu(cls, tensor):
        """The exact (erf) GELU, torch's default."""
        return unary("gelu", contiguous(tensor))

    @classmethod
    def sigmoid(cls, tensor):
        return unary("sigmoid", contiguous(tensor))

    @classmethod
    def softmax(cls, tensor, dim: int):
        return sm.softmax(contiguous(tensor), dim)

    @classmethod
    def log_softmax(cls, tensor, dim: int):
        return sm.log_softmax(contiguous(tensor), dim)
