"""What the first drain of a new op pattern costs: the search, the code generation and
numba's compile of the new kernel, paid once (burn pays CubeCL's compile and autotune at
the same point), then a plan-store hit.

:func:`first_drain_ms` measures it in a fresh Python process with an empty numba cache
folder, so no kernel compiled by an earlier run (or build) is found on disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

__all__ = ["first_drain_ms"]

_SCRIPT = """
import json, time
import numpy as np
from minidl import Device, Tensor
from minidl.backends.flex.fusion import FusionFlex

FusionFlex.stream.eager_below = 0  # record every op
x = Tensor.from_numpy(np.ones((64, 64), np.float32), Device.fusion())
(x * 2.0 + 1.0).exp().to_numpy()  # warm-up: Flex's own kernels, another pattern
ms = []
for _ in range(3):  # a new pattern of six ops: searched and compiled once, then found
    t0 = time.perf_counter()
    ((x * 1.5 + 0.5).relu().abs() - 0.25).to_numpy()
    ms.append((time.perf_counter() - t0) * 1e3)
print(json.dumps(ms))
"""


def first_drain_ms() -> list[float]:
    """Milliseconds of three drains of one new 6-op pattern (the first searches and
    compiles; the next two find the plan and the compiled kernel), in a fresh process with
    an empty numba cache folder."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, check=True,
                              capture_output=True, text=True, timeout=600)
    return json.loads(done.stdout.strip().splitlines()[-1])
