"""The book's one cost model: a roofline measured on the machine at hand.

A kernel's speed is bounded twice. It cannot do arithmetic faster than the cores' **peak**
(:func:`minidl_book.peak.fma_peak`), and it cannot move bytes faster than the memory level
they come from allows. For a workload doing ``flops`` operations on ``bytes`` of unavoidable
traffic, its **arithmetic intensity** ``I = flops / bytes`` turns the second bound into
flops: ``attainable = min(peak, I * bandwidth)``. On a log-log plot of GFLOP/s against
intensity the two bounds are a sloped line (one per memory level) and a flat one, the roof.

This module measures the bandwidths with STREAM-style numba kernels (copy and triad, one
thread, at array sizes that live in L2, in L3 and in DRAM: the cache sizes are read from
``/sys/devices/system/cpu/cpu0/cache``), counts the flops and bytes of the workloads the book
times, places measured timings under the roofs and draws the picture. It mirrors no burn
piece: burn's book has no cost model, its benchmarks print times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

import numba
import numpy as np

_CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
#: Used where sysfs says nothing (not Linux): a common x86 core of recent years.
DEFAULT_CACHES = {"L1d": 32 << 10, "L2": 512 << 10, "L3": 32 << 20}


# ----- counting: flops and bytes --------------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    """What a workload must do: floating-point operations and bytes moved to or from memory."""

    flops: float
    bytes: float

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, flops per byte."""
        return self.flops / self.bytes

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.flops + other.flops, self.bytes + other.bytes)


def gemm_counts(m: int, k: int, n: int, itemsize: int = 4) -> Counts:
    """``[m, k] @ [k, n]``: a multiply and an add per term, each operand read once, C written."""
    return Counts(2.0 * m * n * k, float(m * k + k * n + m * n) * itemsize)


def conv2d_counts(batch: int, c_in: int, h: int, w: int, c_out: int, kh: int, kw: int,
                  stride: int = 1, padding: int = 0, itemsize: int = 4) -> Counts:
    """A direct 2-D convolution: ``2 * c_in * kh * kw`` flops per output value; the input,
    the weight and the output each cross memory once."""
    ho = (h + 2 * padding - kh) // stride + 1
    wo = (w + 2 * padding - kw) // stride + 1
    outputs = batch * c_out * ho * wo
    moved = batch * c_in * h * w + c_out * c_in * kh * kw + outputs
    return Counts(2.0 * outputs * c_in * kh * kw, float(moved) * itemsize)


#: layer_norm per element: 1 add (mean), sub + mul + add (variance), sub, mul, mul, add (output).
LAYER_NORM_FLOPS_PER_ELEMENT = 8


def layer_norm_counts(rows: int, d: int, itemsize: int = 4) -> Counts:
    """layer_norm over the last dim of ``[rows, d]`` with gamma and beta: a row fits in L1,
    so memory sees x read once, y written once, and gamma and beta."""
    return Counts(float(LAYER_NORM_FLOPS_PER_ELEMENT * rows * d), float(2 * rows * d + 2 * d) * itemsize)


def elementwise_counts(n: int, arities: Sequence[int], fused: bool, itemsize: int = 4) -> Counts:
    """A chain of element-wise ops over ``n`` elements, one flop per op and element.

    ``arities`` holds each op's number of array inputs. Run op by op, every op reads its
    inputs and writes its output; fused into one kernel, the chain reads each distinct input
    once (the chain's own input, whatever its arity says) and writes one result."""
    flops = float(len(arities) * n)
    if fused:
        return Counts(flops, 2.0 * n * itemsize)
    return Counts(flops, float(sum(a + 1 for a in arities) * n * itemsize))


# ----- counting the ops of a step, from the op timer's record --------------------------------


def _numel(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _conv_macs_per_output(weight: np.ndarray) -> int:
    return _numel(weight.shape[1:])  # c_in / groups * kh * kw


#: Ops whose flops are not one per element: (args, output) -> flops.
PRODUCT_FLOPS: dict[str, Callable[[tuple, Any], float]] = {
    "float_matmul": lambda a, out: 2.0 * out.size * a[0].shape[-1],
    "linear": lambda a, out: 2.0 * out.size * a[0].shape[-1],
    "linear_x_backward": lambda a, out: 2.0 * out.size * a[1].shape[-1],
    "linear_weight_backward": lambda a, out: 2.0 * out.size * (a[0].size // a[0].shape[-1]),
    "conv2d": lambda a, out: 2.0 * out.size * _conv_macs_per_output(a[1]),
    "conv2d_x_backward": lambda a, out: 2.0 * a[2].size * _conv_macs_per_output(a[1]),
    "conv2d_weight_backward": lambda a, out: 2.0 * a[2].size * _conv_macs_per_output(a[1]),
}


def _arrays(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays(v)]
    return []


def op_counts(name: str, args: tuple, kwargs: Mapping[str, Any], out: Any) -> Counts:
    """Flops and bytes of one backend call, as an eager backend runs it: every array argument
    read, every array result written. Products (matmul, linear, conv2d and their backward
    ops) count ``2 * multiply-adds``; every other op one flop per element of its largest
    array (a reduction's input, an element-wise op's output)."""
    arrays_in = _arrays(list(args) + list(kwargs.values()))
    arrays_out = _arrays(out)
    moved = sum(a.nbytes for a in arrays_in + arrays_out)
    if name in PRODUCT_FLOPS:
        flops = PRODUCT_FLOPS[name](args, arrays_out[0])
    else:
        flops = float(max((a.size for a in arrays_in + arrays_out), default=0))
    return Counts(flops, float(moved))


def count_record(record: Sequence[tuple[Callable, tuple, dict]]) -> tuple[Counts, int]:
    """Total counts of the outermost backend calls kept by ``BackendOpTimer(record=[])``, and
    their number. Each call is run once more to see its result (the ops are pure)."""
    total = Counts(0.0, 0.0)
    for fn, args, kwargs in record:
        total = total + op_counts(fn.__name__, args, kwargs, fn(*args, **kwargs))
    return total, len(record)


# ----- measuring: bandwidth -----------------------------------------------------------------


def cache_sizes(root: Path = _CACHE_DIR) -> dict[str, int]:
    """Data cache sizes in bytes by level (``L1d``, ``L2``, ``L3``), read from sysfs (cpu0's
    view: a shared L3 is reported whole); :data:`DEFAULT_CACHES` for what sysfs lacks."""
    found: dict[str, int] = {}
    for index in sorted(root.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        nbytes = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        found["L1d" if level == "1" else f"L{level}"] = nbytes
    return {**DEFAULT_CACHES, **found}


@numba.njit(cache=True)
def stream_copy(src: np.ndarray, dst: np.ndarray) -> None:  # pragma: no cover - numba
    """STREAM copy: ``dst[i] = src[i]`` (8 bytes per float32 element, no flops)."""
    for i in range(src.size):
        dst[i] = src[i]


@numba.njit(cache=True)
def stream_triad(a: np.ndarray, b: np.ndarray, c: np.ndarray, s: np.float32) -> None:  # pragma: no cover
    """STREAM triad: ``a[i] = b[i] + s * c[i]`` (12 bytes and 2 flops per float32 element)."""
    for i in range(a.size):
        a[i] = b[i] + s * c[i]


def _best_seconds(fn: Callable[[], object], min_seconds: float, repeats: int) -> float:
    """Best CPU time per call of ``fn`` over ``repeats`` timings of enough calls to last
    ``min_seconds``."""
    fn()
    t0 = time.thread_time()
    fn()
    one = max(time.thread_time() - t0, 1e-7)
    number = max(1, int(min_seconds / one))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        for _ in range(number):
            fn()
        best = min(best, (time.thread_time() - t0) / number)
    return best


def stream_bandwidth(total_bytes: int, kernel: str = "triad", repeats: int = 5,
                     min_seconds: float = 0.01) -> float:
    """GB/s of one thread running a STREAM kernel whose arrays hold ``total_bytes`` together
    (bytes counted STREAM's way: each element read or written once, no write-allocate)."""
    arrays = 3 if kernel == "triad" else 2
    n = max(1024, total_bytes // (4 * arrays))
    a, b, c = (np.full(n, v, np.float32) for v in (0.0, 1.0, 2.0))
    s = np.float32(3.0)
    run = (lambda: stream_triad(a, b, c, s)) if kernel == "triad" else (lambda: stream_copy(b, a))
    seconds = _best_seconds(run, min_seconds, repeats)
    return arrays * n * 4 / seconds / 1e9


#: The largest footprint measured as L3's (unless four times L2 is larger). A virtual machine
#: may report its host's whole L3 (480 MiB on one CI machine) while its share is far smaller:
#: there one core streamed ~29 GB/s from 4 to 32 MiB and DRAM's ~16 from 64 MiB on, so a
#: quarter of the reported L3 (120 MiB) measured DRAM twice and called it L3.
L3_FOOTPRINT_MAX = 16 << 20


def level_footprints(caches: Mapping[str, int] | None = None) -> dict[str, int]:
    """Array footprints (bytes, all arrays of a kernel together) that live in each level:
    half of one core's L2; a quarter of L3 but at least four times L2 (and at most half of
    L3 and :data:`L3_FOOTPRINT_MAX`); eight times L3 (at least 128 MiB) for DRAM, so no part
    of it stays in a cache, but at most 2 GiB: a virtual machine may report a host's whole L3
    (hundreds of MiB), and 2 GiB is still past :data:`SPILL` times such an L3 while the book's
    arrays stay a few GiB."""
    caches = cache_sizes() if caches is None else caches
    l2, l3 = caches["L2"], caches["L3"]
    l3_footprint = min(max(l3 // 4, 4 * l2), l3 // 2, max(L3_FOOTPRINT_MAX, 4 * l2))
    return {"L2": l2 // 2, "L3": l3_footprint, "DRAM": min(max(8 * l3, 128 << 20), 2 << 30)}


def bandwidth_roofs(caches: Mapping[str, int] | None = None, repeats: int = 5) -> dict[str, dict[str, float]]:
    """``{level: {"copy": GB/s, "triad": GB/s, "best": the faster, "bytes": footprint}}`` for
    L2, L3 and DRAM. A level's roof is its ``best``: a roof bounds every kernel from above."""
    out = {}
    for level, footprint in level_footprints(caches).items():
        out[level] = {kernel: stream_bandwidth(footprint, kernel, repeats) for kernel in ("copy", "triad")}
        out[level]["best"] = max(out[level]["copy"], out[level]["triad"])
        out[level]["bytes"] = float(footprint)
    return out


#: Two levels "differ" when the nearer one streams at least this much faster.
LEVELS_DIFFER = 1.15


def level_gaps(bandwidths: Mapping[str, float]) -> dict[str, float]:
    """Each level's bandwidth over the next farther one's (``"L2/L3"``, ``"L3/DRAM"``): the
    check that the measured levels are different memories (:data:`LEVELS_DIFFER`)."""
    names = [lvl for lvl in ("L2", "L3", "DRAM") if lvl in bandwidths]
    return {f"{a}/{b}": bandwidths[a] / bandwidths[b] for a, b in zip(names, names[1:])}


#: A working set larger than a level, up to this many times its size, is judged against that
#: level's roof. Measured on the book's machine (one thread, L3 32 MiB): copy and triad over
#: 32 MiB ran anywhere from DRAM's ~30 GB/s to ~48 (L3's ~85) as the load changed, and from
#: 128 MiB on at DRAM's. In that range the nearer level's roof is the one that surely bounds a
#: point from above (a roof must), so a fraction reached there is a lower bound.
SPILL = 4


#: Footprints (bytes, all arrays of a kernel together) of the memory-hierarchy sweep,
#: 0.5 MiB to 256 MiB: from inside one core's L2 to far past L3.
CURVE_FOOTPRINTS = tuple(1 << k for k in range(19, 29))

#: How far a measured point may lie above the roof at its own footprint before the model
#: counts as broken: the curve and the point are timed at different moments on a machine
#: shared with other jobs, so a point's time can beat the roof's by a few percent of noise.
#: No roof is ever re-measured to make room for a point.
ROOF_TOLERANCE = 1.1


def bandwidth_curve(footprints: Sequence[int] = CURVE_FOOTPRINTS, repeats: int = 2,
                    min_seconds: float = 0.005) -> dict[int, float]:
    """``{footprint: GB/s}`` of one thread, the faster of STREAM copy and triad at each
    footprint: the memory hierarchy as the bandwidth a working set of that size streams at."""
    return {int(f): max(stream_bandwidth(int(f), k, repeats, min_seconds) for k in ("copy", "triad"))
            for f in footprints}


def bandwidth_at(curve: Mapping[int, float], footprint: float) -> float:
    """The curve's GB/s at ``footprint`` bytes, interpolated on log-log axes (clamped at its
    ends: below its smallest footprint, the smallest one's bandwidth)."""
    xs = sorted(curve)
    x = min(max(float(footprint), xs[0]), xs[-1])
    ys = [np.log(curve[k]) for k in xs]
    return float(np.exp(np.interp(np.log(x), np.log(xs), ys)))


def level_of(working_set: float, caches: Mapping[str, int] | None = None) -> str:
    """The memory level a working set of ``working_set`` bytes streams from, the one its roof
    is taken from: ``"L2"`` if it fits one core's L2, ``"L3"`` if it is at most
    :data:`SPILL` times L3, ``"DRAM"`` beyond."""
    caches = cache_sizes() if caches is None else caches
    if working_set <= caches["L2"]:
        return "L2"
    return "L3" if working_set <= SPILL * caches["L3"] else "DRAM"


# ----- the model: placing points, drawing the roofs -------------------------------------------


@dataclass(frozen=True)
class Point:
    """A workload placed under the roofs: its counts, its measured time, and what it reached."""

    name: str
    counts: Counts
    seconds: float
    #: the bytes the workload keeps live at once (its arrays), which decide the memory level it
    #: streams from; 0 means ``counts.bytes`` (a single pass over its data)
    working_set: float = 0.0

    @property
    def footprint(self) -> float:
        return self.working_set or self.counts.bytes

    @property
    def intensity(self) -> float:
        return self.counts.intensity

    @property
    def gflops(self) -> float:
        return self.counts.flops / self.seconds / 1e9


@dataclass(frozen=True)
class Roofline:
    """The machine's roofs: ``peak`` GFLOP/s and one bandwidth (GB/s) per memory level."""

    peak: float
    bandwidths: Mapping[str, float]
    #: cache sizes for :meth:`level_of` (default: this machine's)
    caches: Mapping[str, int] | None = None
    #: the measured memory hierarchy (:func:`bandwidth_curve`); when given, a point's own roof
    #: is the bandwidth measured at its own footprint, not its level's
    curve: Mapping[int, float] | None = None

    def level_of(self, point: Point) -> str:
        """The level ``point``'s working set streams from (:func:`level_of`)."""
        return level_of(point.footprint, self.caches)

    def own_bandwidth(self, point: Point) -> float:
        """GB/s ``point``'s data can stream at: the curve at its footprint, or its level's."""
        if self.curve:
            return bandwidth_at(self.curve, point.footprint)
        return self.bandwidths[self.level_of(point)]

    def own_roof(self, point: Point) -> float:
        """GFLOP/s the roofs allow ``point``, its data streaming at its own bandwidth."""
        return min(self.peak, point.intensity * self.own_bandwidth(point))

    def own_fraction(self, point: Point) -> float:
        """The share of its own roof that ``point`` reached (at most 1 for a roof, up to
        :data:`ROOF_TOLERANCE` for timing noise)."""
        return point.gflops / self.own_roof(point)

    def attainable(self, intensity: float, level: str = "DRAM") -> float:
        """GFLOP/s the roofs allow at ``intensity`` with the data coming from ``level``."""
        return min(self.peak, intensity * self.bandwidths[level])

    def ridge(self, level: str = "DRAM") -> float:
        """The intensity (flops/byte) where ``level``'s slope meets the compute roof."""
        return self.peak / self.bandwidths[level]

    def bound(self, intensity: float, level: str = "DRAM") -> str:
        """``"compute"`` right of the ridge, ``"memory"`` left of it."""
        return "compute" if intensity >= self.ridge(level) else "memory"

    def fraction(self, point: Point, level: str = "DRAM") -> float:
        """The share of the roof above ``point`` that it reached."""
        return point.gflops / self.attainable(point.intensity, level)

    def predicted_seconds(self, counts: Counts, level: str = "DRAM") -> float:
        """The least time the roofs allow for ``counts``: the slower of computing and moving."""
        return max(counts.flops / (self.peak * 1e9), counts.bytes / (self.bandwidths[level] * 1e9))


def place(name: str, counts: Counts, seconds: float, working_set: float = 0.0) -> Point:
    """A measured point: ``counts`` done in ``seconds`` over a ``working_set`` of bytes
    (default: ``counts.bytes``)."""
    if seconds <= 0:
        raise ValueError(f"{name}: a time must be positive, got {seconds}")
    return Point(name, counts, seconds, working_set)


def draw_roofs(ax: Any, roof: Roofline, points: Sequence[Point]) -> tuple[float, float]:
    """The roofs on log-log axes ``ax`` (one sloped line per memory level, the flat compute
    roof), wide enough for ``points``; returns the intensity range drawn."""
    intensities = [p.intensity for p in points] + [roof.ridge(lvl) for lvl in roof.bandwidths]
    lo, hi = min(intensities) / 4, max(intensities) * 4
    xs = np.geomspace(lo, hi, 200)
    styles = {"L2": ":", "L3": "-.", "DRAM": "--"}
    for level, bw in roof.bandwidths.items():
        ax.plot(xs, np.minimum(roof.peak, xs * bw), styles.get(level, "-"), color="#546E7A",
                lw=1.2, label=f"{level} roof, {bw:.0f} GB/s")
    ax.axhline(roof.peak, color="#D32F2F", lw=1.5, label=f"FMA peak, {roof.peak:.0f} GFLOP/s")
    return lo, hi


def draw(ax: Any, roof: Roofline, points: Sequence[Point], title: str = "") -> None:
    """The roofs (:func:`draw_roofs`) and the points on matplotlib axes ``ax``, each point
    labelled with its name."""
    lo, hi = draw_roofs(ax, roof, points)
    placed: list[Point] = []
    for point in points:
        ax.plot(point.intensity, point.gflops, "o", ms=7)
        # a label goes above its dot when a dot already placed is close (within 0.2 decades)
        crowded = any(abs(np.log10(point.intensity / q.intensity)) < 0.2
                      and abs(np.log10(point.gflops / q.gflops)) < 0.2 for q in placed)
        ax.annotate(point.name, (point.intensity, point.gflops), textcoords="offset points",
                    xytext=(6, 5 if crowded else -10), fontsize=7)
        placed.append(point)
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), xlabel="arithmetic intensity (flops / byte)",
           ylabel="GFLOP/s (one thread)", title=title)
    ax.legend(fontsize=7, loc="lower right")


def median_seconds(contenders: Mapping[str, Callable[[], object]], budget: float = 0.5,
                   rounds: int = 5, pause: float = 0.05) -> dict[str, dict[str, float]]:
    """Median and best CPU seconds per call of each contender (this thread's CPU time).

    After a warm-up call, each of ``rounds`` rounds gives every contender one block of
    repeats (timed as a whole) followed by a pause, so different libraries' thread pools
    never run interleaved; the per-call time of each block is one sample."""
    reps, samples = {}, {name: [] for name in contenders}
    for name, fn in contenders.items():
        fn()
        t0 = time.thread_time()
        fn()
        one = max(time.thread_time() - t0, 1e-7)
        reps[name] = int(min(max(1, budget / rounds / len(contenders) / one), 5000))
    for _ in range(rounds):
        for name, fn in contenders.items():
            t0 = time.thread_time()
            for _ in range(reps[name]):
                fn()
            samples[name].append((time.thread_time() - t0) / reps[name])
            time.sleep(pause)
    return {name: {"median": median(s), "best": min(s), "rounds": s}
            for name, s in samples.items()}
