"""Option records passed to module ops (burn's ``ConvOptions``, ``InterpolateOptions``, ...)."""

from __future__ import annotations

from dataclasses import dataclass


def _pair(value, name: str) -> tuple[int, int]:
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"{name}: expected an int or a pair, found {value}")
    return value  # type: ignore[return-value]


@dataclass(frozen=True)
class ConvOptions:
    """Options of a 2-D convolution. ``padding`` is ``(top, left)``; ``padding_end`` is
    ``(bottom, right)`` and defaults to ``padding`` (asymmetric padding when they differ)."""

    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    padding_end: tuple[int, int] | None = None

    def __post_init__(self):
        object.__setattr__(self, "stride", _pair(self.stride, "stride"))
        object.__setattr__(self, "padding", _pair(self.padding, "padding"))
        object.__setattr__(self, "dilation", _pair(self.dilation, "dilation"))
        end = self.padding if self.padding_end is None else _pair(self.padding_end, "padding_end")
        object.__setattr__(self, "padding_end", end)
        if min(self.stride) < 1 or min(self.dilation) < 1 or self.groups < 1:
            raise ValueError(f"ConvOptions: stride, dilation and groups must be >= 1, found {self}")
        if min(self.padding) < 0 or min(self.padding_end) < 0:
            raise ValueError(f"ConvOptions: padding must be >= 0, found {self}")

    @property
    def pads(self) -> tuple[int, int, int, int]:
        """``(top, bottom, left, right)``."""
        return (self.padding[0], self.padding_end[0], self.padding[1], self.padding_end[1])

    def output_size(self, in_hw: tuple[int, int], kernel_hw: tuple[int, int]) -> tuple[int, int]:
        """The spatial output size of a conv2d with these options."""
        top, bottom, left, right = self.pads
        out = []
        for size, k, s, d, p in zip(in_hw, kernel_hw, self.stride, self.dilation, (top + bottom, left + right)):
            out.append((size + p - d * (k - 1) - 1) // s + 1)
        return (out[0], out[1])


@dataclass(frozen=True)
class ConvTransposeOptions:
    """Options of a transposed 2-D convolution (torch's ``conv_transpose2d`` arguments)."""

    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    padding_out: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    def __post_init__(self):
        for name in ("stride", "padding", "padding_out", "dilation"):
            object.__setattr__(self, name, _pair(getattr(self, name), name))


@dataclass(frozen=True)
class PoolOptions:
    """Options of a 2-D pool: kernel, stride, symmetric padding, dilation (max pool only)."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int] | None = None
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    count_include_pad: bool = True

    def __post_init__(self):
        kernel = _pair(self.kernel_size, "kernel_size")
        object.__setattr__(self, "kernel_size", kernel)
        object.__setattr__(self, "stride", kernel if self.stride is None else _pair(self.stride, "stride"))
        object.__setattr__(self, "padding", _pair(self.padding, "padding"))
        object.__setattr__(self, "dilation", _pair(self.dilation, "dilation"))


@dataclass(frozen=True)
class InterpolateOptions:
    """``mode`` is ``"nearest"`` or ``"bilinear"`` (align_corners=False, as torch's default)."""

    mode: str = "nearest"

    def __post_init__(self):
        if self.mode not in ("nearest", "bilinear"):
            raise ValueError(f"interpolate: mode must be 'nearest' or 'bilinear', found {self.mode!r}")
