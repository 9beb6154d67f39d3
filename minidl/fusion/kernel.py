"""What a fused block is to the generic part of fusion, and what a backend's code generator
supplies (burn-fusion's ``FusionRuntime`` / ``FusionBackend`` seam; the generators are
burn-cubecl-fusion's ``ElemwiseOptimization``, ``ReduceOptimization``, ``MatmulOptimization``).

The generic part (IR, stream, segments, search, fusers' rules, plan store, the decorator)
never writes a kernel: when a fuser has taken a block, :class:`KernelGenerator` (supplied by
the inner backend through its :class:`FusionRuntime`) turns the block's IR into a
:class:`Kernel`. Both generators read the block through :class:`BlockValues`, values as
objects (:class:`Value`), and the aliasing a capture replay may use is computed here, from
the IR (:func:`elementwise_aliasable`), never from the text a generator produced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from minidl.fusion.ir import REDUCE, OperationIr, TensorIr


@dataclass(frozen=True)
class Value:
    """One value of a fused block: an external input (``external``, its position among the
    block's inputs) or the result of the block's op ``index`` (burn-cubecl-fusion's ``Arg``:
    ``Input`` or ``Local``)."""

    external: bool
    index: int


@dataclass
class Slot:
    """Where an operand comes from at launch: input ``pos`` of op ``op`` of the block."""

    op: int
    pos: int


class BlockValues:
    """A block's values read from its IR: the external inputs (in order of first read, each with
    the :class:`Slot` that reads it first), which op produces which tensor, and the scalar
    arguments (op, position, the dtype the op computes in) in the order a launch passes them."""

    def __init__(self, ops: list[OperationIr]):
        self.ops = ops
        #: tensor id -> the op of the block that produces it
        self.produced: dict[int, int] = {op.out.id: j for j, op in enumerate(ops)}
        self.ext: list[TensorIr] = []
        self.slots: list[Slot] = []
        #: for each external input, the first op that reads it
        self.first_reader: list[int] = []
        index: dict[int, int] = {}
        for j, op in enumerate(ops):
            for pos, t in enumerate(op.inputs):
                if t.id not in self.produced and t.id not in index:
                    index[t.id] = len(self.ext)
                    self.ext.append(t)
                    self.slots.append(Slot(j, pos))
                    self.first_reader.append(j)
        #: tensor id -> position among the external inputs
        self.ext_index = index
        self.scalars: list[tuple[int, int, np.dtype]] = []
        self._scalar_at: dict[tuple[int, int], int] = {}
        for j, op in enumerate(ops):
            dtype = (
                op.inputs[0].dtype if op.inputs and op.inputs[0].dtype.kind == "f" else op.out.dtype
            )
            for k in range(len(op.scalars)):
                self._scalar_at[(j, k)] = len(self.scalars)
                self.scalars.append((j, k, dtype))

    def value(self, t: TensorIr) -> Value:
        """The value ``t`` is inside the block: an op's result if the block makes it, else an input."""
        j = self.produced.get(t.id)
        return Value(False, j) if j is not None else Value(True, self.ext_index[t.id])

    def result(self, j: int) -> Value:
        """The value of op ``j``'s result."""
        return Value(False, j)

    def inputs_of(self, j: int) -> list[Value]:
        """The values op ``j`` reads, in order."""
        return [self.value(t) for t in self.ops[j].inputs]

    def scalar_indices(self, j: int) -> list[int]:
        """The positions, among the block's scalars, of op ``j``'s scalar arguments."""
        return [self._scalar_at[(j, k)] for k in range(len(self.ops[j].scalars))]


def elementwise_aliasable(values: BlockValues, writes: list[int]) -> frozenset[tuple[int, int]]:
    """For an element-wise block computed in op order, each element on its own: the pairs
    (input p, output q) where input p's buffer may also be output q's, because p is read at
    element i (first by op ``first_reader[p]``) before element i of q (op ``writes[q]``) is
    stored. A capture replay then updates carried state in place (an optimizer's weights)."""
    return frozenset(
        (p, q)
        for p, first in enumerate(values.first_reader)
        for q, j in enumerate(writes)
        if first <= j
    )


class Kernel:
    """A generated kernel of a fused block and how to launch it (burn-fusion's
    ``Optimization``: what ``OperationFuser::finish`` returns, executed by the stream).

    ``inputs`` are the :class:`Slot` of each external input, ``writes`` the ops (by index in the
    block) whose results are stored, ``scalars`` the (op, position, dtype) of each scalar
    argument. ``aliasable`` holds the pairs (input p, output q) where p's buffer may also be q's;
    ``flat_inputs`` says that a launch passes every input as a flat view."""

    flat_inputs: ClassVar[bool] = True
    aliasable: frozenset[tuple[int, int]] = frozenset()
    #: the generator's language, shown by minidl.debug ("numba", "wgsl")
    language: ClassVar[str] = "?"

    def __init__(
        self,
        name: str,
        source: str,
        inputs: list[Slot],
        writes: list[int],
        scalars: list[tuple[int, int, np.dtype]],
        meta: list[int],
        work: int,
        kinds: list[str],
        bytes_read: int,
        bytes_written: int,
    ):
        self.name, self.source = name, source
        self.inputs, self.writes, self.scalars, self.meta, self.work = (
            inputs,
            writes,
            scalars,
            meta,
            work,
        )
        self.kinds = kinds
        self.bytes_read, self.bytes_written = bytes_read, bytes_written

    @property
    def parallel(self) -> bool:
        """Whether a launch runs a multi-threaded version (a CPU generator's choice)."""
        return False

    def function(self) -> Any:
        """What a launch calls (the compiled function, or the pipeline's source)."""
        raise NotImplementedError

    def launch(self, launch: Any, values: list, scalars: list) -> None:
        """Run ``launch`` (a plan's :class:`~minidl.fusion.plan.Launch` of this kernel):
        read its inputs from ``values`` by relative id, store its outputs there."""
        raise NotImplementedError


class KernelGenerator:
    """A backend's code generator for fused blocks (burn-cubecl-fusion's optimizations, one per
    fuser): each method turns the IR of a block a fuser took into a :class:`Kernel`.

    ``fusers`` names the fusers whose blocks it can generate; the search offers ops only to
    those (a generator without a matmul kernel leaves matmuls to ``B``)."""

    fusers: ClassVar[tuple[str, ...]] = ("elementwise", "reduce", "matmul")
    #: whether its reduce kernels take a reduction across rows (a sum over the batch dim)
    reduces_across_rows: ClassVar[bool] = False
    #: the most buffers (inputs and outputs) one kernel may bind; None: no limit (a CPU)
    max_operands: int | None = None
    #: the longest reduced length / matmul K one kernel thread may loop over; None: no limit.
    #: A longer one is left to ``B``, whose op splits it (a driver may cap a shader's loops)
    max_loop: int | None = None

    def elementwise(
        self, ops: list[OperationIr], shape: tuple[int, ...], writes: list[int]
    ) -> Kernel:
        """One pass over ``shape``: every op element by element, intermediates in registers."""
        raise NotImplementedError

    def reduce(
        self,
        ops: list[OperationIr],
        full: tuple[int, ...],
        dims: tuple[int, ...],
        writes: list[int],
    ) -> Kernel:
        """Reductions along ``dims`` of ``full`` with their element-wise prologue and epilogue."""
        raise NotImplementedError

    def matmul(self, ops: list[OperationIr], writes: list[int]) -> Kernel:
        """``ops[0]`` a 2-D matmul, ``ops[1:]`` its element-wise epilogue."""
        raise NotImplementedError


@dataclass
class FusionRuntime:
    """What an inner backend ``B`` supplies to ``Fusion[B]`` (burn-fusion's ``FusionRuntime``
    and ``FusionBackend``, implemented by each backend crate: burn-cubecl's ``fusion.rs``).

    * ``generator``: the backend's :class:`KernelGenerator`;
    * ``primitive``: the type of ``B``'s float, int and bool primitives (the stream wraps them);
    * ``device_kind``: the ``Device`` kind of ``Fusion[B]`` (``fusion`` over Flex);
    * ``records_every_op``: the recording policy. On a GPU every op is recorded, as burn does (a
      dispatch costs far more than recording it); on the CPU an op on small ready tensors runs
      eagerly on ``B`` (``Stream.eager_below``), since there a recorded op's Python costs more
      than the op."""

    generator: KernelGenerator
    primitive: type
    device_kind: str
    records_every_op: bool = False


def reduce_levels(
    vals: BlockValues, full: tuple[int, ...], reduced: tuple[int, ...]
) -> tuple[dict[Value, bool], dict[Value, int]]:
    """For a reduce block over ``full`` reducing ``reduced``: whether each value is walked along
    the reduced dims (``is_full``; else it is one value per row) and its *level*, how many
    reductions deep it is (a pass over the row per level: ``layer_norm``'s mean is level 1,
    its variance level 2). Both generators lay out their loops by these."""
    rank = len(full)
    is_full: dict[Value, bool] = {}
    level: dict[Value, int] = {}
    for p, t in enumerate(vals.ext):
        padded = (1,) * (rank - len(t.shape)) + tuple(t.shape)
        is_full[Value(True, p)] = any(padded[d] != 1 for d in reduced)
        level[Value(True, p)] = 0
    size = int(np.prod(full))
    for j, op in enumerate(vals.ops):
        ins = vals.inputs_of(j)
        v = vals.result(j)
        if op.kind in REDUCE:
            is_full[v] = False
            level[v] = level[ins[0]] + 1
        else:
            # in a reduce block a result is either full-size or one value per row
            is_full[v] = bool(reduced) and int(np.prod(op.out.shape)) == size
            level[v] = max(level[i] for i in ins)
    return is_full, level
