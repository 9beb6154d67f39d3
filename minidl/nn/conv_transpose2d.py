"""``ConvTranspose2d``: a transposed 2-D convolution (burn-nn ``conv/conv_transpose2d.rs``).

Weight ``[c_in, c_out / groups, k1, k2]`` (PyTorch's layout), bias ``[c_out]``; as in burn and
PyTorch, ``fan_in = c_out / groups * k1 * k2`` (the weight's second dim times the kernel).
"""

from __future__ import annotations

from minidl.dispatch import Device
from minidl.module import Initializer, Module, Param, config
from minidl.module.config import check_positive
from minidl.nn.conv_checks import check_channels_div_groups
from minidl.nn.linear import DEFAULT_INITIALIZER
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import conv_transpose2d


@config
class ConvTranspose2dConfig:
    """Config of :class:`ConvTranspose2d`: ``channels = (c_in, c_out)``."""

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    padding_out: tuple[int, int] = (0, 0)
    groups: int = 1
    bias: bool = True
    initializer: Initializer = DEFAULT_INITIALIZER

    def init(self, device: Device) -> ConvTranspose2d:
        """A ConvTranspose2d with lazy params on ``device``."""
        owner = "ConvTranspose2dConfig"
        check_positive(owner, channels=tuple(self.channels), kernel_size=tuple(self.kernel_size),
                       stride=tuple(self.stride), dilation=tuple(self.dilation))
        if min(self.padding) < 0 or min(self.padding_out) < 0:
            raise ValueError(f"{owner}: padding and padding_out must be >= 0, got {self.padding}, {self.padding_out}")
        c_in, c_out = self.channels
        check_channels_div_groups(owner, c_in, c_out, self.groups)
        k1, k2 = self.kernel_size
        fan_in = c_out // self.groups * k1 * k2
        fan_out = c_in // self.groups * k1 * k2
        weight = self.initializer.init_with([c_in, c_out // self.groups, k1, k2], fan_in, fan_out, device)
        bias = self.initializer.init_with([c_out], fan_in, fan_out, device) if self.bias else None
        return ConvTranspose2d(weight, bias, tuple(self.stride), tuple(self.kernel_size), tuple(self.dilation),
                               tuple(self.padding), tuple(self.padding_out), self.groups)


class ConvTranspose2d(Module):
    """Transposed convolution of NCHW input (burn's ``ConvTranspose2d``)."""

    def __init__(self, weight: Param, bias: Param | None, stride: tuple[int, int],
                 kernel_size: tuple[int, int], dilation: tuple[int, int], padding: tuple[int, int],
                 padding_out: tuple[int, int], groups: int):
        self.weight = weight
        self.bias = bias
        self.stride = stride
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.padding_out = padding_out
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        """``input`` ``[batch, c_in, h, w]`` → ``[batch, c_out, h_out, w_out]``."""
        weight = self.weight.val()
        assert_shape(input, [None, weight.shape[0], None, None], name="input")
        bias = self.bias.val() if self.bias is not None else None
        return conv_transpose2d(input, weight, bias, stride=self.stride, padding=self.padding,
                                padding_out=self.padding_out, dilation=self.dilation, groups=self.groups)

    def _display_attrs(self) -> dict:
        c_in, c_out_per_group = self.weight.lazy_shape()[:2]
        return {"ch_in": c_in, "ch_out": c_out_per_group * self.groups, "stride": self.stride,
                "kernel_size": self.kernel_size, "dilation": self.dilation, "groups": self.groups,
                "padding": self.padding, "padding_out": self.padding_out}
