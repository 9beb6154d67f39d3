"""The GPU's :class:`~minidl.fusion.kernel.KernelGenerator` (burn-cubecl-fusion's
optimizations): which WGSL kernel each fuser's block becomes."""

from __future__ import annotations

from minidl.backends.wgpu import ops
from minidl.backends.wgpu.fusion.codegen import WgslKernel
from minidl.backends.wgpu.fusion.matmul import WgslMatmulKernel
from minidl.backends.wgpu.fusion.reduce import WgslReduceKernel
from minidl.backends.wgpu.runtime import runtime
from minidl.fusion.ir import OperationIr
from minidl.fusion.kernel import KernelGenerator


class WgslGenerator(KernelGenerator):
    """Element-wise blocks (``ElemwiseOptimization``), reduce blocks with their prologue and
    epilogue (``ReduceOptimization``) and 2-D matmuls with their epilogue (``MatmulOptimization``)
    as one WGSL kernel each."""

    fusers = ("elementwise", "reduce", "matmul")
    reduces_across_rows = True  # one thread per column reads across rows coalesced
    #: lavapipe ends a shader's loops after 65535 iterations and carries on with a partial
    #: result; eager Wgpu's reductions and matmuls split longer loops, so those stay eager
    max_loop = min(ops.REDUCE_CHUNK, ops.MATMUL_K_CHUNK)

    @property
    def max_operands(self) -> int:
        """The adapter's storage buffers per shader stage, less the parameters' binding."""
        return int(runtime(0).device.limits["max-storage-buffers-per-shader-stage"]) - 1

    def elementwise(
        self, ops: list[OperationIr], shape: tuple[int, ...], writes: list[int]
    ) -> WgslKernel:
        return WgslKernel(ops, shape, writes)

    def reduce(
        self,
        ops: list[OperationIr],
        full: tuple[int, ...],
        dims: tuple[int, ...],
        writes: list[int],
    ) -> WgslReduceKernel:
        return WgslReduceKernel(ops, full, dims, writes)

    def matmul(self, ops: list[OperationIr], writes: list[int]) -> WgslMatmulKernel:
        return WgslMatmulKernel(ops, writes)
