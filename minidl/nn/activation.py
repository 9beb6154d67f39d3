"""Activations as modules (burn-nn ``activation/``): ``Relu``, ``Gelu``, ``Sigmoid``, ``Tanh``,
``LeakyRelu`` and ``Softmax``. They hold no params; each ``forward`` is one call to
:mod:`minidl.tensor.activation`, so they can sit in a :class:`~minidl.nn.Sequential`."""

from __future__ import annotations

from minidl.module import Module, config
from minidl.module.config import Rule
from minidl.tensor import Tensor
from minidl.tensor import activation as act


class Relu(Module):
    """``max(x, 0)`` (burn's ``Relu``)."""

    def forward(self, input: Tensor) -> Tensor:
        """Same shape as ``input``."""
        return act.relu(input)


class Gelu(Module):
    """The exact GELU ``x Φ(x)`` (burn's ``Gelu``)."""

    def forward(self, input: Tensor) -> Tensor:
        """Same shape as ``input``."""
        return act.gelu(input)


class Sigmoid(Module):
    """``1 / (1 + e^-x)`` (burn's ``Sigmoid``)."""

    def forward(self, input: Tensor) -> Tensor:
        """Same shape as ``input``."""
        return act.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent (burn's ``Tanh``)."""

    def forward(self, input: Tensor) -> Tensor:
        """Same shape as ``input``."""
        return act.tanh(input)


@config
class LeakyReluConfig:
    """Config of :class:`LeakyRelu` (``negative_slope`` 0.01 as in burn and PyTorch)."""

    negative_slope: float = 0.01

    def init(self) -> LeakyRelu:
        """The activation (no params, so no device)."""
        return LeakyRelu(float(self.negative_slope))


class LeakyRelu(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere (burn's ``LeakyRelu``)."""

    def __init__(self, negative_slope: float = 0.01):
        self.negative_slope = float(negative_slope)

    def forward(self, input: Tensor) -> Tensor:
        """Same shape as ``input``."""
        return act.leaky_relu(input, self.negative_slope)

    def _display_attrs(self) -> dict:
        return {"negative_slope": self.negative_slope}


class Softmax(Module):
    """``softmax`` along ``dim``."""

    def __init__(self, dim: int = -1):
        self.dim = int(dim)

    def forward(self, input: Tensor) -> Tensor:
        """Same shape as ``input``; sums to 1 along ``dim``."""
        return act.softmax(input, self.dim)

    def _display_attrs(self) -> dict:
        return {"dim": self.dim}


class Silu(Module):
    """``x * sigmoid(x)`` (burn's ``Silu``, torch's ``nn.SiLU``)."""

    def forward(self, input: Tensor) -> Tensor:
        """Same shape as ``input``."""
        return act.silu(input)


@config
class SoftplusConfig:
    """Config of :class:`Softplus`: ``beta`` 1.0 and ``threshold`` 20.0, as burn and PyTorch."""

    field_rules = {"beta": Rule("!= 0", lambda b: b != 0)}

    beta: float = 1.0
    threshold: float = 20.0

    def init(self) -> Softplus:
        """The activation (no params, so no device)."""
        return Softplus(float(self.beta), float(self.threshold))


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, ``x`` where ``beta * x > threshold`` (burn's
    ``Softplus``, torch's ``nn.Softplus``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        self.beta = float(beta)
        self.threshold = float(threshold)

    def forward(self, input: Tensor) -> Tensor:
        """Same shape as ``input``."""
        return act.softplus(input, self.beta, self.threshold)

    def _display_attrs(self) -> dict:
        return {"beta": self.beta, "threshold": self.threshold}
