"""``ActivationOps``: activations with default methods (burn-backend ``ops/activation.rs``).

Every op here has a default written with float ops of ``cls``; a backend may override one with
a fused kernel (Flex does for softmax) and Autodiff overrides the ones it has a dedicated
backward step for.
"""

from __future__ import annotations

import math

from minidl.backend.base import default


class ActivationOps:
    """Activation functions and their backward helpers, all with defaults."""

    @default
    def relu(cls, tensor):
        # only x < 0 becomes 0: NaN stays NaN and -0.0 stays -0.0 (torch's clamp_min(x, 0))
        return cls.float_mask_fill(tensor, cls.float_lower_elem(tensor, 0.0), 0.0)

    @default
    def relu_backward(cls, output, grad):
        return cls.float_mask_fill(grad, cls.float_lower_equal_elem(output, 0.0), 0.0)

    @default
    def leaky_relu(cls, tensor, negative_slope: float):
        negative = cls.float_lower_elem(tensor, 0.0)
        return cls.float_mask_where(tensor, negative, cls.float_mul_scalar(tensor, negative_slope))

    @default
    def gelu(cls, tensor):
        # exact GELU: x * (1 + erf(x / sqrt 2)) / 2, torch's default
        cdf = cls.float_add_scalar(cls.float_erf(cls.float_div_scalar(tensor, math.sqrt(2.0))), 1.0)
        return cls.float_mul(cls.float_mul_scalar(tensor, 0.5), cdf)

    @default
    def gelu_backward(cls, x, grad):
        # d/dx [x Φ(x)] = Φ(x) + x φ(x)
        cdf = cls.float_mul_scalar(
            cls.float_add_scalar(cls.float_erf(cls.float_div_scalar(x, math.sqrt(2.0))), 1.0), 0.5
        )
        pdf = cls.float_mul_scalar(
            cls.float_exp(cls.float_mul_scalar(cls.float_mul(x, x), -0.5)), 1.0 / math.sqrt(2.0 * math.pi)
        )
        return cls.float_mul(grad, cls.float_add(cdf, cls.float_mul(x, pdf)))

    @default
    def sigmoid(cls, tensor):
        return cls.float_recip(cls.float_add_scalar(cls.float_exp(cls.float_neg(tensor)), 1.0))

    @default
    def sigmoid_backward(cls, output, grad):
        one_minus = cls.float_add_scalar(cls.float_neg(output), 1.0)
        return cls.float_mul(grad, cls.float_mul(output, one_minus))

    @default
    def softmax(cls, tensor, dim: int):
        if 0 in tensor.shape:
            return _empty_like(cls, tensor)
        shifted = cls.float_sub(tensor, cls.float_detach(cls.float_max_dim(tensor, dim)))
        exp = cls.float_exp(shifted)
        return cls.float_div(exp, cls.float_sum_dim(exp, dim))

    @default
    def log_softmax(cls, tensor, dim: int):
        if 0 in tensor.shape:
            return _empty_like(cls, tensor)
        shifted = cls.float_sub(tensor, cls.float_detach(cls.float_max_dim(tensor, dim)))
        log_sum = cls.float_log(cls.float_sum_dim(cls.float_exp(shifted), dim))
        return cls.float_sub(shifted, log_sum)


def _empty_like(cls, tensor):
    """An empty result of ``tensor``'s shape and dtype (torch's softmax of an empty tensor):
    there is no row to normalise, and ``max_dim`` of an empty dim has no value to return."""
    return cls.float_mul_scalar(tensor, 1.0)
