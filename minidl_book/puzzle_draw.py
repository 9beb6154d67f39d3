"""Puzzles drawn as grids, the way Tensor-Puzzles draws them: one grid per array, a cell per
element with its value written in it, the inputs first, then the target and (for a failing
check) the reader's output, with the cells that differ outlined (dashed).

:func:`grids` makes the matplotlib figure; :func:`show` displays it in a notebook (and does
nothing elsewhere, so the tests and scripts print only text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["grids", "show", "verdict_panels"]

__trace_hide__ = True


def _as_grid(value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype == np.bool_:
        array = array.astype(np.int64)
    if array.ndim == 0:
        array = array.reshape(1, 1)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim > 2:
        array = array.reshape(-1, array.shape[-1])
    return array.astype(np.float64)


def _label(v: float) -> str:
    if not np.isfinite(v):
        return str(v)
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e6 else f"{v:.2g}"


def grids(panels: Sequence[tuple[str, Any]], title: str = "",
          differ: Mapping[str, np.ndarray] | None = None, plain: Sequence[str] = ()):
    """A figure with one grid per ``(label, array)``; ``differ[label]`` (a bool array of the
    grid's shape) outlines those cells (dashed); a bool array is drawn black (true) and white;
    a grid whose label is in ``plain`` (an input whose values do not matter) is drawn light
    grey."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.patches import Rectangle

    arrays = [(label, _as_grid(v)) for label, v in panels]
    # a bool panel (a mask, a 0/1 matrix) is drawn black and white: its pattern is the point
    binary = {label for label, v in panels if np.asarray(v).dtype == np.bool_}
    cell = 0.32
    widths = [max(a.shape[1], 1) for _, a in arrays]
    height = max(a.shape[0] for _, a in arrays)
    width = max(cell * (sum(widths) + 1.2 * len(arrays)) + 0.4, 0.075 * len(title) + 0.4)
    fig, axes = plt.subplots(1, len(arrays), figsize=(width, cell * height + 0.75),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    values = np.concatenate([a.ravel() for label, a in arrays
                             if a.size and label not in binary and label not in plain]
                            or [np.zeros(1)])
    values = values[np.isfinite(values)]
    span = float(np.abs(values).max()) if values.size else 1.0
    norm = TwoSlopeNorm(vmin=-span - 1e-9, vcenter=0.0, vmax=span + 1e-9)
    for ax, (label, a) in zip(axes[0], arrays):
        if label in binary:
            ax.imshow(a, cmap="Greys", vmin=0, vmax=1.25, aspect="equal")
        elif label in plain:
            ax.imshow(np.ones(a.shape), cmap="Greys", vmin=0, vmax=8, aspect="equal")
        else:
            ax.imshow(a, cmap="coolwarm", norm=norm, aspect="equal")
        mask = None if differ is None else differ.get(label)
        bad = np.zeros(a.shape, bool) if mask is None else _as_grid(mask) > 0
        for (r, c), v in np.ndenumerate(a):
            if label in binary or label in plain:
                ink = "white" if label in binary and v > 0.5 else "black"
            else:  # white on the dark ends of the colour map
                red, green, blue, _ = plt.get_cmap("coolwarm")(norm(v))
                ink = "white" if 0.299 * red + 0.587 * green + 0.114 * blue < 0.5 else "black"
            ax.text(c, r, _label(v), ha="center", va="center", fontsize=7,
                    color=ink, fontweight="bold" if bad[r, c] else "normal")
            if bad[r, c]:
                ax.add_patch(Rectangle((c - 0.45, r - 0.45), 0.9, 0.9, fill=False, edgecolor="#222222", linestyle="--",
                                       lw=2.0, clip_on=False))
        ax.set_xticks(np.arange(-0.5, a.shape[1], 1), minor=True)
        ax.set_yticks(np.arange(-0.5, a.shape[0], 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=1)
        ax.tick_params(which="both", length=0, labelbottom=False, labelleft=False)
        ax.set_title(label, fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def show(fig) -> None:
    """Display ``fig`` in a notebook (nothing outside one), then close it."""
    import matplotlib.pyplot as plt

    try:
        from IPython import get_ipython
        from IPython.display import Image, display

        if get_ipython() is not None:
            import io

            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=110)
            display(Image(data=buffer.getvalue()))
    finally:
        plt.close(fig)


def verdict_panels(verdict) -> tuple[list[tuple[str, Any]], dict] | None:
    """``(panels, differ)`` for a value or shape verdict that kept its arrays: the inputs, the
    target (the reference's answer) and yours."""
    arrays = getattr(verdict, "arrays", None)
    if not arrays or verdict.kind not in ("value", "shape"):
        return None
    every = list(arrays["inputs"].values()) + [arrays["expected"], arrays["found"]]
    if all(np.asarray(v).size <= 1 for v in every):
        return None  # 1x1 grids show nothing the printed verdict does not
    panels = [(name, v) for name, v in arrays["inputs"].items()]
    expected, found = np.asarray(arrays["expected"]), np.asarray(arrays["found"])
    panels += [("target", expected), ("yours", found)]
    differ = {}
    if expected.shape == found.shape and expected.dtype.kind in "biuf" and found.dtype.kind in "biuf":
        with np.errstate(invalid="ignore"):
            differ["yours"] = ~np.isclose(found.astype(np.float64), expected.astype(np.float64),
                                          rtol=1e-6, atol=1e-6, equal_nan=True)
    return panels, differ
