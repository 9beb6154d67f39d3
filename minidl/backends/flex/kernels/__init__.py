"""Flex's compute kernels: numba functions over NumPy arrays, and thin Python wrappers that
check shapes, allocate outputs and choose a serial or a parallel kernel by size.

Every kernel is ``@njit(cache=True)`` and none is compiled at import: the first call of a
kernel for a dtype compiles it (seconds) or loads it from numba's cache (milliseconds).
Inputs are made C-contiguous by the wrappers; float16 is computed in float32 and cast back.

==================  ============================================================================
module              wrappers (burn-flex piece)
==================  ============================================================================
``gemm``            ``matmul(a, b, out=None)``, ``batched_matmul(a, b)`` (``float_matmul``); its
                    register tile follows ``isa.ISA`` (AVX-512 or AVX2, read at import)
``gemm_micro``      the gemm's micro-kernel: an MR x NR tile of C in vector registers
``gemm_pack``       the gemm's blocking, packing of B and the split over threads
``gemm_small``      small products without packing: a register tile reading A and B in place
``gemm_vec``        whole-vector copies and register transposes for packing
``conv``            ``conv2d``, ``conv_transpose2d``, ``conv2d_x_backward``,
                    ``conv2d_weight_backward``, ``conv2d_bias_backward`` (``conv2d``,
                    ``conv_transpose2d`` & backward)
``conv_common``     the padded planes and im2col rows both directions of conv share
``conv_loop``       conv2d's loop-vectorized forward kernel (float64)
``conv_tile``       conv2d's float32 micro-kernel: explicit SIMD vectors (16 lanes on AVX-512,
                    8 on AVX2), a register tile of accumulators, masked stores
``conv_wgrad``      conv2d's float32 weight gradient: register-tiled dot products over the
                    forward's shifted source rows
``pool``            ``max_pool2d`` (+ indices), ``avg_pool2d``, ``adaptive_avg_pool2d`` and
                    their ``*_backward`` (the pool module ops)
``norm``            ``layer_norm(x, gamma, beta, eps)`` (Flex's fused ``layer_norm``)
``norm_simd``       layer_norm's float32 row kernel on explicit SIMD vectors
``softmax``         ``softmax(x, dim)``, ``log_softmax(x, dim)`` (activation ops)
``reduce``          ``sum``, ``mean``, ``prod``, ``max``, ``min``, ``var``, ``argmax``,
                    ``argmin``, ``max_with_indices``, ``min_with_indices`` (``*_dim`` ops)
``reduce_rows``     short-row kernels of ``reduce``: row sums, a row's extreme and its index
``elementwise``     ``compare(op, a, b)``; the one entry point for every element-wise op:
                    re-exports ``broadcast``'s and ``unary``'s wrappers and has one function
                    per op (``add``, ``lt``, ``exp``, ...) (element-wise ops)
``broadcast``       ``binary(op, a, b)``, ``where``, ``clamp``: the kernels over broadcast
                    3-D views, and the row loops ``elementwise`` and ``unary`` share
``operands``        the operands as 3-D views, the result's shape and dtype, ``run3``
``unary``           ``unary(op, x)`` on flat arrays, the fused ``relu_affine``, ``relu_backward``
``vmath``           ``vexp``, ``vlog``: branch-free exp and log (range reduction + polynomial)
                    that loops vectorize; the unary exp, sigmoid, log and softmax use them
``rng``             ``RngState(seed)``: ``uniform``, ``normal``, ``bernoulli``, ``seed(n)``
``copy``            ``contiguous``, ``cast``, ``copy_into``, ``cat``, ``full``
``indexing``        ``gather``, ``scatter_add``, ``select``, ``select_add``, ``embedding``,
                    ``embedding_backward``
``cache_guard``     drops numba's cached kernels of this folder when any of its sources changed
                    (run at import; numba itself only checks each function's own file)
==================  ============================================================================

The modules are imported lazily (``kernels.gemm`` ... on first attribute access), and the
wrappers are re-exported by name (``kernels.matmul``), so importing this package is cheap.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from numba.core import config as _numba_config

from .cache_guard import cache_folder, guard

guard(Path(__file__).parent, cache_folder(Path(__file__), _numba_config.CACHE_DIR))

_MODULES = (
    "gemm", "gemm_micro", "gemm_pack", "gemm_small", "gemm_vec", "conv", "conv_common", "conv_loop",
    "conv_tile", "conv_wgrad", "pool", "norm", "norm_simd", "softmax", "reduce", "reduce_rows",
    "elementwise", "broadcast", "operands", "unary", "vmath", "rng", "copy", "indexing", "optim",
)  # fmt: skip

_EXPORTS = {
    "matmul": "gemm", "batched_matmul": "gemm",
    "conv2d": "conv", "conv2d_x_backward": "conv", "conv2d_weight_backward": "conv",
    "conv2d_bias_backward": "conv", "conv_transpose2d": "conv",
    "max_pool2d": "pool", "max_pool2d_backward": "pool", "avg_pool2d": "pool",
    "avg_pool2d_backward": "pool", "adaptive_avg_pool2d": "pool",
    "adaptive_avg_pool2d_backward": "pool",
    "layer_norm": "norm",
    "binary": "broadcast", "compare": "elementwise", "unary": "unary",
    "where": "broadcast", "clamp": "broadcast", "relu_affine": "unary", "relu_backward": "unary",
    "RngState": "rng",
    "contiguous": "copy", "cast": "copy", "copy_into": "copy", "cat": "copy", "full": "copy",
    "gather": "indexing", "scatter_add": "indexing", "select": "indexing",
    "select_add": "indexing", "embedding": "indexing", "embedding_backward": "indexing",
}  # fmt: skip

__all__ = [*_MODULES, *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
