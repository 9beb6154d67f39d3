"""The explorer's search drawn from a real run: burn's choice among fusers
(burn-fusion's ``Explorer`` and ``find_best_optimization_index``, ``search/block.rs``),
mirrored by :class:`minidl.fusion.search.BurnExplorer`, beside the plan of minidl's
simpler greedy :class:`~minidl.fusion.search.Explorer`.

:func:`trace_search` runs a function under ``BurnExplorer`` on an empty plan store and
reads its log of offers: from each block start, each fuser's run of accepted ops, whether
it can build a kernel, and its score. It then runs the function again under the greedy
``Explorer``. :func:`draw_search` draws both: one row per fuser and start, the op it
refused, the winner, and each plan's blocks with what they write.
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
    took can become a kernel; ``score``: burn's score of that kernel."""

    fuser: str
    start: int
    taken: int = 0
    refused: bool = False
    ready: bool = False
    score: int = 0


@dataclass
class Search:
    """A drain's ops, every fuser's :class:`Run` in the order burn's explorer made them,
    the plan it chose, and the plan of the greedy search on the same ops."""

    kinds: list[str]
    runs: list[Run] = field(default_factory=list)
    plan: Any = None
    greedy: Any = None

    @property
    def blocks(self) -> list:
        """burn's plan's blocks (``start``, ``end``, ``fuser``, ``writes``)."""
        return self.plan.record.plan.blocks

    def runs_from(self, start: int) -> list[Run]:
        return [r for r in self.runs if r.start == start]

    def written(self, block, plan: Any = None) -> list[str]:
        """The ops (by kind) whose results ``block`` (of ``plan``, burn's by default)
        writes."""
        ids = [op.out.id for op in (plan or self.plan).record.ops]
        return [self.kinds[ids.index(i)] for i in block.writes]


def trace_search(fn: Callable[[], Any]) -> tuple[Search, Any]:
    """Run ``fn()`` (which records ops and reads a result) under ``BurnExplorer``, then
    under the greedy ``Explorer``, each on an empty plan store; returns the
    :class:`Search` and ``fn()``'s value (burn's run)."""
    from minidl.fusion.search import BurnExplorer, Explorer

    with fusion_lab.explorer(BurnExplorer) as stream:
        value = fn()
        plan = debug.fusion_plan()
        choices = stream.processor.explorer.choices
    n = len(plan.record.ops)
    runs = [Run(name, start, taken, start + taken < n, ready, score)
            for start, seen in choices for name, (taken, ready, score) in seen.items()]
    with fusion_lab.explorer(Explorer):
        fn()
        greedy = debug.fusion_plan()
    return Search([op.kind for op in plan.record.ops], runs, plan, greedy), value


def _plan_row(axis, search: Search, plan, y: float, label: str,
              names: dict[str, str]) -> None:
    import matplotlib.pyplot as plt

    axis.text(-0.3, y, label, ha="right", va="center", fontsize=8, weight="bold")
    for k, b in enumerate(plan.record.plan.blocks):
        axis.add_patch(plt.Rectangle((b.start + 0.04, y - 0.3), b.end - b.start - 0.08,
                                     0.6, ec="black", lw=0.6,
                                     fc=fusion_lab.COLOURS[b.fuser], alpha=0.85))
        axis.text((b.start + b.end) / 2, y, b.fuser or "B", ha="center",
                  va="center", fontsize=7.5)
        wrote = [names.get(kind, kind) for kind in search.written(b, plan)]
        if wrote:
            axis.text((b.start + b.end) / 2, y - 0.5 - 0.4 * (k % 2),  # odd: lower
                      "writes " + ", ".join(wrote), ha="center", va="top", fontsize=7)


def draw_search(search: Search, names: dict[str, str] | None = None):
    """burn's search as a grid: ops along x; for each block start, one row per fuser
    with the ops it took (filled, the winner solid), a red ✗ on the op it refused and
    its score; then burn's plan and the greedy plan, each block with what it writes
    (``names``: an op's kind -> the name to show for its result)."""
    import matplotlib.pyplot as plt

    names = names or {}
    won = {(b.start, b.fuser) for b in search.blocks if b.fuser}
    rows = [(start, run) for start in dict.fromkeys(r.start for r in search.runs)
            for run in search.runs_from(start)]
    n = len(search.kinds)
    fig, axis = plt.subplots(figsize=(7.6, 0.6 + 0.36 * (len(rows) + 7)))
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
        note = ("not ready" if run.taken and not run.ready
                else f"score {run.score}" if run.taken else "")
        note = f"wins, {note}" if wins else note
        axis.text(end + 0.15, y, note, va="center", fontsize=7.5)
    _plan_row(axis, search, search.plan, y - 1.1, "burn's plan", names)
    _plan_row(axis, search, search.greedy, y - 2.9, "greedy plan", names)
    axis.set(xlim=(-4.2, n + 2.6), ylim=(y - 4.0, 0.3))
    axis.axis("off")
    fig.tight_layout()
    return fig
