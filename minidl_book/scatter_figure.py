"""A scatter drawn with arrows: the index row, the values row, and the output grid, one arrow
from each value to the place its index sends it (``dim=0``: row ``index[0][j]`` of column
``j``; ``dim=1``: column ``index[0][j]`` of row 0), each output cell written as what was there
plus what arrived."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

__all__ = ["draw_scatter"]

_W = 2.4  # a cell's width (its height is 1)


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _cell(ax, c: int, y: float, text: str, face: str = "white") -> None:
    ax.add_patch(Rectangle((c * _W, y), _W, 1, facecolor=face, edgecolor="black", lw=0.8))
    ax.text(c * _W + 0.15, y + 0.5, text, ha="left", va="center", fontsize=10)


def draw_scatter(base: Sequence[Sequence[float]], index: Sequence[int],
                 values: Sequence[float], dim: int, title: str):
    """``base.scatter(dim, [index], [values])`` with the rule Add, for one row of indices and
    values: the three rows/grids and an arrow per value; returns the figure."""
    rows, cols = len(base), len(base[0])
    got: dict[tuple[int, int], list[float]] = {}
    for j, (k, v) in enumerate(zip(index, values, strict=True)):
        got.setdefault((k, j) if dim == 0 else (0, k), []).append(v)
    top = 3.0  # the output grid's first row (y grows downwards)
    left = 2.2  # room for the row names
    fig, ax = plt.subplots(figsize=(0.4 * (cols * _W + left), 0.4 * (top + rows + 0.9)))
    for y, name, row in ((0, "index", index), (1, "values", values)):
        ax.text(-0.2, y + 0.5, name, ha="right", va="center", fontsize=10)
        for j, v in enumerate(row):
            _cell(ax, j, y, _num(v), "#eeeeee" if name == "index" else "white")
    ax.text(-0.2, top + rows / 2, "out", ha="right", va="center", fontsize=10)
    for r in range(rows):
        for c in range(cols):
            sent = got.get((r, c), [])
            text = "+".join(_num(v) for v in [base[r][c], *sent])
            if sent:
                text += f"={_num(base[r][c] + sum(sent))}"
            _cell(ax, c, top + r, text, "#cfe3f5" if sent else "white")
    for j, k in enumerate(index):
        r, c = (k, j) if dim == 0 else (0, k)
        ax.annotate("", xy=((c + 1) * _W - 0.3, top + r + 0.15),
                    xytext=((j + 1) * _W - 0.3, 1.9),
                    arrowprops={"arrowstyle": "->", "color": "tab:blue", "lw": 1.4})
    ax.set_xlim(-left, cols * _W + 0.05)
    ax.set_ylim(top + rows + 0.05, -0.05)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=10, loc="left")
    fig.tight_layout()
    return fig
