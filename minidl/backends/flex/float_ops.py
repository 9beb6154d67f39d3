"""``FlexFloatOps``: every float op Flex writes itself (burn-flex's ``ops/float.rs``), each one
call of a numba kernel from :mod:`minidl.backends.flex.kernels`: creation and casts (``copy``:
fill, converting copy), arithmetic, unary math, comparisons and masks (``broadcast``, ``unary``,
``elementwise``), matmul (``gemm``; the batch dims are handled here, no BLAS: see ``float_matmul``),
reductions (``reduce``) and the layout ops that move elements (``copy``, ``indexing``).

Flex also overrides several ``FloatTensorOps`` *defaults* (scalar forms, ``neg``, ``recip``,
``log1p``, the ``_elem`` comparisons, clamps, ``max_pair``, ``mean``, ``prod_dim``, the
``*_with_indices`` pairs): the default would build a scalar tensor or chain two or three kernels
where one does (``log(x + 1)`` loses tiny ``x``; ``prod_dim``'s default multiplies one slice
at a time). Results take the dtype of ``lhs`` (the protocol's rule; the Tensor layer refuses two
float dtypes in one op, as burn does); when a kernel promoted the result is cast back. Not here: the pure views
(``CpuViewOps``, shared with NdArray), data in and out (``CpuHostOps``) and ``float_random``
(on ``Flex`` itself, with the random streams and ``seed``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from minidl.backend import DType
from minidl.backend.limits import (
    SMALL_BYTES,
    check_cat,
    check_size,
    max_tensor_bytes,
    repeat_shapes,
)
from minidl.backends.flex.kernels import copy, gemm, indexing, optim
from minidl.backends.flex.kernels import reduce as r
from minidl.backends.flex.kernels._common import FLOATS
from minidl.backends.flex.kernels.broadcast import binary, clamp, where
from minidl.backends.flex.kernels.copy import cast, contiguous
from minidl.backends.flex.kernels.elementwise import compare
from minidl.backends.flex.kernels.indexing import in_compute_dtype, region
from minidl.backends.flex.kernels.unary import powf_scalar, unary

Shape = tuple[int, ...]


class FlexFloatOps:
    """Float tensor ops of Flex, each one call of a numba kernel."""

    # ----- creation and casts (fill and copy kernels) --------------------------------------------
    @classmethod
    def float_zeros(cls, shape: Shape, dtype: DType, device):
        check_size("float_zeros", shape, dtype.numpy)
        return copy.full(tuple(shape), 0.0, dtype.numpy)

    @classmethod
    def float_ones(cls, shape: Shape, dtype: DType, device):
        check_size("float_ones", shape, dtype.numpy)
        return copy.full(tuple(shape), 1.0, dtype.numpy)

    @classmethod
    def float_full(cls, shape: Shape, fill_value: float, dtype: DType, device):
        check_size("float_full", shape, dtype.numpy)
        return copy.full(tuple(shape), fill_value, dtype.numpy)

    @classmethod
    def float_cast(cls, tensor, dtype: DType):
        """A copy in ``dtype`` (float16 on either side is converted by NumPy: numba has none)."""
        return copy.cast(tensor, dtype.numpy)

    @classmethod
    def float_into_int(cls, tensor, dtype: DType):
        """Truncation toward zero (Rust's ``as``), by the copy kernel."""
        return copy.cast(tensor, dtype.numpy)

    # ----- arithmetic (NumPy broadcasting; a Python scalar takes lhs's dtype) --------------------
    @classmethod
    def float_add(cls, lhs, rhs):
        return binary("add", lhs, rhs, lhs_dtype=True)

    @classmethod
    def float_sub(cls, lhs, rhs):
        return binary("sub", lhs, rhs, lhs_dtype=True)

    @classmethod
    def float_mul(cls, lhs, rhs):
        return binary("mul", lhs, rhs, lhs_dtype=True)

    @classmethod
    def float_div(cls, lhs, rhs):
        return binary("div", lhs, rhs, lhs_dtype=True)

    @classmethod
    def float_powf(cls, lhs, rhs):
        return binary("pow", lhs, rhs, lhs_dtype=True)

    @classmethod
    def float_add_scalar(cls, lhs, rhs: float):
        return binary("add", lhs, float(rhs))

    @classmethod
    def float_sub_scalar(cls, lhs, rhs: float):
        return binary("sub", lhs, float(rhs))

    @classmethod
    def float_mul_scalar(cls, lhs, rhs: float):
        return binary("mul", lhs, float(rhs))

    @classmethod
    def float_div_scalar(cls, lhs, rhs: float):
        return binary("div", lhs, float(rhs))

    @classmethod
    def float_powf_scalar(cls, lhs, rhs: float):
        """``lhs ** rhs``; ``** 0.5`` and ``** -0.5`` are sqrt and 1 / sqrt, as in torch (C's pow
        gives ``inf`` for ``(-inf) ** 0.5``, torch and sqrt NaN); float arrays take the
        vectorized ``powf_scalar`` kernel, anything else the broadcasting ``pow``."""
        if rhs == 0.5:
            return cls.float_sqrt(lhs)
        if rhs == -0.5:
            return unary("recip", cls.float_sqrt(lhs))
        if isinstance(lhs, np.ndarray) and lhs.dtype.kind == "f":
            return powf_scalar(lhs, float(rhs))
        return binary("pow", lhs, float(rhs))

    @classmethod
    def adam_step(cls, param, grad, moment_1, moment_2, lr: float, beta_1: float, beta_2: float,
                  epsilon: float, correction_1: float, correction_2: float, outs=None):
        """``(new param, new moment_1, new moment_2)``: one Adam step as one kernel
        (``kernels/optim.py``; moments ``None`` at the first step, corrections ``1 - beta ** t``).

        Not a protocol op (burn's Adam is tensor ops): a **speed trick** that
        ``minidl/optim/fused.py`` calls for a parameter on Flex, as torch's ``Adam(fused=True)``.
        ``outs``: per result an array to write it into (or ``None``); a captured step
        (``minidl/capture/program.py``) passes the carried parameter and moments themselves,
        which ``aliasable`` allows (the kernel reads element i of each before writing it)."""
        return optim.adam_step(param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon,
                               correction_1, correction_2, outs)

    #: (input position, output index) pairs that may share a buffer (see ``outs``)
    adam_step.__func__.aliasable = frozenset({(0, 0), (2, 1), (3, 2)})

    @classmethod
    def float_max_pair(cls, lhs, rhs):
        """NaN-propagating maximum (torch.maximum)."""
        return binary("maximum", lhs, rhs, lhs_dtype=True)

    @classmethod
    def float_min_pair(cls, lhs, rhs):
        """NaN-propagating minimum (torch.minimum)."""
        return binary("minimum", lhs, rhs, lhs_dtype=True)

    @classmethod
    def float_clamp_min(cls, tensor, min: float):
        return clamp(tensor, float(min), math.inf)

    @classmethod
    def float_clamp_max(cls, tensor, max: float):
        return clamp(tensor, -math.inf, float(max))

    @classmethod
    def float_clamp(cls, tensor, min: float, max: float):
        return clamp(tensor, float(min), float(max))

    # ----- unary math (a flat loop: a strided view is made contiguous by the copy kernel) --------
    @classmethod
    def float_neg(cls, tensor):
        return unary("neg", contiguous(tensor))

    @classmethod
    def float_recip(cls, tensor):
        return unary("recip", contiguous(tensor))

    @classmethod
    def float_exp(cls, tensor):
        return unary("exp", contiguous(tensor))

    @classmethod
    def float_log(cls, tensor):
        return unary("log", contiguous(tensor))

    @classmethod
    def float_log1p(cls, tensor):
        """``log(1 + x)`` accurate for tiny ``x`` (the default, ``log(x + 1)``, rounds ``1 + x``)."""
        return unary("log1p", contiguous(tensor))

    @classmethod
    def float_sqrt(cls, tensor):
        return unary("sqrt", contiguous(tensor))

    @classmethod
    def float_abs(cls, tensor):
        return unary("abs", contiguous(tensor))

    @classmethod
    def float_tanh(cls, tensor):
        return unary("tanh", contiguous(tensor))

    @classmethod
    def float_sin(cls, tensor):
        return unary("sin", contiguous(tensor))

    @classmethod
    def float_cos(cls, tensor):
        return unary("cos", contiguous(tensor))

    @classmethod
    def float_erf(cls, tensor):
        return unary("erf", contiguous(tensor))

    @classmethod
    def float_floor(cls, tensor):
        return unary("floor", contiguous(tensor))

    # ----- comparisons → bool primitives, masks ---------------------------------------------------
    @classmethod
    def float_equal(cls, lhs, rhs):
        return compare("eq", lhs, rhs)

    @classmethod
    def float_not_equal(cls, lhs, rhs):
        return compare("ne", lhs, rhs)

    @classmethod
    def float_greater(cls, lhs, rhs):
        return compare("gt", lhs, rhs)

    @classmethod
    def float_greater_equal(cls, lhs, rhs):
        return compare("ge", lhs, rhs)

    @classmethod
    def float_lower(cls, lhs, rhs):
        return compare("lt", lhs, rhs)

    @classmethod
    def float_lower_equal(cls, lhs, rhs):
        return compare("le", lhs, rhs)

    @classmethod
    def float_equal_elem(cls, lhs, rhs: float):
        return compare("eq", lhs, float(rhs))

    @classmethod
    def float_not_equal_elem(cls, lhs, rhs: float):
        return compare("ne", lhs, float(rhs))

    @classmethod
    def float_greater_elem(cls, lhs, rhs: float):
        return compare("gt", lhs, float(rhs))

    @classmethod
    def float_greater_equal_elem(cls, lhs, rhs: float):
        return compare("ge", lhs, float(rhs))

    @classmethod
    def float_lower_elem(cls, lhs, rhs: float):
        return compare("lt", lhs, float(rhs))

    @classmethod
    def float_lower_equal_elem(cls, lhs, rhs: float):
        return compare("le", lhs, float(rhs))

    @classmethod
    def float_mask_where(cls, tensor, mask, value):
        return _like(where(mask, value, tensor), tensor.dtype)

    @classmethod
    def float_mask_fill(cls, tensor, mask, value: float):
        return where(mask, float(value), tensor)

    # ----- matmul ---------------------------------------------------------------------------------
    @classmethod
    def float_matmul(cls, lhs, rhs):
        """``lhs @ rhs`` over the last two dims, batch dims broadcast (NumPy's rules), lhs's
        dtype, on the packed numba gemm. No BLAS: OpenBLAS's thread pool fights numba's on a
        2-core machine (ARCHITECTURE.md, "Performance facts"). Three shapes of call:

        - no batch on the right (a ``Linear`` weight): one 2-D gemm ``[batch*m, k] @ [k, n]``;
        - the same batch on both sides: one ``batched_matmul`` call;
        - batch dims broadcast: a broadcast view (stride 0), copied only where its batch dims
          cannot be merged into one.

        The gemm reads its operands through their strides, so a transposed view (backward's
        ``x.T @ grad``, ``grad @ w.T``) is never copied first.
        """
        if lhs.ndim < 2 or rhs.ndim < 2:
            raise ValueError(f"float_matmul: expected rank >= 2, found {lhs.shape} @ {rhs.shape}")
        m, k = lhs.shape[-2:]
        if rhs.shape[-2] != k:
            raise ValueError(f"float_matmul: inner dims differ: {lhs.shape} @ {rhs.shape}")
        if rhs.dtype is not lhs.dtype and rhs.dtype != lhs.dtype:
            rhs = cast(rhs, lhs.dtype)
        if lhs.ndim == 2 and rhs.ndim == 2:  # the common case, with nothing to broadcast
            return gemm.matmul(lhs, rhs)
        n = rhs.shape[-1]
        batch = tuple(np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2]))
        if all(b == 1 for b in rhs.shape[:-2]) and lhs.shape[:-2] == batch:
            rows = math.prod(batch) * m
            out = gemm.matmul(_reshape(lhs, (rows, k)), rhs.reshape(k, n))
        else:
            out = gemm.batched_matmul(_batched(lhs, batch), _batched(rhs, batch))
        return out.reshape(batch + (m, n))

    # ----- reductions (reduced dim kept with size 1; whole tensor: shape (1,); f16 sums in f32) --
    @classmethod
    def float_sum(cls, tensor):
        return r.sum(contiguous(tensor))

    @classmethod
    def float_sum_dim(cls, tensor, dim: int):
        return r.sum(contiguous(tensor), dim)

    @classmethod
    def float_mean(cls, tensor):
        return r.mean(contiguous(tensor))

    @classmethod
    def float_mean_dim(cls, tensor, dim: int):
        return r.mean(contiguous(tensor), dim)

    @classmethod
    def float_prod_dim(cls, tensor, dim: int):
        return r.prod(contiguous(tensor), dim)

    @classmethod
    def float_max(cls, tensor):
        return r.max(contiguous(tensor))

    @classmethod
    def float_min(cls, tensor):
        return r.min(contiguous(tensor))

    @classmethod
    def float_max_dim(cls, tensor, dim: int):
        return r.max(contiguous(tensor), dim)

    @classmethod
    def float_min_dim(cls, tensor, dim: int):
        return r.min(contiguous(tensor), dim)

    @classmethod
    def float_argmax(cls, tensor, dim: int):
        """int64 index of the first maximum (a NaN counts as the maximum, as torch)."""
        return r.argmax(contiguous(tensor), dim)

    @classmethod
    def float_argmin(cls, tensor, dim: int):
        return r.argmin(contiguous(tensor), dim)

    @classmethod
    def float_max_dim_with_indices(cls, tensor, dim: int):
        return r.max_with_indices(contiguous(tensor), dim)

    @classmethod
    def float_min_dim_with_indices(cls, tensor, dim: int):
        return r.min_with_indices(contiguous(tensor), dim)

    # ----- layout that moves elements (the pure views are CpuViewOps') ---------------------------
    @classmethod
    def float_reshape(cls, tensor, shape: Shape):
        """A view when the strides allow it, else a contiguous copy (copy kernel) reshaped."""
        if tensor.flags.c_contiguous:  # _reshape's first case inline (a call costs ~0.5 us cold)
            try:
                return tensor.reshape(tuple(shape))
            except ValueError:
                raise ValueError(f"reshape: cannot reshape {tensor.shape} into {tuple(shape)}") from None
        return _reshape(tensor, tuple(shape))

    @classmethod
    def float_expand(cls, tensor, shape: Shape):
        """A read-only broadcast view (stride 0 along grown and new dims), as ``CpuViewOps``'
        but, for a C-contiguous tensor, one ``np.ndarray`` over its buffer with the strides
        written out (``np.broadcast_to`` costs ~2 us warm, ~10 us with the caches cold: the
        loss's [1, 1] and [128, 1] gradients are expanded every step)."""
        shape = tuple(shape)
        if type(tensor) is np.ndarray:
            # a speed trick (ARCHITECTURE.md, "Where speed tricks may live"): the strides and
            # the byte count kept per (shape, strides, new shape), the limit read only when
            # the view is larger than a page (an autodiff mean's backward expands its gradient
            # three times a BatchNorm; this took 3 us a call, more than the op it feeds)
            plan = _expand_plan(tensor.shape, tensor.strides, shape, tensor.dtype.itemsize)
            if plan is not None:
                strides, nbytes = plan
                if nbytes > SMALL_BYTES and nbytes > max_tensor_bytes():
                    check_size("float_expand", shape, tensor.dtype)  # raises, with its message
                view = np.ndarray(shape, tensor.dtype, tensor, 0, strides)
                view.flags.writeable = False
                return view
        check_size("float_expand", shape, tensor.dtype)
        view = _expand_view(tensor, shape)
        return np.broadcast_to(tensor, shape) if view is None else view

    @classmethod
    def float_slice_assign(cls, tensor, slices: Sequence[slice], value):
        out = copy.cast(tensor, tensor.dtype)
        copy.copy_into(value, out[tuple(slices)])
        return out

    @classmethod
    def float_cat(cls, tensors: Sequence, dim: int):
        check_cat("float_cat", tensors, dim)
        return copy.cat(list(tensors), dim, tensors[0].dtype)

    @classmethod
    def float_repeat_dim(cls, tensor, dim: int, times: int):
        """One pass of the copy kernel over a stride-0 view (``[.., 1, n, ..]`` expanded to
        ``[.., times, n, ..]``), not a cat of ``times`` copies; the size is checked first."""
        inserted, expanded, out = repeat_shapes("float_repeat_dim", tensor.shape, dim, times, tensor.dtype)
        return contiguous(np.broadcast_to(tensor.reshape(inserted), expanded)).reshape(out)

    @classmethod
    def float_gather(cls, dim: int, tensor, indices):
        """torch.gather; ``indices`` may be smaller than ``tensor`` outside ``dim`` (the tensor is
        then read through a cropped view)."""
        if tensor.dtype in FLOATS and _spans(tensor.shape, indices.shape, dim):
            return indexing.gather(dim, tensor, indices)  # nothing to crop, nothing to cast
        src = contiguous(tensor[region(indices.shape, dim)])
        return in_compute_dtype(indexing.gather, dim, src, contiguous(indices))

    @classmethod
    def float_scatter(cls, dim: int, tensor, indices, value):
        """``value`` added at ``indices`` along ``dim`` (torch's scatter_add, burn's scatter)."""
        if tensor.dtype in FLOATS and value.shape == indices.shape and _spans(tensor.shape, indices.shape, dim):
            return indexing.scatter_add(dim, tensor, indices, value)  # the whole tensor addressed
        addressed = region(indices.shape, dim)
        value = contiguous(value[tuple(slice(0, n) for n in indices.shape)])
        if all(s == slice(None) for s in addressed):
            return in_compute_dtype(indexing.scatter_add, dim, tensor, indices, value)
        part = in_compute_dtype(indexing.scatter_add, dim, tensor[addressed], indices, value)
        out = copy.cast(tensor, tensor.dtype)
        copy.copy_into(part, out[addressed])
        return out

    @classmethod
    def float_select(cls, tensor, dim: int, indices):
        return in_compute_dtype(lambda x: indexing.select(x, dim, indices), contiguous(tensor))

    @classmethod
    def float_select_assign(cls, tensor, dim: int, indices, value):
        return in_compute_dtype(lambda x, v: indexing.select_add(x, dim, indices, v), tensor, value)


def _spans(shape: Shape, index_shape: Shape, dim: int) -> bool:
    """Whether indices of ``index_shape`` address all of a ``shape`` tensor outside ``dim`` (the
    tensor needs no cropped view: a [batch, classes] tensor with [batch, 1] indices)."""
    d = dim % len(shape) if shape else 0
    return (len(shape) == len(index_shape) and shape[:d] == index_shape[:d]
            and shape[d + 1 :] == index_shape[d + 1 :])


@functools.lru_cache(maxsize=1024)
def _expand_plan(in_shape: Shape, in_strides: Shape, shape: Shape, itemsize: int):
    """``(strides, bytes)`` of :func:`_expand_view`'s view of a non-empty C-contiguous array of
    ``in_shape`` / ``in_strides`` expanded to ``shape`` (all sizes >= 0), or None when that
    function would not make it (the general code then runs, with its errors)."""
    pad = len(shape) - len(in_shape)
    if pad < 0 or not all(type(n) is int and n >= 0 for n in shape):
        return None
    expected = itemsize  # C-contiguous: each stride the product of the sizes after it
    for n, st in zip(reversed(in_shape), reversed(in_strides)):
        if n == 0 or (n > 1 and st != expected):
            return None
        expected *= n
    strides = [0] * pad
    for n, m, st in zip(shape[pad:], in_shape, in_strides):
        if m == 1:
            strides.append(0)
        elif n == m:
            strides.append(st)
        else:
            return None
    return tuple(strides), math.prod(shape) * itemsize


def _expand_view(x: np.ndarray, shape: Shape) -> np.ndarray | None:
    """``np.broadcast_to(x, shape)`` for a non-empty C-contiguous ``x``, or None (then
    ``np.broadcast_to`` itself runs, with its errors)."""
    pad = len(shape) - x.ndim
    if pad < 0 or not x.flags.c_contiguous or not x.size:
        return None
    strides = [0] * pad
    for n, m, st in zip(shape[pad:], x.shape, x.strides):
        if m == 1 and n >= 0:
            strides.append(0)  # a size-1 dim too, as np.broadcast_to gives it
        elif n == m:
            strides.append(st)
        else:
            return None
    view = np.ndarray(shape, x.dtype, x, 0, tuple(strides))
    view.flags.writeable = False
    return view


def _like(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return out if out.dtype is dtype or out.dtype == dtype else cast(out, dtype)


def _reshape(tensor: np.ndarray, shape: Shape) -> np.ndarray:
    """``tensor`` with a new shape: a view if NumPy can make one, else copy first (numba)."""
    if tensor.flags.c_contiguous:  # always a view; the plain method is half the cost of copy=False
        try:
            return tensor.reshape(shape)
        except ValueError:
            raise ValueError(f"reshape: cannot reshape {tensor.shape} into {shape}") from None
    try:
        return tensor.reshape(shape, copy=False)  # the method: np.reshape wraps it (0.5 us more)
    except ValueError:
        if int(np.prod(shape, dtype=np.int64)) != tensor.size:
            raise ValueError(f"reshape: cannot reshape {tensor.shape} into {shape}") from None
        return copy.contiguous(tensor).reshape(shape)


def _batched(x: np.ndarray, batch: Shape) -> np.ndarray:
    """``x`` [..., r, c] broadcast to ``batch + (r, c)`` as a 3-D array [prod(batch), r, c]: a
    view (stride 0 along broadcast dims) wherever NumPy can merge the batch dims into one."""
    rows, cols = x.shape[-2:]
    if x.shape[:-2] != batch:
        x = np.broadcast_to(x, batch + (rows, cols))
    return _reshape(x, (math.prod(batch), rows, cols))


