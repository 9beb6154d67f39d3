"""How frames are named and values shortened, and numba kernels seen as frames."""

from __future__ import annotations

import numpy as np

from minidl.debug import known_locations, trace
from minidl.debug.names import describe, short_dtype

from .support import device, need, tensor


def test_values_are_shortened_like_debugger_arguments():
    a = np.zeros((4, 4), np.float32)
    assert describe(a, "flex") == "<f32[4,4] flex>"
    assert describe(np.zeros(3, np.int64)) == "<i64[3]>"
    assert describe(None) == "None"
    assert describe("x" * 100).endswith("…") and len(describe("x" * 100)) == 40
    assert short_dtype(np.dtype(np.float16)) == "f16"


def test_tensors_show_their_device_and_autodiff_tensors_their_kind():
    dev = device("ndarray", autodiff=True)
    t = tensor((2, 3), dev)
    assert describe(t) == "<Tensor f32[2,3] ndarray ad>"
    assert describe(t.primitive) == "<f32[2,3] ndarray ad>"  # the DispatchTensor
    assert describe(t.primitive.backend_tensor) == "<ad f32[2,3]>"  # the AutodiffTensor


def test_a_numba_kernel_is_the_innermost_frame_named_after_the_kernel():
    numba = need("numba")

    @numba.njit(cache=False)
    def doubled(a):
        return a * 2.0

    def caller(a):
        return doubled(a)

    data = np.ones(3)
    caller(data)  # compile outside the trace
    t = trace(lambda: caller(data), breakpoints=[r"^kernel doubled \[numba\]$"], echo=False)
    hit = t.first()
    assert hit.frames[0].name == "kernel doubled [numba]" and hit.frames[0].layer == "kernel"
    assert hit.frames[1].name.endswith("caller")
    assert hit.frames[0].line == doubled.py_func.__code__.co_firstlineno + 1  # the def, under @njit


def test_known_names_cover_each_layer():
    device("ndarray", autodiff=True)
    names = known_locations()
    for name in ("Dispatch.linear", "NdArray.float_matmul", "Autodiff[NdArray].linear",
                 "Autodiff[NdArray].float_matmul", "module.linear", "module.linear_impl",
                 "linear.linear[Dispatch]", "Tensor.matmul"):
        assert name in names, name
    need("minidl.nn", "Linear")
    assert "Linear.forward" in known_locations()
    shared = names["Dispatch.linear"]
    assert shared.condition == "cls.__name__ == 'Dispatch'"  # one body, several names


def test_int_and_bool_ops_on_an_autodiff_device_are_named_after_the_autodiff_backend():
    # Autodiff's int/bool forwarders are built in a loop; their frames must still read
    # Autodiff[NdArray].bool_not (a layer of the path), not a closure's local name.
    dev = device("ndarray", autodiff=True)
    mask = tensor((2, 3), dev) > 0
    t = trace(lambda: mask.bool_not(), breakpoints=[r"^NdArray\.bool_not$"], echo=False)
    names = [f.name for f in t.first().frames]
    assert names[:3] == ["NdArray.bool_not", "Autodiff[NdArray].bool_not", "Dispatch.bool_not"]
    assert t.first().frames[1].layer == "autodiff" and t.first().frames[1].hop
    assert "Autodiff[NdArray].bool_not" in t.chain()
