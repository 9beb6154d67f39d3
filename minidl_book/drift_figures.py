"""The training chapter's figure for why the conv biases drift: one channel before and
after BatchNorm with and without a per-channel bias.

Mirrors burn-nn's ``BatchNorm`` in training mode (``modules/norm/batch.rs``: the batch mean
subtracted per channel), which is what cancels a convolution's bias.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


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
