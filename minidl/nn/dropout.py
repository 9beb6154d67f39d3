"""``Dropout``: zero each element with probability ``prob`` while training (burn-nn ``dropout.rs``).

burn 0.22 drops only when THREE things hold — the layer's ``training`` flag is on, the input
is on an autodiff device, and ``prob != 0`` — otherwise the input comes back unchanged.
Kept elements are scaled by ``1 / (1 - prob)`` so the expectation is unchanged (inverted
dropout). The nn-modules chapter's dropout puzzle and the train-vs-inference chapter's table are this ``if``.
"""

from __future__ import annotations

import math

from minidl.backend.distribution import Distribution
from minidl.module import Module, Param, config
from minidl.module.config import Rule
from minidl.tensor import Tensor


@config
class DropoutConfig:
    """Config of :class:`Dropout`. ``prob`` must be finite and in ``[0, 1)``: 1 would divide by
    zero in ``1 / (1 - prob)`` (burn 0.22 refuses 1 too; older burn checked ``[0, 1]``)."""

    field_rules = {"prob": Rule(
        "in [0, 1)", lambda p: math.isfinite(p) and 0.0 <= p < 1.0,
        message="Dropout probability should be between 0 and 1 (0 included, 1 excluded) and finite, "
                "but got {value!r}")}

    prob: float

    def init(self) -> Dropout:
        """The layer (no params, so no device), its training flag on."""
        return Dropout(float(self.prob), Param.flag(True))


class Dropout(Module):
    """Inverted dropout with a ``training: Param[Flag]`` (burn's ``Dropout``)."""

    def __init__(self, prob: float, training: Param):
        self.prob = prob
        self.training = training

    def forward(self, input: Tensor) -> Tensor:
        """``input`` unchanged unless the flag is on, the input is on an
        autodiff device and ``prob != 0``; else ``input * mask / (1 - prob)``
        with a Bernoulli(1 - prob) mask."""
        # Both, and for different reasons (burn's comment): the device says a
        # backward is possible at all; the flag says this layer takes part in
        # one, which a subtree frozen in place on the training device does not.
        training = self.training.is_enabled()
        if not training or not input.device.is_autodiff() or self.prob == 0.0:
            return input

        prob_keep = 1.0 - self.prob
        random = input.random_like(Distribution.bernoulli(prob_keep))
        x = input * random

        return x * (1.0 / prob_keep)

    def _display_attrs(self) -> dict:
        return {"prob": self.prob, "training": str(self.training.val())}
