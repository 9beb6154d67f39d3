"""``AvgPool2d``: the mean over each window of NCHW input (burn-nn ``pool/avg_pool2d.rs``).

As in burn (``#[config(default = "kernel_size")]``, since 0.18), ``strides`` default to the kernel
size, like PyTorch's default stride; ``count_include_pad`` (default true, like burn and
PyTorch) counts padded zeros in the divisor.
"""

from __future__ import annotations

from minidl.module import Module, config
from minidl.module.config import check_positive
from minidl.nn.max_pool2d import symmetric_pads
from minidl.nn.padding import PaddingConfig2d
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import avg_pool2d


@config
class AvgPool2dConfig:
    """Config of :class:`AvgPool2d`."""

    kernel_size: tuple[int, int]
    strides: tuple[int, int] | None = None  # None: the kernel size, filled in when built
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    count_include_pad: bool = True
    ceil_mode: bool = False

    def __post_init__(self) -> None:
        # burn's ``#[config(default = "kernel_size")]``, as MaxPool2dConfig
        if self.strides is None:
            object.__setattr__(self, "strides", self.kernel_size)

    def init(self) -> AvgPool2d:
        """The pool (no params, so no device)."""
        check_positive("AvgPool2dConfig", kernel_size=tuple(self.kernel_size), strides=tuple(self.strides))
        self.padding.check("AvgPool2dConfig")
        return AvgPool2d(tuple(self.kernel_size), tuple(self.strides), self.padding, self.count_include_pad,
                         self.ceil_mode)


class AvgPool2d(Module):
    """Average pooling over ``[batch, channels, h, w]`` (burn's ``AvgPool2d``)."""

    def __init__(self, kernel_size: tuple[int, int], strides: tuple[int, int],
                 padding: PaddingConfig2d, count_include_pad: bool, ceil_mode: bool = False):
        self.ceil_mode = ceil_mode
        self.kernel_size = kernel_size
        self.strides = strides
        self.padding = padding
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, h, w]`` → ``[batch, channels, h_out, w_out]``."""
        assert_shape(input, [None, None, None, None], name="input")
        _, _, height, width = input.dims()
        pads = symmetric_pads("AvgPool2d", self.padding, height, width, self.kernel_size, self.strides)
        return avg_pool2d(input, self.kernel_size, self.strides, pads, self.count_include_pad, self.ceil_mode)

    def _display_attrs(self) -> dict:
        return {"kernel_size": self.kernel_size, "strides": self.strides, "padding": self.padding,
                "count_include_pad": self.count_include_pad, "ceil_mode": self.ceil_mode}
