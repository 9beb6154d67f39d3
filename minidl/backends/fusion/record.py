"""The ops ``Fusion[B]`` records instead of running (burn-fusion's ``ops/float.rs``, ``ops/bool.rs``).

Each one infers its result's shape and dtype, appends an :class:`OperationIr` to the stream
and returns a pending handle. ``float_reshape`` of a ready tensor is a view taken at once; of a
pending one it is a sync point (a layout change closes the block). ``float_matmul`` is
recorded so a following bias add and activation can fuse into its kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minidl.backend.dtype import DType
from minidl.backends.fusion.eager import run_on_inner
from minidl.backends.fusion.ir import broadcast_shape
from minidl.backends.fusion.tensor import FusionTensor


def _shape(t) -> tuple[int, ...]:
    return tuple(t.shape)


def _dtype(t) -> np.dtype:
    return np.dtype(t.dtype)


def _unary(kind: str, op: str):
    def method(cls, tensor):
        return cls.stream.record(kind, op, [tensor], _shape(tensor), _dtype(tensor), kwargs={"tensor": tensor})

    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"Record ``{kind}`` (element-wise)."
    return classmethod(method)


def _binary(kind: str, op: str, out_dtype=None):
    def method(cls, lhs, rhs):
        shape = broadcast_shape(_shape(lhs), _shape(rhs))
        dtype = np.dtype(out_dtype) if out_dtype is not None else _dtype(lhs)
        return cls.stream.record(kind, op, [lhs, rhs], shape, dtype, kwargs={"lhs": lhs, "rhs": rhs})

    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"Record ``{kind}`` (element-wise, broadcasting)."
    return classmethod(method)


def _scalar(kind: str, op: str, out_dtype=None):
    def method(cls, lhs, rhs: float):
        dtype = np.dtype(out_dtype) if out_dtype is not None else _dtype(lhs)
        return cls.stream.record(kind, op, [lhs], _shape(lhs), dtype, scalars=(float(rhs),),
                                 kwargs={"lhs": lhs, "rhs": rhs})

    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"Record ``{kind}`` with a scalar passed at launch."
    return classmethod(method)


def _reduce(kind: str, op: str):
    def method(cls, tensor, dim: int):
        shape = tuple(1 if d == dim else s for d, s in enumerate(_shape(tensor)))
        return cls.stream.record(kind, op, [tensor], shape, _dtype(tensor), static=(int(dim),),
                                 kwargs={"tensor": tensor, "dim": dim})

    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"Record ``{kind}`` along ``dim`` (kept with size 1)."
    return classmethod(method)


UNARY_OPS = ["exp", "log", "log1p", "sqrt", "abs", "tanh", "sin", "cos", "erf", "floor", "neg", "recip"]
BINARY_OPS = ["add", "sub", "mul", "div", "powf"]
SCALAR_OPS = ["add", "sub", "mul", "div", "powf"]
COMPARE_OPS = ["equal", "not_equal", "greater", "greater_equal", "lower", "lower_equal"]


class FusionRecordedOps:
    """The float and bool ops ``Fusion[B]`` records lazily (mixed into the ``Fusion`` class)."""

    bool_and = _binary("bool_and", "bool_and", np.bool_)
    bool_or = _binary("bool_or", "bool_or", np.bool_)

    @classmethod
    def bool_not(cls, tensor):
        """Record ``not`` (element-wise)."""
        return cls.stream.record("bool_not", "bool_not", [tensor], _shape(tensor), np.bool_, kwargs={"tensor": tensor})

    @classmethod
    def bool_into_float(cls, tensor, dtype: DType = DType.F32):
        """Record the conversion of a mask to 0/1 floats."""
        return cls.stream.record("bool_into_float", "bool_into_float", [tensor], _shape(tensor), dtype.numpy,
                                 static=(dtype.value,), kwargs={"tensor": tensor, "dtype": dtype})

    @classmethod
    def float_cast(cls, tensor, dtype: DType):
        """Record a cast to another float dtype."""
        return cls.stream.record("cast", "float_cast", [tensor], _shape(tensor), dtype.numpy,
                                 static=(dtype.value,), kwargs={"tensor": tensor, "dtype": dtype})

    @classmethod
    def float_mask_where(cls, tensor, mask, value):
        """Record ``where(mask, value, tensor)`` (broadcasting)."""
        shape = broadcast_shape(_shape(tensor), _shape(mask), _shape(value))
        return cls.stream.record("mask_where", "float_mask_where", [tensor, mask, value], shape, _dtype(tensor),
                                 kwargs={"tensor": tensor, "mask": mask, "value": value})

    @classmethod
    def float_mask_fill(cls, tensor, mask, value: float):
        """Record ``where(mask, value, tensor)`` with a scalar ``value``."""
        shape = broadcast_shape(_shape(tensor), _shape(mask))
        return cls.stream.record("mask_fill", "float_mask_fill", [tensor, mask], shape, _dtype(tensor),
                                 scalars=(float(value),), kwargs={"tensor": tensor, "mask": mask, "value": value})

    @classmethod
    def float_sum(cls, tensor):
        """Record the sum of every element (shape ``[1]``)."""
        return cls.stream.record("sum", "float_sum", [tensor], (1,), _dtype(tensor), static=("all",),
                                 kwargs={"tensor": tensor})

    @classmethod
    def float_matmul(cls, lhs, rhs):
        """Record a matmul (fusable with its element-wise epilogue)."""
        a, b = _shape(lhs), _shape(rhs)
        if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
            return run_on_inner(cls, "float_matmul", {"lhs": lhs, "rhs": rhs})  # B raises its own error
        batch = broadcast_shape(a[:-2], b[:-2])
        return cls.stream.record("matmul", "float_matmul", [lhs, rhs], batch + (a[-2], b[-1]), _dtype(lhs),
                                 kwargs={"lhs": lhs, "rhs": rhs})

    @classmethod
    def float_reshape(cls, tensor, shape: Sequence[int]):
        """A view of a ready tensor at once; a pending one is synced first (closes the block)."""
        if isinstance(tensor, FusionTensor) and tuple(shape) == tensor.shape:
            return tensor
        return run_on_inner(cls, "float_reshape", {"tensor": tensor, "shape": tuple(shape)})


def _install() -> None:
    ops = {}
    for k in UNARY_OPS:
        ops[f"float_{k}"] = _unary(k, f"float_{k}")
    for k in BINARY_OPS:
        ops[f"float_{k}"] = _binary(k, f"float_{k}")
    for k in SCALAR_OPS:
        ops[f"float_{k}_scalar"] = _scalar(f"{k}_scalar", f"float_{k}_scalar")
    for k in COMPARE_OPS:
        ops[f"float_{k}"] = _binary(k, f"float_{k}", np.bool_)
        ops[f"float_{k}_elem"] = _scalar(f"{k}_elem", f"float_{k}_elem", np.bool_)
    for k in ("sum", "max", "min"):
        ops[f"float_{k}_dim"] = _reduce(f"{k}_dim", f"float_{k}_dim")
    for name, method in ops.items():
        setattr(FusionRecordedOps, name, method)


_install()
