"""The tensors chapter's strides diagram: views of one buffer, each cell labelled with the
buffer position it reads, beside the buffer itself.

A view of ``arange(n)`` holds, in each cell, exactly the offset (in elements) of the buffer
element it reads, so drawing the values is drawing the address arithmetic
``position = offset + sum(index[d] * stride[d])``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["draw_broadcast", "draw_views", "element_strides"]


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    """An array's strides in elements instead of bytes."""
    return tuple(s // array.itemsize for s in array.strides)


def draw_views(buffer: np.ndarray, views: dict[str, np.ndarray]):
    """Draw ``buffer`` (1-D, values 0..n-1) as a strip and each 2-D view as a grid whose
    cells show the buffer position they read; titles give shape and strides in elements.
    Cells of a view that share a buffer position with the highlighted one are coloured
    alike, so a stride of 0 (one row read five times) shows as a column of one colour."""
    n = buffer.size
    cmap = plt.get_cmap("tab20", n)
    fig = plt.figure(figsize=(9.5, 4.6))
    grid = fig.add_gridspec(2, len(views), height_ratios=[4, 1], hspace=0.55, wspace=0.35)
    for i, (title, view) in enumerate(views.items()):
        ax = fig.add_subplot(grid[0, i])
        rows, cols = view.shape
        for r in range(rows):
            for c in range(cols):
                k = int(view[r, c])
                ax.add_patch(plt.Rectangle((c, 4 - r), 1, 1, color=cmap(k), ec="white"))
                ax.text(c + 0.5, 4.5 - r, str(k), ha="center", va="center", fontsize=9)
        ax.set_xlim(0, 4)
        ax.set_ylim(0, 5)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(f"{title}\nshape {list(view.shape)}, strides {element_strides(view)}",
                     fontsize=9)
    strip = fig.add_subplot(grid[1, :])
    for k in range(n):
        strip.add_patch(plt.Rectangle((k, 0), 1, 1, color=cmap(k), ec="white"))
        strip.text(k + 0.5, 0.5, str(k), ha="center", va="center", fontsize=9)
    strip.set_xlim(0, n)
    strip.set_ylim(0, 1)
    strip.set_aspect("equal")
    strip.axis("off")
    strip.set_title("the one buffer in memory (12 float32, positions 0-11)", fontsize=9)
    return fig


def draw_broadcast(col: np.ndarray, row: np.ndarray, total: np.ndarray):
    """Draw a ``[r, 1]`` operand, a ``[1, c]`` operand and their ``[r, c]`` sum: each operand
    stretched to the result's shape (its one real cell solid, the repeats pale, as a stride
    of 0 reads them), and the result's cells labelled with the two values they add."""
    r, c = total.shape
    fig, axes = plt.subplots(1, 3, figsize=(9.5, 2.6))
    cmap = plt.get_cmap("tab10")
    panels = [
        (f"col: shape {list(col.shape)}, stretched", lambda i, j: (col[i, 0], i, j == 0)),
        (f"row: shape {list(row.shape)}, stretched", lambda i, j: (row[0, j], j, i == 0)),
        (f"col + row: shape {list(total.shape)}", None),
    ]
    for ax, (title, cell) in zip(axes, panels, strict=True):
        for i in range(r):
            for j in range(c):
                if cell is None:
                    colour, alpha = cmap(i), 0.35
                    label = f"{col[i, 0]:g}+{row[0, j]:g}"
                else:
                    value, hue, real = cell(i, j)
                    colour, alpha, label = cmap(hue + (0 if title.startswith("col") else 5)), \
                        (0.9 if real else 0.3), f"{value:g}"
                ax.add_patch(plt.Rectangle((j, r - 1 - i), 1, 1, color=colour, alpha=alpha,
                                           ec="white"))
                ax.text(j + 0.5, r - 0.5 - i, label, ha="center", va="center", fontsize=8)
        ax.set_xlim(0, c)
        ax.set_ylim(0, r)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(title, fontsize=9)
    fig.text(0.5, 0.02, "solid: the operand's own cells; pale: the same cells read again "
             "(stride 0)", ha="center", fontsize=8)
    return fig
