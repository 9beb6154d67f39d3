"""The small convolution of the nn-modules and conv-backward chapters, and its pictures.

``small_case()`` is the figures' convolution (two input channels of 3 x 3, padding 1, a
2 x 2 kernel, two output channels) with its im2col arrays; ``draw_im2col`` draws the
forward as im2col and one matmul; ``draw_col2im`` draws col2im tap by tap: each tap's
block of the patches' gradient added onto the slice of the padded input it read, the sum,
and the crop. Both chapters assert what the pictures show in their own hidden cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["CH", "HL", "STAMP", "SmallConv", "box", "draw_col2im", "draw_im2col",
           "draw_flipped", "draw_strided_col2im", "draw_transpose_stamps",
           "draw_weight_conv", "strided_taps",
           "small_case"]

CH = ["#BBDEFB", "#FFE0B2"]  # input channel 0, channel 1
HL = "#E53935"  # the followed position


@dataclass
class SmallConv:
    """The figures' convolution and its im2col arrays (all integer numpy arrays)."""

    x: np.ndarray  # [1, c, h, w]
    w: np.ndarray  # [c_out, c, k, k]
    pad: int
    xp: np.ndarray  # x padded
    patches: np.ndarray  # [h_out * w_out, k * k * c], columns (i, j, c)
    w_mat: np.ndarray  # [k * k * c, c_out], rows (i, j, c)
    prod: np.ndarray  # patches @ w_mat
    out_maps: np.ndarray  # [1, c_out, h_out, w_out]
    col_names: list  # the (i, j, c) of each column
    pick: tuple = (1, 2)  # the output position the im2col figure follows

    @property
    def h_out(self) -> int:
        return self.out_maps.shape[2]

    @property
    def row(self) -> int:
        return self.pick[0] * self.h_out + self.pick[1]


def small_case() -> SmallConv:
    c, h, w, k, pad, c_out = 2, 3, 3, 2, 1, 2
    x = np.stack([np.arange(1, 10), np.arange(11, 20)]).reshape(1, c, h, w)
    weight = np.random.default_rng(4).integers(-1, 3, (c_out, c, k, k))
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    h_out = h + 2 * pad - k + 1
    taps = [xp[:, :, i:i + h_out, j:j + h_out] for i in range(k) for j in range(k)]
    cols = np.concatenate(taps, 1).transpose(0, 2, 3, 1).reshape(h_out * h_out, k * k * c)
    w_mat = weight.transpose(2, 3, 1, 0).reshape(k * k * c, c_out)
    prod = cols @ w_mat
    out_maps = prod.reshape(1, h_out, h_out, c_out).transpose(0, 3, 1, 2)
    names = [(i, j, ch) for i in range(k) for j in range(k) for ch in range(c)]
    return SmallConv(x, weight, pad, xp, cols, w_mat, prod, out_maps, names)


def box(ax, x0, y0, text, face, fs=8.5, colour="black", stretch="normal") -> None:
    """One cell of a grid: a coloured unit square with its value."""
    ax.add_patch(plt.Rectangle((x0, y0), 1, 1, facecolor=face, edgecolor="white",
                               lw=0.8))
    ax.text(x0 + 0.5, y0 + 0.5, text, ha="center", va="center", fontsize=fs,
            color=colour, fontstretch=stretch)


def draw_im2col(s: SmallConv) -> None:
    """The padded input, the patch matrix, the weight as a matrix, the product and the
    output maps, one output position followed in red."""
    C, H = s.x.shape[1], s.x.shape[2]
    K, PAD, C_OUT, h_out = s.w.shape[2], s.pad, s.w.shape[0], s.h_out
    cols, w_mat, prod, PICK, row = s.patches, s.w_mat, s.prod, s.pick, s.row
    fig, ax = plt.subplots(figsize=(7.6, 5.6))
    for c in range(C):  # 1. the padded input, one grid per channel; the window framed
        y0 = 1.5 + c * 7
        ax.text(2.5, y0 - 0.4, f"x, channel {c}", ha="center", fontsize=9)
        for r in range(H + 2 * PAD):
            for q in range(H + 2 * PAD):
                pad_cell = not (PAD <= r < PAD + H and PAD <= q < PAD + H)
                box(ax, q, y0 + r, f"{s.xp[0, c, r, q]}",
                    "#EEEEEE" if pad_cell else CH[c],
                    colour="#9E9E9E" if pad_cell else "black", fs=9)
        ax.add_patch(plt.Rectangle((PICK[1], y0 + PICK[0]), K, K, fill=False, ec=HL,
                                   lw=2))
    X0 = 7.5  # 2. the patch matrix: one row per output position, columns (i, j, c)
    ax.text(X0 + 4, -2.3, f"patches (im2col) [{cols.shape[0]}, {cols.shape[1]}]\n"
            "[h_out · w_out, k1 · k2 · c]", ha="center", fontsize=9)
    for q, (i, j, c) in enumerate(s.col_names):
        ax.text(X0 + q + 0.5, -0.15, f"{i},{j},{c}", ha="center", va="bottom",
                fontsize=9, rotation=90)
    for r in range(cols.shape[0]):
        ax.text(X0 - 0.2, r + 0.5, f"({r // h_out},{r % h_out})", ha="right",
                va="center", fontsize=9, color=HL if r == row else "#616161")
        for q, (_, _, c) in enumerate(s.col_names):
            v = cols[r, q]
            box(ax, X0 + q, r, f"{v}", CH[c] if v else "#EEEEEE",
                colour="black" if v else "#9E9E9E", fs=9)
    ax.add_patch(plt.Rectangle((X0, row), cols.shape[1], 1, fill=False, ec=HL, lw=2))
    for y_in in (1.5, 8.5):
        ax.annotate("", xy=(X0 - 1.6, row + 0.5), xytext=(PICK[1] + K + 0.1,
                                                         y_in + PICK[0] + 1),
                    arrowprops=dict(arrowstyle="->", color=HL, lw=1.2))
    ax.text(X0 - 0.2, -0.15, "column (i, j, c)\nrow (h, w) of out", ha="right",
            va="bottom", fontsize=9, color="#616161")
    ax.text(X0 + cols.shape[1] + 0.55, 8, "@", ha="center", va="center", fontsize=12)
    X1 = X0 + cols.shape[1] + 2.6  # 3. the weight, rows in the columns' order
    ax.text(X1 + 1.2, -2.3, "weight\n[k1 · k2 · c, c_out]", ha="center", fontsize=9)
    for q, (i, j, c) in enumerate(s.col_names):
        ax.text(X1 - 0.15, q + 0.5, f"{i},{j},{c}", ha="right", va="center", fontsize=9)
        for o in range(C_OUT):
            box(ax, X1 + o, q, f"{w_mat[q, o]}", CH[c], fs=9)
    for o in range(C_OUT):
        ax.text(X1 + o + 0.5, -0.15, f"out {o}", ha="center", va="bottom", fontsize=9,
                rotation=90)
    ax.text(X1 + C_OUT + 1.0, 8, "=", ha="center", va="center", fontsize=12)
    X2 = X1 + C_OUT + 2.0  # 4. the product, and the same numbers as output maps
    ax.text(X2 + 1, -2.3, f"product\n[{prod.shape[0]}, {prod.shape[1]}]", ha="center",
            fontsize=9)
    for r in range(prod.shape[0]):
        for o in range(C_OUT):
            box(ax, X2 + o, r, f"{prod[r, o]}", "#C8E6C9", fs=9,
                stretch="condensed")
    ax.add_patch(plt.Rectangle((X2, row), C_OUT, 1, fill=False, ec=HL, lw=2))
    X3 = X2 + C_OUT + 2.6
    for o in range(C_OUT):
        y0 = 1.5 + o * 7
        ax.text(X3 + 2, y0 - 0.4, f"output map {o}", ha="center", fontsize=9)
        for r in range(h_out):
            for q in range(h_out):
                box(ax, X3 + q, y0 + r, f"{s.out_maps[0, o, r, q]}", "#C8E6C9", fs=9,
                    stretch="condensed")
        ax.add_patch(plt.Rectangle((X3 + PICK[1], y0 + PICK[0]), 1, 1, fill=False,
                                   ec=HL, lw=2))
    ax.annotate("", xy=(X3 - 0.2, 5.5), xytext=(X2 + C_OUT + 0.2, 8),
                arrowprops=dict(arrowstyle="->", color="#616161", lw=1))
    # above its arrow, clear of it (the arrow falls from y 8 to 5.5)
    ax.text(X2 + C_OUT + 1.3, 5.2, "reshape,\npermute", ha="center", va="bottom",
            fontsize=9)
    ax.set_xlim(-0.3, X3 + 4.3), ax.set_ylim(16.3, -3.4), ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def col2im_blocks(s: SmallConv, grad_out: np.ndarray, channel: int) -> np.ndarray:
    """Each tap's block of the patches' gradient for one input channel, on the padded
    grid: ``[k1 * k2, hp, wp]``, tap (i, j)'s block added at rows i.., columns j.."""
    k = s.w.shape[2]
    hp = s.xp.shape[2]
    g_rows = grad_out[0].transpose(1, 2, 0).reshape(-1, s.w.shape[0])
    patch_grads = g_rows @ s.w_mat.T  # [positions, (i, j, c)]
    out = np.zeros((k * k, hp, hp), patch_grads.dtype)
    for col, (i, j, c) in enumerate(s.col_names):
        if c == channel:
            block = patch_grads[:, col].reshape(s.h_out, s.h_out)
            out[i * k + j, i:i + s.h_out, j:j + s.h_out] += block
    return out


def draw_col2im(s: SmallConv, grad_out: np.ndarray, channel: int) -> np.ndarray:
    """col2im tap by tap for one input channel: each tap's block (its column of the
    patches' gradient, as an h_out x w_out grid) on the slice of the padded gradient it
    read, their sum, and the crop. Returns the cropped gradient."""
    k, pad = s.w.shape[2], s.pad
    blocks = col2im_blocks(s, grad_out, channel)
    hp = blocks.shape[1]
    total = blocks.sum(0)
    crop = total[pad:hp - pad, pad:hp - pad]
    fig, ax = plt.subplots(figsize=(7.5, 2.2))
    gap = hp + 1.1
    grey, face = "#EEEEEE", CH[channel]
    for t in range(k * k):
        i, j = divmod(t, k)
        x0 = t * gap
        for r in range(hp):
            for q in range(hp):
                inside = i <= r < i + s.h_out and j <= q < j + s.h_out
                v = blocks[t, r, q]
                box(ax, x0 + q, r, f"{v:g}" if inside else "", face if inside else grey,
                    fs=9)
        ax.add_patch(plt.Rectangle((x0 + j, i), s.h_out, s.h_out, fill=False, ec=HL,
                                   lw=1.6))
        ax.text(x0 + hp / 2, -0.3, f"tap ({i}, {j}), w = {s.w[0, channel, i, j]}\n"
                f"rows {i}–{i + s.h_out - 1}, cols {j}–{j + s.h_out - 1}",
                ha="center", va="bottom", fontsize=8.5)
        ax.text(x0 + hp + 0.55, hp / 2, "+" if t < k * k - 1 else "=", ha="center",
                va="center", fontsize=13)
    x0 = k * k * gap
    for r in range(hp):
        for q in range(hp):
            inside = pad <= r < hp - pad and pad <= q < hp - pad
            box(ax, x0 + q, r, f"{total[r, q]:g}", face if inside else grey, fs=9,
                colour="black" if inside else "#9E9E9E")
    ax.add_patch(plt.Rectangle((x0 + pad, pad), hp - 2 * pad, hp - 2 * pad, fill=False,
                               ec="black", lw=1.6))
    ax.text(x0 + hp / 2, -0.3, "sum, then crop\nthe padding", ha="center",
            va="bottom", fontsize=8.5)
    ax.set_xlim(-0.2, x0 + hp + 0.2), ax.set_ylim(hp + 0.1, -1.9)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return crop


STAMP = ["#EF9A9A", "#90CAF9", "#A5D6A7", "#FFCC80"]  # one colour per grad_out entry


def _grid(ax, x0, y0, vals, faces, fs=8.5, colours=None) -> None:
    for r in range(vals.shape[0]):
        for q in range(vals.shape[1]):
            colour = colours[r][q] if colours is not None else "black"
            box(ax, x0 + q, y0 + r, f"{vals[r, q]:g}", faces[r][q], fs, colour)


def draw_transpose_stamps(g: np.ndarray, w: np.ndarray, d_x: np.ndarray, stride: int,
                          size_no_pad_out: int) -> np.ndarray:
    """conv_transpose2d drawn as stamps: each entry of the 2-D ``g`` times the kernel
    ``w``, added at rows/columns ``stride`` apart; ``d_x`` (the live result, 2-D) as the
    grid's numbers, the part ``padding_out`` adds shaded. Returns the stamps' sum."""
    (gh, gw), (k1, k2), (h, wd) = g.shape, w.shape, d_x.shape
    owner = np.full((h, wd), -1)
    total = np.zeros((h, wd))
    for a in range(gh):
        for b in range(gw):
            rows, cols = slice(a * stride, a * stride + k1), slice(b * stride,
                                                                   b * stride + k2)
            total[rows, cols] += g[a, b] * w
            owner[rows, cols] = a * gw + b
    fig, ax = plt.subplots(figsize=(7.5, 3.3))
    _grid(ax, 0, 2.5, g, [[STAMP[a * gw + b] for b in range(gw)] for a in range(gh)], 10)
    ax.text(1, 2.2, "grad_out", ha="center", va="bottom", fontsize=9)
    ax.text(2.75, 3.5, "×", ha="center", va="center", fontsize=13)
    _grid(ax, 3.5, 2.5, w, [["#E0E0E0"] * k2] * k1, 10)
    ax.text(4.5, 2.2, "kernel", ha="center", va="bottom", fontsize=9)
    ax.annotate("", xy=(7.9, 3.5), xytext=(6.0, 3.5),
                arrowprops=dict(arrowstyle="->", color="#616161", lw=1.2))
    ax.text(6.95, 3.3, f"stamp each\n{stride} apart", ha="center", va="bottom",
            fontsize=8.5)
    X = 8.5
    faces = [["#EEEEEE" if owner[r, q] < 0 else STAMP[owner[r, q]] for q in range(wd)]
             for r in range(h)]
    colours = [["#9E9E9E" if owner[r, q] < 0 else "black" for q in range(wd)]
               for r in range(h)]
    _grid(ax, X, 0, d_x, faces, 9, colours)
    n = size_no_pad_out
    ax.add_patch(plt.Rectangle((X, 0), n, n, fill=False, ec="black", lw=1.6, ls="--"))
    ax.add_patch(plt.Rectangle((X + n, 0), wd - n, h, facecolor="#7E57C2", alpha=0.18,
                               ec="none"))
    ax.add_patch(plt.Rectangle((X, n), n, h - n, facecolor="#7E57C2", alpha=0.18,
                               ec="none"))
    ax.text(X + wd / 2, -0.25, f"d_x = conv_transpose2d(grad_out, kernel, stride={stride}"
            f")\n{n} × {n} (dashed), padding_out = {h - n}: {h} × {wd}", ha="center",
            va="bottom", fontsize=8.5)
    ax.text(X + wd + 0.3, n + (h - n) / 2, f"rows {n}–{h - 1}, cols {n}–{wd - 1}:\n"
            "added by padding_out,\nno window read them", ha="left", va="center",
            fontsize=8.5, color="#5E35B1")
    ax.set_xlim(-0.2, X + wd + 4.6), ax.set_ylim(h + 0.1, -1.6)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return total


def draw_weight_conv(x: np.ndarray, g: np.ndarray, full: np.ndarray, stride: int,
                     k: int) -> None:
    """The weight's gradient as a conv of the 2-D ``x`` by ``g``, its entries ``stride``
    apart (dilated by the forward's stride), the footprint of result (0, 0) marked, and
    ``full`` (the live un-cropped result) with the ``k`` x ``k`` corner burn keeps."""
    (h, wd), (gh, gw) = x.shape, g.shape
    fig, ax = plt.subplots(figsize=(7.5, 3.5))
    faces = [["#E3F2FD"] * wd for _ in range(h)]
    for a in range(gh):
        for b in range(gw):
            faces[a * stride][b * stride] = STAMP[a * gw + b]
    _grid(ax, 0, 0, x, faces, 9)
    for a in range(gh):
        for b in range(gw):
            ax.text(b * stride + 0.95, a * stride + 0.95, f"×{g[a, b]:g}", ha="right",
                    va="bottom", fontsize=7, color="#B71C1C")
    ax.text(wd / 2, -0.25, f"x, grad_out's entries {stride} apart\n(result (0, 0)'s "
            "taps; it slides by 1)", ha="center", va="bottom", fontsize=8.5)
    ax.annotate("", xy=(wd + 2.2, h / 2), xytext=(wd + 0.3, h / 2),
                arrowprops=dict(arrowstyle="->", color="#616161", lw=1.2))
    ax.text(wd + 1.25, h / 2 - 0.2, f"dilation\n= {stride}", ha="center", va="bottom",
            fontsize=8.5)
    X = wd + 2.7
    n = full.shape[0]
    faces = [["#C8E6C9" if r < k and q < k else "#EEEEEE" for q in range(n)]
             for r in range(n)]
    colours = [["black" if r < k and q < k else "#9E9E9E" for q in range(n)]
               for r in range(n)]
    _grid(ax, X, (h - n) / 2, full, faces, 9, colours)
    ax.add_patch(plt.Rectangle((X, (h - n) / 2), k, k, fill=False, ec="black", lw=1.8))
    ax.text(X + n / 2, (h - n) / 2 - 0.25, f"the conv: {n} × {n}", ha="center",
            va="bottom", fontsize=8.5)
    ax.text(X + n + 0.3, (h - n) / 2 + k / 2, f"← kept: the {k} × {k}\n   weight.grad",
            ha="left", va="center", fontsize=8.5)
    ax.text(X + n + 0.3, (h - n) / 2 + n - 0.8, "grey: cropped\n(taps the kernel\n"
            "does not have)", ha="left", va="center", fontsize=8.5, color="#757575")
    terms = [f"{g[a, b]:g}·{x[a * stride, b * stride]:g}" for a in range(gh)
             for b in range(gw)]
    sum_text = (f"{full[0, 0]:g} = " + " + ".join(terms)).replace("+ -", "− ")
    ax.text(X + n / 2, (h + n) / 2 + 0.3, sum_text, ha="center", va="top", fontsize=8.5)
    ax.set_xlim(-0.2, X + n + 4.2), ax.set_ylim(h + 0.1, -1.6)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def draw_flipped(g: np.ndarray, w: np.ndarray, d_x: np.ndarray, stride: int,
                 pick: tuple) -> np.ndarray:
    """The same transposed conv read per pixel: the 2-D ``g`` spread ``stride`` apart with
    zeros and padded by ``k - 1``, convolved by ``w`` turned 180°; the window of pixel
    ``pick`` of ``d_x`` (the live result, 2-D) marked. Returns the per-pixel sums."""
    (gh, gw), (k1, k2) = g.shape, w.shape
    n = (gh - 1) * stride + 1
    spread = np.zeros((n + 2 * (k1 - 1), n + 2 * (k2 - 1)))
    owner = np.full(spread.shape, -1)
    for a in range(gh):
        for b in range(gw):
            spread[k1 - 1 + a * stride, k2 - 1 + b * stride] = g[a, b]
            owner[k1 - 1 + a * stride, k2 - 1 + b * stride] = a * gw + b
    flipped = w[::-1, ::-1]
    h, wd = spread.shape[0] - k1 + 1, spread.shape[1] - k2 + 1
    sums = np.array([[(spread[r:r + k1, q:q + k2] * flipped).sum() for q in range(wd)]
                     for r in range(h)])
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    faces = [["#EEEEEE" if owner[r, q] < 0 else STAMP[owner[r, q]]
              for q in range(spread.shape[1])] for r in range(spread.shape[0])]
    colours = [["#9E9E9E" if owner[r, q] < 0 else "black"
                for q in range(spread.shape[1])] for r in range(spread.shape[0])]
    _grid(ax, 0, 0, spread, faces, 9, colours)
    r0, q0 = pick
    ax.add_patch(plt.Rectangle((q0, r0), k2, k1, fill=False, ec=HL, lw=2.2))
    ax.text(spread.shape[1] / 2, -0.25, f"grad_out spread {stride} apart,\npadded by "
            f"k - 1 = {k1 - 1}", ha="center", va="bottom", fontsize=8.5)
    X = spread.shape[1] + 0.9
    ax.text(X + 0.1, 2.5, "conv\nby", ha="left", va="center", fontsize=8.5)
    _grid(ax, X + 1.3, 2, flipped, [["#E0E0E0"] * k2] * k1, 10)
    for i in range(k1):  # the turned kernel's taps that meet a grad_out entry there
        for j in range(k2):
            if owner[r0 + i, q0 + j] >= 0:
                ax.add_patch(plt.Rectangle((X + 1.3 + j, 2 + i), 1, 1, fill=False,
                                           ec=HL, lw=2.2))
    ax.text(X + 1.3 + k2 / 2, 1.75, "kernel\nturned 180°", ha="center", va="bottom",
            fontsize=8.5)
    R = X + 1.3 + k2 + 1.1
    ax.text(R - 0.55, 2.5, "=", ha="center", va="center", fontsize=13)
    _grid(ax, R, 0, d_x[:h, :wd], [["#FFF8E1"] * wd] * h, 9)
    ax.add_patch(plt.Rectangle((R + q0, r0), 1, 1, fill=False, ec=HL, lw=2.2))
    ax.text(R + wd / 2, -0.25, f"d_x[:{h}, :{wd}], the same\nnumbers as the stamps",
            ha="center", va="bottom", fontsize=8.5)
    ax.set_xlim(-0.2, R + wd + 0.2), ax.set_ylim(spread.shape[0] + 0.1, -1.6)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return sums


TAP = ["#E53935", "#1E88E5", "#43A047", "#FB8C00"]  # one colour per tap (i, j) of 2 x 2


def strided_taps(h: int, pad: int, k: int, s: int, d: int) -> np.ndarray:
    """Which pixels of the padded ``h`` x ``h`` input each tap of a ``k`` x ``k`` kernel
    reads with stride ``s`` and dilation ``d``: ``[k * k, hp, hp]`` booleans, tap (i, j)'s
    slice starting at (i·d, j·d) and stepping by ``s``."""
    hp = h + 2 * pad
    h_out = (hp - d * (k - 1) - 1) // s + 1
    masks = np.zeros((k * k, hp, hp), bool)
    for i in range(k):
        for j in range(k):
            rows = slice(i * d, i * d + (h_out - 1) * s + 1, s)
            cols = slice(j * d, j * d + (h_out - 1) * s + 1, s)
            masks[i * k + j, rows, cols] = True
    return masks


def draw_strided_col2im(h: int = 5, pad: int = 1, k: int = 2, s: int = 2,
                        d: int = 2) -> np.ndarray:
    """col2im's slices with a stride and a dilation: each tap's strided slice of the
    padded input on its own small grid, then all of them on one grid, tap (i, j) colouring
    the (i, j) quarter of the pixels it reads, with the number of taps that add there.
    Returns the masks drawn (``strided_taps``)."""
    masks = strided_taps(h, pad, k, s, d)
    hp = masks.shape[1]
    h_out = (hp - d * (k - 1) - 1) // s + 1
    fig, ax = plt.subplots(figsize=(7.5, 3.9))
    for t in range(k * k):
        i, j = divmod(t, k)
        x0, y0 = j * (hp + 1.4), i * (hp + 2.2) + 1.9
        for r in range(hp):
            for q in range(hp):
                on = masks[t, r, q]
                padded = not (pad <= r < pad + h and pad <= q < pad + h)
                face = TAP[t] if on else ("#E0E0E0" if padded else "#F5F5F5")
                ax.add_patch(plt.Rectangle((x0 + q, y0 + r), 1, 1, facecolor=face,
                                           edgecolor="white", lw=0.8))
        span = (h_out - 1) * s + 1
        ax.text(x0 + hp / 2, y0 - 0.25, f"tap ({i}, {j}): start ({i * d}, {j * d})\n"
                f"[{i * d}:{i * d + span}:{s}, {j * d}:{j * d + span}:{s}]",
                ha="center", va="bottom", fontsize=8, color=TAP[t])
    X = k * (hp + 1.4) + 1.2
    cell = 2.0
    count = masks.sum(0)
    for r in range(hp):
        for q in range(hp):
            padded = not (pad <= r < pad + h and pad <= q < pad + h)
            ax.add_patch(plt.Rectangle((X + q * cell, 1.9 + r * cell), cell, cell,
                                       facecolor="#E0E0E0" if padded else "#F5F5F5",
                                       edgecolor="white", lw=1.0))
            for t in np.flatnonzero(masks[:, r, q]):
                i, j = divmod(t, k)
                ax.add_patch(plt.Rectangle((X + q * cell + j, 1.9 + r * cell + i), 1, 1,
                                           facecolor=TAP[t], edgecolor="white", lw=0.6))
            ax.text(X + (q + 0.5) * cell, 1.9 + (r + 0.5) * cell, f"{count[r, q]}",
                    ha="center", va="center", fontsize=9,
                    color="#9E9E9E" if count[r, q] == 0 else "black",
                    bbox=dict(boxstyle="circle,pad=0.15", fc="white", ec="none",
                              alpha=0.85 if count[r, q] else 0))
    ax.add_patch(plt.Rectangle((X + pad * cell, 1.9 + pad * cell), h * cell, h * cell,
                               fill=False, ec="black", lw=1.6, ls="--"))
    ax.text(X + hp * cell / 2, 1.65, f"all taps: how many add into each pixel\n"
            f"(dashed: the {h} × {h} input, kept by the crop)", ha="center",
            va="bottom", fontsize=8.5)
    ax.set_xlim(-0.2, X + hp * cell + 0.2), ax.set_ylim(1.9 + hp * cell + 0.2, -0.4)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return masks
