"""The modules chapter's grid: what each map and walk does to each kind of leaf.

burn's ``Module::map`` takes a ``ModuleMapper`` and ``Module::visit`` a ``ModuleVisitor``
(burn-core's ``module/base.rs:465`` and ``:358`` at v0.22.0-pre.2); minidl's modes, its
optimizer step and ``load_record`` are such maps, ``parameters()`` and ``into_record()`` such
walks. ``leaf_grid(model, maps, walks)`` RUNS each one on ``model`` and reads, off the two
trees, what it did to the leaves of each kind (:data:`COLUMNS`): a cell is ``(status,
word)``, the status one of ``changed`` / ``kept`` (a map) or ``read`` / ``skipped`` (a walk).
``draw_leaf_grid(grid)`` draws it, so a change in minidl changes the picture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from minidl.module import Module, Param
from minidl_book.module_tree import KIND_COLORS, map_rows

__all__ = ["COLUMNS", "STATUS_COLORS", "draw_leaf_grid", "leaf_grid", "map_cells",
           "walk_cells"]

#: the kinds of leaf, in the chapter's words; "tied param" is a param's second path
COLUMNS = ("param", "tied param", "flag", "running state", "constant")
#: status → cell fill
STATUS_COLORS = {"changed": "#fdba74", "kept": "#e5e7eb", "read": "#bbf7d0",
                 "skipped": "#ffffff"}

Cell = tuple[str, str]


def _column(row: dict) -> str:
    return "tied param" if "tied_to" in row else row["kind"]


def _param_cell(old: Param, new: Param) -> Cell:
    if new is old:
        return "kept", "same Param"
    if new.id != old.id:
        return "changed", "new id"
    if not new.is_initialized():
        return "changed", "still lazy"
    if not old.is_initialized():
        return "changed", "drawn"
    a, b = old.val(), new.val()
    if b is not a and a.device.is_autodiff() != b.device.is_autodiff():
        if not b.device.is_autodiff():
            return "changed", "off autodiff"
        return "changed", "lifted, " + ("tracked" if b.is_require_grad() else "no grad")
    if b is not a and a.is_require_grad() != b.is_require_grad():
        return "changed", "grad " + ("on" if b.is_require_grad() else "off")
    if b is not a:
        return "changed", "new tensor"
    if new.require_grad != old.require_grad:
        return "changed", "grad " + ("on" if new.require_grad else "off")
    return "kept", "same tensor"


def _tied_cell(row: dict, after: Module) -> Cell:
    first = after.parameters()[row["tied_to"]]
    old, new = row["old"], row["new"]
    if new is first:
        return ("kept" if new is old else "changed"), "tie kept"
    if new is old:
        return "kept", "split, unmoved"
    return "changed", "split" if new.id == old.id else "new id"


def _flag_word(param: Param) -> str:
    flag = param.val()
    return "on" if flag.enabled else "off" if flag.trainable else "off, frozen"


def _leaf_cell(row: dict, after: Module) -> Cell:
    old, new = row["old"], row["new"]
    column = _column(row)
    if column == "tied param":
        return _tied_cell(row, after)
    if column == "param":
        return _param_cell(old, new)
    if column == "flag":
        same = (new.val().enabled, new.val().trainable) == (old.val().enabled,
                                                           old.val().trainable)
        return ("kept" if same else "changed"), _flag_word(new)
    if column == "running state":
        if new is old:
            return "kept", "shared"
        return "changed", "unshared copy" if new.value() is old.value() else "new tensor"
    return ("kept", "same") if row["relation"] == "shared" else ("changed", "replaced")


def _merge(cells: list[Cell]) -> Cell:
    """One cell for a column: the leaves' common cell, or ``mixed``."""
    if not cells:
        return "skipped", "none here"
    if len(set(cells)) == 1:
        return cells[0]
    return "changed", "mixed"


def map_cells(before: Module, after: Module) -> dict[str, Cell]:
    """What the map that turned ``before`` into ``after`` did to each column's leaves."""
    found: dict[str, list[Cell]] = {c: [] for c in COLUMNS}
    for row in map_rows(before, after):
        found[_column(row)].append(_leaf_cell(row, after))
    return {c: _merge(cells) for c, cells in found.items()}


def walk_cells(model: Module, paths: Iterable[str], verb: str) -> dict[str, Cell]:
    """A walk that returned ``paths`` (dotted): ``read`` (``verb``) or ``skipped``, per
    column; a tied param read at its second path says ``verb again``."""
    seen = set(paths)
    found: dict[str, list[Cell]] = {c: [] for c in COLUMNS}
    for row in map_rows(model, model):
        column = _column(row)
        word = verb + (" again" if column == "tied param" else "")
        found[column].append(("read", word) if row["label"] in seen else
                             ("skipped", "skipped"))
    return {c: _merge(cells) for c, cells in found.items()}


def leaf_grid(model: Module, maps: dict[str, Callable[[Module], Module]],
              walks: dict[str, tuple[Callable[[Module], Iterable[str]], str]]
              ) -> dict[str, dict[str, Cell]]:
    """Run every map (name → ``fn(model)``, a new module) and walk (name → ``(fn(model),
    the paths it returns; verb)``) on ``model``; the grid ``{row: {column: cell}}``."""
    grid = {name: map_cells(model, fn(model)) for name, fn in maps.items()}
    for name, (fn, verb) in walks.items():
        grid[name] = walk_cells(model, fn(model), verb)
    return grid


def draw_leaf_grid(grid: dict[str, dict[str, Cell]], title: str | None = None,
                   width: float = 7.4) -> Any:
    """The grid as coloured cells, a row per map or walk, a column per kind; the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    names = list(grid)
    fig, ax = plt.subplots(figsize=(width, 0.3 * len(names) + 1.0))
    x0, w = 2.3, (width - 2.45) / len(COLUMNS)
    for c, column in enumerate(COLUMNS):
        fill, stroke = KIND_COLORS["param" if column == "tied param" else column]
        ax.add_patch(plt.Rectangle((x0 + c * w, -0.5), w * 0.97, 0.9, fc=fill, ec=stroke,
                                   lw=0.8))
        ax.text(x0 + (c + 0.48) * w, -0.05, column, ha="center", va="center",
                fontsize=8, weight="bold")
    for r, name in enumerate(names, start=1):
        ax.text(0, r, name, va="center", fontsize=8, family="monospace")
        for c, column in enumerate(COLUMNS):
            status, word = grid[name][column]
            ax.add_patch(plt.Rectangle((x0 + c * w, r - 0.45), w * 0.97, 0.9,
                                       fc=STATUS_COLORS[status], ec="#d1d5db", lw=0.6))
            ax.text(x0 + (c + 0.48) * w, r, word, ha="center", va="center", fontsize=8,
                    color="#6b7280" if status == "skipped" else "black")
    ax.set_xlim(0, x0 + len(COLUMNS) * w)
    ax.set_ylim(len(names) + 0.6, -0.6)
    ax.axis("off")
    handles = [Patch(fc=f, ec="#9ca3af", label=s) for s, f in STATUS_COLORS.items()]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4,
              fontsize=8, frameon=False)
    if title:
        ax.set_title(title, fontsize=9.5, loc="left")
    fig.tight_layout()
    return fig
