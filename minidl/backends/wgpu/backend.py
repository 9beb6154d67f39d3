"""``Wgpu``: minidl's GPU backend, WGSL compute kernels run through wgpu (burn's
``CubeBackend<WgpuRuntime>``, the backend behind burn's ``Device::wgpu()``, ``Vulkan``,
``Metal`` and ``WebGpu`` devices).

Every required op of the protocol runs on the device, on float32, int32 and bool; so do the
scalar, comparison and clamp defaults, written here as one map kernel each instead of a
scalar tensor and a binary op. Module ops are in :mod:`minidl.backends.wgpu.module_ops`.
The element-wise ops are a table of WGSL expressions: :data:`FLOAT_UNARY`, ...; ``x0``, ``x1``
are the operands, ``s0`` a scalar.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minidl.backend import PRIMITIVE_TYPES, Backend, Device, Distribution, DType, TensorData
from minidl.backend.limits import check_size
from minidl.backends.wgpu import ops
from minidl.backends.wgpu.module_ops import WgpuModuleOps
from minidl.backends.wgpu.ops import BOOL, F32, I32, run_map
from minidl.backends.wgpu.runtime import runtime
from minidl.backends.wgpu.tensor import WgpuTensor

if WgpuTensor not in PRIMITIVE_TYPES:
    PRIMITIVE_TYPES.append(WgpuTensor)  # Dispatch wraps these as it wraps NumPy arrays

Shape = tuple[int, ...]

#: float -> float, one WGSL expression of ``x0`` each (``tanh_``, ``erf_`` are the shaders' helpers)
FLOAT_UNARY = {
    "float_exp": "exp(x0)", "float_log": "log(x0)", "float_sqrt": "sqrt(x0)", "float_abs": "abs(x0)",
    "float_tanh": "select(tanh_(x0), x0, is_nan(x0))", "float_sin": "select(nan(), sin(x0), finite(x0))",
    "float_cos": "select(nan(), cos(x0), finite(x0))", "float_erf": "select(erf_(x0), x0, is_nan(x0))",
    "float_floor": "floor(x0)", "float_neg": "-x0", "float_recip": "1.0 / x0",
    "float_log1p": "select(log(1.0 + x0), x0 * (1.0 - 0.5 * x0), abs(x0) < 1e-4)",
    "float_sign": "f32(gt(x0, 0.0)) - f32(lt(x0, 0.0))",  # +0 at 0, -0 and NaN (torch)
    "relu": "select(x0, 0.0, lt(x0, 0.0))",
    "sigmoid": "1.0 / (1.0 + exp(-x0))",
}
#: (float, float) -> float (lhs's dtype)
FLOAT_BINARY = {
    "float_add": "x0 + x1", "float_sub": "x0 - x1", "float_mul": "x0 * x1", "float_div": "x0 / x1",
    "float_powf": "powf_(x0, x1)",
    "float_max_pair": "select(x0, x1, x0 < x1 || is_nan(x1))",
    "float_min_pair": "select(x0, x1, x0 > x1 || is_nan(x1))",
}
#: (float, scalar) -> float
FLOAT_SCALAR = {
    "float_add_scalar": "x0 + s0", "float_sub_scalar": "x0 - s0", "float_mul_scalar": "x0 * s0",
    "float_div_scalar": "x0 / s0", "float_remainder_scalar": "rem_f(x0, s0)",
}
FLOAT_COMPARE = {"float_equal": "eq(x0, x1)", "float_greater": "gt(x0, x1)", "float_lower": "lt(x0, x1)",
                 "float_not_equal": "!eq(x0, x1)", "float_greater_equal": "gt(x0, x1) || eq(x0, x1)",
                 "float_lower_equal": "lt(x0, x1) || eq(x0, x1)"}
FLOAT_COMPARE_ELEM = {n + "_elem": e.replace("x1", "s0") for n, e in FLOAT_COMPARE.items()}
INT_BINARY = {"int_add": "x0 + x1", "int_sub": "x0 - x1", "int_mul": "x0 * x1"}
INT_SCALAR = {"int_add_scalar": "x0 + s0", "int_mul_scalar": "x0 * s0", "int_sub_scalar": "x0 - s0"}
INT_COMPARE = {"int_equal": "x0 == x1", "int_greater": "x0 > x1", "int_lower": "x0 < x1"}
INT_COMPARE_ELEM = {"int_equal_elem": "x0 == s0", "int_greater_elem": "x0 > s0", "int_lower_elem": "x0 < s0"}
BOOL_BINARY = {"bool_and": "x0 && x1", "bool_or": "x0 || x1", "bool_equal": "x0 == x1", "bool_xor": "x0 != x1"}
#: casts: op -> (WGSL expression of ``x0``, output dtype); the asked dtype must be that one
CASTS = {
    "float_cast": ("x0", F32), "float_into_int": ("i32(x0)", I32), "int_cast": ("x0", I32),
    "int_into_float": ("f32(x0)", F32), "bool_into_int": ("select(0, 1, x0)", I32),
    "bool_into_float": ("select(0.0, 1.0, x0)", F32),
}
#: op -> (reduction, output dtype): over the whole tensor, shape ``[1]`` ...
REDUCE_ALL = {
    "float_sum": ("sum", F32), "float_prod": ("prod", F32), "float_max": ("max", F32), "float_min": ("min", F32),
    "int_sum": ("sum", I32), "bool_any": ("any", BOOL), "bool_all": ("all", BOOL),
}
#: ... and along a dim, kept with size 1
REDUCE_DIM = {
    "float_sum_dim": ("sum", F32), "float_prod_dim": ("prod", F32), "float_max_dim": ("max", F32),
    "float_min_dim": ("min", F32), "float_argmax": ("argmax", I32), "float_argmin": ("argmin", I32),
    "int_sum_dim": ("sum", I32), "int_max_dim": ("max", I32), "int_min_dim": ("min", I32),
    "int_argmax": ("argmax", I32), "int_argmin": ("argmin", I32),
}


def _named(name: str, fn):
    fn.__name__ = fn.__qualname__ = name
    return classmethod(fn)


def _unary(name, expr, out=F32):
    return _named(name, lambda cls, tensor: run_map(name, expr, [tensor], out))


def _binary(name, expr, out=None):
    def op(cls, lhs, rhs):
        return run_map(name, expr, [lhs, rhs], lhs.dtype if out is None else out)
    return _named(name, op)


def _with_scalar(name, expr, kind, out=None):
    def op(cls, lhs, rhs):
        return run_map(name, expr, [lhs], lhs.dtype if out is None else out, [rhs], [kind])
    return _named(name, op)


def _reduce_all(name, reduction, out):
    return _named(name, lambda cls, tensor: ops.reduce_all(name, reduction, tensor, out))


def _reduce_dim(name, reduction, out):
    return _named(name, lambda cls, tensor, dim: ops.reduce_dim(name, reduction, tensor, dim, out))


def _cast(name, expr, out):
    check = ops._float_dtype if out is F32 else ops._int_dtype

    def op(cls, tensor, dtype: DType = DType.F32 if out is F32 else DType.I32):
        check(name, dtype)
        return run_map(name, expr, [tensor], out)
    return _named(name, op)


class WgpuTensorOps:
    """Float, int and bool ops of ``Wgpu`` (the element-wise ones come from the tables above)."""

    locals().update({n: _unary(n, e) for n, e in FLOAT_UNARY.items()})
    locals().update({n: _binary(n, e) for n, e in FLOAT_BINARY.items()})
    locals().update({n: _with_scalar(n, e, "f32") for n, e in FLOAT_SCALAR.items()})
    locals().update({n: _binary(n, e, BOOL) for n, e in FLOAT_COMPARE.items()})
    locals().update({n: _with_scalar(n, e, "f32", BOOL) for n, e in FLOAT_COMPARE_ELEM.items()})
    locals().update({n: _binary(n, e) for n, e in INT_BINARY.items()})
    locals().update({n: _with_scalar(n, e, "i32") for n, e in INT_SCALAR.items()})
    locals().update({n: _binary(n, e, BOOL) for n, e in INT_COMPARE.items()})
    locals().update({n: _with_scalar(n, e, "i32", BOOL) for n, e in INT_COMPARE_ELEM.items()})
    locals().update({n: _binary(n, e, BOOL) for n, e in BOOL_BINARY.items()})

    # ----- data, devices, random --------------------------------------------------------------
    @classmethod
    def read(cls, tensor) -> np.ndarray:
        return ops.read(tensor)

    @classmethod
    def adapter_name(cls, device=None) -> str:
        """The adapter behind ``device`` (printed where a chapter or bench uses the device)."""
        return runtime(getattr(device, "index", 0)).adapter_name

    @classmethod
    def float_from_data(cls, data: np.ndarray, device):
        return ops._upload("float_from_data", data, "f", device)

    @classmethod
    def int_from_data(cls, data: np.ndarray, device):
        return ops._upload("int_from_data", data, "i", device)

    @classmethod
    def bool_from_data(cls, data: np.ndarray, device):
        return ops._upload("bool_from_data", data, "b", device)

    @classmethod
    def float_into_data(cls, tensor) -> TensorData:
        return ops.into_data(tensor)

    int_into_data = float_into_data
    bool_into_data = float_into_data

    @classmethod
    def float_device(cls, tensor):
        return Device("wgpu", tensor.index)

    int_device = float_device
    bool_device = float_device

    @classmethod
    def _move(cls, tensor, device, op):
        if getattr(device, "kind", None) != "wgpu":
            raise ValueError(f"{op}: Wgpu cannot place a tensor on {device!r}")
        if device.index == tensor.index:
            return tensor
        return ops._upload(op, ops.read(tensor), tensor.dtype.kind.replace("u", "b"), device)

    @classmethod
    def float_to_device(cls, tensor, device):
        return cls._move(tensor, device, "float_to_device")

    @classmethod
    def int_to_device(cls, tensor, device):
        return cls._move(tensor, device, "int_to_device")

    @classmethod
    def bool_to_device(cls, tensor, device):
        return cls._move(tensor, device, "bool_to_device")

    @classmethod
    def seed(cls, device, seed: int) -> None:
        ops.seed(getattr(device, "index", 0), seed)

    @classmethod
    def float_random(cls, shape: Shape, distribution: Distribution, dtype: DType, device):
        check_size("float_random", shape, dtype.numpy)
        ops._float_dtype("float_random", dtype)
        return ops.distribution("float_random", shape, distribution, getattr(device, "index", 0))

    @classmethod
    def int_random(cls, shape: Shape, low: int, high: int, dtype: DType, device):
        check_size("int_random", shape, dtype.numpy)
        ops._int_dtype("int_random", dtype)
        if not -(2**31) <= low < high <= 2**31 - 1:
            raise ValueError(f"int_random: expected -2^31 <= low < high < 2^31, found [{low}, {high})")
        return ops.random("int_random", "int", shape, getattr(device, "index", 0), low, high)

    @classmethod
    def float_full(cls, shape: Shape, fill_value: float, dtype: DType, device):
        check_size("float_full", shape, dtype.numpy)
        ops._float_dtype("float_full", dtype)
        return run_map("float_full", "s0", [], F32, [fill_value], ["f32"],
                       out=ops.new(shape, F32, getattr(device, "index", 0), "float_full"), shape=tuple(shape))

    @classmethod
    def float_zeros(cls, shape: Shape, dtype: DType, device):
        check_size("float_zeros", shape, dtype.numpy)
        return cls.float_full(shape, 0.0, dtype, device)

    @classmethod
    def float_ones(cls, shape: Shape, dtype: DType, device):
        check_size("float_ones", shape, dtype.numpy)
        return cls.float_full(shape, 1.0, dtype, device)

    @classmethod
    def int_zeros(cls, shape: Shape, dtype: DType, device):
        check_size("int_zeros", shape, dtype.numpy)
        ops._int_dtype("int_zeros", dtype)
        return run_map("int_zeros", "0", [], I32,
                       out=ops.new(shape, I32, getattr(device, "index", 0), "int_zeros"), shape=tuple(shape))

    @classmethod
    def int_arange(cls, start: int, end: int, step: int, dtype: DType, device):
        """The protocol's host arange, uploaded, once ``dtype`` is the device's int32."""
        ops._int_dtype("int_arange", dtype)
        return super().int_arange(start, end, step, dtype, device)

    # ----- casts -----------------------------------------------------------------------------
    locals().update({n: _cast(n, e, out) for n, (e, out) in CASTS.items()})

    # ----- the element-wise ops that need more than an expression ------------------------------
    @classmethod
    def float_powf_scalar(cls, lhs, rhs: float):
        if rhs == 0.5:  # torch's sqrt and rsqrt paths (see the protocol's default)
            return run_map("float_powf_scalar", "select(sqrt(x0), nan(), lt(x0, 0.0))", [lhs], F32)
        if rhs == -0.5:
            return run_map("float_powf_scalar", "select(1.0 / sqrt(x0), nan(), lt(x0, 0.0))", [lhs], F32)
        return run_map("float_powf_scalar", "powf_(x0, s0)", [lhs], F32, [rhs], ["f32"])

    @classmethod
    def float_clamp(cls, tensor, min: float, max: float):
        return run_map("float_clamp", "select(select(x0, s0, x0 < s0), s1, x0 > s1)", [tensor], F32,
                       [min, max], ["f32", "f32"])

    @classmethod
    def float_clamp_min(cls, tensor, min: float):
        return run_map("float_clamp_min", "select(x0, s0, x0 < s0)", [tensor], F32, [min], ["f32"])

    @classmethod
    def float_clamp_max(cls, tensor, max: float):
        return run_map("float_clamp_max", "select(x0, s0, x0 > s0)", [tensor], F32, [max], ["f32"])

    @classmethod
    def relu_backward(cls, output, grad):
        # torch's threshold_backward: zero where output <= 0 (false for NaN: the gradient passes)
        return run_map("relu_backward", "select(x1, 0.0, lt(x0, 0.0) || eq(x0, 0.0))", [output, grad], F32)

    @classmethod
    def int_div(cls, lhs, rhs):
        ops._nonzero("int_div", rhs)
        return run_map("int_div", "x0 / x1", [lhs, rhs], I32)  # WGSL's i32 division truncates

    @classmethod
    def int_remainder(cls, lhs, rhs):
        ops._nonzero("int_remainder", rhs)
        return run_map("int_remainder", "rem_i(x0, x1)", [lhs, rhs], I32)

    @classmethod
    def int_abs(cls, tensor):
        return run_map("int_abs", "abs(x0)", [tensor], I32)

    @classmethod
    def int_neg(cls, tensor):
        return run_map("int_neg", "-x0", [tensor], I32)

    @classmethod
    def bool_not(cls, tensor):
        return run_map("bool_not", "!x0", [tensor], BOOL)

    @classmethod
    def float_mask_where(cls, tensor, mask, value):
        return run_map("float_mask_where", "select(x0, x2, x1)", [tensor, mask, value], F32)

    @classmethod
    def float_mask_fill(cls, tensor, mask, value: float):
        return run_map("float_mask_fill", "select(x0, s0, x1)", [tensor, mask], F32, [value], ["f32"])

    @classmethod
    def int_mask_where(cls, tensor, mask, value):
        return run_map("int_mask_where", "select(x0, x2, x1)", [tensor, mask, value], I32)

    @classmethod
    def int_mask_fill(cls, tensor, mask, value: int):
        return run_map("int_mask_fill", "select(x0, s0, x1)", [tensor, mask], I32, [value], ["i32"])

    # ----- matmul and reductions -------------------------------------------------------------
    @classmethod
    def float_matmul(cls, lhs, rhs):
        return ops.matmul("float_matmul", lhs, rhs)

    locals().update({n: _reduce_all(n, r, out) for n, (r, out) in REDUCE_ALL.items()})
    locals().update({n: _reduce_dim(n, r, out) for n, (r, out) in REDUCE_DIM.items()})

    # ----- index ops ---------------------------------------------------------------------------
    @classmethod
    def float_gather(cls, dim: int, tensor, indices):
        return ops.gather("float_gather", dim, tensor, indices)

    @classmethod
    def int_gather(cls, dim: int, tensor, indices):
        return ops.gather("int_gather", dim, tensor, indices)

    @classmethod
    def float_scatter(cls, dim: int, tensor, indices, value):
        return ops.scatter("float_scatter", "scatter", dim, tensor, indices, value)

    @classmethod
    def int_scatter(cls, dim: int, tensor, indices, value):
        return ops.scatter("int_scatter", "scatter", dim, tensor, indices, value)

    @classmethod
    def float_select(cls, tensor, dim: int, indices):
        return ops.select("float_select", tensor, dim, indices)

    @classmethod
    def int_select(cls, tensor, dim: int, indices):
        return ops.select("int_select", tensor, dim, indices)

    @classmethod
    def float_select_assign(cls, tensor, dim: int, indices, value):
        return ops.scatter("float_select_assign", "select", dim, tensor, indices, value)

    @classmethod
    def int_select_assign(cls, tensor, dim: int, indices, value):
        return ops.scatter("int_select_assign", "select", dim, tensor, indices, value)


def _views(kind: str) -> dict:
    """reshape, swap_dims, permute, flip, expand, slice, slice_assign and cat of one kind."""
    def reshape(cls, tensor, shape):
        return ops._reshape(f"{kind}_reshape", tensor, shape)

    def swap_dims(cls, tensor, dim1: int, dim2: int):
        return ops._swap(tensor, dim1, dim2)

    def permute(cls, tensor, axes: Sequence[int]):
        return ops._permute(tensor, axes)

    def flip(cls, tensor, axes: Sequence[int]):
        return ops._flip(tensor, axes)

    def expand(cls, tensor, shape):
        return ops._expand(f"{kind}_expand", tensor, shape)

    def slice_(cls, tensor, slices: Sequence[slice]):
        return ops._slice_view(tensor, slices)

    def slice_assign(cls, tensor, slices: Sequence[slice], value):
        return ops._slice_assign(f"{kind}_slice_assign", tensor, slices, value)

    def cat(cls, tensors: Sequence, dim: int):
        return ops._cat(f"{kind}_cat", list(tensors), dim)

    made = {"reshape": reshape, "swap_dims": swap_dims, "permute": permute, "flip": flip,
            "expand": expand, "slice": slice_, "cat": cat}
    if kind != "bool":
        made["slice_assign"] = slice_assign
    return {f"{kind}_{n}": _named(f"{kind}_{n}", f) for n, f in made.items()}


class WgpuViewOps:
    """The layout ops of every kind: views of the same buffer (strides), except cat and
    slice_assign, which copy."""

    locals().update(_views("float"))
    locals().update(_views("int"))
    locals().update(_views("bool"))


class Wgpu(WgpuTensorOps, WgpuViewOps, WgpuModuleOps, Backend):
    """burn's ``CubeBackend<WgpuRuntime>`` in miniature: primitives are :class:`WgpuTensor`
    views of device buffers, every op a WGSL dispatch; the device is ``Device.wgpu()``."""

    name = "wgpu"
