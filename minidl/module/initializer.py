"""``Initializer``: how a parameter's first value is drawn (burn-core ``module/initializer.rs``).

A config enum, so it is saved with the layer configs that hold it (``LinearConfig``,
``Conv2dConfig``, ...). ``init``/``init_with`` return a LAZY :class:`~minidl.module.Param`:
nothing is drawn until the first ``val()``, and the draw runs inside the device's
``memory_persistent_allocations()`` block (burn's allocator hint for long-lived tensors).
Random values come from ``Tensor.random(..., device)``, so ``device.seed(n)`` makes them
reproducible — in the order of first ``val()``, which is the lesson of lazy init.

Bounds (``fan`` is ``fan_in``, or ``fan_out`` when ``fan_out_only``):

- KaimingUniform: ``U(-a, a)``, ``a = sqrt(3) * gain / sqrt(fan)``;
- KaimingNormal: ``N(0, std)``, ``std = gain / sqrt(fan)``;
- XavierUniform: ``U(-a, a)``, ``a = sqrt(3) * gain * sqrt(2 / (fan_in + fan_out))``;
- XavierNormal: ``N(0, std)``, ``std = gain * sqrt(2 / (fan_in + fan_out))``;
- Orthogonal: a (semi-)orthogonal matrix from the QR of a normal draw, times ``gain``
  (PyTorch's recipe, which burn follows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from minidl.backend.distribution import Distribution
from minidl.dispatch import Device
from minidl.module.config_enum import ConfigEnum
from minidl.module.param import Param, new_param_id
from minidl.tensor import Tensor

KAIMING_NO_FAN = "Can't use Kaiming initialization without specifying fan. Use init_with method."
XAVIER_NO_FAN = "Can't use Xavier initialization without specifying fan. Use init_with method."


class Initializer(ConfigEnum):
    """The initializer enum. Unit variants are values (``Initializer.Ones``); the others are
    built with their fields (``Initializer.KaimingUniform(gain=1/sqrt(3), fan_out_only=False)``).
    The variants are the classes below the enum's methods.
    """

    def init(self, shape: Sequence[int], device: Device) -> Param:
        """A lazy param of ``shape`` on ``device`` (no fans: Kaiming and Xavier refuse)."""
        return self.init_with(shape, None, None, device)

    def init_with(self, shape: Sequence[int], fan_in: int | None, fan_out: int | None,
                  device: Device) -> Param:
        """A lazy param of ``shape`` drawn with the given fans. It wants gradients (they are
        tracked once its tensor lives on an autodiff device).

        A missing fan is reported here rather than at the first ``val()`` (where burn panics),
        so the error points at the line that forgot it.
        """
        shape = tuple(int(s) for s in shape)
        self._check_fans(fan_in, fan_out)
        config = self

        def init_fn(dev: Device, require_grad: bool) -> Tensor:
            with dev.memory_persistent_allocations():
                tensor = config.init_tensor(shape, fan_in, fan_out, dev)
                if require_grad and dev.is_autodiff():
                    tensor = tensor.require_grad()
                return tensor

        return Param.uninitialized(new_param_id(), init_fn, device, True, shape)

    def _check_fans(self, fan_in: int | None, fan_out: int | None) -> None:
        name = self.variant
        if name in ("KaimingUniform", "KaimingNormal"):
            fan = fan_out if self.fan_out_only else fan_in
            if fan is None:
                raise ValueError(KAIMING_NO_FAN)
        elif name in ("XavierUniform", "XavierNormal") and (fan_in is None or fan_out is None):
            raise ValueError(XAVIER_NO_FAN)

    # ----- the formulas ---------------------------------------------------------------------
    def bound(self, fan_in: int | None = None, fan_out: int | None = None) -> float:
        """The half-width ``a`` of a uniform initializer's ``U(-a, a)`` (for checks and plots)."""
        name = self.variant
        if name == "KaimingUniform":
            return math.sqrt(3.0) * self.gain * kaiming_std(self.fan_out_only, fan_in, fan_out)
        if name == "XavierUniform":
            return math.sqrt(3.0) * self.gain * xavier_std(fan_in, fan_out)
        if name == "Uniform":
            return max(abs(self.min), abs(self.max))
        raise ValueError(f"Initializer.{name} has no uniform bound")

    def normal_std(self, fan_in: int | None = None, fan_out: int | None = None) -> float:
        """The standard deviation a Normal, KaimingNormal or XavierNormal draw uses."""
        name = self.variant
        if name == "KaimingNormal":
            return self.gain * kaiming_std(self.fan_out_only, fan_in, fan_out)
        if name == "XavierNormal":
            return self.gain * xavier_std(fan_in, fan_out)
        if name == "Normal":
            return self.std
        raise ValueError(f"Initializer.{name} is not a normal initializer")

    def init_tensor(self, shape: tuple[int, ...], fan_in: int | None, fan_out: int | None,
                    device: Device) -> Tensor:
        """Draw the tensor now (what the lazy param's closure calls)."""
        name = self.variant
        if name == "Constant":
            return Tensor.full(shape, self.value, device=device)
        if name == "Ones":
            return Tensor.ones(shape, device=device)
        if name == "Zeros":
            return Tensor.zeros(shape, device=device)
        if name == "Uniform":
            return _uniform(shape, self.min, self.max, device)
        if name == "Normal":
            return _normal(shape, self.mean, self.std, device)
        if name in ("KaimingUniform", "XavierUniform"):
            a = self.bound(fan_in, fan_out)
            return _uniform(shape, -a, a, device)
        if name in ("KaimingNormal", "XavierNormal"):
            return _normal(shape, 0.0, self.normal_std(fan_in, fan_out), device)
        if name == "Orthogonal":
            return _orthogonal(shape, self.gain, device)
        raise AssertionError(name)


# ----- the variants (burn's enum arms): each a frozen dataclass deriving Initializer ------------
class Constant(Initializer):
    """Every element is ``value``."""

    value: float


class Ones(Initializer):
    """Every element is 1."""


class Zeros(Initializer):
    """Every element is 0."""


class Uniform(Initializer):
    """Drawn from ``U(min, max)``."""

    min: float
    max: float


class Normal(Initializer):
    """Drawn from ``N(mean, std²)``."""

    mean: float
    std: float


class KaimingUniform(Initializer):
    """``U(-a, a)`` with ``a = sqrt(3) * gain / sqrt(fan)`` (``fan_out`` if ``fan_out_only``)."""

    gain: float
    fan_out_only: bool


class KaimingNormal(Initializer):
    """``N(0, std²)`` with ``std = gain / sqrt(fan)`` (``fan_out`` if ``fan_out_only``)."""

    gain: float
    fan_out_only: bool


class XavierUniform(Initializer):
    """``U(-a, a)`` with ``a = sqrt(3) * gain * sqrt(2 / (fan_in + fan_out))``."""

    gain: float


class XavierNormal(Initializer):
    """``N(0, std²)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""

    gain: float


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix (QR of a normal draw, signs fixed as PyTorch) times ``gain``."""

    gain: float


def kaiming_std(fan_out_only: bool, fan_in: int | None, fan_out: int | None) -> float:
    """``1 / sqrt(fan)``; raises the burn message when the fan is missing."""
    fan = fan_out if fan_out_only else fan_in
    if fan is None:
        raise ValueError(KAIMING_NO_FAN)
    return 1.0 / math.sqrt(fan)


def xavier_std(fan_in: int | None, fan_out: int | None) -> float:
    """``sqrt(2 / (fan_in + fan_out))``; raises when a fan is missing."""
    if fan_in is None or fan_out is None:
        raise ValueError(XAVIER_NO_FAN)
    return math.sqrt(2.0 / (fan_in + fan_out))


def _uniform(shape: tuple[int, ...], low: float, high: float, device: Device) -> Tensor:
    return Tensor.random(shape, Distribution.uniform(low, high), device=device)


def _normal(shape: tuple[int, ...], mean: float, std: float, device: Device) -> Tensor:
    return Tensor.random(shape, Distribution.normal(mean, std), device=device)


def _orthogonal(shape: tuple[int, ...], gain: float, device: Device) -> Tensor:
    if len(shape) < 2:
        raise ValueError(f"Initializer.Orthogonal needs a rank >= 2 shape, found {list(shape)}")
    rows = shape[0]
    cols = int(np.prod(shape[1:])) if rows else 0
    draw = _normal((rows, cols), 0.0, 1.0, device).to_numpy().astype(np.float64)
    if rows < cols:
        draw = draw.T
    q, r = np.linalg.qr(draw)
    q = q * np.sign(np.diag(r))[None, :]  # make the decomposition unique (PyTorch does the same)
    if rows < cols:
        q = q.T
    data = (q.reshape(shape) * gain).astype(np.float32)
    return Tensor.from_numpy(data, device=device)
