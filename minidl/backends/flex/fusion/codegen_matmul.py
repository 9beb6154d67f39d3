"""Flex's kernel for a matmul block (burn-cubecl-fusion's ``MatmulOptimization``, for a CPU).

A matmul block is ``A @ B`` and the element-wise ops on its result (a bias add, an
activation, an optimizer's update of the weight this product is the gradient of). The product
runs on Flex's packed gemm, the kernel eager ``float_matmul`` calls, and the epilogue runs as
one generated element-wise kernel over the product while it is still in cache: the
intermediates between the epilogue's ops are never stored, only the results someone holds.

burn's matmul fusion applies the epilogue inside the matmul's tile loop on a GPU (fuse on
write). On a CPU the gemm's tile loop is the hand-tuned part (packing, register tiles,
threads: ``minidl.backends.flex.kernels.gemm``), and a pass over an ``[m, n]`` result that is
still in L2 costs little beside it. A generated 4x4-tile loop with the epilogue inside ran
the MLP's weight gradient 784x128 @ 128x256 at a tenth of the gemm's speed.
"""

from __future__ import annotations

from collections.abc import Callable

from minidl.backends.flex.fusion.codegen import NumbaKernel, loop_kernel
from minidl.backends.flex.kernels import gemm
from minidl.fusion.ir import OperationIr
from minidl.fusion.kernel import BlockValues


class MatmulKernel(NumbaKernel):
    """A matmul block's kernel: Flex's gemm for the product, then ``epilogue`` (a generated
    element-wise :class:`Kernel`, ``None`` when only the product is written).

    Its function takes the block's inputs as they are (``flat_inputs`` is False: the gemm
    reads a transposed view in place, where a flat copy would cost a pass), then the flat
    outputs, the scalars and no sizes, like every generated kernel."""

    flat_inputs = False

    def __init__(self, ops: list[OperationIr], writes: list[int], epilogue: NumbaKernel | None,
                 epilogue_inputs: list[int], epilogue_outputs: list[int]):
        vals = BlockValues(ops)
        mm = ops[0]
        (m, k), (_, n) = mm.inputs[0].shape, mm.inputs[1].shape
        kinds = [op.kind for op in ops]
        source = "# Flex's gemm (minidl.backends.flex.kernels.gemm.matmul), then:\n" + (
            epilogue.source if epilogue is not None else "# no epilogue: only the product is written\n")
        name = "matmul_" + (epilogue.name if epilogue is not None else "alone")
        read = sum(t.nbytes for t in vals.ext)
        written = sum(ops[j].out.nbytes for j in writes)
        super().__init__(name, source, None, vals.slots, list(writes), vals.scalars, [], m * n * max(k, 1),
                         kinds, read, written)
        self.epilogue = epilogue
        self.shape = (m, n)
        self._run = _runner(vals.ext_index[mm.inputs[0].id], vals.ext_index[mm.inputs[1].id], len(vals.ext),
                            len(writes), (m, n), writes.index(0) if 0 in writes else None, epilogue,
                            epilogue_inputs, epilogue_outputs)
        # the gemm has read A and B before the epilogue stores anything, so an epilogue output
        # may take the buffer of any input the epilogue reads element by element before that
        # store; the product's own output is the gemm's, never an input's
        self.aliasable = frozenset() if epilogue is None else frozenset(
            (epilogue_inputs[p], epilogue_outputs[q]) for p, q in epilogue.aliasable if epilogue_inputs[p] >= 0)

    def function(self) -> Callable:
        """The launch function: gemm, then the epilogue kernel."""
        return self._run


def _runner(a_pos: int, b_pos: int, n_in: int, n_out: int, shape: tuple[int, int], product_q: int | None,
            epilogue: NumbaKernel | None, epilogue_inputs: list[int], epilogue_outputs: list[int]) -> Callable:
    """The function a launch calls: ``run(*inputs, *flat_outs, *scalars)``."""
    matmul = gemm.matmul
    fn = epilogue.function() if epilogue is not None else None
    sizes = tuple(epilogue.meta) if epilogue is not None else ()

    def run(*args):
        outs = args[n_in:n_in + n_out]
        if product_q is None:
            product = matmul(args[a_pos], args[b_pos])
        else:  # someone holds the product: the gemm writes it where it is kept
            product = matmul(args[a_pos], args[b_pos], out=outs[product_q].reshape(shape))
        if fn is not None:
            flat = product.reshape(-1)
            fn(*[flat if p < 0 else args[p].reshape(-1) for p in epilogue_inputs],
               *[outs[q] for q in epilogue_outputs], *args[n_in + n_out:], *sizes)

    return run


def matmul_kernel(ops: list[OperationIr], writes: list[int]) -> NumbaKernel:
    """``A @ B`` (2-D) on Flex's gemm followed by its element-wise epilogue ``ops[1:]`` as one
    generated kernel over the product; ``writes`` are the ops (by index) whose results are kept."""
    product = ops[0].out
    epilogue_ops = ops[1:]
    epilogue_writes = [j - 1 for j in writes if j > 0]
    if not epilogue_writes:
        return MatmulKernel(ops, writes, None, [], [])
    epilogue = loop_kernel(epilogue_ops, product.shape, (), epilogue_writes, "epilogue")
    block_index = BlockValues(ops).ext_index
    # each epilogue input: -1 for the product, else its position among the block's inputs
    inputs = [-1 if (t := epilogue_ops[s.op].inputs[s.pos]).id == product.id else block_index[t.id]
              for s in epilogue.inputs]
    # each epilogue output: its position among the block's outputs (in the order of writes)
    outputs = [writes.index(j + 1) for j in epilogue_writes]
    return MatmulKernel(ops, writes, epilogue, inputs, outputs)
