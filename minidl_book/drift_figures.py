"""The training chapter's figures for why the conv biases drift: the gap per parameter
between minidl and its PyTorch twin, and one channel before and after BatchNorm with and
without a per-channel bias.

Mirrors burn-nn's ``BatchNorm`` in training mode (``modules/norm/batch.rs``: the batch mean
subtracted per channel), which is what cancels a convolution's bias.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_param_gaps(first: dict[str, float], last: dict[str, float], red: set[str]) -> None:
    """The largest |minidl − PyTorch| per parameter after the first and the last epoch, on a
    log axis (an exact 0 as a marker on the floor), the ``red`` ones in red."""
    fig, ax = plt.subplots(figsize=(9, 2.8))
    names = list(last)
    xs = np.arange(len(names))
    zeros = []
    for shift, gaps, label in ((-0.2, first, "after epoch 1"), (0.2, last, "after epoch 5")):
        ax.bar(xs + shift, [gaps[n] or np.nan for n in names], 0.4, label=label,
               color=["tab:red" if n in red else "tab:gray" for n in names],
               alpha=0.5 if shift < 0 else 1.0)
        zeros += [x + shift for x, n in zip(xs, names) if gaps[n] == 0]
    ax.set_yscale("log")
    ax.set_ylim(1e-9, 1.0)
    if zeros:
        ax.plot(zeros, [1.6e-9] * len(zeros), "v", color="black", ms=5, ls="none",
                label="exactly 0")
        ax.legend(fontsize=7, frameon=False, loc="upper right")
    ax.set_xticks(xs, names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("max |minidl − PyTorch|")
    ax.set_title("Weight gap per parameter, dropout 0 (pale: epoch 1, dark: epoch 5; "
                 "red: conv biases)", fontsize=9)
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def plot_bias_cancel(before: np.ndarray, after: np.ndarray, normed_before: np.ndarray,
                     normed_after: np.ndarray, bias: float) -> None:
    """Left: one channel's values out of the convolution, as they are and with ``bias``
    added; right: both through BatchNorm in training mode, the same histogram."""
    fig, (ax_l, ax_r) = plt.subplots(1, 2, figsize=(9, 2.3))
    for ax, (a, b), title in ((ax_l, (before, after), "conv1's output, one channel"),
                              (ax_r, (normed_before, normed_after),
                               "after bn1 (training mode): the same values")):
        bins = np.linspace(min(a.min(), b.min()), max(a.max(), b.max()), 40)
        ax.hist(a.ravel(), bins, color="tab:gray", alpha=0.6, label="as computed")
        ax.hist(b.ravel(), bins, histtype="step", color="tab:red", lw=1.5,
                label=f"bias {bias:+g} added")
        ax.set_title(title, fontsize=9)
        ax.set_yticks([])
        ax.tick_params(labelsize=8)
    ax_l.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    plt.show()
    plt.close(fig)
