"""Every compute op Flex writes runs a numba kernel; the pure layout ops only make views; and
nothing in Flex calls BLAS (ARCHITECTURE.md, "Performance facts"). Kernel calls are seen the way the debug tools see
them: numba reports each call of a compiled function to ``sys.setprofile`` hooks with the
Python function's code object."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
from pathlib import Path

import numpy as np
import pytest

import minidl.backends.flex.kernels as kernels_pkg
from minidl.backend import (
    ConvOptions,
    ConvTransposeOptions,
    Distribution,
    DType,
    InterpolateOptions,
    PoolOptions,
    defines,
    defining_class,
    op_names,
)
from minidl.backends.cpu_views import CpuViewOps
from minidl.backends.flex import Flex
from minidl.dispatch import Device

FLEX_DIR = Path(sys.modules[Flex.__module__].__file__).parent
DEV = Device.flex()
RNG = np.random.default_rng(0)


def _r(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


X, Y = _r(2, 3, 4, 5), _r(2, 3, 4, 5)
IDX = RNG.integers(0, 3, (2, 3, 4, 5))
IMG, W, WT = _r(1, 2, 6, 6), _r(3, 2, 3, 3), _r(2, 3, 3, 3)
CONV, POOL = ConvOptions(padding=1), PoolOptions(kernel_size=2)
POOL_OUT, POOL_IDX = Flex.max_pool2d_with_indices(x=IMG, options=POOL)

#: One call (keyword arguments, as Dispatch passes them) for each compute op Flex writes.
COMPUTE = {
    "float_zeros": dict(shape=(2, 3), dtype=DType.F32, device=DEV),
    "float_ones": dict(shape=(2, 3), dtype=DType.F32, device=DEV),
    "float_full": dict(shape=(2, 3), fill_value=2.0, dtype=DType.F32, device=DEV),
    "float_random": dict(shape=(4,), distribution=Distribution.default(), dtype=DType.F32, device=DEV),
    "float_cast": dict(tensor=X, dtype=DType.F64),
    "float_into_int": dict(tensor=X, dtype=DType.I64),
    "float_matmul": dict(lhs=X, rhs=_r(5, 2)),
    **{op: dict(lhs=X, rhs=Y) for op in (
        "float_add", "float_sub", "float_mul", "float_div", "float_powf", "float_max_pair",
        "float_min_pair", "float_equal", "float_greater", "float_lower", "float_not_equal",
        "float_greater_equal", "float_lower_equal")},
    **{op: dict(lhs=X, rhs=0.5) for op in (
        "float_add_scalar", "float_sub_scalar", "float_mul_scalar", "float_div_scalar",
        "float_powf_scalar", "float_equal_elem", "float_not_equal_elem", "float_greater_elem",
        "float_greater_equal_elem", "float_lower_elem", "float_lower_equal_elem")},
    **{op: dict(tensor=X) for op in (
        "float_neg", "float_recip", "float_exp", "float_log", "float_log1p", "float_sqrt",
        "float_abs", "float_tanh", "float_sin", "float_cos", "float_erf", "float_floor",
        "float_sum", "float_mean", "float_max", "float_min", "relu", "gelu", "sigmoid")},
    **{op: dict(tensor=X, dim=1) for op in (
        "float_sum_dim", "float_mean_dim", "float_prod_dim", "float_max_dim", "float_min_dim",
        "float_argmax", "float_argmin", "float_max_dim_with_indices",
        "float_min_dim_with_indices", "softmax", "log_softmax")},
    "float_clamp_min": dict(tensor=X, min=0.0),
    "float_clamp_max": dict(tensor=X, max=0.0),
    "float_clamp": dict(tensor=X, min=-0.5, max=0.5),
    "float_mask_where": dict(tensor=X, mask=X > 0, value=Y),
    "float_mask_fill": dict(tensor=X, mask=X > 0, value=1.0),
    "relu_backward": dict(output=np.maximum(X, 0), grad=Y),
    "float_slice_assign": dict(tensor=X, slices=[slice(0, 1)], value=Y[:1]),
    "float_cat": dict(tensors=[X, Y], dim=2),
    "float_repeat_dim": dict(tensor=X, dim=0, times=2),
    "float_gather": dict(dim=1, tensor=X, indices=IDX),
    "float_scatter": dict(dim=1, tensor=X, indices=IDX, value=Y),
    "float_select": dict(tensor=X, dim=3, indices=np.array([0, 4, 4])),
    "float_select_assign": dict(tensor=X, dim=3, indices=np.array([0, 4]), value=X[..., :2]),
    "conv2d": dict(x=IMG, weight=W, bias=_r(3), options=CONV),
    "conv2d_x_backward": dict(x=IMG, weight=W, output_grad=_r(1, 3, 6, 6), options=CONV),
    "conv2d_weight_backward": dict(x=IMG, weight=W, output_grad=_r(1, 3, 6, 6), options=CONV),
    "conv2d_bias_backward": dict(output_grad=_r(1, 3, 6, 6)),
    "conv_transpose2d": dict(x=IMG, weight=WT, bias=None, options=ConvTransposeOptions(stride=2)),
    "max_pool2d": dict(x=IMG, options=POOL),
    "max_pool2d_with_indices": dict(x=IMG, options=POOL),
    "max_pool2d_with_indices_backward": dict(x=IMG, options=POOL, output_grad=POOL_OUT,
                                             indices=POOL_IDX),
    "avg_pool2d": dict(x=IMG, options=POOL),
    "avg_pool2d_backward": dict(x=IMG, options=POOL, output_grad=POOL_OUT),
    "adaptive_avg_pool2d": dict(x=IMG, output_size=(4, 5)),
    "adaptive_avg_pool2d_backward": dict(x=IMG, output_grad=_r(1, 2, 4, 5)),
    "adaptive_max_pool2d_with_indices": dict(x=IMG, output_size=(4, 5)),
    "adaptive_max_pool2d_with_indices_backward": dict(x=IMG, output_grad=_r(1, 2, 4, 5),
                                                      indices=np.zeros((1, 2, 4, 5), np.int64)),
    "interpolate": dict(x=IMG, output_size=(9, 7), options=InterpolateOptions("bilinear")),
    "interpolate_backward": dict(x=IMG, output_grad=_r(1, 2, 9, 7), output_size=(9, 7),
                                 options=InterpolateOptions("bilinear")),
    "layer_norm": dict(x=X, gamma=_r(5), beta=_r(5), epsilon=1e-5),
}

#: Ops that only make a view of their input (or hand back what they were given).
VIEWS = {
    "float_reshape": dict(tensor=X, shape=(6, 20)),
    "float_swap_dims": dict(tensor=X, dim1=0, dim2=3),
    "float_permute": dict(tensor=X, axes=(3, 1, 0, 2)),
    "float_flip": dict(tensor=X, axes=(1, 2)),
    "float_expand": dict(tensor=X[:, :1], shape=(4, 2, 3, 4, 5)),
    "float_slice": dict(tensor=X, slices=[slice(1, 2), slice(0, 3, 2)]),
}

#: Ops Flex takes from cpu_common (host data and devices; int/bool ops are NumPy there) and
#: ``seed`` (restarts a stream, computes nothing).
NOT_COMPUTE = {"seed"}


def _kernel_codes() -> set[int]:
    # by id: a code object's hash can change once the interpreter specializes its bytecode
    from numba.core.dispatcher import Dispatcher

    codes = set()
    for info in pkgutil.iter_modules(kernels_pkg.__path__):
        module = importlib.import_module(f"{kernels_pkg.__name__}.{info.name}")
        codes.update(id(obj.py_func.__code__) for obj in vars(module).values() if isinstance(obj, Dispatcher))
    return codes


KERNELS = _kernel_codes()


def _kernels_run_by(fn) -> list[str]:
    seen: list[str] = []

    def hook(frame, event, arg):
        if event == "call" and id(frame.f_code) in KERNELS:
            seen.append(frame.f_code.co_name)

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def _flex_own_ops() -> set[str]:
    return {op for op in op_names(Flex) if defines(Flex, op)
            and defining_class(Flex, op).__module__.startswith("minidl.backends.flex")}


def test_every_op_flex_writes_is_classified_here():
    # the pure views are CpuViewOps' (one NumPy body, shared with NdArray), except float_reshape,
    # which Flex overrides to copy with its numba kernel when no view is possible, and
    # float_expand, which Flex builds from the strides (a view still: tested below)
    shared_views = {op for op in VIEWS if defining_class(Flex, op) is CpuViewOps}
    assert shared_views == set(VIEWS) - {"float_reshape", "float_expand"}
    assert _flex_own_ops() == set(COMPUTE) | (set(VIEWS) - shared_views) | NOT_COMPUTE


@pytest.mark.parametrize("op", sorted(COMPUTE))
def test_compute_op_runs_a_numba_kernel(op):
    kwargs = COMPUTE[op]
    getattr(Flex, op)(**kwargs)  # compile or load from the cache outside the measurement
    assert _kernels_run_by(lambda: getattr(Flex, op)(**kwargs)), f"Flex.{op} ran no numba kernel"


@pytest.mark.parametrize("op", sorted(VIEWS))
def test_layout_op_makes_a_view_without_a_kernel(op):
    kwargs = VIEWS[op]
    out = []
    assert _kernels_run_by(lambda: out.append(getattr(Flex, op)(**kwargs))) == []
    assert np.shares_memory(out[0], kwargs["tensor"])


def test_reshape_of_a_view_that_cannot_be_reshaped_copies_with_a_kernel():
    view = X.transpose(3, 1, 2, 0)
    out = []
    assert _kernels_run_by(lambda: out.append(Flex.float_reshape(tensor=view, shape=(120,))))
    np.testing.assert_array_equal(out[0], view.reshape(120))


def _blas_calls(source: str) -> list[str]:
    """``@`` products and ``np.dot``-like calls in Python source (strings and comments may name
    them freely: only code counts)."""
    banned = {"dot", "matmul", "einsum", "tensordot", "inner", "vdot", "linalg"}
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.MatMult):
            found.append(f"line {node.lineno}: @")
        if (isinstance(node, ast.Attribute) and node.attr in banned
                and isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy")):
            found.append(f"line {node.lineno}: np.{node.attr}")
    return found


def test_flex_source_never_calls_blas():
    # np.dot / np.matmul / @ / einsum / tensordot would run OpenBLAS, whose thread pool fights
    # numba's on two cores; the gemm is numba's own
    offenders = [f"{path.name} {hit}" for path in sorted(FLEX_DIR.rglob("*.py"))
                 for hit in _blas_calls(path.read_text())]
    assert not offenders, "\n".join(offenders)


def test_the_blas_check_sees_code_but_not_docstrings():
    assert _blas_calls('"""np.dot(a, b) or a @ b"""\n# np.matmul\nx = 1') == []
    assert len(_blas_calls("y = a @ b\nz = np.dot(a, b)\nw = np.linalg.norm(a)")) == 3
