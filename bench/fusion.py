"""Fusion benchmarks: ``Device.fusion()`` beside eager Flex, torch eager and ``torch.compile`` (issue 15).

Run: ``.venv/bin/python bench/fusion.py`` (a few minutes; ``--quick`` for a smoke run). It
prints, each a median (and best) over alternating blocks of repeats, with ratios:

1. a chain of 8 cheap element-wise ops (mul, add, relu, abs, sub, mul, add, abs) over 4M
   float32 elements: memory-bound work, where fusion saves the traffic of 7 intermediates.
   Targets: Fusion >= 3x eager Flex, >= 5x torch eager, within 1.5x of ``torch.compile``;
   then the same chain swept from 16 elements to 4M (``--only sweep``), every op recorded and
   as shipped, with the fixed costs of a recorded op and a drain (issue 31's targets: as
   shipped never slower than 1.2x eager Flex, >= 5x faster from 1M elements);
2. ``layer_norm`` [4096, 1024]: the ModuleOps default recorded and fused on the fusion device
   against Flex's hand-written kernel (target >= 0.8x) and torch;
3. one training step of a pre-norm MLP block (layer_norm -> linear -> gelu -> linear ->
   residual add, mean-square loss, backward; batch 256, width 256 -> 1024 -> 256) on
   ``fusion().autodiff()`` against ``flex().autodiff()`` (target >= 1.3x) and torch;
4. the first call of sections 1-2 in a fresh process, with an empty numba cache (every
   generated kernel is written and compiled) and with the project's cache (loaded).

Each contender's result is forced into memory (a fusion tensor's value is read, which is its
sync point). Printed, never asserted: the machine is shared and noisy (say so when quoting).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))

import numpy as np  # noqa: E402

from minidl_book.fusion_sweep import chain, force  # noqa: E402  (the chapter's chain)

PAUSE = 0.08  # seconds between blocks: spinning pool threads go back to sleep


def instruction_set() -> str:
    """``AVX-512`` when /proc/cpuinfo lists avx512f, else ``AVX2``."""
    try:
        return "AVX-512" if "avx512f" in Path("/proc/cpuinfo").read_text() else "AVX2"
    except OSError:  # pragma: no cover - not Linux
        return "unknown"


def compare(contenders: dict[str, Callable[[], object]], budget: float, rounds: int) -> dict:
    """Median and best seconds per contender: a warm-up call, then ``rounds`` rounds in which each
    contender runs one block of repeats followed by a pause (never interleaved inside a block)."""
    reps = {}
    for name, fn in contenders.items():
        fn()
        t0 = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        reps[name] = int(min(max(3, budget / rounds / len(contenders) / one), 500))
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            for _ in range(reps[name]):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
            time.sleep(PAUSE)
    return {n: (float(np.median(t)), float(np.min(t)), len(t)) for n, t in times.items()}


def fmt(s: float) -> str:
    return f"{s * 1e6:8.1f} us" if s < 1e-3 else f"{s * 1e3:8.2f} ms"


def report(title: str, res: dict, base: str, targets: dict[str, str] | None = None) -> None:
    """A table: median, best, and ``ratio = other's time / base's time`` (> 1: base is faster)."""
    print(f"\n## {title}\n")
    print(f"{'impl':<24}{'median':>12}{'best':>12}   {'ratio (its time / ' + base + ')':<28}{'repeats':>8}")
    for name, (med, best, n) in res.items():
        ratio = med / res[base][0]
        note = f"  target: {targets[name]}" if targets and name in targets else ""
        print(f"{name:<24}{fmt(med):>12}{fmt(best):>12}   {ratio:<28.2f}{n:>8}{note}")


def bench_sweep(budget: float) -> None:
    """The 8-op chain from 16 elements to 4M (minidl_book.fusion_sweep, as the fusion chapter
    runs it), recording every op and as shipped, and the fixed costs that shape its left end."""
    from minidl.backends.flex.fusion import FusionFlex
    from minidl_book import fusion_sweep

    stream = FusionFlex.stream
    with stream.recording_every_op():
        every = fusion_sweep.sweep(budget=budget / 40)
    shipped = fusion_sweep.sweep(budget=budget / 40, with_torch=False)
    print(f"\n## The 8-op chain, every op recorded ({instruction_set()}; best of 3 blocks)\n")
    print(every.table())
    print(f"\n## The same chain as shipped (ops on ready tensors under {stream.eager_below:,} elements "
          "run eagerly on Flex)\n")
    print(shipped.table())
    worst = max(shipped.ratio("Fusion", "Flex (eager)"))
    from_1m = min(r for n, r in zip(shipped.sizes, shipped.ratio("Flex (eager)", "Fusion")) if n >= 1 << 20)
    print(f"\nas shipped: at worst {worst:.2f}x eager Flex's time (target <= 1.2); from 1M elements at least "
          f"{from_1m:.1f}x faster (target >= 5)")
    costs = {k: f"{v * 1e6:.2f} us" for k, v in fusion_sweep.fixed_costs().items()}
    print(f"fixed costs: {costs}")


def bench_chain(budget: float, rounds: int, n: int) -> None:
    import torch

    from minidl.dispatch import Device
    from minidl.tensor import Tensor

    data = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    xf, xu = Tensor.from_data(data, Device.flex()), Tensor.from_data(data, Device.fusion())
    xt = torch.from_numpy(data.copy())

    def torch_chain(t):
        return (torch.relu(t * 1.5 + 0.5).abs() - 0.25).mul(2.0).add(t).abs()

    compiled = torch.compile(torch_chain)
    np.testing.assert_allclose(_value(chain(xu)), chain(xf).to_numpy(), rtol=1e-6, atol=1e-6)
    res = compare({
        "fusion": lambda: force(chain(xu)),
        "flex (eager)": lambda: force(chain(xf)),
        "torch eager": lambda: torch_chain(xt),
        "torch.compile": lambda: compiled(xt),
    }, budget, rounds)
    report(f"8 element-wise ops over {n / 2**20:.0f}M float32 ({instruction_set()})", res, "fusion",
           {"flex (eager)": ">= 3", "torch eager": ">= 5", "torch.compile": ">= 0.67 (fusion within 1.5x)"})


def _value(t):
    force(t)
    return t.to_numpy()


# ----- 2. layer_norm -----------------------------------------------------------------------------------


def bench_layer_norm(budget: float, rounds: int, rows: int, d: int) -> None:
    import torch

    from minidl.debug import fusion_plan
    from minidl.dispatch import Device
    from minidl.tensor import Tensor
    from minidl.tensor import module as F

    rng = np.random.default_rng(1)
    x, g, b = (rng.standard_normal(s).astype(np.float32) for s in ((rows, d), (d,), (d,)))
    args = {dev: [Tensor.from_data(a, dev) for a in (x, g, b)] for dev in (Device.fusion(), Device.flex())}
    tx, tg, tb = (torch.from_numpy(a.copy()) for a in (x, g, b))
    fused = _value(F.layer_norm(*args[Device.fusion()], 1e-5))
    kernels = len(fusion_plan().kernels)
    np.testing.assert_allclose(fused, F.layer_norm(*args[Device.flex()], 1e-5).to_numpy(), rtol=1e-4, atol=1e-5)
    res = compare({
        "fusion (fused default)": lambda: force(F.layer_norm(*args[Device.fusion()], 1e-5)),
        "flex (its kernel)": lambda: force(F.layer_norm(*args[Device.flex()], 1e-5)),
        "torch": lambda: torch.nn.functional.layer_norm(tx, (d,), tg, tb, 1e-5),
    }, budget, rounds)
    report(f"layer_norm [{rows}, {d}]: the default in {kernels} generated kernel(s) ({instruction_set()})", res,
           "fusion (fused default)", {"flex (its kernel)": ">= 0.8 (fusion >= 0.8x Flex's speed: ratio >= 0.8)"})


# ----- 3. a training step --------------------------------------------------------------------------------


def mlp_step_fn(device, batch: int, width: int, hidden: int):
    """One pre-norm MLP block step on ``device`` (autodiff): returns a callable running forward,
    backward and reading every gradient."""
    from minidl.tensor import Tensor
    from minidl.tensor import module as F

    rng = np.random.default_rng(2)

    def t(*shape, scale=1.0, grad=True):
        v = Tensor.from_data((rng.standard_normal(shape) * scale).astype(np.float32), device)
        return v.require_grad() if grad else v

    x = t(batch, width, grad=False)
    params = [t(width), t(width), t(width, hidden, scale=width ** -0.5), t(hidden, scale=0.1),
              t(hidden, width, scale=hidden ** -0.5), t(width, scale=0.1)]

    def step():
        g, b, w1, b1, w2, b2 = params
        h = F.linear(F.layer_norm(x, g, b, 1e-5), w1, b1).gelu()
        y = F.linear(h, w2, b2) + x
        loss = (y * y).mean()
        grads = loss.backward()
        for p in params:
            force(p.grad(grads))
        return loss

    return step


def bench_training(budget: float, rounds: int, batch: int, width: int, hidden: int) -> None:
    import torch

    from minidl.dispatch import Device

    rng = np.random.default_rng(2)
    tx = torch.from_numpy(rng.standard_normal((batch, width)).astype(np.float32))
    tp = [torch.randn(s, requires_grad=True) for s in ((width,), (width,), (width, hidden), (hidden,),
                                                        (hidden, width), (width,))]

    def torch_step():
        g, b, w1, b1, w2, b2 = tp
        h = torch.nn.functional.gelu(torch.nn.functional.layer_norm(tx, (width,), g, b, 1e-5) @ w1 + b1)
        loss = ((h @ w2 + b2 + tx) ** 2).mean()
        for p in tp:
            p.grad = None
        loss.backward()
        return loss

    res = compare({
        "fusion().autodiff()": mlp_step_fn(Device.fusion().autodiff(), batch, width, hidden),
        "flex().autodiff()": mlp_step_fn(Device.flex().autodiff(), batch, width, hidden),
        "torch": torch_step,
    }, budget, rounds)
    report(f"pre-norm MLP step, batch {batch}, {width} -> {hidden} -> {width} ({instruction_set()})", res,
           "fusion().autodiff()", {"flex().autodiff()": ">= 1.3"})


# ----- 4. first call, cold and cached ---------------------------------------------------------------------

FIRST_CALL = """
import time
t0 = time.perf_counter()
import numpy as np, minidl
from minidl.dispatch import Device
from minidl.tensor import Tensor
from minidl.tensor import module as F
import importlib.util, sys
spec = importlib.util.spec_from_file_location("fb", {bench!r})
fb = importlib.util.module_from_spec(spec); spec.loader.exec_module(fb)
x = Tensor.from_data(np.ones((64, 256), np.float32), Device.fusion())
g = Tensor.from_data(np.ones(256, np.float32), Device.fusion())
fb.force(fb.chain(x)); fb.force(F.layer_norm(x, g, g, 1e-5))
print(time.perf_counter() - t0)
"""


def bench_first_call() -> None:
    script = FIRST_CALL.format(bench=str(Path(__file__).resolve()))

    def run(cache: str) -> float:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory() as empty:
        cold = run(empty)
        warm_own = run(empty)  # the same folder again: now the kernels are written and cached
    print("\n## first call in a fresh process: import + the chain + layer_norm on Device.fusion()\n")
    print(f"cold (empty NUMBA_CACHE_DIR: kernels generated and compiled): {cold:6.2f} s")
    print(f"cached (the same folder, second process: kernels loaded)    : {warm_own:6.2f} s"
          f"   ratio cold / cached = {cold / warm_own:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller budgets, no first-call section")
    ap.add_argument("--only", choices=["chain", "sweep", "layer_norm", "training", "first_call"], default=None)
    ap.add_argument("--threads", type=int, default=None, help="limit numba and torch to N threads")
    args = ap.parse_args()
    budget, rounds = (1.0, 2) if args.quick else (4.0, 4)
    if args.threads:
        os.environ["NUMBA_NUM_THREADS"] = str(args.threads)  # before numba is imported
    import numba
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    print(f"# fusion benchmarks: instruction set {instruction_set()}, numba {numba.__version__} "
          f"({numba.config.NUMBA_NUM_THREADS} threads), torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), load average {os.getloadavg()[0]:.2f}")
    print("(a shared machine: ratios within one run are comparable; absolute times drift)")
    sections = {
        "chain": lambda: bench_chain(budget, rounds, 1 << 22),
        "sweep": lambda: bench_sweep(budget),
        "layer_norm": lambda: bench_layer_norm(budget, rounds, 4096, 1024),
        "training": lambda: bench_training(budget, rounds, 256, 256, 1024),
        "first_call": bench_first_call,
    }
    for name, fn in sections.items():
        if args.only in (None, name) and not (args.quick and name == "first_call" and args.only is None):
            fn()


if __name__ == "__main__":
    main()
