"""Argument parsing and checks shared by the functional ops in :mod:`minidl.tensor.module`
(burn does this with ``impl Into<ConvOptions>`` and ``TensorCheck``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minidl.backend.dtype import Kind
from minidl.backend.options import PoolOptions
from minidl.tensor.base import TensorBase
from minidl.tensor.check import fail, fmt_shape


def float_arg(ops: str, value: Any, name: str) -> None:
    """``value`` must be a Float Tensor."""
    if not isinstance(value, TensorBase):
        fail(ops, f"Argument {name} must be a Float tensor.", f"Found {type(value).__name__}.", kind=True)
    if value.kind is not Kind.FLOAT:
        fail(ops, f"Argument {name} must be a Float tensor.", f"Found a {value._describe()}.", kind=True)


def optional_float_arg(ops: str, value: Any, name: str) -> None:
    """``value`` is ``None`` or a Float Tensor."""
    if value is not None:
        float_arg(ops, value, name)


def pair(ops: str, value: Any, name: str) -> tuple[int, int]:
    """An int or a pair of ints, as a pair."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, Sequence) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (int(value[0]), int(value[1]))
    fail(ops, f"Argument {name} must be an int or a pair of ints.", f"Found {value!r}.")
    raise AssertionError


def conv_padding(ops: str, padding: Any, kernel: Sequence[int], dilation: Any, stride: Any) -> dict:
    """``padding``/``padding_end`` for ``ConvOptions`` from an int, ``(h, w)``,
    ``(top, bottom, left, right)``, ``"valid"`` or ``"same"`` (torch: extra padding goes to
    the bottom/right)."""
    if padding == "valid":
        return {"padding": (0, 0)}
    if padding == "same":
        if pair(ops, stride, "stride") != (1, 1):
            fail(ops, "padding='same' needs stride 1.", f"Found stride={stride!r}.")
        dil = pair(ops, dilation, "dilation")
        totals = [d * (k - 1) for d, k in zip(dil, kernel)]
        begin = tuple(t // 2 for t in totals)
        return {"padding": begin, "padding_end": tuple(t - b for t, b in zip(totals, begin))}
    if isinstance(padding, Sequence) and not isinstance(padding, str) and len(padding) == 4:
        top, bottom, left, right = (int(p) for p in padding)
        if min(top, bottom, left, right) < 0:
            fail(ops, "Argument padding must be >= 0.", f"Found {tuple(padding)}.")
        return {"padding": (top, left), "padding_end": (bottom, right)}
    if isinstance(padding, str) or (isinstance(padding, Sequence) and len(padding) != 2):
        fail(ops, "Argument padding must be an int, (h, w), (top, bottom, left, right), 'valid' or 'same'.",
             f"Found {padding!r}.")
    p = pair(ops, padding, "padding")
    if min(p) < 0:
        fail(ops, "Argument padding must be >= 0.", f"Found {padding!r}.")
    return {"padding": p}


def spatial_output(ops: str, size: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                   dilation: Sequence[int], pad_total: Sequence[int]) -> tuple[int, ...]:
    """The output size of a sliding window; fails when the (padded) input is smaller than the
    dilated kernel."""
    out = []
    for n, k, s, d, p in zip(size, kernel, stride, dilation, pad_total):
        span = d * (k - 1) + 1
        if n + p < span:
            fail(ops, "The padded input is smaller than the (dilated) kernel.",
                 f"Expected input size + padding >= {span}, found input {fmt_shape(size)} with padding {list(pad_total)} "
                 f"and kernel {fmt_shape(kernel)}, dilation {list(dilation)}.")
        out.append((n + p - span) // s + 1)
    return tuple(out)


def pool_options(ops: str, x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                 count_include_pad: bool = True, ceil_mode: bool = False) -> PoolOptions:
    """Checked ``PoolOptions`` for a 2-D pool over the NCHW tensor ``x``."""
    float_arg(ops, x, "x")
    if x.rank != 4:
        fail(ops, "Argument x must have 4 dims [batch, channels, height, width].", f"Found shape {fmt_shape(x.shape)}.")
    kernel = pair(ops, kernel_size, "kernel_size")
    strides = kernel if stride is None else pair(ops, stride, "stride")
    pads, dil = pair(ops, padding, "padding"), pair(ops, dilation, "dilation")
    for name, value in (("kernel_size", kernel), ("stride", strides), ("dilation", dil)):
        if min(value) < 1:
            fail(ops, f"Argument {name} must be >= 1.", f"Found {value}.")
    for p, k, d in zip(pads, kernel, dil):
        if not 0 <= p <= (d * (k - 1) + 1) // 2:
            fail(ops, "Argument padding must be at most half of the (dilated) kernel size.",
                 f"Found padding={pads} for kernel_size={kernel}, dilation={dil}.")
    for name, flag in (("count_include_pad", count_include_pad), ("ceil_mode", ceil_mode)):
        if not isinstance(flag, bool):
            fail(ops, f"Argument {name} must be a bool.", f"Found {flag!r}.", kind=True)
    spatial_output(ops, x.shape[2:], kernel, strides, dil, tuple(2 * p for p in pads))
    return PoolOptions(kernel, strides, pads, dil, count_include_pad, ceil_mode)
