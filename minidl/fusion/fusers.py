"""The fusers: each is asked, op by op, whether the next op fits its block (burn's
``OperationFuser`` trait, implemented in burn-cubecl-fusion by ``ElementwiseFuser``,
``ReduceFuser``/``ReduceBroadcastedFuser`` and ``MatmulFuser``).

A fuser that refuses an op keeps its state, so the search can ask several fusers the same
question and keep the one that took the most ops. The rules are generic; ``finish`` hands the
accepted ops to the inner backend's :class:`~.kernel.KernelGenerator` (numba source on Flex,
WGSL on the GPU), which writes the one kernel.
"""

from __future__ import annotations

import math

from minidl.fusion.ir import ELEMENTWISE, FUSABLE_DTYPES, REDUCE, RESHAPE, OperationIr
from minidl.fusion.kernel import Kernel, KernelGenerator


def _dtypes_ok(op: OperationIr) -> bool:
    return op.out.dtype in FUSABLE_DTYPES and all(t.dtype in FUSABLE_DTYPES for t in op.inputs)


def _broadcasts_to(shape: tuple[int, ...], full: tuple[int, ...]) -> bool:
    if len(shape) > len(full):
        return False
    padded = (1,) * (len(full) - len(shape)) + tuple(shape)
    return all(a == b or a == 1 for a, b in zip(padded, full, strict=True))


class OperationFuser:
    """One kind of fused block. ``fuse(op)`` accepts (True) or refuses (False) the next op;
    ``ready`` says whether what was accepted can become a kernel; ``finish`` has ``generator``
    build it."""

    name = "fuser"

    def __init__(self):
        self.ops: list[OperationIr] = []

    def reset(self) -> None:
        self.ops = []

    def fuse(self, op: OperationIr) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def ready(self) -> bool:
        return len(self.ops) >= 2

    def finish(self, ops: list[OperationIr], writes: list[int],
               generator: KernelGenerator) -> Kernel:  # pragma: no cover - abstract
        raise NotImplementedError


class ElementwiseFuser(OperationFuser):
    """Element-wise ops (unary, binary with broadcasting, scalar, comparisons, where/mask_fill,
    casts, expand) whose results all have one shape: one pass, every intermediate in registers.

    It also reads through a ``reshape`` when no input of the block is broadcast: every tensor
    is then walked by one flat index, on which a reshape is the identity."""

    name = "elementwise"

    def reset(self) -> None:
        super().reset()
        self.shape: tuple[int, ...] | None = None
        self.broadcasts = False  # some input is smaller than the block's results
        self.reshaped = False  # a reshape was read through: the kernel walks flat

    @staticmethod
    def fits(op: OperationIr, shape: tuple[int, ...] | None) -> bool:
        """The rule: may ``op`` join a block whose results have ``shape`` (``None``: the
        block is empty)? A subclass may replace it (the Fusion chapter's build exercise)."""
        if op.kind not in ELEMENTWISE or not _dtypes_ok(op):
            return False
        shape = shape if shape is not None else op.out.shape
        return op.out.shape == shape and all(_broadcasts_to(t.shape, shape) for t in op.inputs)

    def _reads_through(self, op: OperationIr) -> bool:
        return (op.kind in RESHAPE and self.shape is not None and not self.broadcasts and _dtypes_ok(op)
                and _numel(op.out.shape) == _numel(self.shape))

    def fuse(self, op: OperationIr) -> bool:
        if self._reads_through(op):
            self.shape, self.reshaped = op.out.shape, True
            self.ops.append(op)
            return True
        if not self.fits(op, self.shape):
            return False
        shape = self.shape if self.shape is not None else op.out.shape
        broadcasts = any(t.shape != shape for t in op.inputs)
        if broadcasts and self.reshaped:
            return False  # a broadcast input needs the shape a reshape earlier in the block lost
        self.shape, self.broadcasts = shape, self.broadcasts or broadcasts
        self.ops.append(op)
        return True

    def finish(self, ops, writes, generator):
        if self.reshaped:  # every tensor the same size: walk them all as one flat dim
            flat = (_numel(self.shape),)
            ops = [OperationIr(op.kind, op.op, tuple(t._replace(shape=flat) for t in op.inputs),
                               op.out._replace(shape=flat), op.scalars, op.static) for op in ops]
            return generator.elementwise(ops, flat, writes)
        return generator.elementwise(ops, self.shape, writes)


def _numel(shape: tuple[int, ...]) -> int:
    out = 1
    for size in shape:
        out *= size
    return out


class ReduceFuser(OperationFuser):
    """Reductions (along the last non-trivial dim, or of every element) with the element-wise ops that feed them
    (fuse on read), the ops on their results, and the element-wise ops that broadcast those
    results back over the rows (burn's ``ReduceBroadcastedFuser``): ``layer_norm``'s default
    becomes one kernel."""

    name = "reduce"
    #: whether a reduction across rows (a bias gradient: a sum over the batch dim) may join a
    #: block: on a CPU it would walk memory with a stride, so it is left to B; a GPU thread per
    #: column reads it coalesced (the generator says: ``KernelGenerator.reduces_across_rows``)
    across_rows = False
    #: the longest reduced length one kernel may loop over (``KernelGenerator.max_loop``)
    max_loop: int | None = None

    def reset(self) -> None:
        super().reset()
        self.full: tuple[int, ...] | None = None
        self.dims: tuple[int, ...] | None = None

    @staticmethod
    def _dims(op: OperationIr) -> tuple[int, ...]:
        rank = len(op.inputs[0].shape)
        return tuple(range(rank)) if op.static[0] == "all" else (op.static[0],)

    def _fits(self, op: OperationIr, full: tuple[int, ...], dims: tuple[int, ...]) -> bool:
        if op.kind in REDUCE:
            return op.inputs[0].shape == full and self._dims(op) == dims
        row = tuple(1 if d in dims else s for d, s in enumerate(full))
        scalar = len(dims) == len(full) and op.out.shape == (1,)
        return (op.out.shape in (full, row) or scalar) and all(_broadcasts_to(t.shape, full) for t in op.inputs)

    def fuse(self, op: OperationIr) -> bool:
        if not _dtypes_ok(op) or (op.kind not in ELEMENTWISE and op.kind not in REDUCE):
            return False
        if self.full is None:
            if op.kind not in REDUCE:
                self.ops.append(op)  # checked when the first reduction fixes the shapes
                return True
            full, dims = op.inputs[0].shape, self._dims(op)
            if all(full[d] == 1 for d in dims) or (not self.across_rows and any(s != 1 for s in full[max(dims) + 1:])):
                # a reduction across rows (bias gradients: sum over the batch dim) would walk
                # memory with a stride; it is left to B, whose kernel reads rows in order
                return False
            if not all(self._fits(prev, full, dims) for prev in self.ops):
                return False
            if self.max_loop is not None and math.prod(full[d] for d in dims) > self.max_loop:
                return False  # too long for one thread's loop: B's op splits it
            self.full, self.dims = full, dims
            self.ops.append(op)
            return True
        if not self._fits(op, self.full, self.dims):
            return False
        self.ops.append(op)
        return True

    @property
    def ready(self) -> bool:
        return self.full is not None and len(self.ops) >= 2

    def finish(self, ops, writes, generator):
        return generator.reduce(ops, self.full, self.dims, writes)


class MatmulFuser(OperationFuser):
    """A 2-D ``matmul`` and the element-wise ops on its result (bias add, activation): the
    epilogue runs on each tile of the product before it is written (fuse on write)."""

    name = "matmul"
    #: the longest K one kernel may loop over (``KernelGenerator.max_loop``)
    max_loop: int | None = None

    def fuse(self, op: OperationIr) -> bool:
        if not _dtypes_ok(op):
            return False
        if not self.ops:
            ok = (op.kind == "matmul" and len(op.inputs[0].shape) == 2 and len(op.inputs[1].shape) == 2
                  and op.inputs[0].dtype == op.inputs[1].dtype and op.out.dtype.kind == "f"
                  and (self.max_loop is None or op.inputs[0].shape[1] <= self.max_loop))
            if ok:
                self.ops.append(op)
            return ok
        shape = self.ops[0].out.shape
        if op.kind not in ELEMENTWISE or op.out.shape != shape or not all(_broadcasts_to(t.shape, shape) for t in op.inputs):
            return False
        self.ops.append(op)
        return True

    def finish(self, ops, writes, generator):
        return generator.matmul(ops, writes)


def default_fusers(names: tuple[str, ...] = ("elementwise", "reduce", "matmul"),
                   across_rows: bool = False, max_loop: int | None = None) -> list[OperationFuser]:
    """The fusers ``Fusion[B]`` searches with, in order of preference on a tie (those of
    ``names``: the blocks the inner backend's generator can write)."""
    fusers = [fuser() for fuser in (ElementwiseFuser, ReduceFuser, MatmulFuser) if fuser.name in names]
    for fuser in fusers:
        if isinstance(fuser, ReduceFuser):
            fuser.across_rows = across_rows
        if isinstance(fuser, ReduceFuser | MatmulFuser):
            fuser.max_loop = max_loop
    return fusers
