"""The fusion chapter's sweep: the element-wise chain from 16 elements to millions, on
eager Flex, the fusion device, torch eager and ``torch.compile``, and the two numbers that
explain its shape: what one recorded op costs and what one drain costs.

``bench/fusion.py --sweep`` and the fusion chapter both call :func:`sweep`, so the page and the
benchmark measure the same thing. Each contender's result is forced into memory (a fusion
tensor's value is read: its sync point); each is timed in its own block of repeats, and the
best of several blocks is kept (the least disturbed by a neighbour on a shared machine).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

#: sizes of the sweep, in float32 elements: from a latency to four times a large L2
SIZES = (16, 256, 4096, 1 << 16, 1 << 18, 1 << 20, 1 << 22)


#: ops the chain records on the fusion device (``relu`` is a protocol default there: two ops)
CHAIN_RECORDED = 9
#: The chain's eight calls, each with the ops it records (``relu``: two).
CHAIN_CALLS = [("mul", 1), ("add", 1), ("relu", 2), ("abs", 1), ("sub", 1), ("mul", 1),
               ("add x", 1), ("abs", 1)]
#: calls the chain makes on eager Flex (Flex writes ``relu`` itself: one kernel, 7 intermediates)
CHAIN_EAGER = 8


def chain(x):
    """The chain: mul, add, relu, abs, sub, mul, add (x), abs: 8 calls on eager Flex, 9 ops
    recorded on the fusion device (``relu`` arrives as ``lower_elem`` and ``mask_fill``)."""
    return ((((x * 1.5 + 0.5).relu()).abs() - 0.25) * 2.0 + x).abs()


def torch_chain(t):
    """The same chain in torch (``relu`` is one ATen op there too)."""
    import torch

    return (torch.relu(t * 1.5 + 0.5).abs() - 0.25).mul(2.0).add(t).abs()


def force(t) -> None:
    """Make ``t``'s value exist: a fusion handle is synced; an eager tensor already is."""
    prim = t.primitive.backend_tensor
    if hasattr(prim, "pending"):
        prim.value  # noqa: B018 - the read is the sync point


def best_time(fn: Callable[[], object], budget: float = 0.05, blocks: int = 3,
              clock: Callable[[], float] = time.perf_counter) -> float:
    """The best mean time of ``fn`` over ``blocks`` blocks of repeats (about ``budget`` seconds
    a block), after two warm-up calls (compiling, the plan's search). ``clock`` is wall time by
    default; ``time.thread_time`` counts this thread's CPU time only (what the code cost, not
    how long it waited for a core on a shared machine)."""
    fn()
    fn()
    t0 = clock()
    fn()
    reps = int(min(max(budget / max(clock() - t0, 1e-7), 3), 2000))
    best = float("inf")
    for _ in range(blocks):
        t0 = clock()
        for _ in range(reps):
            fn()
        best = min(best, (clock() - t0) / reps)
        time.sleep(0.02)  # spinning pool threads go back to sleep between blocks
    return best


@dataclass
class Sweep:
    """Seconds per chain, by contender and size; ``ratio(a, b)`` is a's time over b's."""

    sizes: list[int]
    seconds: dict[str, list[float]] = field(default_factory=dict)

    def ratio(self, a: str, b: str) -> list[float]:
        return [x / y for x, y in zip(self.seconds[a], self.seconds[b], strict=True)]

    def table(self) -> str:
        names = list(self.seconds)
        lines = [f"{'elements':>10}" + "".join(f"{n:>16}" for n in names) + f"{'Flex / Fusion':>15}"]
        for i, size in enumerate(self.sizes):
            row = "".join(f"{self.seconds[n][i] * 1e6:>13.1f} us" for n in names)
            lines.append(f"{size:>10}{row}{self.seconds['Flex (eager)'][i] / self.seconds['Fusion'][i]:>15.2f}")
        return "\n".join(lines)


def sweep(sizes: Sequence[int] = SIZES, with_torch: bool = True, budget: float = 0.05,
          progress: Callable | None = None, one_thread: bool = False) -> Sweep:
    """Time the chain at each size on eager Flex and Fusion (and torch eager and
    ``torch.compile`` when ``with_torch``); results are checked equal before timing.
    ``one_thread``: numba on one thread and this thread's CPU time as the clock (the fusion
    chapter's choice on a shared machine: both contenders then pay for what they do, not for
    waiting on a busy core)."""
    if one_thread:
        import numba

        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return _sweep(sizes, with_torch, budget, progress, time.thread_time)
        finally:
            numba.set_num_threads(threads)
    return _sweep(sizes, with_torch, budget, progress, time.perf_counter)


def _sweep(sizes, with_torch, budget, progress, clock) -> Sweep:
    names = ["Flex (eager)", "Fusion"] + (["torch eager", "torch.compile"] if with_torch else [])
    out = Sweep(list(sizes), {n: [] for n in names})
    compiled = None
    if with_torch:
        import torch

        compiled = torch.compile(torch_chain, dynamic=False)
    rng = np.random.default_rng(0)
    for size in progress(sizes) if progress else sizes:
        for name, fn in _contenders(rng.standard_normal(size).astype(np.float32), compiled).items():
            out.seconds[name].append(best_time(fn, budget, clock=clock))
    return out


def policies(sizes: Sequence[int] = (16, 1 << 20), rounds: int = 7, budget: float = 0.02) -> Sweep:
    """The chain on eager Flex, on Fusion as shipped (``"Fusion"``: small ops run eagerly) and
    on Fusion recording every op (``"Fusion, every op"``), timed in turns: each round runs a
    block of each, and each keeps its best block. Compared this way a neighbour's burst
    slows all three alike, where two sweeps run at different times could disagree."""
    from minidl.backends.flex.fusion import FusionFlex

    names = ["Flex (eager)", "Fusion", "Fusion, every op"]
    out = Sweep(list(sizes), {n: [] for n in names})
    rng = np.random.default_rng(0)
    for size in sizes:
        fns = _contenders(rng.standard_normal(size).astype(np.float32), None)
        fns["Fusion, every op"] = fns["Fusion"]
        best = dict.fromkeys(names, float("inf"))
        for _ in range(rounds):
            for name in names:
                with FusionFlex.stream.recording_every_op() if name == "Fusion, every op" else nullcontext():
                    best[name] = min(best[name], best_time(fns[name], budget, blocks=1))
        for name in names:
            out.seconds[name].append(best[name])
    return out


def _contenders(data: np.ndarray, compiled: Callable | None) -> dict[str, Callable[[], object]]:
    """The chain over ``data`` on each contender (checked equal first); torch's when
    ``compiled`` (the ``torch.compile``d chain) is given."""
    from minidl import Device, Tensor

    flex, fused = Tensor.from_numpy(data, Device.flex()), Tensor.from_numpy(data, Device.fusion())
    np.testing.assert_allclose(chain(fused).to_numpy(), chain(flex).to_numpy(), rtol=1e-6, atol=1e-6)
    contenders = {"Flex (eager)": lambda: chain(flex), "Fusion": lambda: force(chain(fused))}
    if compiled is not None:
        import torch

        t = torch.from_numpy(data.copy())
        contenders.update({"torch eager": lambda: torch_chain(t), "torch.compile": lambda: compiled(t)})
    return contenders


def fixed_costs(repeats: int = 2000) -> dict[str, float]:
    """What the fusion device pays per call, whatever the data: seconds to record one op
    (the chain's 9 ops recorded, not run, divided by 9) and to drain a segment of 9 ops of 16
    elements whose plan is stored (a read that finds the plan, launches one kernel, fills the
    handle); and eager Flex's cost of one such op, for comparison. All as this thread's CPU
    time."""
    from minidl import Device, Tensor
    from minidl.backends.flex.fusion import FusionFlex

    data = np.ones(16, np.float32)
    fused, flex = Tensor.from_numpy(data, Device.fusion()), Tensor.from_numpy(data, Device.flex())
    with FusionFlex.stream.recording_every_op():  # small as they are
        force(chain(fused))  # the plan is searched and stored
        record = drain = 0.0
        for _ in range(repeats):
            t0 = time.thread_time()
            y = chain(fused)
            t1 = time.thread_time()
            force(y)
            drain += time.thread_time() - t1
            record += t1 - t0
    eager = best_time(lambda: chain(flex), 0.05, clock=time.thread_time)
    return {"record_op": record / repeats / CHAIN_RECORDED, "drain": drain / repeats,
            "eager_op": eager / CHAIN_EAGER}


#: sizes of the GPU sweep, in float32 elements (a multiple of 4: the fused kernel's vec4 form)
GPU_SIZES = (16, 256, 1 << 12, 1 << 16, 1 << 18)
GPU_NAMES = ("Wgpu (eager)", "Fusion[Wgpu]")


def read_one(x) -> float:
    """The chain over ``x``, then its element 0 read back: on a GPU device a read waits for
    every dispatch before it, so the time is the chain's, plus a 4-byte copy."""
    return chain(x).slice([slice(0, 1)]).into_scalar()


def gpu_sweep(sizes: Sequence[int] = GPU_SIZES, budget: float = 0.5,
              calls: int = 40) -> tuple[Sweep, dict[str, int]]:
    """The chain (:func:`read_one`) on eager ``Device.wgpu()`` and on ``Device.fusion_wgpu()``
    at each size, as wall time (the GPU's threads are not this thread): single calls of the
    two in turn (up to ``calls`` pairs, about ``budget`` seconds a size), each contender's
    fastest call kept. On a shared machine a neighbour only adds time, so the fastest call
    is the least disturbed, and taking turns gives both the same machine. Returns the sweep
    and the dispatches one call makes on each device (the count does not depend on the
    size). Results are checked equal first."""
    from minidl import Device, Tensor
    from minidl.backends.wgpu.runtime import runtime

    rt = runtime(0)
    devices = dict(zip(GPU_NAMES, (Device.wgpu(), Device.fusion_wgpu()), strict=True))
    out = Sweep(list(sizes), {n: [] for n in GPU_NAMES})
    rng = np.random.default_rng(0)
    dispatches: dict[str, int] = {}
    for size in sizes:
        data = rng.standard_normal(size).astype(np.float32)
        xs = {n: Tensor.from_numpy(data, d) for n, d in devices.items()}
        values = {n: read_one(x) for n, x in xs.items()}
        assert values[GPU_NAMES[0]] == values[GPU_NAMES[1]], values
        for name, x in xs.items():
            read_one(x)  # warm: pipelines compiled, the plan stored
            start = rt.dispatches
            read_one(x)
            dispatches[name] = rt.dispatches - start
        best = dict.fromkeys(GPU_NAMES, float("inf"))
        spent = 0.0
        for _ in range(calls):
            for name, x in xs.items():
                t0 = time.perf_counter()
                read_one(x)
                took = time.perf_counter() - t0
                best[name] = min(best[name], took)
                spent += took
            if spent > budget:
                break
        for name in GPU_NAMES:
            out.seconds[name].append(best[name])
    return out, dispatches
