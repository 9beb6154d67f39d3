"""The conv-backward chapter's picture of padding as the transposed conv's crop.

Mirrors burn's ``conv_transpose2d`` ``padding`` (burn-backend ``modules/conv.rs``,
``calculate_conv_transpose_output_size``: ``... - 2 * padding``; burn-flex
``ops/conv_transpose.rs``, whose col2im skips the positions below ``pad`` and past the
output): ``x.grad`` of a conv with padding ``p`` is the full transposed conv of
``grad_out`` by the kernel, cropped by ``p`` on each side. :func:`draw_transpose_crop`
draws ``grad_out``, the kernel, the full result with the ring the crop drops, and the
crop; the chapter asserts what it shows in its own hidden cells.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from minidl_book.conv_pictures import HL, box

__all__ = ["crop", "draw_transpose_crop"]

RING = "#EEEEEE"  # the cells the crop drops: gradients of the forward's padding


def crop(full: np.ndarray, pad: int) -> np.ndarray:
    """``full`` (2-D) without ``pad`` rows and columns on each side."""
    h, w = full.shape
    return full[pad:h - pad, pad:w - pad]


def _grid(ax, x0: float, y0: float, vals: np.ndarray, face) -> None:
    for r in range(vals.shape[0]):
        for q in range(vals.shape[1]):
            f = face(r, q)
            box(ax, x0 + q, y0 + r, f"{vals[r, q]:g}", f,
                colour="#9E9E9E" if f == RING else "black")


def draw_transpose_crop(g: np.ndarray, w: np.ndarray, full: np.ndarray,
                        pad: int) -> np.ndarray:
    """``grad_out`` ``g`` and the kernel ``w`` (2-D), the full transposed conv ``full``
    (the live result, 2-D) with its ``pad``-wide ring shaded, ``g[0, 0]``'s stamp framed
    in red, and the crop. Returns the crop drawn."""
    (gh, gw), (k1, k2), (fh, fw) = g.shape, w.shape, full.shape
    kept = crop(full, pad)
    fig, ax = plt.subplots(figsize=(7.5, 2.9))
    y_g = (fh - gh) / 2
    _grid(ax, 0, y_g, g, lambda r, q: "#C8E6C9")
    ax.add_patch(plt.Rectangle((0, y_g), 1, 1, fill=False, ec=HL, lw=2))
    ax.text(gw / 2, y_g - 0.25, "grad_out", ha="center", va="bottom", fontsize=8.5)
    xk, y_k = gw + 0.9, (fh - k1) / 2
    _grid(ax, xk, y_k, w, lambda r, q: "#E0E0E0")
    ax.text(xk + k2 / 2, y_k - 0.25, "kernel", ha="center", va="bottom", fontsize=8.5)
    ax.annotate("", xy=(xk + k2 + 1.6, fh / 2), xytext=(xk + k2 + 0.2, fh / 2),
                arrowprops=dict(arrowstyle="->", color="#616161", lw=1.2))
    xf = xk + k2 + 1.9

    def ring(r, q):
        inside = pad <= r < fh - pad and pad <= q < fw - pad
        return "#FFF8E1" if inside else RING

    _grid(ax, xf, 0, full, ring)
    ax.add_patch(plt.Rectangle((xf, 0), k2, k1, fill=False, ec=HL, lw=2))
    ax.add_patch(plt.Rectangle((xf + pad, pad), fw - 2 * pad, fh - 2 * pad, fill=False,
                               ec="black", lw=1.6, ls="--"))
    ax.text(xf + fw / 2, -0.25, f"full transpose, padding 0: {fh} × {fw}",
            ha="center", va="bottom", fontsize=8.5)
    ax.annotate("", xy=(xf + fw + 1.6, fh / 2), xytext=(xf + fw + 0.2, fh / 2),
                arrowprops=dict(arrowstyle="->", color="#616161", lw=1.2))
    ax.text(xf + fw + 0.9, fh / 2 - 0.2, f"crop\n{pad}", ha="center", va="bottom",
            fontsize=8.5)
    xc, y_c = xf + fw + 1.9, pad
    _grid(ax, xc, y_c, kept, lambda r, q: "#FFF8E1")
    ax.text(xc + kept.shape[1] / 2, y_c - 0.25, f"x.grad: {kept.shape[0]} × "
            f"{kept.shape[1]}", ha="center", va="bottom", fontsize=8.5)
    ax.set_xlim(-0.2, xc + kept.shape[1] + 0.2), ax.set_ylim(fh + 0.1, -1.0)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return kept
