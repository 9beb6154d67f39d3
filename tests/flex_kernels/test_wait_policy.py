"""numba's workers start passive even when torch (with its own libgomp) was imported first.

``start_workers_passive`` loads numba's ``omp`` layer with ``RTLD_DEEPBIND`` when a libgomp is
mapped already, so the layer binds the system libgomp (which reads the passive policy) rather
than torch's. How much CPU a spinning worker takes is measured in ``bench/under_load.py``;
here, in a fresh process: the deep binding was chosen, the dlopen flags are put back, and a
parallel kernel and torch's own threads still compute right afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import os, sys
import torch
flags = sys.getdlopenflags()
from minidl.backends.flex.kernels import _common
assert _common._libgomp_mapped()
assert sys.getdlopenflags() == flags, "dlopen flags put back"
import numba, numpy as np
from minidl.backends.flex.kernels.broadcast import binary
assert numba.threading_layer() == "omp", numba.threading_layer()
numba.set_num_threads(2)
a = np.arange(1 << 17, dtype=np.float32)
assert np.array_equal(binary("add", a, a), a + a)
torch.set_num_threads(2)
x = torch.ones(256, 256)
assert float((x @ x)[0, 0]) == 256.0
assert "OMP_WAIT_POLICY" not in os.environ
print("OK")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RTLD_DEEPBIND is glibc's")
def test_numba_layer_starts_beside_torchs_libgomp_and_both_compute():
    pytest.importorskip("torch")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(NUMBA_THREADING_LAYER="omp", NUMBA_NUM_THREADS="2",
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]))
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done.stderr[-2000:]
