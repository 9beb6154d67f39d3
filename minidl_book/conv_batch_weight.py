"""The conv-backward chapter's batch example of the weight's gradient as a convolution.

Mirrors burn-backend's ``conv2d_weight_grad_no_groups`` (``src/backend/ops/modules/
conv.rs``): ``conv2d`` of ``x`` by ``output_grad``, both with dims 0 and 1 swapped, under
``ConvOptions::new(dilation, padding, stride, 1)``. Swapped, the batch is the conv's
input-channel dim, so a conv's sum over input channels sums the images; ``grad_out`` is
the kernel, its entries the forward's stride apart (its dilation). :func:`batch_case` is
the worked example (batch 2, two input and two output channels, a 2 x 2 kernel, stride
2, small integers); :func:`tap_products` lists the products one weight entry adds,
reading pixel ``(d·i + s·a, d·j + s·b)`` for ``grad_out`` entry ``(a, b)``;
:func:`draw_batch_tap` draws them image by image. The chapter asserts what the figure
shows against minidl's recorded step and PyTorch's ``w.grad`` in its hidden cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from minidl_book.conv_pictures import STAMP, box

__all__ = ["BatchConv", "batch_case", "draw_batch_tap", "tap_products"]

READ_NOT = "#F5F5F5"  # a pixel the drawn tap does not read


@dataclass
class BatchConv:
    """``conv2d(x, weight, stride)`` with no padding and its ``grad_out`` (integer arrays);
    the weight's values do not enter its gradient, only its shape ``[o, c, k, k]``."""

    x: np.ndarray  # [n, c, h, w]
    g: np.ndarray  # grad_out, [n, o, h_out, w_out]
    k: int
    stride: int

    @property
    def weight_shape(self) -> tuple[int, int, int, int]:
        return (self.g.shape[1], self.x.shape[1], self.k, self.k)


def batch_case() -> BatchConv:
    """Batch 2, 2 input channels of 4 x 4, 2 output channels, a 2 x 2 kernel, stride 2."""
    x = np.random.default_rng(2).integers(0, 4, (2, 2, 4, 4))  # [n, c, h, w]
    g = np.random.default_rng(7).integers(-1, 3, (2, 2, 2, 2))  # [n, o, h_out, w_out]
    return BatchConv(x, g, k=2, stride=2)


def tap_products(case: BatchConv, tap: tuple[int, int, int, int], *, stride: int | None
                 = None, dilation: int = 1, images: tuple[int, ...] | None = None
                 ) -> list[list[tuple[int, int, int, int]]]:
    """For weight entry ``tap = (o, c, i, j)``: per image, the ``(row, col, x, g)`` of each
    product, ``x[n, c, d·i + s·a, d·j + s·b] · g[n, o, a, b]``. ``stride`` and
    ``dilation`` are the forward's (``stride`` defaults to the case's)."""
    o, c, i, j = tap
    s = case.stride if stride is None else stride
    n_img, _, ho, wo = case.g.shape
    out = []
    for n in range(n_img) if images is None else images:
        terms = []
        for a in range(ho):
            for b in range(wo):
                r, q = dilation * i + s * a, dilation * j + s * b
                terms.append((r, q, int(case.x[n, c, r, q]), int(case.g[n, o, a, b])))
        out.append(terms)
    return out


def _products(terms: list[tuple[int, int, int, int]]) -> str:
    return " + ".join(f"{gv}·{xv}" if gv >= 0 else f"(−{-gv})·{xv}"
                      for _, _, xv, gv in terms)


def draw_batch_tap(case: BatchConv, tap: tuple[int, int, int, int],
                   total: float) -> list[int]:
    """Each image's ``x[n, c]`` with the pixels weight entry ``tap`` reads coloured by the
    ``grad_out[n, o]`` entry they meet, that image's sum of products, and ``total`` (the
    live entry) as the two images' sum. Returns the per-image sums drawn."""
    o, c, i, j = tap
    s, (n_img, _, h, w), (_, _, ho, wo) = case.stride, case.x.shape, case.g.shape
    per_image = tap_products(case, tap)
    sums = [sum(xv * gv for _, _, xv, gv in terms) for terms in per_image]
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    row_h = h + 1.6
    T = w + 3.8  # the sums' column
    for n, terms in enumerate(per_image):
        y0 = n * row_h + 0.9
        colour = {(r, q): STAMP[k] for k, (r, q, _, _) in enumerate(terms)}
        for r in range(h):
            for q in range(w):
                box(ax, q, y0 + r, f"{case.x[n, c, r, q]}",
                    colour.get((r, q), READ_NOT),
                    colour="black" if (r, q) in colour else "#9E9E9E")
        ax.text(w / 2, y0 - 0.2, f"image {n}: x[{n}, {c}]", ha="center", va="bottom",
                fontsize=8.5)
        X = w + 0.8
        for a in range(ho):
            for b in range(wo):
                box(ax, X + b, y0 + 1 + a, f"{case.g[n, o, a, b]}", STAMP[a * wo + b])
        ax.text(X + wo / 2, y0 + 0.8, f"grad_out[{n}, {o}]", ha="center", va="bottom",
                fontsize=8.5)
        ax.text(T, y0 + 2, f"image {n}: {_products(terms)} = {sums[n]}",
                ha="left", va="center", fontsize=8.5)
    y_sum = n_img * row_h + 0.6
    ys = [n * row_h + 2.9 for n in range(n_img)]  # the images' sum lines
    ax.plot([T - 0.3, T - 0.5, T - 0.5], [ys[0], ys[0], y_sum], color="#616161", lw=1)
    for y in ys[1:]:
        ax.plot([T - 0.3, T - 0.5], [y, y], color="#616161", lw=1)
    ax.annotate("", xy=(T - 0.1, y_sum), xytext=(T - 0.52, y_sum),
                arrowprops=dict(arrowstyle="->", color="#616161", lw=1))
    ax.text(T, y_sum, f"weight.grad[{o}, {c}, {i}, {j}] = {' + '.join(map(str, sums))}"
            f" = {total:g}".replace("+ -", "− "), ha="left", va="center", fontsize=9.5,
            fontweight="bold")
    ax.text(T, y_sum + 0.9, "summed over the batch: the swapped conv's input channels",
            ha="left", va="center", fontsize=8.5)
    ax.text(T, 0.1, f"tap ({i}, {j}) read pixel ({i} + {s}a, {j} + {s}b) for output (a, b):"
            f"\ngrad_out's entries {s} apart on x: dilated by the forward's stride",
            ha="left", va="center", fontsize=8.5, color="#616161")
    ax.set_xlim(-0.2, 18.2), ax.set_ylim(y_sum + 1.4, -0.7)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return sums
