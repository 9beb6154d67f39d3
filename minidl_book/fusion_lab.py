"""The fusion chapter's probes, each run on a clean stream.

Every probe starts by draining the stream (no op left pending from an earlier cell can join
its segment) and records under a setting it chooses itself, so an exercise gives the same
answer whether it runs in page order, alone, or again: :func:`clean` is that start,
:func:`fresh_store` adds an empty plan store (nothing searched before counts as seen).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import accumulate
from typing import Any

from minidl import Device, debug
from minidl.backends.flex.fusion import FusionFlex
from minidl.fusion.plan import ExecutionPlanStore
from minidl.fusion.stream import EAGER_BELOW

__all__ = ["EAGER_BELOW", "block_lines", "both_kernels", "clean", "cnn_step_counts",
           "call_bytes", "cnn_step_ms", "draw_bytes", "explorer", "search_by", "split", "draw_stream", "draw_index_grid", "draw_views", "view_blocks", "fresh_store", "kernel_text", "kernels_in", "plot_sweep", "recorded_in_a_step",
           "source", "store_chart", "written_bytes"]

#: a block's colour by the fuser that took it (``None``: no fuser, run on the inner backend)
COLOURS = {"elementwise": "tab:blue", "reduce": "tab:orange", "matmul": "tab:green",
           None: "0.7"}


@contextmanager
def clean(eager_below: int = 0) -> Iterator[Any]:
    """Drain the stream, then record with ``eager_below`` (0: every op, burn's way; the
    shipped :data:`EAGER_BELOW`: small ops on ready tensors run eagerly) for the block."""
    stream = FusionFlex.stream
    FusionFlex.sync()
    own = vars(stream).get("eager_below")
    stream.eager_below = eager_below
    try:
        yield stream
    finally:
        FusionFlex.sync()
        if own is None:
            del stream.eager_below
        else:
            stream.eager_below = own


@contextmanager
def fresh_store() -> Iterator[Any]:
    """:func:`clean`, with an empty plan store for the block (the old one comes back)."""
    with clean() as stream:
        processor = stream.processor
        kept = processor.store
        processor.store = ExecutionPlanStore()
        try:
            yield stream
        finally:
            FusionFlex.sync()
            processor.store = kept


@contextmanager
def explorer(cls: type) -> Iterator[Any]:
    """:func:`fresh_store`, with the processor searching by ``cls`` (an
    :class:`~minidl.fusion.search.Explorer` subclass) for the block; both put back after."""
    with fresh_store() as stream:
        processor = stream.processor
        kept = processor.explorer
        processor.explorer = cls(kept.generator)
        try:
            yield stream
        finally:
            FusionFlex.sync()
            processor.explorer = kept


def search_by(cls: type) -> None:
    """From now on ``Fusion[Flex]``'s processor searches by ``cls`` (an
    :class:`~minidl.fusion.search.Explorer` subclass, e.g. ``BurnExplorer``: burn's choice
    by score and view rule); ``search_by(Explorer)`` puts the shipped greedy search back.
    The plan store is emptied: its plans came from the other search."""
    processor = FusionFlex.stream.processor
    FusionFlex.sync()
    processor.explorer = cls(processor.explorer.generator)
    processor.store = ExecutionPlanStore()


def split(plan) -> str:
    """A plan's blocks in one line: ``elementwise 10 | reduce 3`` (``B`` for an op run alone)."""
    return " | ".join(f"{b.fuser or 'B'} {len(b.kinds)}" for b in plan.blocks)


def kernels_in(fn: Callable[[], Any]) -> int:
    """Generated kernels launched by ``fn()`` on a clean stream, every drain counted."""
    with clean() as stream:
        start = stream.executions
        fn()
    return sum(len(p.kernels) for p in debug.fusion_history(since=start))


def kernel_text(source: str, passes: tuple[str, ...] = (), plain: bool = False) -> str:
    """The sequential kernel of a generated file (``kernel_par`` is the same loop with
    ``prange``), without the file's imports; ``passes``: a comment for each inner loop over a
    row (``for k…``), in order. ``plain``: without the decorator, numba's casts to float32
    and uint64, and the offsets that are 0 (as :func:`side_by_side` shows its kernels)."""
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def kernel_seq"))
    lines = lines[start - 1:]
    if plain:
        zero = {m[1] for line in lines for m in [re.fullmatch(r"\s*(offset\d+) = 0", line)] if m}
        kept = []
        for line in lines[1:]:
            line = re.sub(r"np\.uint64\((.*?)\)\]", r"\1]",
                          re.sub(r"np\.float32\((.*)\)$", r"\1", line))
            for name in zero:
                line = line.replace(f"{name} + ", "")
            lhs, _, rhs = line.strip().partition(" = ")
            if lhs in zero or lhs == rhs:
                continue
            kept.append(line)
        lines = kept
    notes = iter(passes)
    for i, line in enumerate(lines):
        if line.lstrip().startswith("for k"):
            note = next(notes, None)
            if note:
                lines[i] = f"{line}  # {note}"
    return "\n".join(lines).rstrip()


def cnn_step_counts(step_number: int = 2) -> tuple[dict[str, int], list]:
    """A fresh training-chapter CNN on ``Device.fusion().autodiff()``, every op recorded, on an
    empty plan store: the stream's counts during its ``step_number``-th step (Adam's step of
    that number) and the plans of that step's drains."""
    from minidl_book.workloads import minidl_cnn_step

    with fresh_store() as stream:
        step = minidl_cnn_step(Device.fusion().autodiff())
        for _ in range(step_number - 1):
            step()
        before = stream.counts()
        step()
        after = stream.counts()
        plans = debug.fusion_history(since=before["drains"])
        pending = len(stream.ops)
    return {**{k: after[k] - before[k] for k in after}, "pending": pending}, plans


def recorded_in_a_step(build: Callable[[Device], Any], steps: int = 2) -> int:
    """Ops the shipped device records in the ``steps``-th step of ``build``'s workload."""
    with clean(EAGER_BELOW) as stream:
        step = build(Device.fusion().autodiff())
        for _ in range(steps - 1):
            step()
        before = stream.counts()["recorded"]
        step()
        return stream.counts()["recorded"] - before


def cnn_step_ms(rounds: int = 4, steps: int = 8) -> dict[str, float]:
    """Milliseconds per CNN step (best block) on ``flex().autodiff()``, on
    ``fusion().autodiff()`` recording every op, and on it as shipped: one thread's CPU time
    (numba on one thread), timed in turns (each round runs a block of each)."""
    import time

    import numba

    from minidl_book.workloads import minidl_cnn_step

    settings = {"flex": (Device.flex().autodiff(), EAGER_BELOW),
                "every op": (Device.fusion().autodiff(), 0),
                "shipped": (Device.fusion().autodiff(), EAGER_BELOW)}
    runs = {}
    for name, (device, eager_below) in settings.items():
        with clean(eager_below):
            runs[name] = minidl_cnn_step(device)
            runs[name]()
            runs[name]()
    best = dict.fromkeys(settings, float("inf"))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        for _ in range(rounds):
            for name, (_, eager_below) in settings.items():
                with clean(eager_below):
                    t0 = time.thread_time()
                    for _ in range(steps):
                        runs[name]()
                    best[name] = min(best[name], (time.thread_time() - t0) / steps * 1e3)
    finally:
        numba.set_num_threads(threads)
    return best


def _short(reason: str) -> str:
    """The op named by a drain's reason, shortened for a label."""
    name = reason.split(" needs")[0].removeprefix("float_")
    name = name.replace("max_pool2d_with_indices", "pool").replace("_backward", " bw")
    return name.replace("conv2d_", "conv ")


def draw_stream(plans: list, pending: int = 0, title: str = "",
                phases: tuple[tuple[str, int], ...] = ()):
    """The ops of ``plans`` (consecutive drains) as one strip, one column per recorded op,
    coloured by the fuser whose block took it (grey: run alone on the inner backend); a red
    line at the end of each drain, numbered and labelled by the op that is not recorded and
    forced it; ``pending`` hatched columns at the end for ops still waiting. ``phases``:
    (label, number of drains it ends at) spans drawn under the strip. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    total = sum(len(p.record.ops) for p in plans) + pending
    fig, axis = plt.subplots(figsize=(7.5, 3.0))
    x = 0
    for number, plan in enumerate(plans, 1):
        for block in plan.blocks:
            axis.add_patch(Rectangle((x, 0), len(block.kinds), 1, color=COLOURS[block.fuser],
                                     ec="white", lw=0.3))
            x += len(block.kinds)
        height = 1.25 + 0.27 * ((number - 1) % 5)  # clear of the strip's top (at 1)
        axis.plot([x, x], [0, height], color="tab:red", lw=1.2)
        axis.text(x, height, f" {number} {_short(plan.reason)}", fontsize=7, ha="left",
                  va="center", color="tab:red", zorder=3,  # over a later drain's line
                  bbox={"fc": "white", "ec": "none", "pad": 0.2})
    if pending:
        axis.add_patch(Rectangle((x, 0), pending, 1, fill=False, hatch="///", ec="0.5"))
        axis.text(x + pending / 2, 0.5, f"{pending} ops pending", ha="center", va="center",
                  fontsize=8, backgroundcolor="white")
    ends = [0]
    for plan in plans:
        ends.append(ends[-1] + len(plan.record.ops))
    start = 0
    for label, drains in phases:
        axis.annotate("", (start, -0.12), (ends[drains], -0.12),
                      arrowprops={"arrowstyle": "<->", "lw": 0.8})
        axis.text((start + ends[drains]) / 2, -0.2, label, ha="center", va="top", fontsize=8)
        start = ends[drains]
    axis.set(xlim=(0, total), ylim=(-0.45 if phases else 0, 2.45), yticks=[],
             xlabel="recorded ops, in order")
    handles = [Patch(color=c, label=f"{k} fuser" if k else "alone on Flex")
               for k, c in COLOURS.items()]
    handles.append(Patch(facecolor="white", edgecolor="tab:red", label="drain, and the op"
                         " on Flex that forced it"))
    axis.legend(handles=handles, ncol=5, fontsize=7.5, loc="upper center",
                bbox_to_anchor=(0.5, -0.32), frameon=False)
    if title:
        axis.set_title(title, fontsize=9)
    for side in ("top", "right", "left"):
        axis.spines[side].set_visible(False)
    axis.spines["bottom"].set_position(("data", -0.45 if phases else 0))
    fig.subplots_adjust(left=0.02, right=0.98, top=0.9, bottom=0.33)
    return fig


def plot_sweep(chain_sweep, costs: dict[str, float]):
    """The chain's time per size on each contender (log-log), with the fixed costs that
    explain its shape in the title. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, axis = plt.subplots(figsize=(6.4, 3))
    for name, seconds in chain_sweep.seconds.items():
        axis.loglog(chain_sweep.sizes, [s * 1e6 for s in seconds], "o-", label=name)
    axis.set(xlabel="float32 elements", ylabel="µs per chain (one thread's CPU)")
    axis.set_title(f"record one op {costs['record_op'] * 1e6:.1f} µs, drain the 9 "
                   f"{costs['drain'] * 1e6:.1f} µs, run one small op on Flex "
                   f"{costs['eager_op'] * 1e6:.1f} µs", fontsize=9)
    axis.legend()
    fig.tight_layout()
    return fig


#: the CNN step's phases, by the drain each ends at (the 1st drain runs step 1's update; the
#: 5th, forced by the cross-entropy's ``gather``, ends the forward and the loss)
CNN_PHASES = (("step 1's update", 1), ("forward and loss", 5), ("backward", 9))


def draw_cnn_step(plans: list, pending: int):
    """:func:`draw_stream` of the CNN's step (:func:`cnn_step_counts`), its phases marked."""
    fig = draw_stream(plans, pending, "The CNN's step 2 on fusion().autodiff(), every op "
                      "recorded", CNN_PHASES)
    fig.axes[0].text(sum(len(p.record.ops) for p in plans) + pending / 2, -0.2,
                     "step 2's update", ha="center", va="top", fontsize=8)
    return fig


def launched_wgsl(plan, index: int = 0) -> str:
    """The WGSL text a ``Fusion[Wgpu]`` plan's ``index``-th element-wise kernel dispatched
    for contiguous inputs of a size divisible by 4: its vector form (``vec4`` loads and
    stores, four elements per thread)."""
    kernels = [b.kernel for b in plan.record.plan.blocks if b.fused]
    return kernels[index].vector_source()


def _body(lines: list[str], start: str, step: int) -> list[str]:
    """From the first line whose stripped text starts with ``start`` on, without a closing
    brace at column 0, dedented, indentation steps of ``step`` spaces shown as 2."""
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(start))
    body = [line for line in lines[at:] if line.strip() and line != "}"]
    cut = min(len(line) - len(line.lstrip()) for line in body)
    out = []
    for line in body:
        text = line[cut:]
        pad = len(text) - len(text.lstrip())
        out.append(" " * (pad // step * 2) + text.lstrip())
    return out


def side_by_side(numba_source: str, wgsl_source: str) -> str:
    """The loop body of a generated numba kernel (``kernel_seq``) beside what one thread of
    the WGSL kernel of the same block does, the op lines (``x0``, ``v0``, ...) paired."""
    left = _body(kernel_text(numba_source).splitlines(), "for i0", 4)
    right = _body(wgsl_source.splitlines(), "let i = ", 2)
    # shown without numba's casts to float32 and uint64, so both sides fit one page width
    left = [re.sub(r"np\.uint64\((\w+)\)", r"\1",
                   re.sub(r"np\.float32\((.*)\)$", r"\1", line)) for line in left]

    def split(lines: list[str], first: str) -> tuple[list[str], list[str], list[str]]:
        a = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith(first))
        b = max(i for i, ln in enumerate(lines)
                if ln.lstrip().removeprefix("let ").startswith("v")) + 1
        return lines[:a], lines[a:b], lines[b:]

    lp, lc, lpost = split(left, "x0 =")
    rp, rc, rpost = split(right, "let x0 =")
    depth = max(len(lp), len(rp))
    lp = [""] * (depth - len(lp)) + lp
    rp = [""] * (depth - len(rp)) + rp
    tail = max(len(lpost), len(rpost))
    lpost += [""] * (tail - len(lpost))
    rpost += [""] * (tail - len(rpost))
    rows = list(zip(lp + lc + lpost, rp + rc + rpost, strict=True))
    width = max(len(a) for a, _ in rows) + 1
    title = "numba: all n elements"
    width = max(width, len(title) + 1)
    right_width = max(len(b) for _, b in rows) + 1
    head = [f"{title:<{width}}| WGSL: one thread",
            "-" * width + "+" + "-" * right_width]
    return "\n".join(head + [f"{a:<{width}}| {b}".rstrip() for a, b in rows])


def plot_two_devices(cpu, gpu):
    """Speedup of the fused chain over the eager one against size, one line per device:
    ``cpu`` a :func:`~minidl_book.fusion_sweep.sweep`, ``gpu`` a
    :func:`~minidl_book.fusion_sweep.gpu_sweep` (or ``None``: no adapter). Returns the figure."""
    import matplotlib.pyplot as plt

    from minidl_book.fusion_sweep import GPU_NAMES

    fig, axis = plt.subplots(figsize=(6.4, 3))
    axis.loglog(cpu.sizes, cpu.ratio("Flex (eager)", "Fusion"), "o-",
                label="CPU: Flex time / Fusion[Flex] time")
    if gpu is not None:
        axis.loglog(gpu.sizes, gpu.ratio(*GPU_NAMES), "s-", color="tab:red",
                    label="GPU: Wgpu time / Fusion[Wgpu] time")
    axis.axhline(1, color="0.5", lw=0.8)
    axis.text(cpu.sizes[0], 1.08, "fusion faster above this line", fontsize=8, color="0.4")
    axis.axvline(EAGER_BELOW, color="tab:blue", lw=0.8, ls="--")
    axis.text(EAGER_BELOW * 1.15, 0.12, f"CPU device's threshold\n({EAGER_BELOW:,}: see below)",
              fontsize=8, color="tab:blue", transform=axis.get_xaxis_transform())
    axis.set(xlabel="float32 elements", ylabel="speedup of fusing (eager / fused)")
    axis.set_title("the bytes section's chain on each device, eager against fused", fontsize=9)
    axis.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def _y_chain(t):
    return ((t * 2.0 + 1.0).relu() - 0.5).exp()


def both_kernels(plan, x, chain: Callable[[Any], Any] = _y_chain) -> tuple[str, Any]:
    """The numba kernel of ``plan`` (the first generated one) beside the WGSL kernel
    ``Fusion[Wgpu]`` writes when ``chain`` (the chapter's ``y`` chain unless given) runs on
    ``x``'s values on the GPU device; without a WebGPU adapter, the numba kernel alone.
    Returns the text and the GPU plan (or ``None``)."""
    import numpy as np

    from minidl import Tensor
    from minidl.backends.wgpu.fusion import FusionWgpu
    from minidl_book.build_default_op import wgpu_missing

    missing = wgpu_missing()
    if missing:
        return f"No WebGPU adapter: {missing}\n{kernel_text(plan.source(0))}", None
    values = np.ascontiguousarray(x.to_numpy(), dtype=np.float32)
    chain(Tensor.from_numpy(values, Device.fusion_wgpu())).to_numpy()
    gpu_plan = debug.fusion_plan(backend=FusionWgpu)
    return side_by_side(plan.source(0), launched_wgsl(gpu_plan)), gpu_plan


def block_lines(plan, width: int = 86) -> str:
    """One wrapped paragraph per block of ``plan``: the fuser that took it (or ``on B``), then
    its op kinds."""
    import textwrap

    return "\n".join(textwrap.fill(f"{b.fuser or 'on B'}: {' '.join(b.kinds)}", width)
                     for b in plan.blocks)


def call_bytes(plan, calls: list[tuple[str, int]] | None = None
               ) -> tuple[list[float], list[float]]:
    """MiB each call of ``plan``'s stream reads and writes run eagerly, one kernel per
    call as eager Flex runs it: its inputs from memory (not those it computes itself) and
    its result. ``calls``: ``(name, ops)`` in order, the ops each call recorded (the relu
    default's two ops under ``"relu"``, one kernel on Flex); default one call per op."""
    mib = 2 ** 20
    ops = plan.record.ops
    calls = calls or [(op.kind, 1) for op in ops]
    if sum(n for _, n in calls) != len(ops):
        raise ValueError("the calls must cover the plan's ops")
    bounds = list(accumulate([n for _, n in calls], initial=0))
    reads, writes = [], []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        made = {op.out.id for op in ops[a:b]}
        read = {t.id: t.nbytes for op in ops[a:b] for t in op.inputs if t.id not in made}
        reads.append(sum(read.values()) / mib)
        writes.append(ops[b - 1].out.nbytes / mib)
    return reads, writes


def draw_bytes(plan, calls: list[tuple[str, int]] | None = None):
    """Bytes each call of ``plan``'s stream reads and writes run eagerly (a bar per call,
    :func:`call_bytes`), against the fused kernels' (the last bar): the memory traffic
    fusion saves. Returns the figure."""
    import matplotlib.pyplot as plt

    mib = 2 ** 20
    reads, writes = call_bytes(plan, calls)
    labels = [name for name, _ in calls or [(op.kind, 1) for op in plan.record.ops]]
    labels.append("fused kernel")
    reads.append(sum(b.bytes_read for b in plan.blocks) / mib)
    writes.append(sum(b.bytes_written for b in plan.blocks) / mib)
    fig, axis = plt.subplots(figsize=(6.4, 2.9))
    rows = list(range(len(labels)))[::-1]
    colours = ["tab:blue"] * (len(labels) - 1) + ["tab:green"]
    axis.barh(rows, reads, color=colours, alpha=0.45, label="read")
    axis.barh(rows, writes, left=reads, color=colours, label="written")
    axis.set_yticks(rows, labels, fontsize=8)
    axis.axhline(0.5, color="0.5", lw=0.8)
    eager, fused = sum(reads[:-1]) + sum(writes[:-1]), reads[-1] + writes[-1]
    axis.set(xlabel="MiB through memory (light: read, dark: written)")
    axis.set_title(f"{len(labels) - 1} calls one by one: {eager:.0f} MiB; "
                   f"fused: {fused:.0f} MiB", fontsize=9)
    fig.tight_layout()
    return fig


#: The views of :func:`draw_views`: a label and the chain on ``x`` [2, 4], run under burn's
#: view rule (``bcf/engine/trace/block.rs`` 253-357 at v0.22.0-pre.2: a view is read
#: through only of a tensor the block already reads from memory).
VIEW_CHAINS = (
    ("(x*2+1).reshape(4, 2).abs()*3",
     lambda x: ((x * 2.0 + 1.0).reshape((4, 2)).abs() * 3.0)),
    ("(x.reshape(4, 2)*2+1).abs()",
     lambda x: (x.reshape((4, 2)) * 2.0 + 1.0).abs()),
    ("(x*2+1).swap_dims(0, 1).exp()*3",
     lambda x: ((x * 2.0 + 1.0).swap_dims(0, 1).exp() * 3.0)),
)


def view_blocks() -> list[tuple[str, list]]:
    """Each chain of :data:`VIEW_CHAINS` run on ``Fusion[Flex]`` (every op recorded): its
    label and its plan's blocks."""
    import numpy as np

    from minidl import Tensor

    out = []
    with clean():
        dev = Device.fusion()
        x = Tensor.from_numpy(np.arange(8, dtype=np.float32).reshape(2, 4) / 8, dev)
        for label, chain in VIEW_CHAINS:
            chain(x).to_numpy()
            out.append((label, debug.fusion_plan().blocks))
    return out


def draw_index_grid():
    """For element ``i`` of a [4, 2] block, the element each operand reads: green where it
    is ``i`` (one flat walk reads it), red where it is not (the walk needs the shape)."""
    import matplotlib.pyplot as plt
    import numpy as np

    rows = (("x [2, 4].reshape(4, 2)", np.arange(8), "same order: flat i works"),
            ("b [1, 2], broadcast", np.arange(8) % 2, "needs (row, col) of i"),
            ("x [2, 4].swap_dims(0, 1)", np.arange(8).reshape(2, 4).T.ravel(),
             "another order: its own walk"))
    fig, top = plt.subplots(figsize=(7.5, 2.3))
    for r, (label, offsets, note) in enumerate(rows):
        y = len(rows) - r
        top.text(-0.3, y, label, ha="right", va="center", fontsize=9, family="monospace")
        for i, o in enumerate(offsets):
            top.add_patch(plt.Rectangle((i, y - 0.4), 0.92, 0.8, ec="0.5", lw=0.6,
                                        fc="#d8ecd0" if o == i else "#f6d0c8"))
            top.text(i + 0.46, y, str(o), ha="center", va="center", fontsize=10)
        top.text(8.2, y, note, va="center", fontsize=9, color="0.25")
    for i in range(8):
        top.text(i + 0.46, 0.35, f"i={i}", ha="center", va="center", fontsize=8.5,
                 color="0.3")
    top.set(xlim=(-5.6, 14.2), ylim=(0, len(rows) + 0.6))
    top.axis("off")
    top.set_title("element i of a [4, 2] block reads, in each operand, the element at:",
                  fontsize=9.5)
    fig.tight_layout()
    return fig


def draw_views(blocks: list[tuple[str, list]]):
    """The blocks minidl ran for each chain of :data:`VIEW_CHAINS`, one box per op
    coloured by its block, and the kernels they make."""
    import matplotlib.pyplot as plt

    fig, low = plt.subplots(figsize=(7.5, 2.4))
    for r, (label, plan_blocks) in enumerate(blocks):
        y = len(blocks) - r
        low.text(-0.3, y, label, ha="right", va="center", fontsize=8.5, family="monospace")
        col = 0
        for k, blk in enumerate(plan_blocks):
            for kind in blk.kinds:
                low.add_patch(plt.Rectangle((col, y - 0.35), 0.95, 0.7, ec="white",
                                            fc=COLOURS[blk.fuser], alpha=0.35 + 0.3 * (k % 2)))
                short = kind.replace("_scalar", "_s").replace("swap_dims", "swap")
                low.text(col + 0.47, y, short, ha="center", va="center", fontsize=7.5)
                col += 1
            if k < len(plan_blocks) - 1:
                low.plot([col, col], [y - 0.45, y + 0.45], color="tab:red", lw=1.5)
        kernels = sum(1 for blk in plan_blocks if blk.fuser)
        low.text(col + 0.3, y, f"{kernels} kernel{'s' * (kernels != 1)}", va="center",
                 fontsize=8.5)
    low.set(xlim=(-7.0, 9.8), ylim=(0.4, len(blocks) + 0.6))
    low.axis("off")
    low.set_title("the blocks run by burn's rule (blue: element-wise kernel, grey: alone "
                  "on B; red: a block ends)", fontsize=9)
    fig.tight_layout()
    return fig


def store_chart(store, plan_labels: list[str], title: str | None = None):
    """The plan store's tree as a :class:`~minidl.debug.flowchart.Flowchart`: one box per op
    signature (kind and input shape), a path per stored stream, shared while the streams
    agree; each stored plan a box labelled from ``plan_labels`` in the tree's order."""
    from minidl.debug.flowchart import Flowchart

    chart = Flowchart("LR", title=title)
    chart.node("root", "plan store\n(root)")
    labels = iter(plan_labels)
    counter = iter(range(10_000))

    def walk(node, name: str) -> None:
        for signature, child in node.children.items():
            kind, inputs = signature[0].removeprefix("float_"), signature[1]
            shape = list(inputs[0].shape) if inputs else []
            key = f"n{next(counter)}"
            chart.node(key, f"{kind}\n{shape}")
            chart.edge(name, key)
            for _ in child.plans:
                plan = f"p{next(counter)}"
                chart.node(plan, next(labels, "plan"))
                chart.edge(key, plan, dashed=True)
            walk(child, key)

    walk(store.root, "root")
    return chart


def source(function) -> str:
    """The source of ``function`` without its comment lines (to fit the page's width)."""
    import inspect
    import textwrap

    lines = inspect.getsource(function).splitlines()
    return textwrap.dedent("\n".join(ln for ln in lines if not ln.lstrip().startswith("#")))


def written_bytes(plan) -> int:
    """Bytes ``plan``'s blocks write, a view run alone (``reshape``, ``swap_dims``: Flex
    returns a view of the same buffer) counted as 0."""
    return sum(b.bytes_written for b in plan.blocks
               if b.fuser or b.kinds[0] not in ("reshape", "swap_dims"))
