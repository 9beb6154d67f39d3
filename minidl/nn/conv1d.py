"""``Conv1d``: a 1-D convolution layer (burn-nn ``conv/conv1d.rs``).

Weight ``[c_out, c_in / groups, k]``, bias ``[c_out]``; ``fan_in = c_in / groups * k``.
The backend's default ``conv1d`` runs it as a conv2d with a height of 1.
"""

from __future__ import annotations

from minidl.dispatch import Device
from minidl.module import Initializer, Module, Param, config
from minidl.module.config import check_positive
from minidl.nn.conv_checks import check_channels_div_groups
from minidl.nn.linear import DEFAULT_INITIALIZER
from minidl.nn.padding import PaddingConfig1d
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import conv1d


@config
class Conv1dConfig:
    """Config of :class:`Conv1d`."""

    channels_in: int
    channels_out: int
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    bias: bool = True
    initializer: Initializer = DEFAULT_INITIALIZER

    def init(self, device: Device) -> Conv1d:
        """A Conv1d with lazy params on ``device``."""
        owner = "Conv1dConfig"
        check_positive(owner, channels_in=self.channels_in, channels_out=self.channels_out,
                       kernel_size=self.kernel_size, stride=self.stride, dilation=self.dilation)
        check_channels_div_groups(owner, self.channels_in, self.channels_out, self.groups)
        k = self.kernel_size
        fan_in = self.channels_in // self.groups * k
        fan_out = self.channels_out // self.groups * k
        weight = self.initializer.init_with([self.channels_out, self.channels_in // self.groups, k],
                                            fan_in, fan_out, device)
        bias = self.initializer.init_with([self.channels_out], fan_in, fan_out, device) if self.bias else None
        return Conv1d(weight, bias, self.stride, self.kernel_size, self.dilation, self.groups, self.padding)


class Conv1d(Module):
    """Convolves ``[batch, c_in, length]`` input with its weight (burn's ``Conv1d``)."""

    def __init__(self, weight: Param, bias: Param | None, stride: int, kernel_size: int,
                 dilation: int, groups: int, padding: PaddingConfig1d):
        self.weight = weight
        self.bias = bias
        self.stride = stride
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.groups = groups
        self.padding = padding

    def forward(self, input: Tensor) -> Tensor:
        """``input`` ``[batch, c_in, length]`` → ``[batch, c_out, length_out]``."""
        weight = self.weight.val()
        assert_shape(input, [None, weight.shape[1] * self.groups, None], name="input")
        pads = self.padding.pads(input.shape[2], self.kernel_size, self.stride, self.dilation)
        bias = self.bias.val() if self.bias is not None else None
        return conv1d(input, weight, bias, stride=self.stride, padding=pads, dilation=self.dilation,
                      groups=self.groups)

    def _display_attrs(self) -> dict:
        c_out, c_in_per_group = self.weight.lazy_shape()[:2]
        return {"ch_in": c_in_per_group * self.groups, "ch_out": c_out, "stride": self.stride,
                "kernel_size": self.kernel_size, "dilation": self.dilation, "groups": self.groups,
                "padding": self.padding}
