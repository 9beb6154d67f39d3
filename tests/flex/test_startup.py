"""Start-up behaviour of Flex, each checked in a fresh Python process: ``import minidl`` neither
imports numba nor compiles anything; importing Flex compiles nothing either (every kernel is
compiled on its first call, or loaded from numba's cache); and with a warm cache a second
process runs a Linear forward quickly."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, **env: str) -> str:
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    full_env.pop("MINIDL_DEBUG", None)  # the debug switch would import more than minidl
    out = subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


_COMPILED = """
import sys
from numba.core.dispatcher import Dispatcher
compiled = []
for name, module in list(sys.modules.items()):
    if name.startswith("minidl") and module is not None:
        for key, obj in vars(module).items():
            if isinstance(obj, Dispatcher):
                kernels.append(f"{name}.{key}")
                if obj.signatures:
                    compiled.append(f"{name}.{key}")
print(len(kernels), compiled)
"""


def test_import_minidl_does_not_import_numba():
    out = _run("import sys, minidl; print('numba' in sys.modules, 'minidl.backends.flex' in sys.modules)")
    assert out.split() == ["False", "False"]


def test_numba_loads_with_the_first_flex_op_and_not_before():
    code = (
        "import sys, numpy as np, minidl\n"
        "from minidl.dispatch import Device\n"
        "d = Device.flex()\n"
        "print('numba' in sys.modules)\n"
        "t = minidl.Tensor.from_numpy(np.ones((2, 2), np.float32), device=d)\n"
        "(t + t).to_numpy()\n"
        "print('numba' in sys.modules)\n"
    )
    assert _run(code).split() == ["False", "True"]


def test_nothing_is_compiled_at_import():
    code = "import minidl\nimport minidl.backends.flex\nimport minidl.backends.flex.kernels\n"
    code += "import importlib, pkgutil\n"
    code += "for m in pkgutil.iter_modules(minidl.backends.flex.kernels.__path__):\n"
    code += "    importlib.import_module('minidl.backends.flex.kernels.' + m.name)\n"
    code += "kernels = []\n" + _COMPILED
    count, compiled = _run(code).split(" ", 1)
    assert int(count) >= 10  # the kernels were found ...
    assert compiled.strip() == "[]"  # ... and none of them has a compiled signature


def test_a_second_process_with_a_warm_cache_runs_a_linear_forward_quickly():
    code = (
        "import time\nt0 = time.perf_counter()\n"
        "import numpy as np, minidl\n"
        "from minidl.dispatch import Device\nfrom minidl.nn import LinearConfig\n"
        "layer = LinearConfig(64, 32).init(Device.flex())\n"
        "x = minidl.Tensor.from_numpy(np.ones((8, 64), np.float32), device=Device.flex())\n"
        "y = layer(x).to_numpy()\n"
        "assert y.shape == (8, 32)\n"
        "print(time.perf_counter() - t0)\n"
    )
    first = float(_run(code))  # warms numba's cache (a cold compile when it was empty)
    t0 = time.perf_counter()
    second = float(_run(code))
    wall = time.perf_counter() - t0
    print(f"\nLinear forward in a fresh process: first {first:.2f} s, warm cache {second:.2f} s "
          f"(import + forward; whole process {wall:.2f} s)")
    assert second < 20.0  # a sanity bound only: the benchmark reports the real figure
