"""The performance chapter's measurements, shared with ``bench/steps.py``.

- :func:`step_times`: a training step of :mod:`.workloads` per contender (torch with its default
  optimizer, with its fused one, under ``torch.compile``; minidl eager and captured, on Flex and
  on Fusion), each contender in a fresh process started without inherited peer pins, every
  pool it holds limited (:class:`.peers.limit_pools`) and reported; medians of wall and CPU
  time.
- :func:`head_to_head` and :class:`Duel`: contenders timed interleaved in one process, best of
  rounds, and a ratio with its noise band (the spread of the rounds' ratios); a verdict
  ("level", "slower", "faster") only past that band.
- :func:`peer_times`: in one such process, the peers' gemm (Flex, the ladder's packed rung,
  NumPy's OpenBLAS, torch's MKL; :func:`head_to_head`), a 4x4 add (minidl, torch), and sin,
  cos and the exact GELU on 1M float32 (Flex,
  torch, and torch's GELU with oneDNN switched off), each in its own block of repeats (CPU
  time).
- :func:`step_counts`: the backend calls of one steady step and their flops and bytes.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# the chapter reads numba's machine code as perf_lab.fma_census / perf_lab.stride_guards
from minidl_book.machine_code import fma_census, stride_guards  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]

TORCH = ("torch default", "torch foreach", "torch fused", "torch.compile")
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
        impl = {impl!r} if contender == "torch.compile" else contender.split()[-1]
        out["impl"] = impl
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
    # NUMBA_CACHE_DIR comes along: minidl's import (through minidl_book's) set it in this process
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
              warmup: int = 20, impl: str = "fused") -> dict:
    """One fresh process timing ``contender`` (of :data:`CONTENDERS`) on ``workload``
    (``"cnn"``, ``"mlp"``); ``impl``: the optimizer implementation ``torch.compile`` runs
    with (the torch eager contenders name theirs)."""
    source = STEP_CHILD.format(threads=threads, workload=workload, contender=contender,
                               warmup=warmup, samples=samples, steps=steps, impl=impl)
    return run_child(source, threads)


def summarize(results: dict[str, list[dict]], key: str = "cpu") -> dict[str, dict]:
    """Median and best over rounds per contender (``key``: ``"cpu"`` or ``"seconds"``, wall),
    the fastest torch contender under ``"best torch"``, and each one's ``ratio`` to it;
    ``torch.compile``'s entry names the optimizer implementation it ran with (``impl``)."""
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
    if "torch.compile" in out:  # the optimizer implementation it ran with
        out["torch.compile"]["impl"] = next(
            (r["impl"] for r in results["torch.compile"] if "impl" in r), None)
    return out


def step_times(workload: str, contenders=CONTENDERS, rounds: int = 1, threads: int = 1,
               **timing) -> dict[str, list[dict]]:
    """Every contender on ``workload``, one fresh process each per round, rounds alternating.
    ``torch.compile`` runs last in its round, with the optimizer implementation of the
    fastest torch eager contender so far (:func:`fastest_impl`)."""
    results: dict[str, list[dict]] = {c: [] for c in contenders}
    order = [c for c in contenders if c != "torch.compile"]
    order += ["torch.compile"] if "torch.compile" in contenders else []
    for _ in range(rounds):
        for contender in order:
            impl = fastest_impl(results) if contender == "torch.compile" else "fused"
            results[contender].append(step_time(workload, contender, threads, impl=impl,
                                                **timing))
    return results


def fastest_impl(results: dict[str, list[dict]], key: str = "cpu") -> str:
    """The optimizer implementation (``default``, ``foreach``, ``fused``) of the torch eager
    contender with the lowest median so far (``fused`` when none ran)."""
    eager = {c.split()[-1]: statistics.median(r[key] for r in runs if key in r)
             for c, runs in results.items()
             if c.startswith("torch ") and any(key in r for r in runs)}
    return min(eager, key=eager.get) if eager else "fused"


#: the ladder's packed rung (micro-kernel and packing only), timed with the peers' gemm
PACKED = "packed (the ladder's rung)"


def head_to_head(contenders: dict, rounds: int = 12, budget: float = 2.0,
                 pause: float = 0.02) -> dict[str, dict]:
    """Contenders timed interleaved in this process, this thread's CPU time per call.

    After a warm-up call each, every one of ``rounds`` rounds runs each contender in turn for
    a block of a few calls (``budget`` seconds shared by all rounds and contenders), then
    pauses. ``{name: {"best", "median", "rounds"}}``: the best and the median round, and
    every round's time per call (round i of two contenders ran side by side, under the same
    load). The best round is the time least disturbed by other processes."""
    from minidl_book import roofline as rl

    return rl.median_seconds(contenders, budget=budget, rounds=rounds, pause=pause)


@dataclass(frozen=True)
class Duel:
    """Two contenders of :func:`head_to_head`: ``ratio``, the other's best time over ours
    (above 1: ours faster), and ``noise``, half the spread of the middle half of the rounds'
    own ratios (round by round, side by side), at least ``FLOOR``."""

    ratio: float
    noise: float

    FLOOR = 0.02  # no band narrower than 2 %
    EDGE = 0.05  # a stated share or word within this of the measured ratio still fits

    @classmethod
    def of(cls, times: dict[str, dict], ours: str, other: str) -> Duel:
        per_round = sorted(o / u for o, u in zip(times[other]["rounds"], times[ours]["rounds"]))
        k = len(per_round) // 4  # the middle half of the rounds
        spread = (per_round[-1 - k] - per_round[k]) / 2
        return cls(times[other]["best"] / times[ours]["best"], max(cls.FLOOR, spread))

    @property
    def slack(self) -> float:
        """How far from the measured ratio an answer may lie: the noise, or ``EDGE``."""
        return max(self.EDGE, self.noise)

    def verdict(self, near: float = 0.1) -> str:
        """``"level"`` while the ratio is within ``near`` of 1 widened by the noise; else
        ``"slower"`` or ``"faster"``, a verdict past the band."""
        if abs(self.ratio - 1) <= near + self.noise:
            return "level"
        return "faster" if self.ratio > 1 else "slower"

    def fits(self, word: str, near: float = 0.1) -> bool:
        """Whether ``word`` ("level", "slower", "faster") fits some ratio within
        :attr:`slack` of the measured one: near a band's edge both words fit."""
        lo, hi = self.ratio - self.slack, self.ratio + self.slack
        return {"level": lo <= 1 + near and hi >= 1 - near, "slower": lo < 1 - near,
                "faster": hi > 1 + near}[word]

    def fits_share(self, share: float, way: str) -> bool:
        """Whether "``share`` slower/faster" (0.2: 20 %) fits: read as a speed ``1 - share``
        or a time ``1 + share`` times ours (either reading), within :attr:`slack`."""
        said = ((1 - share, 1 / (1 + share)) if way == "slower"
                else (1 + share, 1 / (1 - share) if share < 1 else float("inf")))
        return self.side(way) and any(abs(s - self.ratio) <= self.slack for s in said)

    def side(self, way: str) -> bool:
        """Whether ``way`` ("slower", "faster") is not contradicted past the noise: a ratio
        of 1.05 ± 0.02 (ours 5 % faster) has no slower side."""
        return self.ratio - self.noise < 1 if way == "slower" else self.ratio + self.noise > 1

    def leans(self, way: str, near: float = 0.1) -> bool:
        """Whether a hedge, "slightly slower" or "a little faster", fits: the ratio inside
        the ``near`` band (:meth:`fits` "level") and on that :meth:`side` of 1."""
        return self.fits("level", near) and self.side(way)

    def within(self, share: float) -> bool:
        """Whether "within ``share``, either way" fits."""
        return abs(self.ratio - 1) <= share + self.slack


PEER_CHILD = """
import json
import numpy as np, numba, torch
from minidl import Device, Tensor
from minidl.backends.flex.kernels import gemm
from minidl_book import gemm_ladder, perf_lab
from minidl_book import roofline as rl
from minidl_book.perf_lab import PACKED
from minidl_book.peers import format_peer_report, limit_pools, peer_report
out = {{}}
with limit_pools({threads}):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(({n}, {n})).astype(np.float32) for _ in range(2))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    c = np.empty(({n}, {n}), np.float32)
    out["gemm"] = perf_lab.head_to_head({{"Flex": lambda: gemm.matmul(a, b),
                                         PACKED: lambda: gemm_ladder.packed(a, b, c),
                                         "OpenBLAS (NumPy's a @ b)": lambda: a @ b,
                                         "MKL (torch's a @ b)": lambda: ta @ tb}},
                                        budget=2.4, rounds=12)
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
    far = np.full(1 << 20, -6.0, np.float32)  # more than one element: oneDNN's path
    with torch.backends.mkldnn.flags(enabled=False):
        own_at = float(F.gelu(torch.from_numpy(far))[0])
    out["gelu at -6"] = {{"Flex": float(unary.unary("gelu", far)[0]),
                          "torch": float(F.gelu(torch.from_numpy(far))[0]),
                          "torch, oneDNN off": own_at}}
    out["peers"] = format_peer_report()
    out["report"] = {{k: v for k, v in peer_report().items()}}
print("RESULT " + json.dumps(out))
"""


def peer_times(threads: int = 1, n: int = 1024) -> dict:
    """The gemm of ``n`` (Flex, the ladder's packed rung, OpenBLAS, MKL: :func:`head_to_head`)
    and a 4x4 add (minidl, torch) in one fresh
    process, CPU time; with the process's peer report (``"peers"`` text, ``"report"`` dict)."""
    return run_child(PEER_CHILD.format(threads=threads, n=n), threads)


def steady_counts(workload: str, **kwargs):
    """:func:`step_counts` of the third step of ``workload``'s minidl step on
    ``flex().autodiff()`` (``kwargs`` to the step's builder, e.g. ``batch=512``)."""
    from minidl import Device
    from minidl_book.workloads import WORKLOADS

    step = WORKLOADS[workload][0](Device.flex().autodiff(), **kwargs)
    step(), step()  # steps 1 and 2: Adam's moments exist from step 2 on
    return step_counts(step)


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


# ----- what the chapter shows: tables and figures built here, so a shown cell is the idea ------


def bandwidth_table(bandwidth: dict, roof):
    """The measured roofs per memory level: footprint, copy and triad GB/s, and the ridge."""
    from minidl.debug import Table

    return Table(["level", "footprint", "copy GB/s", "triad GB/s", "ridge (flops/byte)"],
                 [[k, f"{v['bytes'] / 2**20:.1f} MiB", f"{v['copy']:.0f}", f"{v['triad']:.0f}",
                   f"{roof.ridge(k):.1f}"] for k, v in bandwidth.items()])


def machine_roofline(peak: dict, bandwidth: dict, caches: dict, curve: dict):
    """The :class:`.roofline.Roofline` of the measurements: the FMA peak, each level's best
    STREAM bandwidth (the lines drawn) and the curve (each point's own roof)."""
    from minidl_book import roofline as rl

    return rl.Roofline(peak["gflops"], {k: v["best"] for k, v in bandwidth.items()}, caches,
                       curve)


def draw_hierarchy(curve: dict, caches: dict, marks: dict | None = None) -> None:
    """The memory hierarchy: one thread's STREAM GB/s against footprint, the reported L2 and
    L3 sizes as vertical lines, and ``marks`` (name: footprint in bytes) as ticks on the curve."""
    import matplotlib.pyplot as plt

    from minidl_book import roofline as rl

    xs = sorted(curve)
    fig, ax = plt.subplots(figsize=(7, 2.8))
    ax.plot([x / 2**20 for x in xs], [curve[x] for x in xs], "o-", color="#1565C0", ms=4,
            label="STREAM, best of copy and triad")
    for (name, size), ls in zip(((k, caches[k]) for k in ("L2", "L3") if k in caches), (":", "--")):
        ax.axvline(size / 2**20, color="gray", ls=ls, lw=1, label=f"{name} size reported")
    for name, fp in (marks or {}).items():
        ax.plot(fp / 2**20, rl.bandwidth_at(curve, fp), "s", color="#EF6C00", ms=5)
        ax.annotate(name, (fp / 2**20, rl.bandwidth_at(curve, fp)), textcoords="offset points",
                    xytext=(4, 6), fontsize=7)
    ax.set(xscale="log", yscale="log", xlabel="footprint (MiB)", ylabel="GB/s (one thread)",
           title="the memory hierarchy, measured")
    from matplotlib.ticker import FuncFormatter, NullFormatter, ScalarFormatter

    lo, hi = min(curve.values()), max(curve.values())
    ax.set_yticks([t for t in (5, 10, 20, 30, 40, 60, 80, 100, 150, 200, 300, 500)
                   if lo / 1.15 <= t <= hi * 1.15])  # plain numbers, not 6×10^1
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 1, not 10^0
    ax.legend(fontsize=7)
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def draw_tile(mr: int, nr: int, lanes: int) -> None:
    """The gemm micro-kernel's register tile: ``mr × nr`` accumulators of C (``nr / lanes``
    vectors per row), one row of packed B loaded as vectors, one value of A broadcast."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    vec = nr // lanes
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for i in range(mr):  # C: mr rows of `vec` vector registers
        for j in range(vec):
            ax.add_patch(Rectangle((2 + j * lanes, -i - 1), lanes, 0.8, fc="#90CAF9", ec="#1565C0"))
    for j in range(vec):  # B's row: `vec` vectors
        ax.add_patch(Rectangle((2 + j * lanes, 1), lanes, 0.8, fc="#A5D6A7", ec="#2E7D32"))
    for i in range(mr):  # A's column: mr values, each broadcast in turn
        ax.add_patch(Rectangle((0, -i - 1), 1, 0.8, fc="#FFE0B2" if i else "#FFB74D", ec="#EF6C00"))
    ax.annotate("", (2, -0.6), (1.1, -0.6), arrowprops=dict(arrowstyle="->"))
    ax.text(2 + nr / 2, 2.2, f"one row of packed B: {vec} vector loads of {lanes} floats",
            ha="center", fontsize=8)
    ax.text(-0.2, -mr - 0.5, f"A's column: {mr} values, one broadcast at a time (orange)",
            fontsize=8, va="top")
    ax.text(-0.2, -mr - 1.5, f"C's tile: {mr} rows × {nr} floats = {mr * vec} accumulator "
            f"registers; each step does {mr * vec} FMAs", fontsize=8, va="top")
    ax.set(xlim=(-0.5, nr + 3), ylim=(-mr - 2.6, 3), aspect="auto")
    ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def l1_sets(sets: int, ways: int, line: int, stride: int, lines: int) -> list[list[int]]:
    """Which of ``lines`` cache lines, fetched ``stride`` bytes apart, an LRU L1 of ``sets``
    sets of ``ways`` lines still holds at the end: ``held[set]`` lists the indices of the
    lines left in each set (a line's set: its address // ``line`` modulo ``sets``)."""
    held: list[list[int]] = [[] for _ in range(sets)]
    for n in range(lines):
        s = (n * stride // line) % sets
        if len(held[s]) == ways:
            held[s].pop(0)  # the least recently used line of the set is evicted
        held[s].append(n)
    return held


def draw_l1_sets(sets: int, ways: int, line: int, row_bytes: int, lines: int = 1024) -> None:
    """The L1's sets after naive's walk down a column of B (``lines`` lines ``row_bytes``
    apart) above a walk along a row (consecutive lines): each bordered cell a line slot,
    filled when it still holds a line of the walk."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(7.5, 3.4))
    for ax, stride, title in (
            (axes[0], row_bytes, f"down a column of B: {lines} lines {row_bytes // 1024} KiB "
                                 "apart"),
            (axes[1], line, f"along a row of B: {lines // 16} consecutive lines")):
        n = lines if stride == row_bytes else lines // 16
        held = l1_sets(sets, ways, line, stride, n)
        grid = np.zeros((ways, sets))
        for s_, kept in enumerate(held):
            grid[: len(kept), s_] = 1
        ax.pcolormesh(np.arange(sets + 1), np.arange(ways + 1), grid, cmap="Blues",
                      vmin=0, vmax=1.2, edgecolors="#B0BEC5", linewidth=0.6)
        ax.set_aspect("equal")
        ax.set_xticks([0.5, sets - 0.5], ["set 0", f"set {sets - 1}"], fontsize=8)
        ax.set_yticks([0.5, ways - 0.5], ["way 1", f"way {ways}"], fontsize=8)
        ax.tick_params(length=0)
        kept = sum(map(len, held))
        ax.set_title(f"{title}: {kept} of {n} lines stay in L1", fontsize=9)
        if kept < sets:  # the column: every line fell into one set
            used = next(i for i, k in enumerate(held) if k)
            ax.annotate(f"the {kept} lines kept, all in set {used}; the other "
                        f"{n - kept} were evicted", (used + 1, ways / 2),
                        xytext=(used + 6, ways / 2), va="center", fontsize=8.5,
                        bbox=dict(fc="white", ec="none", pad=1),
                        arrowprops=dict(arrowstyle="->", lw=1.2))
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def step_points(counted: dict, table: dict) -> list:
    """Both training steps, eager and captured, as roofline points: the counts of one steady
    step, its median time, the bytes of its largest call as the footprint."""
    from minidl_book import roofline as rl

    return [rl.place(f"{w.upper()} step, {how}", c, table[w][f"flex {how}"]["median"], big)
            for w, (c, _, big) in counted.items() for how in ("eager", "captured")]


def peer_summary(report: dict) -> str:
    """Three lines from a peer report: what each side's kernels are, and its threads."""
    def pool(p: dict) -> str:
        what = " ".join(str(v) for v in (p["library"], p["version"]) if v)
        owner = p.get("owner", "").split("/")[0].removesuffix(".libs")  # whose copy
        what = f"{owner}'s {what}" if owner and "system" not in owner else what
        core = f"{p['core_type']}, " if p["core_type"] else ""
        return f"{what} ({core}{p['threads']} thread{'s' if p['threads'] != 1 else ''})"

    pools = ", ".join(pool(p) for p in report["blas"])
    return "\n".join([
        f"minidl: numba kernels compiled for {report['numba_cpu']} ({report['numba_isa']}), "
        f"{report['numba_threads']} thread",
        f"torch: {report['torch_blas']}, {report.get('torch_capability', '?')} kernels, "
        f"{report['torch_threads']} thread",
        f"thread pools loaded: {pools}"])


def show_sweep(sweep: dict, marks: dict, title: str) -> None:
    """The sweep's figure (:func:`draw_sweep`), its title ending with the machine's load
    average and core count: the ratios below one are the loss, loaded or not."""
    import os

    draw_sweep(sweep, marks, f"{title}, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def share(fraction: float) -> str:
    """A share as a percentage with two significant digits below 1 % (0.05 %, not 0 %)."""
    return f"{fraction:.0%}" if fraction >= 0.01 else f"{fraction * 100:.2g} %"


class RooflineChart:
    """One roofline figure that grows through the chapter: each :meth:`add` puts a section's
    measured points under the roofs, :meth:`show` draws every point so far (the newest in
    colour, labelled with the share of its own roof they reached, the earlier ones grey) and
    arrows from one variant of a workload to another (op by op → fused, eager → captured)."""

    COLORS = ("#1565C0", "#EF6C00", "#2E7D32", "#6A1B9A", "#C62828", "#00838F", "#5D4037")

    def __init__(self, roof):
        self.roof = roof
        self.entries: list[tuple] = []  # (point, section)
        self.arrows: list[tuple[str, str, int]] = []
        self.section = 0

    def add(self, points, arrows=()) -> None:
        """Place ``points`` (:class:`.roofline.Point`) as a new section; ``arrows``: pairs of
        point names to join."""
        self.section += 1
        self.entries += [(p, self.section) for p in points]
        self.arrows += [(a, b, self.section) for a, b in arrows]

    @property
    def points(self) -> list:
        return [p for p, _ in self.entries]

    def __getitem__(self, name: str):
        return next(p for p in self.points if p.name == name)

    def show(self, title: str = "one thread, float32", keep: tuple[str, ...] | None = None,
             notes: dict[str, str] | None = None,
             roofs: dict[str, float] | None = None, note: str = "") -> None:
        """Draw the chart; ``keep``: the only earlier points to draw (default: all of them);
        ``notes``: a new point's words in its label's parentheses in place of its share
        ("0.51 ms" for a point whose flops are not its own); ``roofs``: more compute roofs
        drawn dashed, GFLOP/s by name ("float64 FMA peak"); ``note``: a second title line.

        Each memory-bound point gets its own roof drawn, a short segment of the slope at the
        bandwidth measured at its working set, with a dotted line up to it: the roof it is
        judged against (:attr:`drawn_roofs`, GFLOP/s by name). Labels go to the first spot
        around their point that overlaps no other label or point. A new point whose label
        finds no such spot gets a number there (or only its colour) and its words in the
        legend (:attr:`tagged`); an earlier, grey point's label is left out
        (:attr:`dropped`). So :attr:`overlaps` (labels drawn over something) is 0 by
        construction."""
        import matplotlib.pyplot as plt

        from minidl_book import roofline as rl

        entries = [(p, s) for p, s in self.entries
                   if keep is None or s == self.section or p.name in keep]
        shown = {p.name for p, _ in entries}
        fig, ax = plt.subplots(figsize=(7.5, 4.6))
        lo, hi = rl.draw_roofs(ax, self.roof, [p for p, _ in entries])
        low = min(p.gflops for p, _ in entries)
        ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(low / 3, self.roof.peak * 2),
               xlabel="arithmetic intensity (flops / byte)", ylabel="GFLOP/s (one thread)",
               title=title + "; (%) = share of its own roof" + (f"\n{note}" if note else ""))
        new = [p for p, s in entries if s == self.section]
        self.drawn_roofs = {}
        drawn: list = []
        ax.plot([], [], "-", color="#78909C", lw=2.2,
                label="a point's own roof (the bandwidth at its working set)")
        for point, section in entries:
            fresh = section == self.section
            color = self.COLORS[new.index(point) % len(self.COLORS)] if fresh else "#9E9E9E"
            # a point on top of one already drawn (i-k-j on tiled) is a ring around it
            ring = any(abs(np.log10(point.intensity / q.intensity)) < 0.04
                       and abs(np.log10(point.gflops / q.gflops)) < 0.04 for q in drawn)
            ax.plot(point.intensity, point.gflops, "o", ms=(12 if ring else 7) if fresh else 5,
                    color=color, mfc="none" if ring else color, mew=2 if ring else 1, zorder=3)
            drawn.append(point)
            own = self.roof.own_roof(point)
            self.drawn_roofs[point.name] = own
            if own < self.roof.peak:  # memory-bound at its footprint: draw the roof it meets
                bw = self.roof.own_bandwidth(point)
                xs = np.geomspace(point.intensity / 1.8,
                                  min(point.intensity * 1.8, self.roof.peak / bw), 20)
                ax.plot(xs, xs * bw, "-", color=color, lw=2.2 if fresh else 1.2,
                        alpha=0.8 if fresh else 0.5)
                ax.plot([point.intensity] * 2, [point.gflops, own], ":", color=color, lw=0.9)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        taken = []  # display boxes of the dots (rings included) and of the labels placed
        dots = []  # display centres of the dots
        for line in ax.lines:
            if line.get_marker() == "o":
                (x, y), = ax.transData.transform(line.get_xydata())
                r = line.get_markersize() * fig.dpi / 72 / 2 + 1
                taken.append((x - r, y - r, x + r, y + r))
                dots.append((x, y))

        (_, y_peak), = ax.transData.transform([(lo, self.roof.peak)])
        box = ax.get_window_extent(renderer)  # the compute roof's line is taken too
        taken.append((box.x0, y_peak - 2.0, box.x1, y_peak + 2.0))
        for name, gflops in (roofs or {}).items():
            ax.axhline(gflops, color="#D32F2F", ls="--", lw=1.2)
            ann = ax.annotate(name, (lo, gflops), xytext=(4, -11), textcoords="offset points",
                              ha="left", fontsize=7.5, color="#D32F2F")
            (_, y), = ax.transData.transform([(lo, gflops)])
            taken.append((box.x0, y - 2.0, box.x1, y + 2.0))
            b = ann.get_window_extent(renderer)
            taken.append((b.x0, b.y0, b.x1, b.y1))
        for a, b, _ in self.arrows:  # an arrow's shaft is taken too, in short pieces
            if a in shown and b in shown:
                (xa, ya), (xb, yb) = ax.transData.transform(
                    [(self[a].intensity, self[a].gflops), (self[b].intensity, self[b].gflops)])
                for t in np.linspace(0.02, 0.98, 49):  # the whole shaft, ends too
                    x, y = xa + t * (xb - xa), ya + t * (yb - ya)
                    taken.append((x - 1.5, y - 1.5, x + 1.5, y + 1.5))

        def gap(box, x, y) -> float:  # display distance from a dot's centre to a box
            dx = max(box.x0 - x, 0.0, x - box.x1)
            dy = max(box.y0 - y, 0.0, y - box.y1)
            return float(np.hypot(dx, dy))

        def nearest_own(box, point) -> bool:
            """No other dot lies nearer the label than its own (a label under another
            dot reads as that dot's)."""
            (x, y), = ax.transData.transform([(point.intensity, point.gflops)])
            own = gap(box, x, y)
            return all(gap(box, dx, dy) > own for dx, dy in dots
                       if np.hypot(dx - x, dy - y) > 1.0)
        self.overlaps = 0
        self.tagged: list[str] = []  # labels moved to the legend behind a number
        self.dropped: list[str] = []  # earlier (grey) points whose label found no room
        # offsets (points) and alignments tried in turn until the label overlaps nothing:
        # the near ring first, then rings further out at eight angles
        spots = [((7, -10), "left"), ((7, 5), "left"), ((-7, -10), "right"),
                 ((-7, 5), "right"), ((0, 9), "center"), ((0, -17), "center"),
                 ((9, -20), "left"), ((-9, -20), "right"), ((9, 15), "left"),
                 ((-9, 15), "right"), ((0, 20), "center"), ((0, -28), "center"),
                 ((12, -30), "left"), ((-12, -30), "right"), ((12, 25), "left"),
                 ((-12, 25), "right")]
        for r in (34, 46, 60):
            for deg in range(0, 360, 45):
                dx, dy = r * np.cos(np.radians(deg)), r * np.sin(np.radians(deg))
                ha = "left" if dx > 1 else ("right" if dx < -1 else "center")
                spots.append(((round(dx), round(dy) - 3), ha))

        def lower_twin(entry) -> bool:
            p = entry[0]
            return any(q is not p and abs(np.log10(p.intensity / q.intensity)) < 0.05
                       and p.gflops < q.gflops for q, _ in entries)

        inside = ax.get_window_extent(renderer)

        def put(text, point, order, size, color):
            """The first spot of ``order`` where ``text`` overlaps nothing taken, or None."""
            for xy, ha in order:
                ann = ax.annotate(text, (point.intensity, point.gflops), xytext=xy,
                                  textcoords="offset points", ha=ha, va="baseline",
                                  fontsize=size, color=color)
                box = ann.get_window_extent(renderer)
                clear = (box.x0 >= inside.x0 and box.x1 <= inside.x1
                         and box.y0 >= inside.y0 and box.y1 <= inside.y1
                         and not any(box.x0 < x1 and x0 < box.x1 and box.y0 < y1
                                     and y0 < box.y1 for x0, y0, x1, y1 in taken)
                         and nearest_own(box, point))
                if clear:
                    taken.append((box.x0, box.y0, box.x1, box.y1))
                    if np.hypot(*xy) > 14:  # a label off the first ring: a leader to its dot
                        (x, y), = ax.transData.transform([(point.intensity, point.gflops)])
                        near = (min(max(x, box.x0), box.x1), min(max(y, box.y0), box.y1))
                        near = tuple(ax.transData.inverted().transform([near])[0])
                        ax.annotate("", (point.intensity, point.gflops), xytext=near,
                                    textcoords="data",
                                    arrowprops=dict(arrowstyle="-", lw=0.6, color=color,
                                                    shrinkA=1, shrinkB=4))
                    return ann
                ann.remove()
            return None

        # the new points label first (an earlier, grey point's label gives way), upper
        # twins before lower ones
        for point, section in sorted(entries, key=lambda e: (e[1] != self.section,
                                                             lower_twin(e))):
            fresh = section == self.section
            said = (notes or {}).get(point.name) or share(self.roof.own_fraction(point))
            label = f"{point.name} ({said})" if fresh else point.name
            # a point with another straight above or below it (eager and captured) is
            # labelled beside it, at its own height, else on its own side (below the lower
            # one, above the upper one), so the two labels read in the dots' order
            twins = [q for q, _ in entries if q is not point
                     and abs(np.log10(point.intensity / q.intensity)) < 0.05]
            order = spots
            if twins:
                lower = all(point.gflops < q.gflops for q in twins)
                upper = all(point.gflops > q.gflops for q in twins)
                if lower or upper:
                    beside = [((9, -3), "left")]  # then its own side, nearest first
                    order = beside + sorted(spots, key=lambda s: (s[0][1] >= 0) if lower
                                            else (s[0][1] < 0))
            size, color = (7.5, "black") if fresh else (6.5, "#616161")
            if put(label, point, order, size, color):
                continue
            if not fresh:  # an earlier point is context: its label may go
                self.dropped.append(point.name)
                continue
            # no room for the words: a number by the dot, the words in the legend
            tag = str(len(self.tagged) + 1)
            if put(tag, point, order, size, color):
                self.tagged.append(point.name)
                ax.plot([], [], "o", ms=5, color=self.COLORS[new.index(point)
                                                             % len(self.COLORS)],
                        label=f"{tag}: {label}")
            else:  # not even a number fits: the dot's colour names it in the legend
                self.tagged.append(point.name)
                ax.plot([], [], "o", ms=5, color=self.COLORS[new.index(point)
                                                             % len(self.COLORS)],
                        label=label)
        for a, b, section in self.arrows:
            if a not in shown or b not in shown:
                continue
            pa, pb = self[a], self[b]
            ax.annotate("", (pb.intensity, pb.gflops), (pa.intensity, pa.gflops),
                        arrowprops=dict(arrowstyle="->", lw=1.1, shrinkA=5, shrinkB=5,
                                        color="black" if section == self.section else "#BDBDBD"))
        ax.legend(fontsize=7, loc="lower right")
        plt.show()
        plt.close(fig)


def gemm_table(gemm: dict, peak: float, n: int = 1024, against: str = "OpenBLAS (NumPy's a @ b)"):
    """The peers' gemm of ``n`` (:func:`head_to_head`'s best round, CPU time per product): ms,
    GFLOP/s, share of the FMA peak, and ``against``'s time over each one's."""
    from minidl.debug import Table

    flops = 2.0 * n**3
    t = {k: v["best"] for k, v in gemm.items()}
    return Table([f"gemm {n}, one thread", "best ms", "GFLOP/s", "of FMA peak",
                  "× OpenBLAS's speed"],
                 [[k, f"{s * 1e3:.1f}", f"{flops / s / 1e9:.0f}", f"{flops / s / 1e9 / peak:.0%}",
                   f"{t[against] / s:.2f}"] for k, s in t.items()])


def unary_table(unary: dict):
    """sin, cos and GELU on 1M float32 (median ms), Flex's rows with torch's time over Flex's."""
    from minidl.debug import Table

    t = {k: v["median"] for k, v in unary.items()}
    rows = []
    for k, s in t.items():
        ratio = f"{t['torch ' + k.split(' ', 1)[1]] / s:.2f}" if k.startswith("Flex") else ""
        rows.append([k, f"{s * 1e3:.2f}", ratio])
    return Table(["1M float32", "ms", "torch's time / Flex's"], rows)


def draw_layers(own: dict[str, dict[str, float]], layers: list[str]) -> None:
    """Where a tiny op's time goes: one stacked bar per device, a segment per layer (what
    entering one layer higher adds), in µs."""
    import matplotlib.pyplot as plt

    colors = dict(zip(layers, ("#1565C0", "#42A5F5", "#EF6C00", "#9E9E9E", "#2E7D32")))
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    devices = list(own)
    for row, device in enumerate(devices):
        left = 0.0
        for layer in reversed(layers):  # the kernel first, the Tensor operator last
            us = own[device][layer] * 1e6
            ax.barh(row, us, left=left, color=colors[layer], edgecolor="white",
                    label=layer if row == 0 else None)
            if us > 0.25:
                ax.text(left + us / 2, row, f"{us:.2f}", ha="center", va="center", fontsize=7,
                        color="white")
            left += us
        ax.text(left + 0.05, row, f"{left:.2f} µs", va="center", fontsize=8)
    ax.set_yticks(range(len(devices)), devices)
    ax.invert_yaxis()
    ax.set(xlabel="µs per 4 × 4 add (CPU time, best of 7 rounds)", title="where a 4 × 4 add's time goes")
    ax.set_xlim(0, ax.get_xlim()[1] * 1.12)
    ax.legend(fontsize=7, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.45), frameon=False)
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def draw_steps(table: dict[str, dict], contenders=CONTENDERS) -> None:
    """ms per training step (median CPU time, one thread) per contender, one panel per workload,
    each bar labelled with its ratio to the fastest torch contender."""
    import matplotlib.pyplot as plt

    def color(c: str) -> str:
        return "#546E7A" if c.startswith("torch") else ("#2E7D32" if "captured" in c else "#EF6C00")

    fig, axes = plt.subplots(1, len(table), figsize=(7.5, 2.9), sharey=True)
    for ax, (workload, t) in zip(np.atleast_1d(axes), table.items()):
        names = [c for c in contenders if c in t]
        ms = [t[c]["median"] * 1e3 for c in names]
        ax.barh(range(len(names)), ms, color=[color(c) for c in names])
        for i, c in enumerate(names):
            ax.text(ms[i], i, f" {t[c]['ratio']:.2f}×", va="center", fontsize=7.5)
        ax.axvline(t["best torch"]["median"] * 1e3, color="black", lw=0.8, ls=":")
        ax.set_yticks(range(len(names)), names)
        ax.set(xlabel="ms per step", title=f"{workload.upper()} (× torch at its best)")
        ax.set_xlim(0, max(ms) * 1.3)
    np.atleast_1d(axes)[0].invert_yaxis()
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def parallel_sweep(sizes, rounds: int = 5, budget: float = 0.03) -> dict[int, list[float]]:
    """Serial over parallel wall time of ``relu(x*a+b)`` (Flex's two kernels, every numba
    thread) per size: in each of ``rounds`` rounds each kernel runs a block of repeats (its
    best call kept), then a pause; a size's rounds give one ratio each."""

    from minidl.backends.flex.kernels import unary

    def best_call(kernel, *args) -> float:
        """The best of a block: at least 5 calls, more until ``budget`` seconds (at most 400),
        so a call that waited for a core another process held cannot be the block's time."""
        kernel(*args)
        best, reps, start = float("inf"), 0, time.perf_counter()
        while reps < 5 or (time.perf_counter() - start < budget and reps < 400):
            t0 = time.perf_counter()
            kernel(*args)
            best, reps = min(best, time.perf_counter() - t0), reps + 1
        return best

    out: dict[int, list[float]] = {}
    for n in sizes:
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        o1, o2, a, b = np.empty_like(x), np.empty_like(x), np.float32(1.5), np.float32(-0.25)
        out[n] = []
        for _ in range(rounds):
            s = best_call(unary.relu_affine_serial, x, a, b, o1)
            p = best_call(unary.relu_affine_parallel, x, a, b, o2)
            out[n].append(s / p)
            time.sleep(0.01)
    return out


def crossover(sweep: dict[int, list[float]], margin: float = 1.2) -> int | None:
    """The smallest size from which the parallel kernel wins by at least ``margin`` (the
    median of its rounds) at every larger size of the sweep, or None."""
    import statistics

    sizes = sorted(sweep)
    for i, n in enumerate(sizes):
        if all(statistics.median(sweep[m]) >= margin for m in sizes[i:]):
            return n
    return None


def draw_sweep(sweep: dict[int, list[float]], marks: dict[str, int], title: str) -> None:
    """The median serial/parallel ratio per size, a band from the second-lowest to the
    second-highest round, and vertical lines at ``marks`` (name: size)."""
    import matplotlib.pyplot as plt

    sizes = sorted(sweep)
    rs = [sorted(sweep[n]) for n in sizes]
    med = [float(np.median(r)) for r in rs]
    k = 1 if len(rs[0]) >= 4 else 0
    fig, ax = plt.subplots(figsize=(7, 2.8))
    ax.fill_between(sizes, [r[k] for r in rs], [r[-1 - k] for r in rs], color="#90CAF9",
                    alpha=0.5, lw=0, label="middle rounds")
    ax.plot(sizes, med, "o-", color="#1565C0", ms=4, label="median of rounds")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.text(sizes[0], 1.03, "parallel faster above", fontsize=7, va="bottom")
    ax.text(sizes[0], 0.97, "serial faster below", fontsize=7, va="top")
    for (name, n), ls in zip(marks.items(), ("--", ":")):
        ax.axvline(n, color="gray", ls=ls, label=name)
    ax.set(xscale="log", yscale="log", xlabel="elements", ylabel="serial time / parallel",
           title=title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    plt.show()
    plt.close(fig)


#: the probe's first kernel call, timed alone: it pays numba's start-up in the process
STARTUP_STEP = "first kernel call, 4 values filled (numba starts)"
CACHE_PROBE = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
from minidl.backends.flex.kernels import copy, norm
times = {"import numba and the kernels": time.perf_counter() - t0}
small = np.ones((64, 30), np.float32)  # 1 920 elements: the serial kernel
tiny_copy = lambda: copy.full((4,), 1.0, np.float32)
for name, fn in [(STARTUP_STEP, tiny_copy),
                 ("layer_norm, first call", lambda: norm.layer_norm(small)),
                 ("layer_norm, second call", lambda: norm.layer_norm(small))]:
    t0 = time.perf_counter(); fn(); times[name] = time.perf_counter() - t0
print(json.dumps(times))
"""


def cache_probe(warm_runs: int = 3) -> tuple[dict, dict]:
    """Fresh processes sharing an empty numba cache folder: the first compiles a tiny copy and
    the serial layer_norm, ``warm_runs`` more load them; ``(cold, warm)`` seconds per step,
    warm the median over its runs."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory(prefix="numba_cache_") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        env.pop("MINIDL_DEBUG", None)
        probe = CACHE_PROBE.replace("STARTUP_STEP", repr(STARTUP_STEP))
        runs = [json.loads(subprocess.run([sys.executable, "-c", probe], env=env,
                                          capture_output=True, text=True, check=True).stdout)
                for _ in range(1 + warm_runs)]
    cold, warm = runs[0], runs[1:]
    return cold, {k: statistics.median(r[k] for r in warm) for k in cold}


def cache_table(cold: dict, warm: dict):
    """The probe's steps, the compiling process beside the loading ones (median)."""
    from minidl.debug import Table

    return Table(["step", "empty cache (compiles)", "filled cache (loads)"],
                 [[k, duration(cold[k]), duration(warm[k])] for k in cold])


def duration(seconds: float) -> str:
    """``1.02 s``, ``4.1 ms``, ``12 µs``: a time in the unit that reads best."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def draw_schematic() -> None:
    """The roofline model drawn, not measured: a compute roof, a memory roof, the ridge where
    they meet, and one point under each (a dotted line up to the roof that caps it)."""
    import matplotlib.pyplot as plt

    peak, bw = 100.0, 25.0  # GFLOP/s and GB/s: round numbers, not this machine's
    ridge = peak / bw
    xs = np.geomspace(1 / 16, 64, 200)
    fig, ax = plt.subplots(figsize=(7.5, 3.3))
    ax.plot(xs, np.minimum(peak, xs * bw), color="#37474F", lw=2)
    ax.text(0.09, 0.09 * bw * 1.6, "memory roof: intensity × bandwidth", rotation=33,
            fontsize=9, color="#37474F")
    ax.text(6, peak * 1.18, "compute roof: the FMA peak", fontsize=9, color="#D32F2F")
    ax.plot([ridge, 64], [peak, peak], color="#D32F2F", lw=2)
    ax.axvline(ridge, color="#9E9E9E", ls="--", lw=1)
    ax.text(ridge * 1.08, 1.2, "ridge = peak / bandwidth", fontsize=9, color="#616161")
    for x, y, name in ((0.5, 5.0, "memory-bound:\nmore flops per byte\nwould lift its roof"),
                       (16.0, 40.0, "compute-bound:\nonly busier FMA units\nhelp")):
        roof = min(peak, x * bw)
        ax.plot(x, y, "o", ms=8, color="#1565C0")
        ax.plot([x, x], [y, roof], ":", color="#1565C0")
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(8, -30), fontsize=9)
    ax.set(xscale="log", yscale="log", xlim=(1 / 16, 64), ylim=(0.8, peak * 2.2),
           xlabel="arithmetic intensity I = flops / bytes", ylabel="flops per second",
           xticks=[], yticks=[], title="the roofline model (a sketch; both axes logarithmic)")
    ax.minorticks_off()
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def source_flops(*functions) -> int:
    """Floating-point operations per element in ``functions``' Python source (numba's
    ``py_func`` for a dispatcher): each ``+``, ``-``, ``*``, ``/`` one flop, each ``fma(...)``
    call two (its own operands' operations counted too); operations inside ``np.int32``,
    ``_as_int`` and ``_as_float`` (integer work on a float's bits) are not flops."""
    import ast
    import inspect
    import textwrap

    bits = ("int32", "_as_int", "_as_float")
    count = 0
    for fn in functions:
        tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(fn, "py_func", fn))))
        skip = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in bits:
                    skip |= {id(x) for x in ast.walk(node) if x is not node}
                count += 2 * (name == "fma")
        count += sum(isinstance(n, ast.BinOp) and id(n) not in skip
                     and isinstance(n.op, ast.Add | ast.Sub | ast.Mult | ast.Div)
                     for n in ast.walk(tree))
    return count
