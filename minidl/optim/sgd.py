"""``Sgd``: stochastic gradient descent with optional weight decay and momentum (burn-optim
``sgd.rs``, ``decay.rs``, ``momentum.rs``)::

    g = grad + penalty * param                                   # weight decay (L2)
    v = momentum * v + (1 - dampening) * g   (v = g at the first step)
    g = momentum * v + g  if nesterov else v
    param = param - lr * g

This is PyTorch's ``torch.optim.SGD`` rule. burn's MomentumConfig defaults are momentum 0.9,
dampening 0.1, nesterov false.

Nesterov momentum needs a non-zero momentum and zero dampening: :meth:`SgdConfig.init`
refuses anything else with a :class:`~minidl.module.ConfigError`, as ``torch.optim.SGD``
does ("Nesterov momentum requires a momentum and zero dampening"). burn's
``MomentumConfig`` does not check, so burn runs a damped Nesterov step PyTorch would refuse
(and with zero momentum ``nesterov`` would silently be plain SGD).
"""

from __future__ import annotations

from typing import Any

from minidl.module import config
from minidl.module.config import ConfigError, interval, non_negative
from minidl.optim.base import Optimizer, SimpleOptimizer
from minidl.optim.clipping import GradientClippingConfig
from minidl.tensor import Tensor


@config
class WeightDecayConfig:
    """L2 weight decay: ``penalty * param`` is added to the gradient (burn's ``WeightDecayConfig``)."""

    field_rules = {"penalty": non_negative}

    penalty: float

    def transform(self, grad: Tensor, tensor: Tensor) -> Tensor:
        """``grad + penalty * tensor``."""
        return grad + tensor * float(self.penalty)


@config
class MomentumConfig:
    """Momentum (burn's ``MomentumConfig``)."""

    field_rules = {"momentum": non_negative, "dampening": interval(0, 1)}

    momentum: float = 0.9
    dampening: float = 0.1
    nesterov: bool = False

    def transform(self, grad: Tensor, velocity: Tensor | None) -> tuple[Tensor, Tensor]:
        """``(the step direction, the new velocity)``."""
        if velocity is None:
            velocity = grad
        else:
            velocity = grad * (1.0 - self.dampening) + velocity * self.momentum
        direction = velocity * self.momentum + grad if self.nesterov else velocity
        return direction, velocity


@config
class SgdConfig:
    """Config of :class:`Sgd` (burn's ``SgdConfig``)."""

    weight_decay: WeightDecayConfig | None = None
    momentum: MomentumConfig | None = None
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> Optimizer:
        """The optimizer, ready for ``step(lr, model, grads)``; Nesterov momentum with a
        zero momentum or a non-zero dampening is a :class:`ConfigError` (as in PyTorch)."""
        momentum = self.momentum
        if momentum is not None and momentum.nesterov and (momentum.momentum <= 0 or momentum.dampening != 0):
            raise ConfigError(
                "SgdConfig.momentum: Nesterov momentum requires a momentum and zero dampening "
                f"(found momentum {momentum.momentum}, dampening {momentum.dampening}); "
                "use MomentumConfig(momentum, dampening=0.0, nesterov=True)"
            )
        return Optimizer(Sgd(self.weight_decay, self.momentum), self.gradient_clipping)


class Sgd(SimpleOptimizer):
    """The SGD rule for one tensor; the state is the momentum velocity (or ``None``)."""

    def __init__(self, weight_decay: WeightDecayConfig | None, momentum: MomentumConfig | None):
        self.weight_decay = weight_decay
        self.momentum = momentum

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any | None) -> tuple[Tensor, Any]:
        """``(tensor - lr * direction, velocity)``."""
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        velocity = None
        if self.momentum is not None:
            grad, velocity = self.momentum.transform(grad, state)
        return tensor - grad * lr, velocity
