"""Flex's :class:`~minidl.fusion.kernel.KernelGenerator` (burn-cubecl-fusion's
optimizations, for a CPU): which numba kernel each fuser's block becomes."""

from __future__ import annotations

from minidl.backends.flex.fusion.codegen import NumbaKernel, loop_kernel
from minidl.backends.flex.fusion.codegen_matmul import matmul_kernel
from minidl.fusion.ir import OperationIr
from minidl.fusion.kernel import KernelGenerator


class NumbaGenerator(KernelGenerator):
    """Flex's :class:`~minidl.fusion.kernel.KernelGenerator`: numba loop kernels for
    element-wise and reduce blocks, Flex's gemm plus a loop-kernel epilogue for matmul blocks."""

    def elementwise(
        self, ops: list[OperationIr], shape: tuple[int, ...], writes: list[int]
    ) -> NumbaKernel:
        return loop_kernel(ops, shape, (), writes, "elemwise")

    def reduce(
        self,
        ops: list[OperationIr],
        full: tuple[int, ...],
        dims: tuple[int, ...],
        writes: list[int],
    ) -> NumbaKernel:
        return loop_kernel(ops, full, dims, writes, "reduce")

    def matmul(self, ops: list[OperationIr], writes: list[int]) -> NumbaKernel:

        return matmul_kernel(ops, writes)
