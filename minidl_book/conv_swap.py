"""The conv-backward chapter's picture of burn's dim-0/1 swap for the weight's gradient.

Mirrors burn-backend's ``conv2d_weight_grad_no_groups`` (``src/backend/ops/modules/
conv.rs:857-883`` at v0.22.0-pre.2): ``float_swap_dims(x, 0, 1)`` turns ``x [n, c, h, w]``
into ``c`` images of ``n`` channels, ``float_swap_dims(output_grad, 0, 1)`` turns
``grad_out [n, o, h_out, w_out]`` into ``o`` kernels of ``n`` channels, and ``conv2d`` of
the two (its stride the forward's dilation, its dilation the forward's stride) is
``[c, o, ., .]``, swapped back to the weight's ``[o, c, ., .]``. :func:`draw_swap` draws
each ``h x w`` plane as one tile, coloured by its image ``n``; it returns the tiles'
``(n, channel)`` labels where they are drawn, for the chapter to assert against a live
``swap_dims``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["IMAGE", "draw_swap"]

IMAGE = ["#C5CAE9", "#F8BBD0", "#C8E6C9"]  # one colour per image n
GREY = "#616161"


def _tiles(ax, x0, y0, labels, title, note) -> None:
    """A grid of plane tiles; ``labels[r][q] = (n, second)``, coloured by ``n``."""
    for r, row in enumerate(labels):
        for q, (n, k) in enumerate(row):
            ax.add_patch(plt.Rectangle((x0 + 1.25 * q, y0 + 1.05 * r), 1.1, 0.9,
                                       facecolor=IMAGE[n], edgecolor="white"))
            ax.text(x0 + 1.25 * q + 0.55, y0 + 1.05 * r + 0.45, f"n{n} {k}",
                    ha="center", va="center", fontsize=8)
    ax.text(x0 - 0.1, y0 - 0.45, title, ha="left", va="bottom", fontsize=8.5,
            fontweight="bold")
    ax.text(x0 - 0.1, y0 + 1.05 * len(labels) + 0.05, note, ha="left", va="top",
            fontsize=7.5, color=GREY)


def _arrow(ax, x0, x1, y, text) -> None:
    ax.annotate("", xy=(x1, y), xytext=(x0, y),
                arrowprops=dict(arrowstyle="->", color=GREY, lw=1.2))
    ax.text((x0 + x1) / 2, y - 0.15, text, ha="center", va="bottom", fontsize=7.5,
            color=GREY)


def draw_swap(n: int, c: int, o: int, stride: int, dilation: int) -> dict:
    """burn's swap for ``x [n, c, ., .]`` and ``grad_out [n, o, ., .]``: each plane a tile
    labelled ``n<image> c<channel>`` (or ``o<channel>``). Returns ``{"x": [c][n], "g":
    [o][n]}`` of the ``(n, channel)`` each swapped tile holds."""
    x_before = [[(i, f"c{k}") for k in range(c)] for i in range(n)]
    g_before = [[(i, f"o{k}") for k in range(o)] for i in range(n)]
    x_after = [[(i, f"c{k}") for i in range(n)] for k in range(c)]
    g_after = [[(i, f"o{k}") for i in range(n)] for k in range(o)]
    fig, ax = plt.subplots(figsize=(7.6, 4.3))
    R = 7.2  # the swapped tiles' column
    _tiles(ax, 0, 0.4, x_before, f"x  [n={n}, c={c}, h, w]",
           "a row per image, its channels across")
    _tiles(ax, R, 0.4, x_after, f"swapped  [c={c}, n={n}, h, w]",
           "a row per channel c; across: the images, as its channels")
    y_g = 1.05 * max(n, c) + 2.3
    _tiles(ax, 0, y_g, g_before, f"grad_out  [n={n}, o={o}, h_out, w_out]",
           "a row per image, its output channels across")
    _tiles(ax, R, y_g, g_after, f"swapped  [o={o}, n={n}, h_out, w_out]",
           "a row per output channel o, a kernel; across: the images")
    for y in (0.4 + 0.5 * 1.05 * n, y_g + 0.5 * 1.05 * n):
        _arrow(ax, 1.25 * max(c, o) + 0.2, R - 0.3, y, "swap dims 0, 1")
    y_c = y_g + 1.05 * max(n, o) + 1.3
    ax.text(-0.1, y_c, f"conv2d(swapped x, swapped grad_out) → [c={c}, o={o}, ·, ·], "
            f"its stride the forward's dilation ({dilation}), its dilation the forward's "
            f"stride ({stride})", fontsize=8, va="center")
    ax.text(-0.1, y_c + 0.7, f"a conv sums over its input channels: here the {n} images",
            fontsize=8, va="center", color=GREY)
    ax.text(-0.1, y_c + 1.4, f"swap dims 0, 1 back, crop → [o={o}, c={c}, k1, k2] = "
            "weight.grad", fontsize=8.5, va="center", fontweight="bold")
    ax.set_xlim(-0.3, R + 1.25 * max(n, 2) + 3.2), ax.set_ylim(y_c + 1.9, -0.6)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return {"x": np.array([[[i, int(k[1:])] for i, k in row] for row in x_after]),
            "g": np.array([[[i, int(k[1:])] for i, k in row] for row in g_after])}
