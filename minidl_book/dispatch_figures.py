"""Pictures of the dispatch chapter: what a tensor holds (nested boxes), and where the
autodiff layer is chosen in PyTorch and in burn/minidl (two stacks side by side)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["nested_boxes", "two_stacks"]

_FILL = ("#eef3fb", "#dbe7f7", "#fdf0d5", "#e4f2e4")


def nested_boxes(panels: Sequence[tuple[str, Sequence[str]]], title: str = ""):
    """One panel per tensor, two panels a row: its layers drawn as boxes inside boxes,
    outermost first, in a font that stays readable at page width."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(7.2, 2.7 * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (name, layers) in zip(axes.flat, panels):
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(name, fontsize=11.5)
        side, head = 0.05, 0.17  # each inner box: a margin at the sides, a label row on top
        for depth, label in enumerate(layers):
            x0, top = 0.02 + depth * side, 0.97 - depth * head
            bottom = 0.03 + depth * 0.03
            ax.add_patch(FancyBboxPatch((x0, bottom), 1 - 2 * x0, top - bottom,
                                        boxstyle="round,pad=0.005",
                                        fc=_FILL[depth % len(_FILL)], ec="#555", lw=0.8))
            inner = depth == len(layers) - 1
            y = (top + bottom) / 2 if inner else top - 0.085
            ax.text(0.5, y, label, ha="center", va="center", fontsize=11)
    if title:
        fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig


def two_stacks(stacks: Sequence[tuple[str, Sequence[tuple[str, str]]]], title: str = ""):
    """Side-by-side stacks of layers, top first: ``(column title, [(layer, note)])``."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    height = max(len(layers) for _, layers in stacks)
    fig, axes = plt.subplots(1, len(stacks), figsize=(3.6 * len(stacks), 0.75 * height + 0.7))
    for ax, (name, layers) in zip(axes, stacks):
        ax.set_xlim(0, 1)
        ax.set_ylim(0, height)
        ax.axis("off")
        ax.set_title(name, fontsize=9)
        for i, (layer, note) in enumerate(layers):
            y = height - i - 0.9
            ax.add_patch(FancyBboxPatch((0.05, y), 0.9, 0.7, boxstyle="round,pad=0.01",
                                        fc=_FILL[i % len(_FILL)], ec="#555", lw=0.8))
            ax.text(0.5, y + 0.47, layer, ha="center", va="center", fontsize=8.5,
                    weight="bold")
            ax.text(0.5, y + 0.2, note, ha="center", va="center", fontsize=7)
            if i:
                ax.annotate("", (0.5, y + 0.7), (0.5, y + 0.9),
                            arrowprops={"arrowstyle": "->", "lw": 0.8})
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
