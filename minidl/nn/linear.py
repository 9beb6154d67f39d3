"""``Linear``: ``y = x @ W + b`` with ``W`` shaped ``[d_input, d_output]`` (burn-nn ``linear.rs``).

PyTorch's ``nn.Linear.weight`` is the transpose, ``[out_features, in_features]``. burn keeps
``[d_input, d_output]`` so the forward is one matmul; ``LinearLayout.Col`` only changes how the
weight is *initialized and stored*: initialized as ``[d_output, d_input]`` then transposed by
the ``init_mapper``, transposed back by the ``save_mapper`` for records, and again by the
``load_mapper`` when a record is read. Note burn's Col passes the fans swapped
(``fan_in = d_output``), mirrored here.
"""

from __future__ import annotations

import math

from minidl.dispatch import Device
from minidl.module import ConfigEnum, Initializer, Module, Param, config
from minidl.module.config import check_positive, positive
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import linear

#: burn's default for Linear and the convolutions: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
DEFAULT_INITIALIZER = Initializer.KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)


class LinearLayout(ConfigEnum):
    """How a Linear weight is initialized and stored: ``Row`` (``[d_input, d_output]``) or
    ``Col`` (``[d_output, d_input]``, PyTorch's layout, transposed by the param mappers)."""


class Row(LinearLayout):
    """The weight is ``[d_input, d_output]``, as burn stores it."""


class Col(LinearLayout):
    """The weight is initialized and saved as ``[d_output, d_input]`` (PyTorch's layout)."""


def _transpose(tensor: Tensor) -> Tensor:
    return tensor.transpose()


@config
class LinearConfig:
    """Config of :class:`Linear` (burn's ``LinearConfig``)."""

    field_rules = {"d_input": positive, "d_output": positive}

    d_input: int
    d_output: int
    bias: bool = True
    initializer: Initializer = DEFAULT_INITIALIZER
    layout: LinearLayout = LinearLayout.Row

    def init(self, device: Device) -> Linear:
        """A Linear with lazy params on ``device``."""
        check_positive("LinearConfig", d_input=self.d_input, d_output=self.d_output)
        if self.layout == LinearLayout.Col:
            weight = (
                self.initializer.init_with([self.d_output, self.d_input], self.d_output, self.d_input, device)
                .save_mapper(_transpose)
                .load_mapper(_transpose)
                .init_mapper(_transpose)
            )
        else:
            weight = self.initializer.init_with([self.d_input, self.d_output], self.d_input, self.d_output, device)
        bias = None
        if self.bias:
            bias = self.initializer.init_with([self.d_output], self.d_input, self.d_output, device)
        return Linear(weight, bias)


class Linear(Module):
    """Applies ``x @ weight + bias`` to the last dim of its input (burn's ``Linear``)."""

    def __init__(self, weight: Param, bias: Param | None = None):
        self.weight = weight
        self.bias = bias

    def forward(self, input: Tensor) -> Tensor:
        """``input`` ``[..., d_input]`` → ``[..., d_output]``."""
        weight = self.weight.val()
        d_input, _ = weight.dims()
        assert_shape(input, [..., d_input], name="input")
        return linear(input, weight, self.bias.val() if self.bias is not None else None)

    def _display_attrs(self) -> dict:
        d_input, d_output = self.weight.lazy_shape()
        return {"d_input": d_input, "d_output": d_output, "bias": self.bias is not None}
