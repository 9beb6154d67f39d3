"""Slicing and indexing (burn-tensor ``api/base.rs``): ``slice``, ``t[...]``, ``slice_assign``,
``gather``, ``scatter``, ``select``, ``select_assign``, ``mask_where``, ``mask_fill``, ``pad``.

``slice`` takes burn-style ranges, one per leading dim: ``None`` (the whole dim), an int
(``i..i+1``, the dim is kept), a ``(start, end)`` pair (negative values count from the end;
out of bounds is an error, as burn panics), a ``range`` or a Python ``slice``. ``t[...]``
follows Python and torch instead: ints drop their dim, slices clamp, ``...`` and ``None``
work, and one Int tensor index picks slices like ``select``. Negative steps become a positive
step plus ``flip``, because backends only take positive steps. As in burn, ``scatter`` and
``select_assign`` *add* their values.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, Self

from minidl.backend.dtype import Kind
from minidl.dispatch import Dispatch
from minidl.tensor.base import TensorBase
from minidl.tensor.check import (
    broadcast_shape,
    check_broadcast_to,
    fail,
    fmt_shape,
    norm_dim,
)
from minidl.tensor.conversion import ConversionOps
from minidl.tensor.creation import CreationOps
from minidl.tensor.shape_ops import ShapeOps


def _bound(ops: str, value: Any, size: int, dim: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        fail(ops, f"The {what} of the range for dim {dim} must be an int.", f"Found {value!r}.", kind=True)
    value = int(value)
    return value + size if value < 0 else value


def _resolve(ops: str, spec: Any, size: int, dim: int) -> tuple[slice, bool]:
    """One range spec → a positive-step ``slice`` with explicit bounds, and whether to flip."""
    if spec is None:
        return slice(0, size, 1), False
    if isinstance(spec, slice):
        if spec.step == 0:
            fail(ops, f"The step of the range for dim {dim} must not be 0.", f"Found {spec}.")
        start, stop, step = spec.indices(size)  # Python's rule: clamp to the dim
    elif isinstance(spec, range | tuple | list):
        if isinstance(spec, range):
            start, stop, step = spec.start, spec.stop, spec.step
        elif len(spec) in (2, 3):
            start, stop = spec[0], spec[1]
            step = spec[2] if len(spec) == 3 else 1
        else:
            fail(ops, f"A range for dim {dim} must be (start, end) or (start, end, step).", f"Found {spec!r}.")
        start = 0 if start is None else _bound(ops, start, size, dim, "start")
        stop = size if stop is None else _bound(ops, stop, size, dim, "end")
        step = 1 if step is None else int(step)
        if step == 0:
            fail(ops, f"The step of the range for dim {dim} must not be 0.", f"Found {spec!r}.")
        if not 0 <= start <= stop <= size:
            fail(ops, "The provided range exceeds the tensor size or ends before it starts.",
                 f"Expected 0 <= start <= end <= {size} for dim {dim}, found {start}..{stop} (spec {spec!r}).")
        if step < 0:  # burn's reversed range: the elements of start..end, read from the end
            start, stop = stop - 1, start - 1
    elif isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        index = int(spec) + size if spec < 0 else int(spec)
        if not 0 <= index < size:
            fail(ops, "The provided index exceeds the tensor size.",
                 f"Expected -{size} <= index < {size} for dim {dim}, found {spec}.")
        return slice(index, index + 1, 1), False
    else:
        fail(ops, f"A range for dim {dim} must be None, an int, a (start, end) pair, a range or a slice.",
             f"Found {spec!r} ({type(spec).__name__}).", kind=True)
        raise AssertionError
    if step > 0:
        return slice(start, max(start, stop), step), False
    picked = range(start, stop, step)
    if not picked:
        return slice(0, 0, 1), False
    return slice(picked[-1], picked[0] + 1, -step), True


def _length(s: slice) -> int:
    return len(range(s.start, s.stop, s.step))


class IndexingOps(ShapeOps, CreationOps, ConversionOps):
    """Slicing, gathering, scattering and masking."""

    __slots__ = ()

    def _slices(self, ops: str, ranges: Sequence[Any]) -> tuple[list[slice], list[int], tuple[int, ...]]:
        """Resolved slices for the leading dims, the dims to flip, and the region's shape."""
        shape = self.shape
        if not isinstance(ranges, list | tuple):
            ranges = [ranges]
        if len(ranges) > len(shape):
            fail(ops, "The provided ranges have more dims than the tensor.",
                 f"Expected at most {len(shape)} ranges for shape {fmt_shape(shape)}, found {len(ranges)}.")
        slices, flips = [], []
        for d, spec in enumerate(ranges):
            s, flip = _resolve(ops, spec, shape[d], d)
            slices.append(s)
            if flip:
                flips.append(d)
        region = tuple(_length(s) for s in slices) + shape[len(slices):]
        return slices, flips, region

    def slice(self, ranges: Sequence[Any]) -> Self:
        """A sub-tensor: one burn-style range per leading dim (see the module docstring)."""
        slices, flips, region = self._slices("slice", ranges)
        out = self
        if region != self.shape or any(s.step != 1 for s in slices):
            op = self._by_kind(float=Dispatch.float_slice, int=Dispatch.int_slice, bool=Dispatch.bool_slice)
            out = self._wrap(op(self.primitive, slices))
        return out.flip(flips) if flips else out

    def __getitem__(self, key: Any) -> Self:
        key = key if isinstance(key, tuple) else (key,)
        shape, tensor_keys = self.shape, [k for k in key if isinstance(k, TensorBase)]
        if key.count(Ellipsis) > 1:
            raise IndexError("Tensor[...]: an index can only have a single ellipsis ('...')")
        used = sum(1 for k in key if k is not None and k is not Ellipsis)
        if used > len(shape):
            raise IndexError(f"Tensor[...]: too many indices for a tensor of shape {fmt_shape(shape)}: "
                             f"expected at most {len(shape)}, found {used}")
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (len(shape) - used) + key[i + 1:]
        if len(tensor_keys) > 1:
            raise TypeError("Tensor[...]: at most one Int tensor index is supported; use gather/select")
        ranges: list[Any] = []
        plan: list[Any] = []  # per output dim: an input dim, "new" (None) — ints are dropped
        picked: tuple[int, TensorBase] | None = None
        d = 0
        for k in key:
            if k is None:
                plan.append("new")
                continue
            if isinstance(k, TensorBase):
                if k.kind is not Kind.INT:
                    raise TypeError(f"Tensor[...]: a tensor index must be an Int tensor, found a {k._describe()}; "
                                    "for a Bool mask use mask_where / mask_fill")
                picked = (d, k)
                ranges.append(None)
                plan.append(d)
            elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
                if not -shape[d] <= k < shape[d]:
                    raise IndexError(f"Tensor[...]: index {k} is out of range for dim {d} of size {shape[d]} "
                                     f"(shape {fmt_shape(shape)})")
                ranges.append(int(k))
            elif isinstance(k, slice):
                ranges.append(k)
                plan.append(d)
            else:
                raise TypeError(f"Tensor[...]: unsupported index {k!r} ({type(k).__name__}); use ints, slices, "
                                "..., None or one Int tensor (mask_where / select for more)")
            d += 1
        plan.extend(range(d, len(shape)))
        out = self.slice(ranges) if ranges else self
        sizes = out.shape
        if picked is not None:
            dim, index = picked
            out = out.select(dim, index.flatten() if index.rank != 1 else index)
            sizes = out.shape[:dim] + tuple(index.shape) + out.shape[dim + 1:]
            plan = [p if p == "new" or p <= dim else p + index.rank - 1 for p in plan]
            at = plan.index(dim)
            plan[at:at + 1] = list(range(dim, dim + index.rank))
        final = tuple(1 if p == "new" else sizes[p] for p in plan)
        return out.reshape(final) if final != out.shape else out

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError("minidl tensors are immutable, as burn's: use t = t.slice_assign(ranges, values) "
                        "or t.slice_fill(ranges, value)")

    def slice_assign(self, ranges: Sequence[Any], values: Self) -> Self:
        """A copy with the region ``ranges`` replaced by ``values`` (broadcast to the region)."""
        self._same_kind("slice_assign", values, "values")
        slices, flips, region = self._slices("slice_assign", ranges)
        if values.shape != region:
            try:
                check_broadcast_to("slice_assign", values.shape, region, "values")
            except ValueError:
                fail("slice_assign", "The value tensor must match the region selected by the ranges.",
                     f"Expected values of shape {fmt_shape(region)} (or broadcastable to it), "
                     f"found {fmt_shape(values.shape)}.")
            values = values.expand(region)
        if flips:
            values = values.flip(flips)
        if self.kind is Kind.BOOL:
            return self.int().slice_assign(slices, values.int()).bool()
        op = self._by_kind(float=Dispatch.float_slice_assign, int=Dispatch.int_slice_assign)
        return self._wrap(op(self.primitive, slices, values.primitive))

    def slice_fill(self, ranges: Sequence[Any], value: float) -> Self:
        """A copy with the region ``ranges`` set to ``value``."""
        _, _, region = self._slices("slice_fill", ranges)
        return self.slice_assign(ranges, type(self).full(region, value, self.device, self.dtype))

    # ----- index-tensor ops -----------------------------------------------------------------
    def _indices(self, ops: str, indices: Any, arg: str = "indices") -> None:
        if not isinstance(indices, TensorBase) or indices.kind is not Kind.INT:
            found = indices._describe() if isinstance(indices, TensorBase) else type(indices).__name__
            fail(ops, f"Argument {arg} must be an Int tensor.", f"Found {found}.", kind=True)

    def gather(self, dim: int, indices: Self) -> Self:
        """``out[..., i, ...] = self[..., indices[..., i, ...], ...]`` along ``dim`` (torch.gather);
        ``indices`` has the tensor's rank and its sizes outside ``dim``."""
        d = norm_dim("gather", dim, self.rank, shape=self.shape)
        self._indices("gather", indices)
        if indices.rank != self.rank or any(
            a != b for i, (a, b) in enumerate(zip(indices.shape, self.shape)) if i != d
        ):
            fail("gather", "The indices must have the tensor's shape except at the gathered dim.",
                 f"Expected the shape of {fmt_shape(self.shape)} with any size at dim {d}, "
                 f"found {fmt_shape(indices.shape)}.")
        if self.kind is Kind.BOOL:
            return self.int().gather(d, indices).bool()
        op = self._by_kind(float=Dispatch.float_gather, int=Dispatch.int_gather)
        return self._wrap(op(d, self.primitive, indices.primitive))

    def scatter(self, dim: int, indices: Self, values: Self) -> Self:
        """A copy with ``values`` *added* at ``indices`` along ``dim``: burn's scatter with
        ``IndexingUpdateOp::Add`` (burn's takes the rule as an argument; this one takes none);
        ``indices`` and ``values`` share a shape, which matches the tensor's outside ``dim``."""
        d = norm_dim("scatter", dim, self.rank, shape=self.shape)
        self._indices("scatter", indices)
        self._same_kind("scatter", values, "values")
        if indices.shape != values.shape:
            fail("scatter", "The indices and values must have the same shape.",
                 f"Found indices {fmt_shape(indices.shape)}, values {fmt_shape(values.shape)}.")
        if indices.rank != self.rank or any(
            a != b for i, (a, b) in enumerate(zip(indices.shape, self.shape)) if i != d
        ):
            fail("scatter", "The indices must have the tensor's shape except at the scattered dim.",
                 f"Expected the shape of {fmt_shape(self.shape)} with any size at dim {d}, "
                 f"found {fmt_shape(indices.shape)}.")
        if self.kind is Kind.BOOL:
            fail("scatter", "Argument self must be a Float or Int tensor (scatter adds).",
                 f"Found a {self._describe()}.", kind=True)
        op = self._by_kind(float=Dispatch.float_scatter, int=Dispatch.int_scatter)
        return self._wrap(op(d, self.primitive, indices.primitive, values.primitive))

    def select(self, dim: int, indices: Self) -> Self:
        """Whole slices along ``dim`` picked by the 1-D Int ``indices`` (index_select)."""
        d = norm_dim("select", dim, self.rank, shape=self.shape)
        self._indices("select", indices)
        if indices.rank != 1:
            fail("select", "Argument indices must have 1 dim.", f"Found shape {fmt_shape(indices.shape)}.")
        if self.kind is Kind.BOOL:
            return self.int().select(d, indices).bool()
        op = self._by_kind(float=Dispatch.float_select, int=Dispatch.int_select)
        return self._wrap(op(self.primitive, d, indices.primitive))

    def select_assign(self, dim: int, indices: Self, values: Self) -> Self:
        """A copy with ``values`` *added* into the slices ``indices`` along ``dim``."""
        d = norm_dim("select_assign", dim, self.rank, shape=self.shape)
        self._indices("select_assign", indices)
        self._same_kind("select_assign", values, "values")
        if indices.rank != 1:
            fail("select_assign", "Argument indices must have 1 dim.", f"Found shape {fmt_shape(indices.shape)}.")
        expected = self.shape[:d] + (indices.shape[0],) + self.shape[d + 1:]
        if values.shape != expected:
            fail("select_assign", "The values must have the tensor's shape with len(indices) at dim.",
                 f"Expected values of shape {fmt_shape(expected)}, found {fmt_shape(values.shape)}.")
        if self.kind is Kind.BOOL:
            fail("select_assign", "Argument self must be a Float or Int tensor (select_assign adds).",
                 f"Found a {self._describe()}.", kind=True)
        op = self._by_kind(float=Dispatch.float_select_assign, int=Dispatch.int_select_assign)
        return self._wrap(op(self.primitive, d, indices.primitive, values.primitive))

    # ----- masks ----------------------------------------------------------------------------
    def _mask(self, ops: str, mask: Any) -> None:
        if not isinstance(mask, TensorBase) or mask.kind is not Kind.BOOL:
            found = mask._describe() if isinstance(mask, TensorBase) else type(mask).__name__
            fail(ops, "Argument mask must be a Bool tensor.", f"Found {found}.", kind=True)

    def mask_where(self, mask: Self, value: Self) -> Self:
        """``value`` where ``mask`` is true, else ``self``; the three shapes broadcast."""
        self._mask("mask_where", mask)
        self._same_kind("mask_where", value, "value")
        shape = broadcast_shape("mask_where", self.shape, mask.shape, ("self", "mask"))
        broadcast_shape("mask_where", shape, value.shape, ("self and mask", "value"))
        if self.kind is Kind.BOOL:
            return self.int().mask_where(mask, value.int()).bool()
        op = self._by_kind(float=Dispatch.float_mask_where, int=Dispatch.int_mask_where)
        return self._wrap(op(self.primitive, mask.primitive, value.primitive))

    def mask_fill(self, mask: Self, value: float) -> Self:
        """``value`` where ``mask`` is true, else ``self``; ``mask`` broadcasts to the tensor."""
        self._mask("mask_fill", mask)
        check_broadcast_to("mask_fill", mask.shape, self.shape, "mask")
        if self.kind is Kind.BOOL:
            return self.int().mask_fill(mask, int(bool(value))).bool()
        op = self._by_kind(float=Dispatch.float_mask_fill, int=Dispatch.int_mask_fill)
        return self._wrap(op(self.primitive, mask.primitive, self._scalar("mask_fill", value)))

    def pad(self, padding: Sequence[int], value: float = 0.0) -> Self:
        """Pad the last two dims with ``value``: ``padding`` is ``(left, right, top, bottom)``
        as burn's ``pad`` (``(left, right)`` pads the last dim only). Built from ``full`` and
        ``slice_assign``, as burn does."""
        padding = tuple(padding)
        if len(padding) == 2:
            padding = padding + (0, 0)
        if len(padding) != 4 or any(not isinstance(p, int) or p < 0 for p in padding):
            fail("pad", "Argument padding must be (left, right, top, bottom) of ints >= 0.", f"Found {padding!r}.")
        left, right, top, bottom = padding
        shape = self.shape
        if (top or bottom) and len(shape) < 2:
            fail("pad", "Padding top or bottom needs a tensor with at least 2 dims.",
                 f"Found shape {fmt_shape(shape)} and padding {padding}.")
        if not any(padding):
            return self
        if len(shape) >= 2:
            h, w = shape[-2], shape[-1]
            new_shape = shape[:-2] + (h + top + bottom, w + left + right)
            ranges: list[Any] = [None] * (len(shape) - 2) + [(top, top + h), (left, left + w)]
        else:
            new_shape, ranges = (shape[0] + left + right,), [(left, left + shape[0])]
        return type(self).full(new_shape, value, self.device, self.dtype).slice_assign(ranges, self)

    # ----- pieces along a dim ---------------------------------------------------------------
    def narrow(self, dim: int, start: int, length: int) -> Self:
        """``length`` elements along ``dim`` from ``start`` (burn's and torch's ``narrow``)."""
        d = norm_dim("narrow", dim, self.rank, shape=self.shape)
        size = self.shape[d]
        start = start + size if start < 0 else start
        if start < 0 or length < 0 or start + length > size:
            fail("narrow", "The range doesn't fit in the dim.",
                 f"Expected 0 <= start and start + length <= {size} on dim {dim}, found start={start}, length={length}.")
        ranges: list[Any] = [None] * d + [(start, start + length)]
        return self.slice(ranges)

    def chunk(self, chunks: int, dim: int = 0) -> list[Self]:
        """Split into ``chunks`` pieces along ``dim`` (the last may be smaller), as torch."""
        d = norm_dim("chunk", dim, self.rank, shape=self.shape)
        if chunks < 1:
            fail("chunk", "Argument chunks must be at least 1.", f"Found {chunks}.")
        size = self.shape[d]
        step = -(-size // chunks) if size else 1
        return [self.narrow(d, s, min(step, size - s)) for s in range(0, size, step)] or [self]

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]
