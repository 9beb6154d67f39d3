"""``Adam`` and ``AdamW`` (burn-optim ``adam.rs``, ``adamw.rs``)::

    m = b1 * m + (1 - b1) * g;   v = b2 * v + (1 - b2) * g²;   t += 1
    update = (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
    Adam:  g includes L2 decay (g + penalty * param);  param -= lr * update
    AdamW: param = param * (1 - lr * weight_decay) - lr * update     (decoupled decay)

PyTorch's rules exactly; note burn's defaults: ``epsilon`` 1e-5 (PyTorch 1e-8) and AdamW
``weight_decay`` 1e-4 (PyTorch 1e-2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minidl.module import config
from minidl.module.config import interval, non_negative, positive
from minidl.optim.base import Optimizer, SimpleOptimizer
from minidl.optim.clipping import GradientClippingConfig
from minidl.optim.fused import fused_adam_step
from minidl.optim.sgd import WeightDecayConfig
from minidl.tensor import Tensor


@dataclass(frozen=True)
class AdamState:
    """The moments and step count of one parameter (burn's ``AdaptiveMomentumState``)."""

    time: int
    moment_1: Tensor
    moment_2: Tensor


def adaptive_update(beta_1: float, beta_2: float, epsilon: float, grad: Tensor,
                    state: AdamState | None) -> tuple[Tensor, AdamState]:
    """The bias-corrected Adam direction and the new state."""
    if state is None:
        moment_1 = grad * (1.0 - beta_1)
        moment_2 = grad.square() * (1.0 - beta_2)
        time = 1
    else:
        moment_1 = state.moment_1 * beta_1 + grad * (1.0 - beta_1)
        moment_2 = state.moment_2 * beta_2 + grad.square() * (1.0 - beta_2)
        time = state.time + 1
    corrected_1 = moment_1 / (1.0 - beta_1 ** time)
    corrected_2 = moment_2 / (1.0 - beta_2 ** time)
    update = corrected_1 / corrected_2.sqrt().add_scalar(epsilon)
    return update, AdamState(time, moment_1, moment_2)


@config
class AdamConfig:
    """Config of :class:`Adam` (burn's ``AdamConfig``)."""

    field_rules = {"beta_1": interval(0, 1, hi_open=True), "beta_2": interval(0, 1, hi_open=True), "epsilon": positive}

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClippingConfig | None = None

    def init(self) -> Optimizer:
        """The optimizer, ready for ``step(lr, model, grads)``."""
        return Optimizer(Adam(self.beta_1, self.beta_2, self.epsilon, self.weight_decay), self.grad_clipping)


class Adam(SimpleOptimizer):
    """The Adam rule for one tensor."""

    def __init__(self, beta_1: float, beta_2: float, epsilon: float, weight_decay: WeightDecayConfig | None):
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.weight_decay = weight_decay

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any | None) -> tuple[Tensor, Any]:
        """``(tensor - lr * update, state)``."""
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        # a speed trick: the same rule as one kernel where the backend offers one (fused.py)
        fused = fused_adam_step(lr, tensor, grad, state, self.beta_1, self.beta_2, self.epsilon)
        if fused is not None:
            new, time, moment_1, moment_2 = fused
            return new, AdamState(time, moment_1, moment_2)
        update, state = adaptive_update(self.beta_1, self.beta_2, self.epsilon, grad, state)
        return tensor - update * lr, state


@config
class AdamWConfig:
    """Config of :class:`AdamW` (burn's ``AdamWConfig``)."""

    field_rules = {"beta_1": interval(0, 1, hi_open=True), "beta_2": interval(0, 1, hi_open=True), "epsilon": positive, "weight_decay": non_negative}

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    weight_decay: float = 1e-4
    grad_clipping: GradientClippingConfig | None = None

    def init(self) -> Optimizer:
        """The optimizer, ready for ``step(lr, model, grads)``."""
        return Optimizer(AdamW(self.beta_1, self.beta_2, self.epsilon, self.weight_decay), self.grad_clipping)


class AdamW(SimpleOptimizer):
    """The AdamW rule for one tensor: Adam with the decay applied to the weights directly."""

    def __init__(self, beta_1: float, beta_2: float, epsilon: float, weight_decay: float):
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.weight_decay = weight_decay

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any | None) -> tuple[Tensor, Any]:
        """``(tensor * (1 - lr * weight_decay) - lr * update, state)``."""
        update, state = adaptive_update(self.beta_1, self.beta_2, self.epsilon, grad, state)
        decay = lr * self.weight_decay
        decayed = tensor if decay == 0.0 else tensor * (1.0 - decay)
        return decayed - update * lr, state
