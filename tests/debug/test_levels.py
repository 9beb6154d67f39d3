"""Leveled debug output (tinygrad's DEBUG): routes at 1, shapes/kernels/times at 2, compiles at 3."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from minidl.debug import _hooks, debug_level, get_level
from minidl.dispatch import OP_LISTENERS

from .support import backend_name, device, need, tensor

ROOT = Path(__file__).resolve().parents[2]


def test_level_one_lists_the_route_of_each_op(kind):
    dev = device(kind)
    x, y = tensor((2, 3), dev), tensor((2, 3), dev, seed=1)
    with debug_level(1, capture=True) as log:
        x + y
    assert log.lines == [f"float_add → {backend_name(kind)}"]


def test_the_path_logged_is_the_fast_path_taken_without_the_log(kind, monkeypatch):
    import minidl.dispatch.ops.float_tensor as forwarders

    dev = device(kind)
    x, y = tensor((2, 3), dev), tensor((2, 3), dev, seed=1)

    def general_route(op, args):
        raise AssertionError(f"{op} took route(): the log would show a path not taken without it")

    monkeypatch.setattr(forwarders, "route", general_route)
    with debug_level(2, capture=True) as log:
        x + y
    assert log.lines[0].startswith(f"float_add → {backend_name(kind)}  ")


def test_level_one_on_autodiff_routes_to_the_decorated_backend(kind):
    dev = device(kind, autodiff=True)
    layer = need("minidl.nn", "LinearConfig")(4, 2).init(dev)
    x = tensor((3, 4), dev)
    layer.forward(x)  # the first forward also initializes the lazy params (float_random, ...)
    with debug_level(1, capture=True) as log:
        layer.forward(x)
    ad = f"Autodiff[{backend_name(kind)}]"
    # Dispatch.linear is not routed: it runs the ModuleOps default, whose three ops are
    assert log.lines == [f"float_matmul → {ad}", f"float_reshape → {ad}", f"float_add → {ad}"]


def test_level_zero_prints_nothing_and_installs_nothing(capsys):
    dev = device("ndarray")
    x = tensor((2, 2), dev)
    with debug_level(0, capture=True) as log:
        assert OP_LISTENERS == [] and not _hooks.active()
        x + x
    assert log.lines == []
    assert capsys.readouterr().err == ""


def test_debug_level_restores_the_previous_level_and_hooks():
    before = (get_level(), list(OP_LISTENERS), sys.getprofile())
    with debug_level(2, capture=True):
        assert get_level() == 2 and _hooks.active()
        with debug_level(1, capture=True):
            assert get_level() == 1 and not _hooks.active()
        assert _hooks.active()
    assert (get_level(), list(OP_LISTENERS), sys.getprofile()) == before


def test_level_two_adds_shapes_dtype_time_and_kernels(kind):
    dev = device(kind)
    a, b = tensor((4, 3), dev), tensor((3, 5), dev, seed=1)
    with debug_level(2, capture=True) as log:
        a.matmul(b)
    (line,) = log.lines
    assert line.startswith(f"float_matmul → {backend_name(kind)}  lhs=f32[4,3] rhs=f32[3,5] → f32[4,5]  ")
    assert "µs" in line
    if kind == "flex":  # Flex runs a numba kernel, named in brackets with its own time
        assert line.endswith("]") and "µs]" in line


def test_level_three_reports_numba_compilation():
    numba = need("numba")
    import numpy as np

    @numba.njit(cache=False)
    def fresh_kernel_for_the_level_test(a):
        return a * 2.0

    with debug_level(3, capture=True) as log:
        fresh_kernel_for_the_level_test(np.ones(3))
    assert any(line.startswith("numba: compile fresh_kernel_for_the_level_test(array(float64, 1d, C))")
               for line in log.lines), log.lines
    assert any(line.startswith("numba: first call of fresh_kernel_for_the_level_test: compiled in ")
               for line in log.lines), log.lines


def test_uncaptured_output_goes_to_stderr(capsys):
    dev = device("ndarray")
    x = tensor((2, 2), dev)
    with debug_level(1):
        x * x
    assert capsys.readouterr().err == "float_mul → NdArray\n"


def test_environment_variable_turns_debug_output_on_without_importing_debug():
    code = (
        "import numpy as np\n"
        "from minidl import Tensor, Device\n"
        "x = Tensor.from_numpy(np.ones((2, 2), np.float32), device=Device.ndarray())\n"
        "x + x\n"
    )
    env = dict(os.environ, MINIDL_DEBUG="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "float_add → NdArray" in out.stderr.splitlines()


def test_level_two_times_a_kernel_called_outside_any_route():
    numba = need("numba")
    import numpy as np

    @numba.njit(cache=False)
    def tripled(a):
        return a * 3.0

    data = np.ones(4)
    tripled(data)
    with debug_level(2, capture=True) as log:
        tripled(data)
    (line,) = log.lines
    assert line.startswith("kernel tripled  ") and line.endswith("µs")
