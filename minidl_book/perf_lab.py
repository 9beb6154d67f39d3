"""The performance chapter's measurements, shared with ``bench/steps.py``.

- :func:`step_times`: a training step of :mod:`.workloads` per contender (torch with its default
  optimizer, with its fused one, under ``torch.compile``; minidl eager and captured, on Flex and
  on Fusion), each contender in a fresh process started without inherited peer pins, every
  pool it holds limited (:class:`.peers.limit_pools`) and reported; medians of wall and CPU
  time.
- :func:`peer_times`: in one such process, the peers' gemm (Flex, NumPy's OpenBLAS, torch's
  MKL), a 4x4 add (minidl, torch), and sin, cos and the exact GELU on 1M float32 (Flex,
  torch, and torch's GELU with oneDNN switched off), each in its own block of repeats (CPU
  time).
- :func:`step_counts`: the backend calls of one steady step and their flops and bytes.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TORCH = ("torch default", "torch fused", "torch.compile")
MINIDL = ("flex eager", "fusion eager", "flex captured", "fusion captured")
CONTENDERS = TORCH + MINIDL

STEP_CHILD = """
import json, statistics, time
import numpy as np, numba, torch
from minidl import Device
from minidl_book.peers import format_peer_report, limit_pools, peer_report
from minidl_book.workloads import WORKLOADS
from minidl_book.capture_lab import captured_step
minidl_step, torch_step = WORKLOADS[{workload!r}]
contender = {contender!r}
out = {{}}
with limit_pools({threads}):
    start = time.perf_counter()
    if contender.startswith("torch"):
        impl = "fused" if contender == "torch.compile" else contender.split()[-1]
        step = torch_step(contender == "torch.compile", impl=impl)
    else:
        device = (Device.flex() if contender.startswith("flex") else Device.fusion()).autodiff()
        if contender.endswith("captured"):
            step, graph = captured_step({workload!r}, device)
            out["replay_calls"] = graph.calls
        else:
            step = minidl_step(device)
    for _ in range({warmup}):
        step()
    out["warmup"] = time.perf_counter() - start
    walls, cpus = [], []
    for _ in range({samples}):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range({steps}):
            step()
        walls.append((time.perf_counter() - w0) / {steps})
        cpus.append((time.process_time() - c0) / {steps})
    out.update(seconds=statistics.median(walls), cpu=statistics.median(cpus),
               peers=format_peer_report(),
               pins=peer_report()["pins"])
print("RESULT " + json.dumps(out))
"""


def child_env(threads: int) -> dict[str, str]:
    """A timing process's environment: no inherited peer pin, every pool at ``threads``."""
    from minidl_book.peers import unpinned_env

    n = str(threads)
    env = unpinned_env(PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS=n, OMP_NUM_THREADS=n, MKL_NUM_THREADS=n)
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    env.pop("MINIDL_DEBUG", None)
    return env


def run_child(source: str, threads: int, timeout: float = 1800) -> dict:
    """Run ``source`` in a fresh process; the JSON of its last ``RESULT`` line (or an error)."""
    done = subprocess.run([sys.executable, "-c", source], env=child_env(threads), capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": " | ".join(tail)}
    return json.loads(lines[-1][len("RESULT "):])


def step_time(workload: str, contender: str, threads: int = 1, steps: int = 30, samples: int = 5,
              warmup: int = 20) -> dict:
    """One fresh process timing ``contender`` (of :data:`CONTENDERS`, or ``"torch foreach"``)
    on ``workload`` (``"cnn"``, ``"mlp"``)."""
    source = STEP_CHILD.format(threads=threads, workload=workload, contender=contender,
                               warmup=warmup, samples=samples, steps=steps)
    return run_child(source, threads)


def summarize(results: dict[str, list[dict]], key: str = "cpu") -> dict[str, dict]:
    """Median and best over rounds per contender (``key``: ``"cpu"`` or ``"seconds"``, wall),
    the fastest torch contender under ``"best torch"``, and each one's ``ratio`` to it."""
    out: dict[str, dict] = {}
    for name, runs in results.items():
        ok = [r[key] for r in runs if key in r]
        if ok:
            out[name] = {"median": statistics.median(ok), "best": min(ok), "rounds": len(ok)}
    torch_side = {n: v["median"] for n, v in out.items() if n.startswith("torch")}
    if torch_side:
        best = min(torch_side, key=torch_side.get)
        for v in out.values():
            v["ratio"] = v["median"] / torch_side[best]
        out["best torch"] = {"name": best, "median": torch_side[best]}
    return out


def step_times(workload: str, contenders=CONTENDERS, rounds: int = 1, threads: int = 1,
               **timing) -> dict[str, list[dict]]:
    """Every contender on ``workload``, one fresh process each per round, rounds alternating."""
    results: dict[str, list[dict]] = {c: [] for c in contenders}
    for _ in range(rounds):
        for contender in contenders:
            results[contender].append(step_time(workload, contender, threads, **timing))
    return results


PEER_CHILD = """
import json
import numpy as np, numba, torch
from minidl import Device, Tensor
from minidl.backends.flex.kernels import gemm
from minidl_book import roofline as rl
from minidl_book.peers import format_peer_report, limit_pools, peer_report
out = {{}}
with limit_pools({threads}):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(({n}, {n})).astype(np.float32) for _ in range(2))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    out["gemm"] = rl.median_seconds({{"Flex": lambda: gemm.matmul(a, b),
                                      "OpenBLAS (NumPy's a @ b)": lambda: a @ b,
                                      "MKL (torch's a @ b)": lambda: ta @ tb}},
                                     budget=2.0, rounds=5)
    small = np.ones((4, 4), np.float32)
    x4, t4 = Tensor.from_numpy(small, Device.flex()), torch.from_numpy(small)
    out["tiny add"] = rl.median_seconds({{"minidl": lambda: x4 + x4, "torch": lambda: t4 + t4}},
                                        budget=0.4, rounds=5)
    import torch.nn.functional as F
    from minidl.backends.flex.kernels import unary
    x = (rng.standard_normal(1 << 20) * 3).astype(np.float32)
    tx = torch.from_numpy(x)

    def torch_gelu_own():  # torch's own vectorized kernel, oneDNN switched off
        with torch.backends.mkldnn.flags(enabled=False):
            return F.gelu(tx)

    out["unary"] = rl.median_seconds({{
        "Flex sin": lambda: unary.unary("sin", x), "torch sin": lambda: torch.sin(tx),
        "Flex cos": lambda: unary.unary("cos", x), "torch cos": lambda: torch.cos(tx),
        "Flex gelu": lambda: unary.unary("gelu", x), "torch gelu": lambda: F.gelu(tx),
        "torch gelu, oneDNN off": torch_gelu_own}}, budget=3.0, rounds=5)
    far = np.array([-6.0], np.float32)
    out["gelu at -6"] = {{"Flex": float(unary.unary("gelu", far)[0]),
                          "torch": float(F.gelu(torch.from_numpy(far))[0])}}
    out["peers"] = format_peer_report()
    out["report"] = {{k: v for k, v in peer_report().items()}}
print("RESULT " + json.dumps(out))
"""


def peer_times(threads: int = 1, n: int = 1024) -> dict:
    """The gemm of ``n`` (Flex, OpenBLAS, MKL) and a 4x4 add (minidl, torch) in one fresh
    process, CPU time; with the process's peer report (``"peers"`` text, ``"report"`` dict)."""
    return run_child(PEER_CHILD.format(threads=threads, n=n), threads)


def step_counts(step, backend=None):
    """``(counts, calls, largest)`` of one steady call of ``step`` (a :class:`.workloads.TrainStep`
    already run twice, so Adam's moments exist): the flops and bytes of its outermost
    ``backend`` calls (Flex by default), their number, and the bytes of its largest call."""
    from minidl.backends.flex import Flex
    from minidl.debug.op_timer import BackendOpTimer
    from minidl_book import roofline as rl

    record: list = []
    with BackendOpTimer(backend or Flex, record=record):
        step()
    total, largest = rl.Counts(0.0, 0.0), 0.0
    for fn, args, kwargs in record:
        c = rl.op_counts(fn.__name__, args, kwargs, fn(*args, **kwargs))
        total, largest = total + c, max(largest, c.bytes)
    return total, len(record), largest
