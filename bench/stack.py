"""Whole-stack benchmarks of minidl on Flex, side by side with PyTorch eager (issue 3).

Run: ``PYTHONPATH=. .venv/bin/python bench/stack.py`` (about a minute; ``--quick`` for a
smoke run). What it prints, each a median over repeated samples, with ratios:

1. a tiny (4x4) add through the whole stack — ``Tensor.__add__`` → ``Dispatch.float_add`` →
   ``Flex.float_add`` → numba kernel — in µs per op, against torch eager (target ≤ 2x, issue 16), and
   the same op entered one layer lower each time (Dispatch, Flex, the kernel wrapper) so the
   cost of each layer shows; then the same on ``flex().autodiff()`` with both inputs tracked,
   against torch with ``requires_grad`` (target ≤ 2x), the autodiff layer entered on its own;
2. an MLP 784-256-10, batch 128: forward, cross-entropy, backward and one SGD step, minidl on
   ``Device.flex().autodiff()`` against torch, and the Flex ops of one such step replayed
   back to back with no stack above them (what the kernels cost; the rest is the stack's);
3. ``import minidl`` + the first ``Linear`` forward in a fresh process, with numba's cache warm
   (target < 2 s) and cold (an empty temporary ``NUMBA_CACHE_DIR``: every kernel compiles).

The timing conventions are those of ``bench/kernels.py`` (its helpers are reused): the
threading layer and thread counts first (two pools spinning on two cores fight: ARCHITECTURE.md, "Performance facts");
each contender timed in its own block of repeats followed by a pause, blocks alternating over
rounds; median (best) per contender. Printed, never asserted: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))

import numpy as np  # noqa: E402

# the conventions of the kernel benchmarks: alternating blocks with pauses, median (best)
from kernels import _fmt_t, compare, rerun_unpinned_if_pinned, table, threading_report  # noqa: E402

from minidl_book.peers import unpinned_env  # noqa: E402

HEADER = ["impl", "median", "best", "ratio (its time / torch)", "repeats"]


def _rows(res: dict, base: str = "torch") -> list[list[str]]:
    return [[name, _fmt_t(med), _fmt_t(best), f"{med / res[base][0]:.2f}", str(n)]
            for name, (med, best, n) in res.items()]


# ----- 1. a tiny op through the whole stack ----------------------------------------------------------


def tiny_add(scale: float) -> dict:
    import torch

    from minidl.backends.flex import Flex
    from minidl.backends.flex.kernels import elementwise
    from minidl.dispatch import Device, Dispatch
    from minidl.dispatch.route import backend_for
    from minidl.tensor import Tensor

    data = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    a = Tensor.from_numpy(data, device=Device.flex())
    b = Tensor.from_numpy(data, device=Device.flex())
    da, db = a.primitive, b.primitive  # DispatchTensors
    pa, pb = da.backend_tensor, db.backend_tensor  # Flex primitives (NumPy arrays)
    ta, tb = torch.from_numpy(data.copy()), torch.from_numpy(data.copy())
    res = compare(
        {
            "torch": lambda: ta + tb,
            "minidl: a + b (Tensor, whole stack)": lambda: a + b,
            "Dispatch.float_add(da, db)": lambda: Dispatch.float_add(da, db),
            "Flex.float_add(pa, pb)": lambda: Flex.float_add(pa, pb),
            "kernel wrapper elementwise.add": lambda: elementwise.add(pa, pb),
            "numpy pa + pb": lambda: pa + pb,
        },
        budget=scale * 3.0,
        rounds=5,
    )
    table("tiny 4x4 float32 add through the stack, one layer lower per row: time per op",
          _rows(res), HEADER)
    whole = res["minidl: a + b (Tensor, whole stack)"][0] / res["torch"][0]
    print(f"whole stack / torch eager = {whole:.2f}  (target <= 2, issue 16)")

    # the same add on the autodiff device, both inputs tracked, against torch with requires_grad
    device = Device.flex().autodiff()
    ga = Tensor.from_numpy(data, device=device).require_grad()
    gb = Tensor.from_numpy(data, device=device).require_grad()
    gda, gdb = ga.primitive, gb.primitive
    ad = backend_for(device)
    pga, pgb = gda.backend_tensor, gdb.backend_tensor  # AutodiffTensors
    tga = torch.from_numpy(data.copy()).requires_grad_()
    tgb = torch.from_numpy(data.copy()).requires_grad_()
    res_ad = compare(
        {
            "torch": lambda: tga + tgb,
            "minidl: a + b (Tensor, whole stack)": lambda: ga + gb,
            "Dispatch.float_add(da, db)": lambda: Dispatch.float_add(gda, gdb),
            f"{ad.__name__}.float_add (records Add)": lambda: ad.float_add(pga, pgb),
            "Flex.float_add(inner arrays)": lambda: Flex.float_add(pga.inner, pgb.inner),
        },
        budget=scale * 3.0,
        rounds=5,
    )
    table("the same add on flex().autodiff(), both tracked, vs torch with requires_grad",
          _rows(res_ad), HEADER)
    whole_ad = res_ad["minidl: a + b (Tensor, whole stack)"][0] / res_ad["torch"][0]
    print(f"whole stack (autodiff) / torch requires_grad = {whole_ad:.2f}  (target <= 2, issue 16)")
    out = {k: v[0] for k, v in res.items()}
    out.update({f"autodiff {k}": v[0] for k, v in res_ad.items()})
    return out


# ----- 2. an MLP training step ----------------------------------------------------------------------


def mlp_step(scale: float) -> dict:
    import torch

    from minidl.dispatch import Device
    from minidl.nn import CrossEntropyLossConfig, LinearConfig, Relu, Sequential
    from minidl.optim import SgdConfig
    from minidl.tensor import Tensor

    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128).astype(np.int64)
    device = Device.flex().autodiff()
    model = Sequential(LinearConfig(784, 256).init(device), Relu(), LinearConfig(256, 10).init(device))
    loss_fn = CrossEntropyLossConfig().init()
    optim = SgdConfig().init()
    xt, yt = Tensor.from_numpy(x, device=device), Tensor.from_numpy(y, device=device)
    state = {"model": model}

    def minidl_step():
        m = state["model"]
        grads = loss_fn(m(xt), yt).backward()
        state["model"] = optim.step(0.01, m, grads)

    tmodel = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.01)
    tx, ty, tloss = torch.from_numpy(x), torch.from_numpy(y), torch.nn.CrossEntropyLoss()

    def torch_step():
        topt.zero_grad()
        tloss(tmodel(tx), ty).backward()
        topt.step()

    for _ in range(3):
        minidl_step()
    flex_calls = record_backend_calls(minidl_step)
    alone = f"its {len(flex_calls)} Flex calls alone, replayed"

    def flex_alone():
        for op, args, kwargs in flex_calls:
            op(*args, **kwargs)

    res = compare({"torch": torch_step, "minidl flex.autodiff": minidl_step, alone: flex_alone},
                  budget=scale * 6.0, rounds=5)
    table("MLP 784-256-10, batch 128: forward + cross-entropy + backward + SGD step",
          _rows(res), HEADER)
    stack_share = 1.0 - res[alone][0] / res["minidl flex.autodiff"][0]
    print(f"the last row runs the Flex ops one step made, with the same arrays, back to back: the "
          f"kernels and their wrappers with no stack above them; the stack (Tensor, Dispatch, "
          f"Autodiff, optimizer) is the other {stack_share:.0%} of the step")
    return {k: v[0] for k, v in res.items()}


def record_backend_calls(step) -> list[tuple]:
    """``(op, args, kwargs)`` of every outermost Flex call one ``step()`` makes, in order."""
    from minidl.backends.flex import Flex
    from minidl.debug.op_timer import BackendOpTimer

    calls: list[tuple] = []
    with BackendOpTimer(Flex, record=calls):
        step()
    return calls


# ----- 3. start-up: import + first Linear forward in a fresh process ---------------------------------

_STARTUP = """
import time
t0 = time.perf_counter()
import numpy as np
import minidl
from minidl.dispatch import Device
from minidl.nn import LinearConfig
from minidl.tensor import Tensor
t1 = time.perf_counter()
layer = LinearConfig(784, 256).init(Device.flex())
x = Tensor.from_numpy(np.ones((128, 784), np.float32), device=Device.flex())
layer(x).to_numpy()
t2 = time.perf_counter()
print(f"{t1 - t0:.4f} {t2 - t0:.4f}")
"""


def _startup(cache_dir: str) -> tuple[float, float, float]:
    env = unpinned_env(NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT))
    env.pop("MINIDL_DEBUG", None)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _STARTUP], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    imp, first = (float(v) for v in out.stdout.split())
    return imp, first, wall


def startup(runs: int) -> dict:
    warm_dir = os.environ["NUMBA_CACHE_DIR"]
    _startup(warm_dir)  # make sure the project cache holds every kernel the forward needs
    warm = [_startup(warm_dir) for _ in range(runs)]
    w_imp, w_first, w_wall = (statistics.median(v) for v in zip(*warm))
    with tempfile.TemporaryDirectory(prefix="numba_cold_") as cold_dir:
        c_imp, c_first, c_wall = _startup(cold_dir)
    rows = [
        ["import minidl", f"{w_imp:.3f} s", f"{c_imp:.3f} s"],
        ["import minidl + first Linear(784, 256) forward", f"{w_first:.3f} s", f"{c_first:.3f} s"],
        ["whole process (python start-up too)", f"{w_wall:.3f} s", f"{c_wall:.3f} s"],
    ]
    table(f"fresh process: warm numba cache (median of {runs}) vs cold (empty NUMBA_CACHE_DIR)",
          rows, ["step", "warm cache", "cold cache"])
    print(f"warm import + first forward = {w_first:.2f} s  (target < 2 s)")
    return {"warm_first_forward": w_first, "cold_first_forward": c_first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = parser.parse_args()
    rerun_unpinned_if_pinned(__file__, sys.argv[1:])  # peers at their best: no inherited pins
    t_start = time.perf_counter()
    scale = 0.4 if args.quick else 1.0
    print("# minidl stack benchmarks (median (best) over repeats; ratio = its time / torch's)\n")
    threading_report()
    tiny_add(scale)
    mlp_step(scale)
    startup(runs=1 if args.quick else 3)
    print(f"\n(whole run: {time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
