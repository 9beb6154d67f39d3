"""1-D pools and the adaptive max pools (burn-nn ``pool/max_pool1d.rs``, ``avg_pool1d.rs``,
``adaptive_avg_pool1d.rs``; ``AdaptiveMaxPool1d``/``2d`` are torch's, burn has none). Each
``forward`` checks the rank and calls one functional op of :mod:`minidl.tensor.module`."""

from __future__ import annotations

from minidl.module import Module, config
from minidl.module.config import check_positive
from minidl.tensor import Tensor, assert_shape
from minidl.tensor import module as fn


def _check_padding(owner: str, padding: int, kernel_size: int, dilation: int = 1) -> None:
    if isinstance(padding, bool) or not isinstance(padding, int) or not 0 <= padding <= (dilation * (kernel_size - 1) + 1) // 2:
        raise ValueError(f"{owner}: padding must be an int in [0, kernel_size // 2], got {padding!r}")


@config
class MaxPool1dConfig:
    """Config of :class:`MaxPool1d` (burn's fields; ``stride`` defaults to the kernel size, burn's
    ``#[config(default = "kernel_size")]`` since 0.18, and PyTorch's default)."""

    kernel_size: int
    stride: int | None = None  # None: the kernel size, filled in when built
    padding: int = 0
    dilation: int = 1
    ceil_mode: bool = False

    def __post_init__(self) -> None:
        # burn's ``#[config(default = "kernel_size")]``: the built config holds the concrete stride
        if self.stride is None:
            object.__setattr__(self, "stride", self.kernel_size)

    def init(self) -> MaxPool1d:
        """The pool (no params, so no device)."""
        check_positive("MaxPool1dConfig", kernel_size=self.kernel_size, stride=self.stride, dilation=self.dilation)
        _check_padding("MaxPool1dConfig", self.padding, self.kernel_size, self.dilation)
        return MaxPool1d(self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


class MaxPool1d(Module):
    """Max pooling over ``[batch, channels, length]`` (burn's ``MaxPool1d``)."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int, ceil_mode: bool):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, length]`` → ``[batch, channels, length_out]``."""
        assert_shape(input, [None, None, None], name="input")
        return fn.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

    def _display_attrs(self) -> dict:
        return {"kernel_size": self.kernel_size, "stride": self.stride, "padding": self.padding,
                "dilation": self.dilation, "ceil_mode": self.ceil_mode}


@config
class AvgPool1dConfig:
    """Config of :class:`AvgPool1d` (burn's fields; ``stride`` defaults to the kernel size, as
    :class:`MaxPool1dConfig`'s)."""

    kernel_size: int
    stride: int | None = None  # None: the kernel size, filled in when built
    padding: int = 0
    count_include_pad: bool = True
    ceil_mode: bool = False

    def __post_init__(self) -> None:
        # burn's ``#[config(default = "kernel_size")]``: the built config holds the concrete stride
        if self.stride is None:
            object.__setattr__(self, "stride", self.kernel_size)

    def init(self) -> AvgPool1d:
        """The pool (no params, so no device)."""
        check_positive("AvgPool1dConfig", kernel_size=self.kernel_size, stride=self.stride)
        _check_padding("AvgPool1dConfig", self.padding, self.kernel_size)
        return AvgPool1d(self.kernel_size, self.stride, self.padding, self.count_include_pad, self.ceil_mode)


class AvgPool1d(Module):
    """Average pooling over ``[batch, channels, length]`` (burn's ``AvgPool1d``)."""

    def __init__(self, kernel_size: int, stride: int, padding: int, count_include_pad: bool, ceil_mode: bool):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad, self.ceil_mode = count_include_pad, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, length]`` → ``[batch, channels, length_out]``."""
        assert_shape(input, [None, None, None], name="input")
        return fn.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.count_include_pad,
                             self.ceil_mode)

    def _display_attrs(self) -> dict:
        return {"kernel_size": self.kernel_size, "stride": self.stride, "padding": self.padding,
                "count_include_pad": self.count_include_pad, "ceil_mode": self.ceil_mode}


@config
class AdaptiveAvgPool1dConfig:
    """Config of :class:`AdaptiveAvgPool1d`."""

    output_size: int

    def init(self) -> AdaptiveAvgPool1d:
        """The pool (no params, so no device)."""
        check_positive("AdaptiveAvgPool1dConfig", output_size=self.output_size)
        return AdaptiveAvgPool1d(self.output_size)


class AdaptiveAvgPool1d(Module):
    """Adaptive average pooling over ``[batch, channels, length]`` (burn's ``AdaptiveAvgPool1d``)."""

    def __init__(self, output_size: int):
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, length]`` → ``[batch, channels, output_size]``."""
        assert_shape(input, [None, None, None], name="input")
        return fn.adaptive_avg_pool1d(input, self.output_size)

    def _display_attrs(self) -> dict:
        return {"output_size": self.output_size}


@config
class AdaptiveMaxPool1dConfig:
    """Config of :class:`AdaptiveMaxPool1d`."""

    output_size: int

    def init(self) -> AdaptiveMaxPool1d:
        """The pool (no params, so no device)."""
        check_positive("AdaptiveMaxPool1dConfig", output_size=self.output_size)
        return AdaptiveMaxPool1d(self.output_size)


class AdaptiveMaxPool1d(Module):
    """Adaptive max pooling over ``[batch, channels, length]`` (torch's ``nn.AdaptiveMaxPool1d``)."""

    def __init__(self, output_size: int):
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, length]`` → ``[batch, channels, output_size]``."""
        assert_shape(input, [None, None, None], name="input")
        return fn.adaptive_max_pool1d(input, self.output_size)

    def _display_attrs(self) -> dict:
        return {"output_size": self.output_size}


@config
class AdaptiveMaxPool2dConfig:
    """Config of :class:`AdaptiveMaxPool2d`."""

    output_size: tuple[int, int]

    def init(self) -> AdaptiveMaxPool2d:
        """The pool (no params, so no device)."""
        check_positive("AdaptiveMaxPool2dConfig", output_size=tuple(self.output_size))
        return AdaptiveMaxPool2d(tuple(self.output_size))


class AdaptiveMaxPool2d(Module):
    """Adaptive max pooling over ``[batch, channels, h, w]`` (torch's ``nn.AdaptiveMaxPool2d``)."""

    def __init__(self, output_size: tuple[int, int]):
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, h, w]`` → ``[batch, channels, *output_size]``."""
        assert_shape(input, [None, None, None, None], name="input")
        return fn.adaptive_max_pool2d(input, self.output_size)

    def _display_attrs(self) -> dict:
        return {"output_size": self.output_size}
