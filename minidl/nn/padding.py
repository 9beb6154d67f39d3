"""``PaddingConfig1d`` / ``PaddingConfig2d``: how much a conv or pool pads (burn-nn ``padding.rs``).

``Valid`` pads nothing; ``Same`` pads so that a stride-1 layer keeps the input size — computed
from the input size at forward time, with an odd total putting the extra pad at the END
(bottom/right), the ONNX convention burn follows; ``Explicit`` gives the pads:
``Explicit(left, right)`` in 1-D, ``Explicit(top, left, bottom, right)`` in 2-D.
``PaddingConfig2d.pads`` answers in ``(top, bottom, left, right)`` order, the order of
``ConvOptions.pads`` and of burn's ``calculate_padding_2d_pairs`` (``((top, bottom), (left,
right))``): one order for every computed pad tuple; only ``Explicit``'s fields keep burn's
``(top, left, bottom, right)``.
"""

from __future__ import annotations

from minidl.module import ConfigEnum


def same_padding(kernel_size: int, stride: int, size_in: int, dilation: int = 1) -> tuple[int, int]:
    """``(start, end)`` pads so the output has ``ceil(size_in / stride)`` positions; an odd
    total puts the extra one at the end."""
    size_out = -(-size_in // stride)
    effective_kernel = dilation * (kernel_size - 1) + 1
    total = max((size_out - 1) * stride + effective_kernel - size_in, 0) if size_out > 0 else 0
    start = total // 2
    return start, total - start


class PaddingConfig1d(ConfigEnum):
    """Padding of a 1-D layer: ``Valid``, ``Same`` or ``Explicit(left, right)``."""

    def pads(self, length: int, kernel_size: int, stride: int, dilation: int = 1) -> tuple[int, int]:
        """``(left, right)`` for an input of ``length``."""
        if self.variant == "Valid":
            return 0, 0
        if self.variant == "Same":
            return same_padding(kernel_size, stride, length, dilation)
        return int(self[0]), int(self[1])


class Same1d(PaddingConfig1d, variant="Same"):
    """Pad so that a stride-1 layer keeps the input length."""


class Valid1d(PaddingConfig1d, variant="Valid"):
    """No padding."""


class Explicit1d(PaddingConfig1d, variant="Explicit", tuple_like=True):
    """``left`` and ``right`` pads (JSON: ``{"Explicit": [left, right]}``)."""

    left: int
    right: int


class PaddingConfig2d(ConfigEnum):
    """Padding of a 2-D layer: ``Valid``, ``Same`` or ``Explicit(top, left, bottom, right)``."""

    def pads(self, height: int, width: int, kernel_size: tuple[int, int], stride: tuple[int, int],
             dilation: tuple[int, int] = (1, 1)) -> tuple[int, int, int, int]:
        """``(top, bottom, left, right)`` for an input of ``height`` x ``width`` (the order of
        ``ConvOptions.pads``; ``Explicit``'s own fields run top, left, bottom, right)."""
        if self.variant == "Valid":
            return 0, 0, 0, 0
        if self.variant == "Same":
            top, bottom = same_padding(kernel_size[0], stride[0], height, dilation[0])
            left, right = same_padding(kernel_size[1], stride[1], width, dilation[1])
            return top, bottom, left, right
        top, left, bottom, right = (int(v) for v in self)
        return top, bottom, left, right

    def check(self, owner: str) -> None:
        """Reject negative explicit pads."""
        if self.variant == "Explicit" and min(self) < 0:
            raise ValueError(f"{owner}: padding must be >= 0, got {self}")


class Same2d(PaddingConfig2d, variant="Same"):
    """Pad so that a stride-1 layer keeps the input height and width."""


class Valid2d(PaddingConfig2d, variant="Valid"):
    """No padding."""


class Explicit2d(PaddingConfig2d, variant="Explicit", tuple_like=True):
    """The four pads (JSON: ``{"Explicit": [top, left, bottom, right]}``)."""

    top: int
    left: int
    bottom: int
    right: int
