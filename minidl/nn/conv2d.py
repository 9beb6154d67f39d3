"""``Conv2d``: a 2-D convolution layer (burn-nn ``conv/conv2d.rs``).

Weight ``[c_out, c_in / groups, k1, k2]`` (the same layout as PyTorch), bias ``[c_out]``, both
drawn by the config's initializer with ``fan_in = c_in / groups * k1 * k2`` and
``fan_out = c_out / groups * k1 * k2``. ``padding`` is a constant of the module (burn's
``#[module(skip)]``): ``forward`` turns it into four pads for the input at hand.
"""

from __future__ import annotations

from minidl.backend.options import ConvOptions
from minidl.dispatch import Device
from minidl.module import Initializer, Module, Param, config
from minidl.module.config import check_positive
from minidl.nn.conv_checks import check_channels_div_groups
from minidl.nn.linear import DEFAULT_INITIALIZER
from minidl.nn.padding import PaddingConfig2d
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import conv2d


@config
class Conv2dConfig:
    """Config of :class:`Conv2d`: ``channels = (c_in, c_out)``, ``kernel_size = (k1, k2)``."""

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    bias: bool = True
    initializer: Initializer = DEFAULT_INITIALIZER

    def init(self, device: Device) -> Conv2d:
        """A Conv2d with lazy params on ``device``."""
        owner = "Conv2dConfig"
        check_positive(owner, channels=tuple(self.channels), kernel_size=tuple(self.kernel_size),
                       stride=tuple(self.stride), dilation=tuple(self.dilation))
        c_in, c_out = self.channels
        check_channels_div_groups(owner, c_in, c_out, self.groups)
        self.padding.check(owner)
        k1, k2 = self.kernel_size
        fan_in = c_in // self.groups * k1 * k2
        fan_out = c_out // self.groups * k1 * k2
        weight = self.initializer.init_with([c_out, c_in // self.groups, k1, k2], fan_in, fan_out, device)
        bias = self.initializer.init_with([c_out], fan_in, fan_out, device) if self.bias else None
        return Conv2d(weight, bias, tuple(self.stride), tuple(self.kernel_size), tuple(self.dilation),
                      self.groups, self.padding)


class Conv2d(Module):
    """Convolves NCHW input with its weight (burn's ``Conv2d``)."""

    def __init__(self, weight: Param, bias: Param | None, stride: tuple[int, int],
                 kernel_size: tuple[int, int], dilation: tuple[int, int], groups: int,
                 padding: PaddingConfig2d):
        self.weight = weight
        self.bias = bias
        self.stride = stride
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.groups = groups
        self.padding = padding

    def forward(self, input: Tensor) -> Tensor:
        """``input`` ``[batch, c_in, h, w]`` → ``[batch, c_out, h_out, w_out]``."""
        weight = self.weight.val()
        assert_shape(input, [None, weight.shape[1] * self.groups, None, None], name="input")
        _, _, height, width = input.dims()
        top, bottom, left, right = self.padding.pads(height, width, self.kernel_size, self.stride, self.dilation)
        options = ConvOptions(stride=self.stride, padding=(top, left), dilation=self.dilation,
                              groups=self.groups, padding_end=(bottom, right))
        bias = self.bias.val() if self.bias is not None else None
        return conv2d(input, weight, bias, options=options)

    def _display_attrs(self) -> dict:
        c_out, c_in_per_group = self.weight.lazy_shape()[:2]
        return {"ch_in": c_in_per_group * self.groups, "ch_out": c_out, "stride": self.stride,
                "kernel_size": self.kernel_size, "dilation": self.dilation, "groups": self.groups,
                "padding": self.padding}
