"""Activation functions on Tensors (burn-tensor ``tensor/activation``).

Each checks its input, then calls the backend's ``ActivationOps`` through Dispatch (Flex may
fuse ``softmax``; the protocol's defaults compose the rest from float ops).
"""

from __future__ import annotations

import math

from minidl.dispatch import Dispatch
from minidl.tensor.base import FLOAT
from minidl.tensor.check import fail, norm_dim
from minidl.tensor.module_args import float_arg
from minidl.tensor.tensor import Tensor


def softmax(x: Tensor, dim: int) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (shifted by the max for stability)."""
    float_arg("softmax", x, "x")
    d = norm_dim("softmax", dim, x.rank, shape=x.shape)
    return Tensor(Dispatch.softmax(x.primitive, d), FLOAT)


def log_softmax(x: Tensor, dim: int) -> Tensor:
    """``log(softmax(x, dim))``, computed without the round trip through ``exp``/``log``."""
    float_arg("log_softmax", x, "x")
    d = norm_dim("log_softmax", dim, x.rank, shape=x.shape)
    return Tensor(Dispatch.log_softmax(x.primitive, d), FLOAT)


def relu(x: Tensor) -> Tensor:
    """``max(x, 0)``."""
    float_arg("relu", x, "x")
    return Tensor(Dispatch.relu(x.primitive), FLOAT)


def gelu(x: Tensor) -> Tensor:
    """The exact GELU ``x Φ(x)`` (torch's default, not the tanh approximation)."""
    float_arg("gelu", x, "x")
    return Tensor(Dispatch.gelu(x.primitive), FLOAT)


def sigmoid(x: Tensor) -> Tensor:
    """``1 / (1 + e^-x)``."""
    float_arg("sigmoid", x, "x")
    return Tensor(Dispatch.sigmoid(x.primitive), FLOAT)


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    float_arg("leaky_relu", x, "x")
    if not isinstance(negative_slope, int | float):
        fail("leaky_relu", "Argument negative_slope must be a number.", f"Found {negative_slope!r}.", kind=True)
    return Tensor(Dispatch.leaky_relu(x.primitive, float(negative_slope)), FLOAT)


def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    float_arg("tanh", x, "x")
    return Tensor(Dispatch.float_tanh(x.primitive), FLOAT)


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)`` (burn's ``silu``, torch's ``F.silu``), from the recorded ops, so its
    backward is theirs."""
    float_arg("silu", x, "x")
    return x.mul(sigmoid(x))


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``
    (torch's ``F.softplus``; burn's ``softplus_with_threshold``). The ``exp`` reads
    ``min(beta * x, threshold)``, so neither branch overflows — nor does the gradient of the
    branch not taken, which ``mask_where`` multiplies by 0 (``inf * 0`` would be NaN)."""
    float_arg("softplus", x, "x")
    for name, value in (("beta", beta), ("threshold", threshold)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            fail("softplus", f"Argument {name} must be a number.", f"Found {value!r}.", kind=True)
    if not (math.isfinite(beta) and beta != 0) or math.isnan(threshold):
        fail("softplus", "Argument beta must be finite and non-zero, threshold not NaN.",
             f"Found beta={beta!r}, threshold={threshold!r}.")
    scaled = x.mul_scalar(float(beta))
    curve = scaled.clamp_max(float(threshold)).exp().log1p().div_scalar(float(beta))
    return curve.mask_where(scaled.greater_elem(float(threshold)), x)
