"""The four SGD steps on a tied pair (modules_params_config): map per path or each Param
once, times the gradient read (``grad``) or taken out (``grad_remove``). Each variant runs
live; the grid shows which paths moved and how many ``Param`` objects the new model holds."""

from __future__ import annotations

import numpy as np

from minidl import Tensor
from minidl_book.build_map_params import map_params, map_tied_twice

__all__ = ["tied_variants", "draw_tied_grid", "MAPS", "GRADS"]

MAPS = {"per path": map_tied_twice, "once": map_params}
GRADS = {"read": "grad", "taken out": "grad_remove"}


def _step(model, x, lr: float, map_fn, take: str):
    grads = (model(x) ** 2).mean().backward()

    def update(w):
        g = getattr(w, take)(grads)
        if g is None:  # nothing left for this id: the value stays
            return w
        return Tensor.from_inner(w.inner() - g * lr, require_grad=True)

    return map_fn(model, update)


def tied_variants(tied, x, lr: float = 0.1) -> dict:
    """``{(map, gradient): ((first moved, second moved), number of Params)}`` for a model
    with ``first.weight`` and ``second.weight``; ``tied`` itself is left unchanged."""
    w0 = tied.first.weight.val().to_numpy().copy()
    out = {}
    for map_name, map_fn in MAPS.items():
        for grad_name, take in GRADS.items():
            new = _step(tied, x, lr, map_fn, take)
            params = new.parameters()
            moved = tuple(not np.array_equal(params[f"{p}.weight"].val().to_numpy(), w0)
                          for p in ("first", "second"))
            out[(map_name, grad_name)] = (moved, len({id(p) for p in params.values()}))
    return out


def draw_tied_grid(variants: dict, width: float = 7.2):
    """A 2 x 2 grid: rows the map, columns the gradient; each cell says which paths moved
    and how many Params result; the tie kept is green, minidl's and burn's step marked."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, 2.5))
    rows = [("per path", "map per path\n(minidl's, burn's)"),
            ("once", "map each Param once\n(your map_params, above)")]
    cols = [("read", "gradient read (left in grads)"),
            ("taken out", "gradient taken out of grads")]
    yes = {True: "moved", False: "kept"}
    for i, (r, _) in enumerate(rows):
        for j, (c, _) in enumerate(cols):
            (first, second), n = variants[(r, c)]
            kept_tie = n == 1 and first and second
            fill = "#dcfce7" if kept_tie else "#fee2e2"
            ax.add_patch(plt.Rectangle((j, -i - 1), 1, 1, fc=fill, ec="white", lw=3))
            text = (f"first.weight {yes[first]}\nsecond.weight {yes[second]}\n"
                    f"{n} Param{'s' if n > 1 else ''} at the two paths")
            if (r, c) == ("per path", "taken out"):
                text += "\n= minidl's and burn's step"
            ax.text(j + 0.5, -i - 0.5, text, ha="center", va="center", fontsize=8.5,
                    family="monospace")
    for i, (_, label) in enumerate(rows):
        ax.text(-0.04, -i - 0.5, label, ha="right", va="center", fontsize=8.5)
    for j, (_, label) in enumerate(cols):
        ax.text(j + 0.5, 0.06, label, ha="center", va="bottom", fontsize=8.5)
    ax.set_xlim(-0.75, 2)
    ax.set_ylim(-2, 0.4)
    ax.axis("off")
    fig.tight_layout()
    return fig
