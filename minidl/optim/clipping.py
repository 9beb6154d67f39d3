"""Gradient clipping (burn-optim ``grad_clipping``): by value, or by norm.

As in burn, clipping is applied to each parameter's gradient on its own: ``Norm(t)`` scales a
gradient whose L2 norm exceeds ``t`` down to norm ``t`` (``g * min(1, t / (|g| + 1e-6))``).
PyTorch's ``clip_grad_norm_`` clips the norm of ALL gradients together — not the same thing.
"""

from __future__ import annotations

import math

from minidl.module import ConfigEnum
from minidl.tensor import Tensor


class GradientClippingConfig(ConfigEnum):
    """``Value(threshold)`` clamps every element to ``[-threshold, threshold]``;
    ``Norm(threshold)`` rescales a gradient whose L2 norm exceeds ``threshold``."""

    def init(self) -> GradientClippingConfig:
        """The clipping itself (burn builds a ``GradientClipping``; here the config does it)."""
        threshold = self[0]
        if not (isinstance(threshold, int | float) and math.isfinite(threshold) and threshold > 0):
            raise ValueError(f"GradientClippingConfig.{self.variant}: threshold must be a positive number, got {threshold!r}")
        return self

    def clip_gradient(self, grad: Tensor) -> Tensor:
        """The clipped gradient."""
        threshold = float(self[0])
        if self.variant == "Value":
            return grad.clamp(-threshold, threshold)
        norm = grad.square().sum().sqrt()  # [1]
        coefficient = (norm.add_scalar(1e-6).recip() * threshold).clamp_max(1.0)
        return grad * coefficient.reshape((1,) * grad.rank)


class Value(GradientClippingConfig, tuple_like=True):
    """Clamp every element to ``[-threshold, threshold]`` (JSON: ``{"Value": [threshold]}``)."""

    threshold: float


class Norm(GradientClippingConfig, tuple_like=True):
    """Rescale a gradient whose L2 norm exceeds ``threshold`` (JSON: ``{"Norm": [threshold]}``)."""

    threshold: float
