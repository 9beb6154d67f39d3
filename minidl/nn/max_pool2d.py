"""``MaxPool2d``: the max over each window of NCHW input (burn-nn ``pool/max_pool2d.rs``).

As in burn (``#[config(default = "kernel_size")]``, since 0.18), ``strides`` default to the kernel
size, like PyTorch's default stride: ``MaxPool2dConfig((2, 2)).init()`` halves height and width.
The padding is a :class:`~minidl.nn.PaddingConfig2d`; pools take symmetric padding only.
"""

from __future__ import annotations

from minidl.module import Module, config
from minidl.module.config import check_positive
from minidl.nn.padding import PaddingConfig2d
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import max_pool2d


def symmetric_pads(owner: str, padding: PaddingConfig2d, height: int, width: int,
                   kernel_size: tuple[int, int], strides: tuple[int, int],
                   dilation: tuple[int, int] = (1, 1)) -> tuple[int, int]:
    """``(pad_h, pad_w)``; a pool cannot pad one side more than the other."""
    top, bottom, left, right = padding.pads(height, width, kernel_size, strides, dilation)
    if top != bottom or left != right:
        raise ValueError(f"{owner}: asymmetric padding (top={top}, left={left}, bottom={bottom}, "
                         f"right={right}) is not supported by pools")
    return top, left


@config
class MaxPool2dConfig:
    """Config of :class:`MaxPool2d`."""

    kernel_size: tuple[int, int]
    strides: tuple[int, int] | None = None  # None: the kernel size, filled in when built
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    dilation: tuple[int, int] = (1, 1)
    ceil_mode: bool = False

    def __post_init__(self) -> None:
        # burn's ``#[config(default = "kernel_size")]``: ``new`` copies the kernel size into
        # ``strides``, so the built config (and its JSON) holds the concrete strides.
        if self.strides is None:
            object.__setattr__(self, "strides", self.kernel_size)

    def init(self) -> MaxPool2d:
        """The pool (no params, so no device)."""
        check_positive("MaxPool2dConfig", kernel_size=tuple(self.kernel_size), strides=tuple(self.strides),
                       dilation=tuple(self.dilation))
        self.padding.check("MaxPool2dConfig")
        return MaxPool2d(tuple(self.kernel_size), tuple(self.strides), self.padding, tuple(self.dilation),
                         self.ceil_mode)


class MaxPool2d(Module):
    """Max pooling over ``[batch, channels, h, w]`` (burn's ``MaxPool2d``)."""

    def __init__(self, kernel_size: tuple[int, int], strides: tuple[int, int],
                 padding: PaddingConfig2d, dilation: tuple[int, int], ceil_mode: bool = False):
        self.ceil_mode = ceil_mode
        self.kernel_size = kernel_size
        self.strides = strides
        self.padding = padding
        self.dilation = dilation

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, h, w]`` → ``[batch, channels, h_out, w_out]``."""
        assert_shape(input, [None, None, None, None], name="input")
        _, _, height, width = input.dims()
        pads = symmetric_pads("MaxPool2d", self.padding, height, width, self.kernel_size, self.strides,
                              self.dilation)
        return max_pool2d(input, self.kernel_size, self.strides, pads, self.dilation, self.ceil_mode)

    def _display_attrs(self) -> dict:
        return {"kernel_size": self.kernel_size, "strides": self.strides, "padding": self.padding,
                "dilation": self.dilation, "ceil_mode": self.ceil_mode}
