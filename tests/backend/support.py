"""Shared helpers of the backend conformance suite: the backends under test, hypothesis
strategies, memory layouts, and comparison against PyTorch.

Primitive-level tests hand the backend plain NumPy arrays (the primitives of every CPU backend)
and read its results back with ``np.asarray``.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

from minidl.backend import PoolOptions
from tests.gpu_refusals import WGPU_REFUSES

#: The backends the suite runs against: (id, module, class). A new backend joins the suite
#: with one line here.
BACKENDS = [
    ("ndarray", "minidl.backends.ndarray", "NdArray"),
    ("flex", "minidl.backends.flex", "Flex"),
    # Fusion[Flex] synced after every op, so primitives in and out stay NumPy arrays
    ("fusion", "minidl.backends.flex.fusion", "SyncedFusionFlex"),
    # Wgpu (WGSL kernels; lavapipe where there is no GPU), NumPy in and out: see WGPU_TOLERANCE
    ("wgpu", "tests.backend.support", "WgpuUnderTest"),
    # Fusion[Wgpu] (every op recorded, fused blocks as WGSL kernels), synced after every op
    ("fusion_wgpu", "tests.backend.support", "FusedWgpuUnderTest"),
]

#: hypothesis settings for every property here: no deadline (numba compiles on first call) and
#: a modest number of examples so the suite stays quick. For a deep run, raise it:
#: ``MINIDL_CONFORMANCE_EXAMPLES=500 pytest tests/backend``.
EXAMPLES = int(os.environ.get("MINIDL_CONFORMANCE_EXAMPLES", "25"))
SETTINGS = settings(deadline=None, max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])

F32_RTOL = 1e-5
EPS = {np.float16: 1e-3, np.float32: 1.2e-7, np.float64: 2.3e-16}


#: Device.wgpu() computes in float32 with WGSL's built-ins (on lavapipe: LLVM's): its results
#: stay within the suite's float32 tolerances (F32_RTOL = 1e-5, atol 1e-6, sum_atol for
#: reductions); erf and tanh are the shaders' own approximations, within 1.2e-7 absolute.
#: the backends under test that run on the GPU device (eager and fused)
GPU_NAMES = ("wgpu", "fusion_wgpu")


def _skip_unsupported(message: str):
    """An example in a dtype the GPU device refuses (float64, float16) is not a failure: a
    hypothesis example is rejected, any other test skipped."""
    from hypothesis import reject
    from hypothesis.control import currently_in_test_context

    if currently_in_test_context():
        reject()
    import pytest

    pytest.skip(message)


def __getattr__(name: str):
    if name == "WgpuUnderTest":
        from minidl.backend import Backend, op_names
        from minidl.backends.wgpu.synced import SyncedWgpu

        def forward(op):
            inner = SyncedWgpu.__dict__[op].__func__

            def method(cls, *args, **kwargs):
                try:
                    return inner(cls, *args, **kwargs)
                except (TypeError, OverflowError) as error:
                    if WGPU_REFUSES in str(error) or "stores ints as int32" in str(error):
                        _skip_unsupported(str(error))
                    raise

            method.__name__ = method.__qualname__ = op
            method.__signature__ = SyncedWgpu.__dict__[op].__func__.__signature__
            return classmethod(method)

        cls = type("Synced[Wgpu]", (SyncedWgpu,), {op: forward(op) for op in op_names(Backend)})
        globals()[name] = cls
        return cls
    if name == "FusedWgpuUnderTest":
        cls = globals()[name] = _fused_wgpu_under_test()
        return cls
    raise AttributeError(name)


def _fused_wgpu_under_test() -> type:
    """``Fusion[Wgpu]`` behind a NumPy face: arrays uploaded to the GPU, each op recorded on the
    fused device (defaults decompose and fuse inside one call), synced and read back after it.
    It computes with eager Wgpu's WGSL expressions, so the GPU's tolerances and known limits
    apply to it too (the tests ask ``B.name in GPU_NAMES``)."""
    from minidl.backend import Backend, DType, Kind, op_names
    from minidl.backends.wgpu import synced as gpu
    from minidl.backends.wgpu.fusion import FusionWgpu
    from minidl.fusion.synced import _synced

    def forward(op):
        sig = gpu.SyncedWgpu.__dict__[op].__func__.__signature__
        names = list(sig.parameters)[1:]

        def method(cls, *args, **kwargs):
            ints: list = []
            bound = dict(zip(names, args)) | kwargs
            try:
                bound = {k: v if k == "data" else gpu._up(v, ints) for k, v in bound.items()}
                requested = bound.get("dtype")
                if isinstance(requested, DType) and requested.kind is Kind.INT:
                    int_dtype = requested.numpy
                elif "arg" in op or "indices" in op or not ints:
                    int_dtype = np.dtype(np.int64)
                else:
                    int_dtype = ints[0]
                return gpu._down(_synced(getattr(FusionWgpu, op)(**bound)), int_dtype)
            except (TypeError, OverflowError) as error:
                if WGPU_REFUSES in str(error) or "stores ints as int32" in str(error):
                    _skip_unsupported(str(error))
                raise

        method.__name__ = method.__qualname__ = op
        method.__signature__ = sig
        return classmethod(method)

    body = {op: forward(op) for op in op_names(Backend)}
    body.update(name="fusion_wgpu", __doc__=_fused_wgpu_under_test.__doc__)
    return type("Synced[Fusion[Wgpu]]", (Backend,), body)


def load_backend(module: str, name: str) -> type:
    """Import a backend class (a backend that fails to import fails every test using it)."""
    return getattr(importlib.import_module(module), name)


# ----- data --------------------------------------------------------------------------------------

seeds = st.integers(0, 2**32 - 1)
shapes = array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5)
LAYOUTS = ("contiguous", "transposed", "strided", "flipped")
layouts = st.sampled_from(LAYOUTS)


def randn(seed: int, shape, dtype=np.float32, scale: float = 1.0) -> np.ndarray:
    """Standard normal values (times ``scale``) of ``dtype``, reproducible from ``seed``."""
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def coarse(seed: int, shape, dtype=np.float32) -> np.ndarray:
    """Values on a grid of halves in [-2, 2], so that ties and equal elements are common."""
    return (np.random.default_rng(seed).integers(-4, 5, shape) / 2).astype(dtype)


def as_layout(values: np.ndarray, layout: str) -> np.ndarray:
    """An array equal to ``values`` whose memory is laid out as ``layout`` says:
    ``transposed`` (F order), ``strided`` (every other element of a wider buffer) or
    ``flipped`` (negative strides in every dim)."""
    if layout == "contiguous" or values.ndim == 0:
        return np.ascontiguousarray(values)
    if layout == "transposed":
        return np.ascontiguousarray(values.T).T
    if layout == "strided":
        wide = np.zeros(values.shape[:-1] + (2 * values.shape[-1],), dtype=values.dtype)
        wide[..., ::2] = values
        return wide[..., ::2]
    if layout == "flipped":
        return np.flip(np.flip(values).copy())
    raise ValueError(layout)


# ----- comparison --------------------------------------------------------------------------------


def tt(array: np.ndarray, requires_grad: bool = False) -> torch.Tensor:
    """The torch twin of a NumPy array (a copy; torch refuses negative strides)."""
    out = torch.tensor(np.ascontiguousarray(array))
    return out.requires_grad_(True) if requires_grad else out


def to_numpy(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def assert_close(actual, expected, rtol: float = F32_RTOL, atol: float = 1e-6, dtype=None) -> None:
    """Same shape, the expected dtype (``dtype``, else the expected value's), values within
    ``rtol``/``atol`` (NaNs must match NaNs)."""
    assert isinstance(actual, np.ndarray), f"expected a NumPy primitive, found {type(actual)}"
    expected = to_numpy(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != expected {expected.shape}"
    want = np.dtype(dtype) if dtype is not None else expected.dtype
    assert actual.dtype == want, f"dtype {actual.dtype} != expected {want}"
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


def sum_atol(terms: int, magnitude: float = 1.0, dtype=np.float32) -> float:
    """An absolute tolerance for a sum of ``terms`` values of about ``magnitude``: rounding
    grows with the length of the reduction."""
    return 4 * EPS[np.dtype(dtype).type] * max(terms, 1) * max(magnitude, 1.0)


@st.composite
def pool_cases(draw, dilated: bool, ceil_mode: bool = False):
    """``(n, c, (h, w), PoolOptions)`` of a 2-D pool torch accepts (padding at most half the
    kernel; ``dilated`` draws a dilation, ``ceil_mode`` draws that flag too), on an input at
    least one window wide."""
    small = st.integers(1, 3)
    kernel = (draw(small), draw(small))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if dilated else (1, 1)
    stride = (draw(small), draw(small))
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    hw = tuple(max(1, s - 2 * p + draw(st.integers(0, 6))) for s, p in zip(spans, padding))
    options = PoolOptions(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
                          count_include_pad=draw(st.booleans()),
                          ceil_mode=draw(st.booleans()) if ceil_mode else False)
    return draw(st.integers(1, 2)), draw(small), hw, options


def windows_have_real_elements(hw, o: PoolOptions) -> bool:
    """Every window of the pool ``o`` over ``hw`` holds an element of the input, not only
    padding (a window of padding alone makes torch's max-pool backward write out of bounds)."""
    for size, out, k, s, p, d in zip(hw, o.output_size(hw), o.kernel_size, o.stride, o.padding, o.dilation):
        if not all(any(0 <= j * s - p + i * d < size for i in range(k)) for j in range(out)):
            return False
    return True
