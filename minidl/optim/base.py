"""The optimizer machinery (burn-optim ``SimpleOptimizer`` + ``OptimizerAdaptor``).

A :class:`SimpleOptimizer` knows how to update ONE tensor: ``step(lr, tensor, grad, state)``
returns the new tensor and the new state, all on the inner (non-autodiff) device. The
:class:`Optimizer` adaptor walks a module, finds each parameter's gradient by id, clips it,
calls the simple optimizer, and puts the result back as a new leaf that requires grad.
``step(lr, model, grads)`` returns a NEW model and never touches the old one (param values
are immutable); the per-parameter state is kept in the optimizer, keyed by ``Param.id``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from minidl.module import Module, ModuleMapper, Param
from minidl.module.config import check_field, non_negative
from minidl.optim.clipping import GradientClippingConfig
from minidl.optim.grads import GradientsParams
from minidl.tensor import Tensor


class SimpleOptimizer:
    """Updates one tensor (burn's ``SimpleOptimizer``)."""

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any | None) -> tuple[Tensor, Any]:
        """``(new tensor, new state)``; ``state`` is ``None`` at the first step."""
        raise NotImplementedError


class Optimizer:
    """A :class:`SimpleOptimizer` applied to every parameter of a module (burn's
    ``OptimizerAdaptor``)."""

    def __init__(self, optim: SimpleOptimizer, grad_clipping: GradientClippingConfig | None = None):
        self.optim = optim
        self.grad_clipping = grad_clipping.init() if grad_clipping is not None else None
        self.states: dict[str, Any] = {}

    def step(self, lr: float, module: Module, grads: Any) -> Module:
        """The module after one update with learning rate ``lr``. ``grads`` is what
        ``backward()`` returned, or a :class:`GradientsParams`."""
        if type(lr) is not float or not 0.0 <= lr < math.inf:  # the check below says what is wrong
            check_field(type(self.optim).__name__ + ".step", "lr", lr, float, non_negative)
        if isinstance(grads, GradientsParams):
            def take(param: Param) -> Tensor | None:
                return grads.remove(param.id)
        else:
            # what GradientsParams.from_grads would remove, taken during the same walk (one walk
            # of the model instead of two: the optimizer's bookkeeping is a share of every step)
            def take(param: Param) -> Tensor | None:
                return GradientsParams.grad_of(param, grads)
        # a capture's symbolic learning rate (minidl.capture) stays symbolic: float() freezes it
        lr = lr if getattr(lr, "symbolic", False) else float(lr)
        return module.map(_StepMapper(self, lr, take))

    def update(self, lr: float, param: Param, grad: Tensor) -> Param:
        """One parameter's update (what the walk does for each param with a gradient)."""
        tensor = param.val()
        device = tensor.device
        grad = grad.inner()
        if self.grad_clipping is not None:
            grad = self.grad_clipping.clip_gradient(grad)
        new, state = self.optim.step(lr, tensor.inner(), grad, self.states.get(param.id))
        self.states[param.id] = state
        new = new.inner()  # on the inner device a tensor is in no graph: nothing to detach
        if device.is_autodiff():
            new = Tensor.from_inner(new, device, require_grad=param.require_grad)
        return param.with_value(new)


class _StepMapper(ModuleMapper):
    def __init__(self, optimizer: Optimizer, lr: float, take: Callable[[Param], Tensor | None]):
        self.optimizer = optimizer
        self.lr = lr
        self.take = take

    def map_param(self, path: str, param: Param) -> Param:
        grad = self.take(param)
        if grad is None:
            return param
        return self.optimizer.update(self.lr, param, grad)
