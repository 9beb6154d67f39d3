"""Shape and layout ops (burn-tensor ``api/base.rs``): ``reshape``, ``transpose``, ``swap_dims``,
``permute``, ``flatten``, ``squeeze``/``unsqueeze``, ``expand``, ``repeat``, ``flip``, ``cat``,
``stack`` (``narrow`` and ``chunk`` are slices: :mod:`~minidl.tensor.indexing`).

Every kind supports them (the protocol gives Float, Int and Bool their own layout ops).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from minidl.backend.dtype import Kind
from minidl.dispatch import Dispatch
from minidl.tensor.base import TensorBase, kind_name
from minidl.tensor.check import as_shape, fail, fmt_shape, norm_dim, norm_dims


def _shape_arg(ops: str, args: tuple) -> Any:
    """``reshape([2, 3])`` and ``reshape(2, 3)`` both work."""
    return args[0] if len(args) == 1 and not isinstance(args[0], int) else args


class ShapeOps(TensorBase):
    """Layout ops: the data is the same, read in another shape or order."""

    __slots__ = ()

    def reshape(self, *shape: Any) -> Self:
        """The same elements in row-major order with a new shape. As in burn, ``-1`` is
        inferred from the other sizes and ``0`` keeps the size of the dim at that position."""
        target = list(as_shape("reshape", _shape_arg("reshape", shape)))
        current = self.shape
        if tuple(target) == current:
            return self
        if target.count(-1) > 1:
            fail("reshape", "Argument shape can hold at most one -1.", f"Found {fmt_shape(target)}.")
        for i, size in enumerate(target):
            if size == 0 and i < len(current):
                target[i] = current[i]
            elif size == 0:
                fail("reshape", "A 0 in argument shape keeps the size of that dim, but the tensor has no such dim.",
                     f"Found 0 at position {i} for a tensor of shape {fmt_shape(current)}.")
            elif size < -1:
                fail("reshape", "Argument shape has a negative size.", f"Found {fmt_shape(target)}.")
        numel = self.numel()
        if -1 in target:
            known = 1
            for size in target:
                known *= size if size != -1 else 1
            if known == 0 or numel % known:
                fail("reshape", "The given shape doesn't have the same number of elements as the current tensor.",
                     f"Can't infer the -1 in {fmt_shape(target)} for {numel} elements (shape {fmt_shape(current)}).")
            target[target.index(-1)] = numel // known
        count = 1
        for size in target:
            count *= size
        if count != numel:
            fail("reshape", "The given shape doesn't have the same number of elements as the current tensor.",
                 f"Expected a shape with {numel} elements (current shape {fmt_shape(current)}), "
                 f"found target shape {fmt_shape(target)} with {count}.")
        op = self._by_kind(float=Dispatch.float_reshape, int=Dispatch.int_reshape, bool=Dispatch.bool_reshape)
        return self._wrap(op(self.primitive, tuple(target)))

    def transpose(self) -> Self:
        """Swap the last two dims (a tensor of rank < 2 is returned as is)."""
        rank = self.rank
        if rank < 2:
            return self
        if self.kind is Kind.FLOAT:
            return self._wrap(Dispatch.float_transpose(self.primitive))
        op = self._by_kind(float=Dispatch.float_swap_dims, int=Dispatch.int_swap_dims,
                           bool=Dispatch.bool_swap_dims)
        return self._wrap(op(self.primitive, rank - 2, rank - 1))

    @property
    def T(self) -> Self:  # noqa: N802 - NumPy's and torch's name
        """:meth:`transpose`."""
        return self.transpose()

    def swap_dims(self, dim1: int, dim2: int) -> Self:
        """Exchange two dims."""
        rank, shape = self.rank, self.shape
        d1 = norm_dim("swap_dims", dim1, rank, "dim1", shape=shape)
        d2 = norm_dim("swap_dims", dim2, rank, "dim2", shape=shape)
        if d1 == d2:
            return self
        op = self._by_kind(float=Dispatch.float_swap_dims, int=Dispatch.int_swap_dims,
                           bool=Dispatch.bool_swap_dims)
        return self._wrap(op(self.primitive, d1, d2))

    def permute(self, *axes: Any) -> Self:
        """Reorder the dims: dim ``i`` of the result is dim ``axes[i]`` of ``self``."""
        axes = _shape_arg("permute", axes)
        axes = list(axes) if isinstance(axes, list | tuple) else [axes]
        rank = self.rank
        if len(axes) != rank:
            fail("permute", "Argument axes must name every dim once.",
                 f"Expected {rank} axes for shape {fmt_shape(self.shape)}, found {list(axes)}.")
        normalized = norm_dims("permute", axes, rank, "axes", shape=self.shape)
        if normalized == list(range(rank)):
            return self
        op = self._by_kind(float=Dispatch.float_permute, int=Dispatch.int_permute, bool=Dispatch.bool_permute)
        return self._wrap(op(self.primitive, normalized))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Self:
        """Merge dims ``start_dim..=end_dim`` (inclusive, as burn's ``flatten``) into one."""
        rank, shape = self.rank, self.shape
        start = norm_dim("flatten", start_dim, rank, "start_dim", shape=shape)
        end = norm_dim("flatten", end_dim, rank, "end_dim", shape=shape)
        if start > end:
            fail("flatten", f"The start dim ({start_dim}) must not come after the end dim ({end_dim}).",
                 f"Found start_dim={start}, end_dim={end} for shape {fmt_shape(shape)}.")
        merged = 1
        for size in shape[start:end + 1]:
            merged *= size
        return self.reshape(shape[:start] + (merged,) + shape[end + 1:])

    def squeeze(self, dim: int | None = None) -> Self:
        """Remove size-1 dims: all of them (a tensor of ones keeps shape ``[1]``), or only
        ``dim`` (which must have size 1, as burn's ``squeeze_dim``)."""
        if dim is not None:
            return self.squeeze_dim(dim)
        shape = tuple(s for s in self.shape if s != 1) or (1,)
        return self.reshape(shape)

    def squeeze_dim(self, dim: int) -> Self:
        """Remove ``dim``, which must have size 1."""
        shape = self.shape
        d = norm_dim("squeeze_dim", dim, len(shape), shape=shape)
        if shape[d] != 1:
            fail("squeeze_dim", f"Can't squeeze dim {dim}: its size is not 1.",
                 f"Expected size 1, found {shape[d]} (shape {fmt_shape(shape)}).")
        return self.reshape(shape[:d] + shape[d + 1:])

    def squeeze_dims(self, dims: Sequence[int]) -> Self:
        """Remove every dim in ``dims`` (each must have size 1)."""
        shape = self.shape
        ds = norm_dims("squeeze_dims", list(dims), len(shape), shape=shape)
        for d in ds:
            if shape[d] != 1:
                fail("squeeze_dims", f"Can't squeeze dim {d}: its size is not 1.",
                     f"Expected size 1, found {shape[d]} (shape {fmt_shape(shape)}).")
        return self.reshape(tuple(s for i, s in enumerate(shape) if i not in ds))

    def unsqueeze(self, dim: int = 0) -> Self:
        """Insert a size-1 dim at ``dim`` (``-1`` appends one), like torch's ``unsqueeze``."""
        return self.unsqueeze_dim(dim)

    def unsqueeze_dim(self, dim: int) -> Self:
        """Insert a size-1 dim at ``dim`` (burn's ``unsqueeze_dim``; ``0 <= dim <= rank``)."""
        shape = self.shape
        d = norm_dim("unsqueeze_dim", dim, len(shape) + 1, shape=shape)
        return self.reshape(shape[:d] + (1,) + shape[d:])

    def unsqueeze_dims(self, dims: Sequence[int]) -> Self:
        """Insert size-1 dims so that they sit at the positions ``dims`` of the result."""
        rank = self.rank + len(dims)
        ds = sorted(norm_dims("unsqueeze_dims", list(dims), rank))
        shape = list(self.shape)
        for d in ds:
            shape.insert(d, 1)
        return self.reshape(tuple(shape))

    def expand(self, *shape: Any) -> Self:
        """Broadcast to ``shape``: size-1 dims grow, new leading dims appear, ``-1`` keeps a
        dim (burn's ``expand``)."""
        target = list(as_shape("expand", _shape_arg("expand", shape)))
        current = self.shape
        if len(target) < len(current):
            fail("expand", "Argument shape can't have fewer dims than the tensor.",
                 f"Expected at least {len(current)} dims, found {fmt_shape(target)} for {fmt_shape(current)}.")
        offset = len(target) - len(current)
        for i, size in enumerate(target):
            src = current[i - offset] if i >= offset else None
            if size == -1:
                if src is None:
                    fail("expand", "A -1 in argument shape keeps a dim, but a new leading dim has no size to keep.",
                         f"Found {fmt_shape(target)} for {fmt_shape(current)}.")
                target[i] = src
            elif src is not None and src != size and src != 1:
                fail("expand", "The tensor can't be broadcast to the target shape.",
                     f"Dim {i - offset} has size {src}, which only expands when it is 1; "
                     f"expected {size}. Shape {fmt_shape(current)}, target {fmt_shape(target)}.")
        if tuple(target) == current:
            return self
        op = self._by_kind(float=Dispatch.float_expand, int=Dispatch.int_expand, bool=Dispatch.bool_expand)
        return self._wrap(op(self.primitive, tuple(target)))

    def repeat_dim(self, dim: int, times: int) -> Self:
        """Concatenate ``times`` copies along ``dim``."""
        d = norm_dim("repeat_dim", dim, self.rank, shape=self.shape)
        if not isinstance(times, int) or isinstance(times, bool) or times < 0:
            fail("repeat_dim", "Argument times must be an int >= 0.", f"Found {times!r}.")
        if times == 1:
            return self
        op = self._by_kind(float=Dispatch.float_repeat_dim, int=Dispatch.int_repeat_dim)
        return self._wrap(op(self.primitive, d, times))

    def repeat(self, *sizes: Any) -> Self:
        """Tile the tensor: dim ``i`` repeated ``sizes[i]`` times (torch's ``repeat``; extra
        leading ``sizes`` add leading dims)."""
        sizes = list(as_shape("repeat", _shape_arg("repeat", sizes), "sizes"))
        if len(sizes) < self.rank:
            fail("repeat", "Argument sizes must give one count per dim.",
                 f"Expected at least {self.rank} counts for shape {fmt_shape(self.shape)}, found {sizes}.")
        if any(t < 0 for t in sizes):
            fail("repeat", "Argument sizes must be >= 0.", f"Found {sizes}.")
        shape = (1,) * (len(sizes) - self.rank) + self.shape
        if all(t == 1 for t in sizes):
            return self.reshape(shape)
        # one copy, not one per dim: [s0, s1] viewed as [1, s0, 1, s1], expanded (stride 0, the
        # size checked before any work) to [r0, s0, r1, s1], reshaped — the copy — to [r0*s0, r1*s1]
        interleaved = tuple(x for size in shape for x in (1, size))
        grown = tuple(x for times, size in zip(sizes, shape) for x in (times, size))
        final = tuple(times * size for times, size in zip(sizes, shape))
        grown_view = self.reshape(interleaved).expand(grown)
        # the backend's reshape, not Tensor.reshape: that one reads a 0 as "keep this dim" (as
        # burn's does), and an empty repeat has 0s in its final shape
        op = self._by_kind(float=Dispatch.float_reshape, int=Dispatch.int_reshape, bool=Dispatch.bool_reshape)
        return self._wrap(op(grown_view.primitive, final))

    def flip(self, axes: int | Sequence[int]) -> Self:
        """Reverse the order of elements along ``axes``."""
        ds = norm_dims("flip", axes, self.rank, "axes", shape=self.shape)
        if not ds:
            return self
        op = self._by_kind(float=Dispatch.float_flip, int=Dispatch.int_flip, bool=Dispatch.bool_flip)
        return self._wrap(op(self.primitive, ds))

    # ----- joining ------------------------------------------------------------------------
    @staticmethod
    def cat(tensors: Sequence[TensorBase], dim: int = 0) -> TensorBase:
        """Concatenate along ``dim``; every other dim must match, kinds too."""
        tensors = list(tensors)
        if not tensors:
            fail("cat", "Can't concatenate an empty list of tensors.", "Found [].")
        first = tensors[0]
        for i, t in enumerate(tensors):
            if not isinstance(t, TensorBase):
                fail("cat", f"Argument tensors[{i}] must be a Tensor.", f"Found {type(t).__name__}.", kind=True)
            if t.kind is not first.kind:
                fail("cat", f"Argument tensors[{i}] must have the kind of tensors[0] ({kind_name(first.kind)}).",
                     f"Found a {t._describe()}.", kind=True)
            first._same_float_dtype("cat", t, f"tensors[{i}]")
        rank = first.rank
        d = norm_dim("cat", dim, rank, shape=first.shape)
        ref = first.shape[:d] + first.shape[d + 1:]
        for i, t in enumerate(tensors):
            if t.rank != rank or t.shape[:d] + t.shape[d + 1:] != ref:
                fail("cat", "Can't concatenate tensors with different shapes, except for the provided dimension.",
                     f"Expected tensors[{i}] to match tensors[0] {fmt_shape(first.shape)} outside dim {d}, "
                     f"found {fmt_shape(t.shape)}.")
        if len(tensors) == 1:
            return first
        op = first._by_kind(float=Dispatch.float_cat, int=Dispatch.int_cat, bool=Dispatch.bool_cat)
        return first._wrap(op([t.primitive for t in tensors], d))

    @staticmethod
    def stack(tensors: Sequence[TensorBase], dim: int = 0) -> TensorBase:
        """Join tensors of one shape along a new dim ``dim``."""
        tensors = list(tensors)
        if not tensors:
            fail("stack", "Can't stack an empty list of tensors.", "Found [].")
        first = tensors[0]
        for i, t in enumerate(tensors):
            if not isinstance(t, TensorBase):
                fail("stack", f"Argument tensors[{i}] must be a Tensor.", f"Found {type(t).__name__}.", kind=True)
            if t.shape != first.shape:
                fail("stack", "Can't stack tensors with different shapes.",
                     f"Expected tensors[{i}] to have shape {fmt_shape(first.shape)}, found {fmt_shape(t.shape)}.")
        d = norm_dim("stack", dim, first.rank + 1, shape=first.shape)
        return ShapeOps.cat([t.unsqueeze_dim(d) for t in tensors], d)
