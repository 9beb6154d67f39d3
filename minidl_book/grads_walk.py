"""``grads`` emptying along an optimizer step's walk, path by path.

burn-optim's ``ModuleOptimizerMapper::map_float`` (``optim/module/module_optimizer.rs:421``
at v0.22.0-pre.2) takes each param's gradient out of ``grads`` by id
(``self.grads.remove(id)``) and keeps no memo of the ids it mapped, so a tied param's second
path finds nothing. minidl's step does the same (``minidl/optim/base.py``).
:func:`grads_along_step` RUNS a step and records ``grads`` after each removal;
:func:`draw_grads_walk` draws that record.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt

from minidl.module import Module
from minidl.optim import GradientsParams, Optimizer

__all__ = ["draw_grads_walk", "grads_along_step"]


def grads_along_step(optimizer: Optimizer, lr: float, model: Module,
                     grads: GradientsParams) -> tuple[Module, list[dict[str, Any]]]:
    """``(stepped model, rows)``: one row per path the step visits, in walk order, with
    ``path``, ``id``, ``found`` (a gradient was there) and ``left`` (the ids still in
    ``grads`` after it). ``grads`` is emptied, as the step empties it."""
    rows: list[dict[str, Any]] = []
    remove = grads.remove

    def spy(param_id: str) -> Any:
        taken = remove(param_id)
        rows.append({"id": param_id, "found": taken is not None, "left": list(grads)})
        return taken

    grads.remove = spy  # type: ignore[method-assign]  # the instance's, for this step only
    try:
        stepped = optimizer.step(lr, model, grads)
    finally:
        del grads.remove
    paths = list(model.parameters().items())
    if [p.id for _, p in paths] != [r["id"] for r in rows]:
        raise AssertionError("the step did not visit the params in walk order")
    for (path, _), row in zip(paths, rows, strict=True):
        row["path"] = path
    return stepped, rows


def draw_grads_walk(rows: list[dict[str, Any]], start: list[str], width: float = 7.4,
                    title: str = ""):
    """A grid: one line per visited path (after ``start``, the ids in ``grads`` before the
    step), one column per id; a filled cell is a gradient still in ``grads``."""
    owner: dict[str, str] = {}
    for row in rows:  # an id's column is named by its first path; a tie says so
        owner[row["id"]] = (f"{owner[row['id']].removesuffix(' (tie)')} (tie)"
                            if row["id"] in owner else row["path"])
    ids = list(start)
    fig, ax = plt.subplots(figsize=(width, 0.3 * (len(rows) + 1) + 1.2))
    lines = [("grads before the step", set(start), None)]
    lines += [(f"visit {r['path']}", set(r["left"]), r) for r in rows]
    for y, (_, left, row) in enumerate(lines):
        for x, param_id in enumerate(ids):
            taken = row is not None and row["id"] == param_id
            fill = ("#16a34a" if taken and row["found"] else "#dc2626" if taken
                    else "#93c5fd" if param_id in left else "#f3f4f6")
            ax.add_patch(plt.Rectangle((x, y), 0.94, 0.86, color=fill))
        if row is not None:
            note = ("taken, applied" if row["found"]
                    else "nothing left: old Param kept (tie split)")
            ax.text(len(ids) + 0.2, y + 0.43, note, va="center", fontsize=8,
                    color="#15803d" if row["found"] else "#b91c1c")
    ax.set_xlim(0, len(ids) + 4.6)
    ax.set_ylim(len(lines), 0)
    ax.set_yticks([y + 0.43 for y in range(len(lines))], [t for t, _, _ in lines],
                  fontsize=8)
    ax.set_xticks([x + 0.47 for x in range(len(ids))], [owner.get(i, i) for i in ids],
                  rotation=35, ha="left", fontsize=7.5)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    if title:
        ax.set_title(title, fontsize=9.5, pad=40)
    fig.tight_layout()
    return fig
