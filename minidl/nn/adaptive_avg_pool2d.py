"""``AdaptiveAvgPool2d``: average-pool to a fixed output size (burn-nn
``pool/adaptive_avg_pool2d.rs``), with PyTorch's bins."""

from __future__ import annotations

from minidl.module import Module, config
from minidl.module.config import check_positive
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import adaptive_avg_pool2d


@config
class AdaptiveAvgPool2dConfig:
    """Config of :class:`AdaptiveAvgPool2d`."""

    output_size: tuple[int, int]

    def init(self) -> AdaptiveAvgPool2d:
        """The pool (no params, so no device)."""
        check_positive("AdaptiveAvgPool2dConfig", output_size=tuple(self.output_size))
        return AdaptiveAvgPool2d(tuple(self.output_size))


class AdaptiveAvgPool2d(Module):
    """Adaptive average pooling over ``[batch, channels, h, w]`` (burn's ``AdaptiveAvgPool2d``)."""

    def __init__(self, output_size: tuple[int, int]):
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, h, w]`` → ``[batch, channels, *output_size]``."""
        assert_shape(input, [None, None, None, None], name="input")
        return adaptive_avg_pool2d(input, self.output_size)

    def _display_attrs(self) -> dict:
        return {"output_size": self.output_size}
