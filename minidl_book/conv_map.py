"""The conv-backward chapter's map of conv2d's backward, and its 1-D flipped-kernel picture.

Mirrors burn-backend's ``ModuleOps`` defaults (``src/backend/ops/modules/conv.rs``):
``conv2d_weight_grad_no_groups`` (the weight's gradient as ``conv2d`` of ``x`` by
``output_grad``, dims 0 and 1 swapped, ``ConvOptions::new(dilation, padding, stride, 1)``,
then a crop to the weight's shape) and ``conv2d_x_backward`` (``conv_transpose2d`` of
``output_grad`` by the weight with the forward's ``padding``, which crops, and
``calculate_padding_out``). :func:`conv_map` computes, in NumPy for one channel in and
out, im2col's ``P @ W_mat`` and its two backward products, ``Pᵀ g`` and col2im of
``g W_matᵀ``, with the two convolutions' sizes; :func:`draw_conv_map` draws them as one
map. :func:`tap_table` and :func:`draw_taps_1d` show in 1-D why col2im is a conv by the
kernel turned around. The chapter asserts what the pictures show against minidl's
``conv_transpose2d`` / ``conv2d`` and PyTorch in its hidden cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from minidl_book.conv_pictures import HL, box

__all__ = ["ConvMap", "conv_map", "draw_conv_map", "draw_taps_1d", "tap_table"]

FWD, WGT, INP = "#BBDEFB", "#C8E6C9", "#FFE0B2"  # the three rows' colours


@dataclass
class ConvMap:
    """One-channel conv2d ``y = conv2d(x, w, stride, padding)`` (2-D arrays) as im2col."""

    x: np.ndarray  # [h, w]
    w: np.ndarray  # [k1, k2]
    g: np.ndarray  # grad_out, [h_out, w_out]
    stride: int
    padding: int
    patches: np.ndarray  # P: [h_out * w_out, k1 * k2], a row per output position
    w_mat: np.ndarray  # [k1 * k2, 1]
    out: np.ndarray  # P @ W_mat, [h_out, w_out]
    d_w: np.ndarray  # (Pᵀ g) reshaped, [k1, k2]
    cols: np.ndarray  # g W_matᵀ, [h_out * w_out, k1 * k2]
    d_x: np.ndarray  # col2im of cols, cropped by the padding, [h, w]
    weight_conv: tuple  # the swapped conv's size before the crop to [k1, k2]
    covered: int  # rows the stamps reach: (h_out - 1) * stride + k1
    padding_out: int  # burn's calculate_padding_out (rows)


def conv_map(x: np.ndarray, w: np.ndarray, g: np.ndarray, stride: int,
             padding: int = 0) -> ConvMap:
    """The forward and both backward products of a one-channel conv (square stride and
    padding, dilation 1), with the sizes of the convs burn runs for them."""
    (h, wd), (k1, k2), (ho, wo) = x.shape, w.shape, g.shape
    xp = np.pad(x, padding)
    p = np.array([xp[a * stride:a * stride + k1, b * stride:b * stride + k2].ravel()
                  for a in range(ho) for b in range(wo)])
    w_mat = w.reshape(k1 * k2, 1)
    g_col = g.reshape(ho * wo, 1)
    cols = g_col @ w_mat.T
    grad_xp = np.zeros(xp.shape, dtype=np.result_type(cols, np.float32))
    for q, (a, b) in enumerate((a, b) for a in range(ho) for b in range(wo)):
        grad_xp[a * stride:a * stride + k1, b * stride:b * stride + k2] += (
            cols[q].reshape(k1, k2))  # col2im: each row back onto its window
    hp, wp = xp.shape
    span = ((ho - 1) * stride + 1, (wo - 1) * stride + 1)  # g dilated by the stride
    covered = (ho - 1) * stride + k1
    return ConvMap(x, w, g, stride, padding, p, w_mat, (p @ w_mat).reshape(ho, wo),
                   (p.T @ g_col).reshape(k1, k2), cols,
                   grad_xp[padding:padding + h, padding:padding + wd],
                   (hp - span[0] + 1, wp - span[1] + 1), covered,
                   h + 2 * padding - covered)


def _matrix(ax, x0: float, y0: float, m: np.ndarray, face: str, name: str) -> None:
    for r in range(m.shape[0]):
        for q in range(m.shape[1]):
            box(ax, x0 + q, y0 + r, f"{m[r, q]:g}", face, fs=8)
    ax.text(x0 + m.shape[1] / 2, y0 - 0.2, f"{name}\n{list(m.shape)}", ha="center",
            va="bottom", fontsize=8)


def _product(ax, y0: float, a, b, c, faces, names, note: str) -> float:
    """``a @ b = c`` drawn from ``y0``, then ``note``; returns the row's height."""
    x0 = 0.0
    for k, (m, face, name) in enumerate(zip((a, b, c), faces, names)):
        _matrix(ax, x0, y0, m, face, name)
        x0 += m.shape[1] + 0.4
        if k < 2:
            ax.text(x0 + 0.2, y0 + 0.5, "@=" [k], ha="center", va="center", fontsize=12)
            x0 += 0.8
    ax.text(x0 + 0.3, y0 + 0.5, note, ha="left", va="top", fontsize=8.5)
    return max(m.shape[0] for m in (a, b, c))


def draw_conv_map(m: ConvMap) -> None:
    """One map: ``P @ W_mat`` on top; below it ``Pᵀ g`` (the weight's gradient) and
    ``g W_matᵀ`` (col2im's input), each with the conv that computes it."""
    s, pad = m.stride, m.padding
    (h, wd), (k1, k2), (ho, wo) = m.x.shape, m.w.shape, m.g.shape
    g_col = m.g.reshape(-1, 1)
    fig, ax = plt.subplots(figsize=(9.2, 6.4))
    y = 1.0
    notes = [
        f"forward: P = im2col(x), a row per output\nposition, a column per tap; "
        f"reshaped,\nout is y [1, 1, {ho}, {wo}] (stride {s}, padding {pad})",
        f"weight: Pᵀ g, reshaped [1, 1, {k1}, {k2}]\n= conv2d of x by g, dims 0, 1 "
        f"swapped,\nstride 1 (the forward's dilation),\ndilation {s} (the forward's "
        f"stride):\n{m.weight_conv[0]} × {m.weight_conv[1]}, cropped to {k1} × {k2}",
        f"input: g W_matᵀ, added back onto the\nwindows (col2im): x.grad "
        f"[1, 1, {h}, {wd}]\n= conv_transpose2d(g, w, stride={s},\n"
        f"  padding={pad}: the forward's, cropped per side,\n"
        f"  padding_out={m.padding_out}: "
        f"rows the stamps\n  ({m.covered} of {h + 2 * pad}) did not reach)"]
    rows = [((m.patches, m.w_mat, m.out.reshape(-1, 1)), (FWD, "#E0E0E0", FWD),
             ("P", "W_mat", "out")),
            ((m.patches.T, g_col, m.d_w.reshape(-1, 1)), (FWD, WGT, WGT),
             ("Pᵀ", "g", "Pᵀ g")),
            ((g_col, m.w_mat.T, m.cols), (WGT, "#E0E0E0", INP),
             ("g", "W_matᵀ", "g W_matᵀ"))]
    for k, (mats, faces, names) in enumerate(rows):
        if k:
            ax.axhline(y - 1.05, color="#BDBDBD", lw=0.8)
        y += _product(ax, y, *mats, faces, names, notes[k]) + 2.1
    ax.set_xlim(-0.3, 20.5), ax.set_ylim(y - 1.5, -0.3)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def tap_table(n: int, k: int, stride: int, dilation: int = 1,
              padding: int = 0) -> np.ndarray:
    """``[outputs, n]``: the tap ``i`` with which output ``a`` of a 1-D conv reads pixel
    ``r = stride * a + dilation * i - padding``, or -1 where no tap of ``a`` reads ``r``."""
    span = n + 2 * padding
    outs = (span - dilation * (k - 1) - 1) // stride + 1
    off = np.arange(span)[None, :] - stride * np.arange(outs)[:, None]
    t = np.where((off % dilation == 0) & (off >= 0) & (off < dilation * k),
                 off // dilation, -1)
    return t[:, padding:padding + n]


def draw_taps_1d(n: int = 7, k: int = 4, stride: int = 3, dilation: int = 1,
                 padding: int = 0) -> np.ndarray:
    """A 1-D conv as its tap table (a row per output ``a``, a column per pixel ``r`` of
    the padded strip, tap ``w[i]`` where ``r = s·a + d·i - p``); the first pixel two
    outputs share is framed with its gradient (a column of the table), and ``w[0]``'s
    gradient (its diagonal) is spelled out. Returns :func:`tap_table` (real pixels)."""
    s, d, p = stride, dilation, padding
    full = tap_table(n + 2 * p, k, s, d)  # the padded strip, pixel r at column r + p
    shared = [r for r in range(n) if (full[:, r + p] >= 0).sum() > 1]
    fig, ax = plt.subplots(figsize=(8.4, 0.9 + 0.45 * full.shape[0]))
    for c in range(n + 2 * p):
        r, pad = c - p, not 0 <= c - p < n
        ax.text(c + 0.5, -0.15, f"x[{r}]", ha="center", va="bottom",  # grey: 0s
                fontsize=8.5, color="grey" if pad else "black")
        for a in range(full.shape[0]):
            t = full[a, c]
            box(ax, c, a, f"w[{t}]" if t >= 0 else "",
                ("#E0E0E0" if pad else FWD) if t >= 0 else "#F5F5F5")
    for a in range(full.shape[0]):
        ax.text(-0.2, a + 0.5, f"out[{a}]", ha="right", va="center", fontsize=8.5)
    lines = []
    if shared:
        r = shared[0]
        ax.add_patch(plt.Rectangle((r + p, 0), 1, full.shape[0], fill=False, ec=HL,
                                   lw=2))
        terms = " + ".join(f"g[{a}]·w[{t}]" for a, t in enumerate(full[:, r + p])
                           if t >= 0)
        lines.append(f"dx[{r}] = {terms}")
    reads = [f"g[{a}]·x[{s * a - p}]" for a in range(full.shape[0])]
    lines.append(f"dw[0] = {' + '.join(reads)}:\n  x read {s} apart (stride {s}), "
                 f"from x[{-p}] (padding {p})")
    ax.text(n + 2 * p + 0.3, full.shape[0] / 2, "\n".join(lines), ha="left",
            va="center", fontsize=8.5, color=HL)
    ax.set_xlim(-1.4, n + 2 * p + 9.5), ax.set_ylim(full.shape[0] + 0.1, -0.8)
    ax.set_aspect("equal"), ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)
    return full[:, p:p + n]
