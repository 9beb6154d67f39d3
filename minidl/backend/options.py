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
    """Options of a 2-D pool: kernel, stride, symmetric padding, dilation (max pool only),
    ``count_include_pad`` (average pool only) and ``ceil_mode`` (burn's and torch's flag: round
    the output size up, so a last, partial window covers the input's end)."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int] | None = None
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    count_include_pad: bool = True
    ceil_mode: bool = False

    def __post_init__(self):
        kernel = _pair(self.kernel_size, "kernel_size")
        object.__setattr__(self, "kernel_size", kernel)
        object.__setattr__(self, "stride", kernel if self.stride is None else _pair(self.stride, "stride"))
        object.__setattr__(self, "padding", _pair(self.padding, "padding"))
        object.__setattr__(self, "dilation", _pair(self.dilation, "dilation"))

    def output_size(self, in_hw: tuple[int, int]) -> tuple[int, int]:
        """The spatial output size (torch's ``pooling_output_shape``): ``(size + 2p - d(k-1) - 1)
        / s + 1`` rounded down, or up with ``ceil_mode`` — but a last window must start inside
        the input or its left padding, never in the right padding."""
        out = []
        for size, k, s, p, d in zip(in_hw, self.kernel_size, self.stride, self.padding, self.dilation):
            out.append(pool_output_size(size, k, s, p, d, self.ceil_mode))
        return (out[0], out[1])

    def pads(self, in_hw: tuple[int, int]) -> tuple[int, int, int, int]:
        """``(top, bottom, left, right)`` padding that makes every window of the output lie
        inside the padded input: the symmetric padding, plus the rows and columns a
        ``ceil_mode`` window reaches past the bottom/right padding."""
        (oh, ow), (ph, pw) = self.output_size(in_hw), self.padding
        extra = []
        for size, out, k, s, p, d in zip(in_hw, (oh, ow), self.kernel_size, self.stride,
                                         self.padding, self.dilation):
            needed = (out - 1) * s + d * (k - 1) + 1
            extra.append(max(0, needed - (size + 2 * p)))
        return (ph, ph + extra[0], pw, pw + extra[1])


def pool_output_size(size: int, k: int, s: int, p: int, d: int = 1, ceil_mode: bool = False) -> int:
    """One axis of :meth:`PoolOptions.output_size`."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


@dataclass(frozen=True)
class InterpolateOptions:
    """``mode`` is ``"nearest"`` or ``"bilinear"``; ``align_corners`` (bilinear only, torch's
    flag, default False) maps the corner pixels' centres onto each other, so the scale is
    ``(in - 1) / (out - 1)`` instead of ``in / out``."""

    mode: str = "nearest"
    align_corners: bool = False

    def __post_init__(self):
        if self.mode not in ("nearest", "bilinear"):
            raise ValueError(f"interpolate: mode must be 'nearest' or 'bilinear', found {self.mode!r}")
        if not isinstance(self.align_corners, bool):
            raise TypeError(f"interpolate: align_corners must be a bool, found {self.align_corners!r}")
        if self.align_corners and self.mode != "bilinear":
            raise ValueError("interpolate: align_corners=True only applies to mode 'bilinear', "
                             f"found mode {self.mode!r}")
