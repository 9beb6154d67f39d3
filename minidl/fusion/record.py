"""The ops ``Fusion[B]`` records instead of running (burn-fusion's ``ops/tensor.rs``, ``ops/bool_tensor.rs``).

Each one infers its result's shape and dtype, appends an :class:`OperationIr` to the stream
and returns a pending handle, unless the op is small and its inputs exist: then it runs eagerly
on ``B`` (:data:`~.stream.EAGER_BELOW`: recording costs more than fusing would save).
``float_reshape`` of a ready tensor is a view taken eagerly; of a pending one it is recorded.
``float_matmul`` is recorded so a following bias add and activation can fuse into its kernel.

Every op is a method of its own here (a traceback names it, with this file and line); the
helpers below hold what the ops of one shape have in common: :func:`_eager_values` (whether
an op runs eagerly), :func:`_unary`, :func:`_binary`, :func:`_scalar` and :func:`_reduce`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from minidl.backend.dtype import DType
from minidl.fusion.eager import run_eager
from minidl.fusion.events import STREAM_LISTENERS, emit
from minidl.fusion.ir import broadcast_shape
from minidl.fusion.tensor import FusionTensor, small_value

BOOL = np.dtype(np.bool_)
#: the protocol's parameter names of the tensor inputs, in order
TENSOR, LHS, LHS_RHS = ("tensor",), ("lhs",), ("lhs", "rhs")


def _shape(t) -> tuple[int, ...]:
    return t.shape if type(t.shape) is tuple else tuple(t.shape)


def _dtype(t) -> np.dtype:
    return t.dtype


def _host(value) -> float:
    # a capture's symbolic scalar (minidl.capture) stays one, so the captured launch that takes
    # it recomputes it per replay; float() would freeze it (the kernel casts either to its dtype)
    return value if type(value) is not float and getattr(value, "symbolic", False) else float(value)


def _eager_values(cls, op: str, *inputs, shape: tuple[int, ...] | None = None) -> list | None:
    """The values of ``inputs`` when each exists and is small (and so is ``shape``, the result's,
    when given): the op then runs eagerly on ``B``. None: record it."""
    limit = cls.stream.eager_below
    if shape is not None and math.prod(shape) >= limit:
        return None
    values = []
    for t in inputs:
        value = small_value(t, limit)
        if value is None:
            return None
        values.append(value)
    return values


def _eager_view(cls, op: str, value):
    """The ready handle of a view ``B`` took of a ready tensor (no fuser takes views of ready
    tensors: run as :func:`~.eager.run_eager` runs them, without its arguments by name)."""
    if STREAM_LISTENERS:
        emit("eager", op=op, backend=cls._inner.__name__)
    return cls.stream.ready(value)


def _unary(cls, kind: str, op: str, tensor):
    stream = cls.stream
    # small_value(tensor, ...) written out: this is every small op's path
    value = tensor._value if type(tensor) is FusionTensor else small_value(tensor, stream.eager_below)
    if value is not None and value.size < stream.eager_below:
        return stream.eager_result(op, getattr(cls._inner, op)(value))
    return stream.record(kind, op, (tensor,), _shape(tensor), _dtype(tensor), names=TENSOR)


def _binary(cls, kind: str, op: str, lhs, rhs, dtype: np.dtype | None = None):
    """``dtype``: the result's (``lhs``'s when None)."""
    stream = cls.stream
    limit = stream.eager_below
    if type(lhs) is FusionTensor and type(rhs) is FusionTensor:
        # two small ready handles, small_value written out: most small ops' path (a broadcast's
        # result must be small too)
        x, y = lhs._value, rhs._value
        if x is not None and y is not None and x.size < limit and y.size < limit and (
                lhs.shape == rhs.shape or math.prod(broadcast_shape(lhs.shape, rhs.shape)) < limit):
            return stream.eager_result(op, getattr(cls._inner, op)(x, y))
    if dtype is None:
        dtype = _dtype(lhs)
    a, b = _shape(lhs), _shape(rhs)
    if a == b:
        shape = a
        if (x := small_value(lhs, limit)) is not None and (y := small_value(rhs, limit)) is not None:
            return stream.eager_result(op, getattr(cls._inner, op)(x, y))
    else:
        shape = broadcast_shape(a, b)
        if (values := _eager_values(cls, op, lhs, rhs, shape=shape)) is not None:
            return stream.eager_result(op, getattr(cls._inner, op)(*values))
    return stream.record(kind, op, (lhs, rhs), shape, dtype, names=LHS_RHS)


def _scalar(cls, kind: str, op: str, lhs, rhs: float, dtype: np.dtype | None = None):
    """``dtype``: the result's (``lhs``'s when None)."""
    stream = cls.stream
    value = lhs._value if type(lhs) is FusionTensor else small_value(lhs, stream.eager_below)
    if value is not None and value.size < stream.eager_below:
        return stream.eager_result(op, getattr(cls._inner, op)(value, rhs))
    return stream.record(kind, op, (lhs,), _shape(lhs), _dtype(lhs) if dtype is None else dtype, scalars=(_host(rhs),),
                         names=LHS, extra={"rhs": rhs})


def _reduce(cls, kind: str, op: str, tensor, dim: int):
    stream = cls.stream
    # small_value(tensor, ...) written out, as in _unary
    value = tensor._value if type(tensor) is FusionTensor else small_value(tensor, stream.eager_below)
    if value is not None and value.size < stream.eager_below:
        return stream.eager_result(op, getattr(cls._inner, op)(value, dim))
    shape = tuple(1 if d == dim else s for d, s in enumerate(_shape(tensor)))
    return stream.record(kind, op, (tensor,), shape, _dtype(tensor), static=(int(dim),),
                         names=TENSOR, extra={"dim": dim})


class FusionRecordedOps:
    """The float and bool ops ``Fusion[B]`` records lazily (mixed into the ``Fusion`` class).

    Recording an op runs nothing: it infers the result's shape and dtype (broadcasting as
    the protocol does), appends an :class:`~.ir.OperationIr` to the stream (the op's fuser
    kind, its inputs as IR, scalars and static arguments, the protocol's parameter names to
    replay it on ``B``) and returns a pending :class:`~.tensor.FusionTensor`, unless the op runs eagerly (small,
    on ready inputs, on a backend whose policy allows it). Each op has the protocol's
    signature and does what the protocol op of its name does; the docstrings below say only
    what differs from that (what runs eagerly instead, what a fuser reads through).
    """

    # ----- element-wise, one float input ----------------------------------------------------
    @classmethod
    def float_exp(cls, tensor):
        return _unary(cls, "exp", "float_exp", tensor)

    @classmethod
    def float_log(cls, tensor):
        return _unary(cls, "log", "float_log", tensor)

    @classmethod
    def float_log1p(cls, tensor):
        return _unary(cls, "log1p", "float_log1p", tensor)

    @classmethod
    def float_sqrt(cls, tensor):
        return _unary(cls, "sqrt", "float_sqrt", tensor)

    @classmethod
    def float_abs(cls, tensor):
        return _unary(cls, "abs", "float_abs", tensor)

    @classmethod
    def float_tanh(cls, tensor):
        return _unary(cls, "tanh", "float_tanh", tensor)

    @classmethod
    def float_sin(cls, tensor):
        return _unary(cls, "sin", "float_sin", tensor)

    @classmethod
    def float_cos(cls, tensor):
        return _unary(cls, "cos", "float_cos", tensor)

    @classmethod
    def float_erf(cls, tensor):
        return _unary(cls, "erf", "float_erf", tensor)

    @classmethod
    def float_floor(cls, tensor):
        return _unary(cls, "floor", "float_floor", tensor)

    @classmethod
    def float_neg(cls, tensor):
        return _unary(cls, "neg", "float_neg", tensor)

    @classmethod
    def float_recip(cls, tensor):
        return _unary(cls, "recip", "float_recip", tensor)

    # ----- element-wise, two inputs (broadcasting) -------------------------------------------
    @classmethod
    def float_add(cls, lhs, rhs):
        return _binary(cls, "add", "float_add", lhs, rhs)

    @classmethod
    def float_sub(cls, lhs, rhs):
        return _binary(cls, "sub", "float_sub", lhs, rhs)

    @classmethod
    def float_mul(cls, lhs, rhs):
        return _binary(cls, "mul", "float_mul", lhs, rhs)

    @classmethod
    def float_div(cls, lhs, rhs):
        return _binary(cls, "div", "float_div", lhs, rhs)

    @classmethod
    def float_powf(cls, lhs, rhs):
        return _binary(cls, "powf", "float_powf", lhs, rhs)

    # ----- a tensor and a scalar (the scalar is passed at launch) ----------------------------
    @classmethod
    def float_add_scalar(cls, lhs, rhs: float):
        return _scalar(cls, "add_scalar", "float_add_scalar", lhs, rhs)

    @classmethod
    def float_sub_scalar(cls, lhs, rhs: float):
        return _scalar(cls, "sub_scalar", "float_sub_scalar", lhs, rhs)

    @classmethod
    def float_mul_scalar(cls, lhs, rhs: float):
        return _scalar(cls, "mul_scalar", "float_mul_scalar", lhs, rhs)

    @classmethod
    def float_div_scalar(cls, lhs, rhs: float):
        return _scalar(cls, "div_scalar", "float_div_scalar", lhs, rhs)

    @classmethod
    def float_powf_scalar(cls, lhs, rhs: float):
        return _scalar(cls, "powf_scalar", "float_powf_scalar", lhs, rhs)

    # ----- comparisons (bool results) --------------------------------------------------------
    @classmethod
    def float_equal(cls, lhs, rhs):
        return _binary(cls, "equal", "float_equal", lhs, rhs, BOOL)

    @classmethod
    def float_equal_elem(cls, lhs, rhs: float):
        return _scalar(cls, "equal_elem", "float_equal_elem", lhs, rhs, BOOL)

    @classmethod
    def float_not_equal(cls, lhs, rhs):
        return _binary(cls, "not_equal", "float_not_equal", lhs, rhs, BOOL)

    @classmethod
    def float_not_equal_elem(cls, lhs, rhs: float):
        return _scalar(cls, "not_equal_elem", "float_not_equal_elem", lhs, rhs, BOOL)

    @classmethod
    def float_greater(cls, lhs, rhs):
        return _binary(cls, "greater", "float_greater", lhs, rhs, BOOL)

    @classmethod
    def float_greater_elem(cls, lhs, rhs: float):
        return _scalar(cls, "greater_elem", "float_greater_elem", lhs, rhs, BOOL)

    @classmethod
    def float_greater_equal(cls, lhs, rhs):
        return _binary(cls, "greater_equal", "float_greater_equal", lhs, rhs, BOOL)

    @classmethod
    def float_greater_equal_elem(cls, lhs, rhs: float):
        return _scalar(cls, "greater_equal_elem", "float_greater_equal_elem", lhs, rhs, BOOL)

    @classmethod
    def float_lower(cls, lhs, rhs):
        return _binary(cls, "lower", "float_lower", lhs, rhs, BOOL)

    @classmethod
    def float_lower_elem(cls, lhs, rhs: float):
        return _scalar(cls, "lower_elem", "float_lower_elem", lhs, rhs, BOOL)

    @classmethod
    def float_lower_equal(cls, lhs, rhs):
        return _binary(cls, "lower_equal", "float_lower_equal", lhs, rhs, BOOL)

    @classmethod
    def float_lower_equal_elem(cls, lhs, rhs: float):
        return _scalar(cls, "lower_equal_elem", "float_lower_equal_elem", lhs, rhs, BOOL)

    # ----- reductions along a dim -------------------------------------------------------------
    @classmethod
    def float_sum_dim(cls, tensor, dim: int):
        return _reduce(cls, "sum_dim", "float_sum_dim", tensor, dim)

    @classmethod
    def float_max_dim(cls, tensor, dim: int):
        return _reduce(cls, "max_dim", "float_max_dim", tensor, dim)

    @classmethod
    def float_min_dim(cls, tensor, dim: int):
        return _reduce(cls, "min_dim", "float_min_dim", tensor, dim)

    # ----- bool ops, conversions, selection ---------------------------------------------------
    @classmethod
    def bool_and(cls, lhs, rhs):
        return _binary(cls, "bool_and", "bool_and", lhs, rhs, BOOL)

    @classmethod
    def bool_or(cls, lhs, rhs):
        return _binary(cls, "bool_or", "bool_or", lhs, rhs, BOOL)

    @classmethod
    def bool_not(cls, tensor):
        if (values := _eager_values(cls, "bool_not", tensor)) is not None:
            return cls.stream.eager_result("bool_not", cls._inner.bool_not(*values))
        return cls.stream.record("bool_not", "bool_not", (tensor,), _shape(tensor), BOOL, names=TENSOR)

    @classmethod
    def bool_into_float(cls, tensor, dtype: DType = DType.F32):
        """A mask as 0/1 floats."""
        if (values := _eager_values(cls, "bool_into_float", tensor)) is not None:
            return cls.stream.eager_result("bool_into_float", cls._inner.bool_into_float(*values, dtype))
        return cls.stream.record("bool_into_float", "bool_into_float", (tensor,), _shape(tensor),
                                 np.dtype(dtype.numpy), static=(dtype.value,), names=TENSOR, extra={"dtype": dtype})

    @classmethod
    def float_cast(cls, tensor, dtype: DType):
        if (values := _eager_values(cls, "float_cast", tensor)) is not None:
            return cls.stream.eager_result("float_cast", cls._inner.float_cast(*values, dtype))
        return cls.stream.record("cast", "float_cast", (tensor,), _shape(tensor), np.dtype(dtype.numpy),
                                 static=(dtype.value,), names=TENSOR, extra={"dtype": dtype})

    @classmethod
    def float_mask_where(cls, tensor, mask, value):
        """``where(mask, value, tensor)``, the three broadcast together."""
        shape = broadcast_shape(_shape(tensor), _shape(mask), _shape(value))
        if (values := _eager_values(cls, "float_mask_where", tensor, mask, value, shape=shape)) is not None:
            return cls.stream.eager_result("float_mask_where", cls._inner.float_mask_where(*values))
        return cls.stream.record("mask_where", "float_mask_where", (tensor, mask, value), shape, _dtype(tensor),
                                 names=("tensor", "mask", "value"))

    @classmethod
    def float_mask_fill(cls, tensor, mask, value: float):
        shape = broadcast_shape(_shape(tensor), _shape(mask))
        if (values := _eager_values(cls, "float_mask_fill", tensor, mask, shape=shape)) is not None:
            return cls.stream.eager_result("float_mask_fill", cls._inner.float_mask_fill(*values, value))
        return cls.stream.record("mask_fill", "float_mask_fill", (tensor, mask), shape, _dtype(tensor),
                                 scalars=(_host(value),), names=("tensor", "mask"),
                                 extra={"value": value})

    @classmethod
    def float_sum(cls, tensor):
        if (values := _eager_values(cls, "float_sum", tensor)) is not None:
            return cls.stream.eager_result("float_sum", cls._inner.float_sum(*values))
        return cls.stream.record("sum", "float_sum", (tensor,), (1,), _dtype(tensor), static=("all",),
                                 names=TENSOR)

    @classmethod
    def float_matmul(cls, lhs, rhs):
        """Recorded so that a following bias add and activation fuse into its kernel."""
        a, b = _shape(lhs), _shape(rhs)
        if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
            return run_eager(cls, "float_matmul", {"lhs": lhs, "rhs": rhs})  # B raises its own error
        batch = broadcast_shape(a[:-2], b[:-2])
        if (values := _eager_values(cls, "float_matmul", lhs, rhs, shape=batch + (a[-2], b[-1]))) is not None:
            return cls.stream.eager_result("float_matmul", cls._inner.float_matmul(*values))
        return cls.stream.record("matmul", "float_matmul", (lhs, rhs), batch + (a[-2], b[-1]), _dtype(lhs),
                                 names=LHS_RHS)

    # ----- views: recorded, so they are no sync point; the fusers read through them -------------
    @classmethod
    def float_reshape(cls, tensor, shape: Sequence[int]):
        """A ready tensor's view is taken eagerly; a pending one's is recorded (the element-wise
        fuser reads through it when its block has no broadcast input, else it runs on ``B``)."""
        shape = tuple(map(int, shape))
        if type(tensor) is FusionTensor:
            if shape == tensor.shape:
                return tensor
            if tensor._value is not None:  # B's view, as run_eager would take it, without its dict
                return _eager_view(cls, "float_reshape", cls._inner.float_reshape(tensor._value, shape))
        if not (isinstance(tensor, FusionTensor) and tensor.pending):
            return run_eager(cls, "float_reshape", {"tensor": tensor, "shape": shape})
        if -1 in shape or math.prod(shape) != math.prod(tensor.shape):
            return run_eager(cls, "float_reshape", {"tensor": tensor, "shape": shape})  # B raises
        return cls.stream.record("reshape", "float_reshape", (tensor,), shape, _dtype(tensor), static=(shape,),
                                 names=TENSOR, extra={"shape": shape})

    @classmethod
    def float_expand(cls, tensor, shape: Sequence[int]):
        """To a fuser, the identity with its input broadcast."""
        shape = tuple(map(int, shape))
        if type(tensor) is FusionTensor:
            if shape == tensor.shape:
                return tensor
            value, limit = tensor._value, cls.stream.eager_below
            if value is not None and value.size < limit and math.prod(shape) < limit:
                # small and ready, _eager_values written out (B raises for a shape it cannot take)
                return cls.stream.eager_result("float_expand", cls._inner.float_expand(value, shape))
        try:
            broadcast_shape(_shape(tensor), shape)
        except ValueError:
            return run_eager(cls, "float_expand", {"tensor": tensor, "shape": shape})  # B raises
        if (values := _eager_values(cls, "float_expand", tensor, shape=shape)) is not None:
            return cls.stream.eager_result("float_expand", cls._inner.float_expand(*values, shape))
        return cls.stream.record("expand", "float_expand", (tensor,), shape, _dtype(tensor), static=(shape,),
                                 names=TENSOR, extra={"shape": shape})

    @classmethod
    def float_swap_dims(cls, tensor, dim1: int, dim2: int):
        """A ready tensor's view eagerly; a pending one's recorded (no fuser takes it: it runs on
        ``B`` in stream order, inside the plan)."""
        if type(tensor) is FusionTensor and tensor._value is not None and type(dim1) is int and type(dim2) is int:
            return _eager_view(cls, "float_swap_dims", cls._inner.float_swap_dims(tensor._value, dim1, dim2))
        if not (isinstance(tensor, FusionTensor) and tensor.pending):
            return run_eager(cls, "float_swap_dims", {"tensor": tensor, "dim1": dim1, "dim2": dim2})
        shape = list(tensor.shape)
        try:
            shape[dim1], shape[dim2] = shape[dim2], shape[dim1]
        except IndexError:
            return run_eager(cls, "float_swap_dims", {"tensor": tensor, "dim1": dim1, "dim2": dim2})
        return cls.stream.record("swap_dims", "float_swap_dims", (tensor,), tuple(shape), _dtype(tensor),
                                 static=(dim1, dim2), names=TENSOR, extra={"dim1": dim1, "dim2": dim2})
