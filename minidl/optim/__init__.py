"""burn-optim: ``Sgd``, ``Adam``, ``AdamW`` and gradient clipping. Build one from its config
(``AdamConfig().init()``); ``optimizer.step(lr, model, grads)`` returns the updated model and
leaves the old one as it was."""

from __future__ import annotations

from minidl.optim.adam import Adam, AdamConfig, AdamState, AdamW, AdamWConfig
from minidl.optim.base import Optimizer, SimpleOptimizer
from minidl.optim.clipping import GradientClippingConfig
from minidl.optim.grads import GradientsParams
from minidl.optim.sgd import MomentumConfig, Sgd, SgdConfig, WeightDecayConfig

__all__ = [
    "Adam", "AdamConfig", "AdamState", "AdamW", "AdamWConfig", "GradientClippingConfig",
    "GradientsParams", "MomentumConfig", "Optimizer", "Sgd", "SgdConfig", "SimpleOptimizer",
    "WeightDecayConfig",
]
