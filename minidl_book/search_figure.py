"""The explorer's search drawn from a real run (burn-fusion's ``Explorer`` and the
``find_best_optimization_index`` of ``search/block.rs``, mirrored by
:class:`minidl.fusion.search.Explorer`).

:func:`trace_search` runs a function under the shipped greedy ``Explorer`` on an empty plan
store, with each fuser's ``reset``/``fuse`` watched: every offer of an op to a fuser, and
its answer, is logged as the explorer makes it. :func:`draw_search` draws that log: from
each block start, one row per fuser, its run of accepted ops and the op it refused, the
winner, and what each block writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from minidl import debug
from minidl_book import fusion_lab

__all__ = ["Run", "Search", "draw_search", "trace_search"]

_SHORT = {"mul_scalar": "×s", "add_scalar": "+s", "sub_scalar": "−s", "lower_elem": "<",
          "mask_fill": "fill", "add": "+", "mul": "×", "sum_dim": "sum", "reshape": "rshp"}


@dataclass
class Run:
    """One fuser offered the ops from ``start``: it took ``taken`` of them, then refused
    op ``start + taken`` (``refused`` False: the stream ended first); ``ready``: what it
    took can become a kernel."""

    fuser: str
    start: int
    taken: int = 0
    refused: bool = False
    ready: bool = False


@dataclass
class Search:
    """A drain's ops, every fuser's :class:`Run` in the order the explorer made them, and
    the plan it chose."""

    kinds: list[str]
    runs: list[Run] = field(default_factory=list)
    plan: Any = None

    @property
    def blocks(self) -> list:
        """The plan's blocks (``start``, ``end``, ``fuser``, ``writes``)."""
        return self.plan.record.plan.blocks

    def runs_from(self, start: int) -> list[Run]:
        return [r for r in self.runs if r.start == start]

    def written(self, block) -> list[str]:
        """The ops (by kind) whose results ``block`` writes."""
        ids = [op.out.id for op in self.plan.record.ops]
        return [self.kinds[ids.index(i)] for i in block.writes]


def trace_search(fn: Callable[[], Any]) -> tuple[Search, Any]:
    """Run ``fn()`` (which records ops and reads a result) under the shipped ``Explorer`` on
    an empty plan store, logging each fuser's offers; returns the :class:`Search` and
    ``fn()``'s value."""
    from minidl.fusion.search import Explorer

    runs: list[Run] = []
    with fusion_lab.explorer(Explorer) as stream:
        watched = stream.processor.explorer.fusers

        def watch(fuser) -> None:
            reset, fuse = fuser.reset, fuser.fuse

            def on_reset() -> None:
                reset()
                runs.append(Run(fuser.name, start=-1))

            def on_fuse(op) -> bool:
                ok = fuse(op)
                run = runs[-1]
                run.taken, run.refused, run.ready = len(fuser.ops), not ok, fuser.ready
                return ok

            fuser.reset, fuser.fuse = on_reset, on_fuse

        for fuser in watched:
            watch(fuser)
        try:
            value = fn()
        finally:
            for fuser in watched:
                del fuser.reset, fuser.fuse
        plan = debug.fusion_plan()
    starts = [b.start for b in plan.record.plan.blocks]  # every fuser is offered ops from each start
    for k, run in enumerate(runs):
        run.start = starts[k // len(watched)]
    return Search([op.kind for op in plan.record.ops], runs, plan), value


def draw_search(search: Search, names: dict[int, str] | None = None):
    """The search as a grid: ops along x; for each block start, one row per fuser with the
    ops it took (filled, the winner solid) and a red ✗ on the op it refused; a last row
    with the plan's blocks and, under each, what it writes (``names``: an op's kind -> the
    name to show for its result, e.g. ``{"sum_dim": "the sum"}``)."""
    import matplotlib.pyplot as plt

    names = names or {}
    plan = search.plan
    blocks = plan.record.plan.blocks
    won = {(b.start, b.fuser) for b in blocks if b.fuser}
    rows = [(start, run) for start in dict.fromkeys(r.start for r in search.runs)
            for run in search.runs_from(start)]
    n = len(search.kinds)
    fig, axis = plt.subplots(figsize=(7.6, 0.6 + 0.36 * (len(rows) + 3)))
    for k, kind in enumerate(search.kinds):
        axis.text(k + 0.5, -0.2, _SHORT.get(kind, kind), ha="center", va="bottom",
                  fontsize=7.5)
    y, previous = 0.6, None
    for start, run in rows:
        y -= 0.8 if start == previous else 1.2
        wins = (start, run.fuser) in won
        label = run.fuser if start == previous else f"from op {start}: {run.fuser}"
        previous = start
        axis.text(-0.3, y, label, ha="right", va="center", fontsize=8,
                  weight="bold" if wins else "normal")
        for k in range(start, start + run.taken):
            axis.add_patch(plt.Rectangle((k + 0.04, y - 0.3), 0.92, 0.6, ec="none",
                                         fc=fusion_lab.COLOURS[run.fuser],
                                         alpha=0.85 if wins else 0.3))
        end = start + run.taken
        if run.refused:
            axis.text(end + 0.5, y, "✗", color="tab:red", ha="center", va="center",
                      fontsize=11)
            end += 1
        note = "wins" if wins else "not ready" if run.taken and not run.ready else ""
        axis.text(end + 0.15, y, note, va="center", fontsize=7.5)
    y -= 1.1
    axis.text(-0.3, y, "plan", ha="right", va="center", fontsize=8, weight="bold")
    for b in blocks:
        axis.add_patch(plt.Rectangle((b.start + 0.04, y - 0.3), b.end - b.start - 0.08,
                                     0.6, ec="black", lw=0.6,
                                     fc=fusion_lab.COLOURS[b.fuser], alpha=0.85))
        axis.text((b.start + b.end) / 2, y, b.fuser or "B", ha="center",
                  va="center", fontsize=7.5)
        wrote = [names.get(kind, kind) for kind in search.written(b)]
        axis.text((b.start + b.end) / 2, y - 0.55, "writes " + ", ".join(wrote),
                  ha="center", va="top", fontsize=7.5)
    axis.set(xlim=(-4.2, n + 1.6), ylim=(y - 1.0, 0.3))
    axis.axis("off")
    fig.tight_layout()
    return fig
