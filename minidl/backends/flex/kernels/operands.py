"""The Python half of the element-wise kernels: operands broadcast to 3-D views, the shape and
dtype of a result, and ``run3``, which hands a kernel pair its views (:mod:`.broadcast`,
:mod:`.elementwise` and :mod:`.unary` hold the kernels and call these).

Broadcasting: every operand is viewed as 3-D without a copy. Same-shape operands and single
values take the first, cheapest branch; operands of up to three dims are padded in front
(the kernels broadcast size-1 dims themselves); larger ranks have their dimensions merged
wherever all operands allow it (:func:`._common.merge_dims`), and the rare case that stays
above three dimensions is copied first.
"""

from __future__ import annotations

import numpy as np

from ._common import PARALLEL_MIN_ELEMS, merge_dims

Scalar = int | float
ArrayOrScalar = np.ndarray | Scalar


def _views3(shape: tuple[int, ...], arrays: list[np.ndarray]):
    """``(shape3, views)``: each array viewed as 3-D (broadcast to ``shape``, dims merged where
    all allow it; a single value stays [1, 1, 1]), and the 3-D shape of the output."""
    n = 1
    for s in shape:
        n *= s
    if all((a.shape == shape and a.flags.c_contiguous) or a.size == 1 for a in arrays):
        # The common cases, in about a microsecond: same-shape operands and single values
        # (the kernels broadcast size-1 axes themselves).
        return (1, 1, n), [a.reshape(1, 1, n) if a.shape == shape else a.reshape(1, 1, 1) for a in arrays]
    if len(shape) <= 3 and all(a.ndim <= 3 and a.flags.c_contiguous for a in arrays):
        # Up to three dims (a bias row, a per-row scale): each operand padded in front to 3-D,
        # a reshape; the kernels broadcast its size-1 dims themselves. merge_dims would find
        # no fewer dims here and costs several microseconds.
        return (1,) * (3 - len(shape)) + shape, [a.reshape((1,) * (3 - a.ndim) + a.shape) for a in arrays]
    if all(a.flags.c_contiguous for a in arrays):
        # Strides straight from the shapes: no broadcast views built on the way (np.broadcast_to
        # costs about 2.5 us an array; one np.ndarray over the operand's buffer about 0.25 us).
        merged = merge_dims(shape, [_Strides(_broadcast_strides(a, shape)) for a in arrays])
        if merged is not None:
            shape3 = tuple(merged[0])
            return shape3, [_view(a, shape3, st) for a, st in zip(arrays, merged[1])]
    views = [np.broadcast_to(a, shape) for a in arrays]
    merged = merge_dims(shape, views)
    if merged is None:
        # Too many distinct stride patterns: materialize, then everything is one flat dimension.
        return (1, 1, n), [np.ascontiguousarray(v).reshape(1, 1, n) for v in views]
    shape3 = tuple(merged[0])
    # The merge rule is NumPy's own, so these reshapes are views, never copies.
    return shape3, [v.reshape(shape3) for v in views]


class _Strides:
    """What ``merge_dims`` reads of an array: its strides (here those of its broadcast view)."""

    __slots__ = ("strides",)

    def __init__(self, strides: tuple[int, ...]):
        self.strides = strides


def _broadcast_strides(a: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...]:
    # NumPy's broadcasting rule: missing leading dims and size-1 dims get stride 0
    pad = len(shape) - a.ndim
    return (0,) * pad + tuple(0 if n == 1 else st for n, st in zip(a.shape, a.strides))


def _view(a: np.ndarray, shape3: tuple[int, ...], strides3) -> np.ndarray:
    # A broadcast (stride-0) dim is given size 1, which the kernels broadcast themselves
    # (`row_of`): a bias row then stays C-contiguous, so numba types it 'C' and the row loop
    # vectorizes (a stride-0 view is typed 'A': a [128, 256] + [256] add ran 3x slower).
    # Read-only, like np.broadcast_to's views, so numba sees the same array type as before.
    shape = tuple([1 if st == 0 else n for n, st in zip(shape3, strides3)])
    v = np.ndarray(shape, a.dtype, a, 0, tuple(strides3))
    v.flags.writeable = False
    return v


def broadcast_pair(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two shapes of one rank (NumPy's rule; ValueError when they clash)."""
    out = []
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"operands could not be broadcast together with shapes {sa} {sb}")
        out.append(x if y == 1 else y)
    return tuple(out)


def shape_of(*arrays: np.ndarray) -> tuple[int, ...]:
    """The broadcast shape of ``arrays`` (fast when they all have one shape)."""
    first = arrays[0].shape
    if all(a.shape == first for a in arrays):
        return first
    # NumPy's rule, in Python: np.broadcast_shapes builds arrays to find it (about 3 us)
    rank = max(a.ndim for a in arrays)
    out = [1] * rank
    for a in arrays:
        for i, n in enumerate(a.shape, rank - a.ndim):
            if n != 1:
                if out[i] not in (1, n):
                    raise ValueError(f"operands could not be broadcast together with shapes "
                                     f"{' '.join(str(x.shape) for x in arrays)}")
                out[i] = n
    return tuple(out)


def as_operand(x: ArrayOrScalar, dtype: np.dtype) -> np.ndarray:
    """``x`` as an array of ``dtype`` (no copy when it already is one)."""
    if isinstance(x, np.ndarray) and x.dtype == dtype:
        return x
    return np.asarray(x, dtype=dtype)


def result_dtype(a: ArrayOrScalar, b: ArrayOrScalar) -> np.dtype:
    """The dtype of ``a <op> b``: a Python scalar takes the array's dtype (as torch and burn
    do); two arrays promote."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype:
        return a.dtype
    if not isinstance(a, np.ndarray):
        return np.asarray(b).dtype if isinstance(b, np.ndarray) else np.result_type(a, b)
    if not isinstance(b, np.ndarray):
        return a.dtype
    return np.result_type(a.dtype, b.dtype)


def run3(serial, parallel, arrays: list[np.ndarray], out: np.ndarray, *extra) -> np.ndarray:
    """Run a 3-D kernel pair over ``arrays`` broadcast to ``out`` (serial below
    ``PARALLEL_MIN_ELEMS``), with ``extra`` arguments (the op) after ``out``."""
    if out.size == 0:
        return out
    shape3, views = _views3(out.shape, arrays)
    out3 = out.reshape(shape3)
    (parallel if out.size >= PARALLEL_MIN_ELEMS else serial)(*views, out3, *extra)
    return out


#: The dtypes numba computes in directly (float16 goes through float32), as dtype objects:
#: NumPy's builtin dtypes are singletons, so ``a.dtype is b.dtype`` is the cheap equality test.
NATIVE_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


def fast_pair(a, b) -> bool:
    """Same shape and the same native dtype, both C-contiguous: the comparisons' tiny-op path
    (one flat row, no views to build). Ordered cheapest first: it runs on every comparison."""
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape
            and a.dtype is b.dtype and a.dtype in NATIVE_DTYPES and a.flags.c_contiguous
            and b.flags.c_contiguous)


