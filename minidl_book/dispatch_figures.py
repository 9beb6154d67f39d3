"""Pictures of the dispatch chapter: what a tensor holds (nested boxes), what each pair of
input kinds does (a grid), burn's match on kinds beside minidl's route by device (two
columns of nested inputs over the choice each makes), where the autodiff layer is chosen in PyTorch and in burn/minidl (stacks side
by side), the order Python looks a method up in (a class
chain in two columns), and a few routed ops as one tree (Tensor, Dispatch, the backends)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["kind_grid", "kinds_and_devices", "lookup_chain", "nesting", "routing_tree",
           "two_stacks"]

_FILL = ("#eef3fb", "#dbe7f7", "#fdf0d5", "#e4f2e4")


def nesting(columns: Sequence[tuple[str, Sequence]], title: str = ""):
    """Side-by-side nested boxes, one column per tensor: ``(column title, layers)``, layers
    from the outermost in; the innermost may be a tuple of boxes side by side. An array
    box (text starting "ndarray") is always the same colour."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    depth = max(len(layers) for _, layers in columns)
    fig, axes = plt.subplots(1, len(columns), figsize=(7.4, 0.5 * depth + 1.0))
    for ax, (name, layers) in zip(axes, columns):
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.08, depth + 0.08)  # room for the outer box's rounded border
        ax.axis("off")
        ax.set_title(name, fontsize=9)
        for i, layer in enumerate(layers):
            inner = i == len(layers) - 1
            pad, y0, y1 = 0.05 * i, 0.1 * i, depth - 0.55 * i
            boxes = layer if isinstance(layer, tuple) else (layer,)
            width = (1 - 2 * pad) / len(boxes)
            for k, text in enumerate(boxes):
                fill = ("#fdf0d5" if text.startswith("ndarray")
                        else "#e4f2e4" if text.startswith("node") else _FILL[i % 2])
                x0 = pad + k * width
                ax.add_patch(FancyBboxPatch((x0 + 0.01, y0), width - 0.02, y1 - y0,
                                            boxstyle="round,pad=0.01", fc=fill, ec="#555",
                                            lw=0.8))
                ax.text(x0 + width / 2, (y0 + y1) / 2 if inner else y1 - 0.25, text,
                        ha="center", va="center", fontsize=8,
                        weight="bold" if i == 0 else None)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def kind_grid(kinds, minidl, burn=None, title="", burn_label="burn",
              unknown_label="not run"):
    """A lhs-kind x rhs-kind grid, each cell split in two: minidl's outcome on top, burn's
    below (one whole cell, minidl's, when ``burn`` is None or has no entry for the pair).
    ``minidl[(lhs, rhs)]`` and ``burn[(lhs, rhs)]`` are ``(outcome, text)`` with outcome one
    of "plain", "autodiff", "error", "unknown" (the cell's colour; grey for "unknown", a
    pair with no single outcome, e.g. two versions that differ, named ``unknown_label``
    in the legend, the cell's text saying what is known)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    fill = {"plain": "#dcefd9", "autodiff": "#dbe7f7", "error": "#f6d3cf",
            "unknown": "#ececec"}
    n = len(kinds)
    fig, ax = plt.subplots(figsize=(7.4, 1.3 * n + 1.3))
    ax.set_xlim(-0.9, n)
    ax.set_ylim(n + 0.05, -0.45)
    ax.axis("off")
    for j, rhs in enumerate(kinds):
        ax.text(j + 0.5, -0.12, f"rhs: {rhs}", ha="center", va="center", fontsize=9.5,
                weight="bold")
    for i, lhs in enumerate(kinds):
        ax.text(-0.08, i + 0.5, f"lhs:\n{lhs}", ha="right", va="center", fontsize=9.5,
                weight="bold")
        for j, rhs in enumerate(kinds):
            halves = [("minidl", minidl)] + (
                [(burn_label, burn)] if burn is not None and (lhs, rhs) in burn else [])
            height = 0.94 / len(halves)
            for half, (who, cells) in enumerate(halves):
                outcome, text = cells[(lhs, rhs)]
                y = i + 0.03 + half * height
                ax.add_patch(Rectangle((j + 0.03, y), 0.94, height, fc=fill[outcome],
                                       ec="#666", lw=0.7))
                if burn is not None:
                    ax.text(j + 0.07, y + 0.06, who, ha="left", va="top", fontsize=6.5,
                            color="#555", style="italic")
                ax.text(j + 0.5, y + height / 2 + 0.035, text, ha="center", va="center",
                        fontsize=8)
    handles = [Patch(fc=fill["plain"], ec="#666", label="runs on the plain backend"),
               Patch(fc=fill["autodiff"], ec="#666", label="runs on Autodiff"),
               Patch(fc=fill["error"], ec="#666",
                     label="error" if burn is None else "error / panic")]
    if any(c[0] == "unknown" for c in (burn or {}).values()):
        handles.append(Patch(fc=fill["unknown"], ec="#666", label=unknown_label))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0),
              ncol=len(handles) if len(handles) < 4 else 2, fontsize=8, frameon=False)
    if title:
        ax.set_title(title, fontsize=10.5)
    fig.tight_layout()
    return fig


# a layer's colour says what it does, the same in every column (orange, a default body in
# this chapter's other figures, is not among them); autograd and computes as routing_tree's
# Autodiff and plain backends
_ROLE_FILL = {"skipped": ("#f4f4f4", "skipped"), "routes": ("#eef3fb", "routes"),
              "autograd": ("#dbe7f7", "the autograd layer"),
              "passes": ("#ececec", "falls through"), "computes": ("#e4f2e4", "computes")}


def two_stacks(stacks: Sequence[tuple[str, Sequence[tuple[str, str, str]]]],
               title: str = ""):
    """Side-by-side stacks of layers, top first: ``(column title, [(layer, note, role)])``,
    role one of "skipped", "routes", "autograd", "passes", "computes": a layer's colour is
    its role's, whatever its place in its stack, named in a legend under the columns. The
    whole figure fits the 752 px text column (titles and notes wrapped)."""
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch, Patch

    height = max(len(layers) for _, layers in stacks)
    fig, axes = plt.subplots(1, len(stacks), figsize=(7.4, 0.95 * height + 1.3))
    used = []
    for ax, (name, layers) in zip(axes, stacks):
        ax.set_xlim(-0.03, 1.03)  # room for the boxes' rounded borders
        ax.set_ylim(0, height)
        ax.axis("off")
        ax.set_title(textwrap.fill(name, 26), fontsize=9)
        for i, (layer, note, role) in enumerate(layers):
            used += [role] if role not in used else []
            y = height - i - 0.95
            ax.add_patch(FancyBboxPatch((0.0, y), 1.0, 0.8, boxstyle="round,pad=0.01",
                                        fc=_ROLE_FILL[role][0], ec="#555", lw=0.8,
                                        ls="--" if role == "skipped" else "-"))
            ax.text(0.5, y + 0.6, layer, ha="center", va="center", fontsize=8,
                    weight="bold")
            ax.text(0.5, y + 0.27, textwrap.fill(note, 30, break_on_hyphens=False),
                    ha="center", va="center", fontsize=8)
            if i:
                ax.annotate("", (0.5, y + 0.8), (0.5, y + 0.95),
                            arrowprops={"arrowstyle": "->", "lw": 0.8})
    order = [role for role in _ROLE_FILL if role in used]
    fig.legend(handles=[Patch(fc=_ROLE_FILL[r][0], ec="#555", label=_ROLE_FILL[r][1],
                              ls="--" if r == "skipped" else "-") for r in order],
               loc="lower center", ncol=len(order), fontsize=8, frameon=False)
    if title:
        fig.suptitle(textwrap.fill(title, 90), fontsize=10)
    fig.tight_layout(w_pad=0.6, rect=(0, 0.07, 1, 1))
    return fig


def lookup_chain(columns: Sequence[tuple[str, Sequence[tuple[str, str, bool]]]],
                 title: str = "", footer: str = ""):
    """A method lookup drawn as one column of classes, read top to bottom, in groups:
    ``(group title, [(class name, note, found)])``, each group's title in a bracket at the
    left. The class where the lookup stops (``found``) is orange, the ones searched before it
    grey; ``footer`` is written under the last class (the classes never reached). The figure
    fits the 752 px text column."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    rows = sum(len(classes) for _, classes in columns)
    step, box = 0.42, 0.3  # one row, and the box inside it (inches)
    fig, ax = plt.subplots(figsize=(7.4, step * rows + 0.9))
    ax.set_xlim(0, 7.4)
    ax.set_ylim(step * rows + 0.35, -0.15)
    ax.axis("off")
    left, right = 1.75, 7.3  # the boxes; the group brackets sit left of them
    r = 0
    for name, classes in columns:
        top = r * step
        for cls, note, found in classes:
            y0 = r * step + (step - box) / 2
            ax.add_patch(FancyBboxPatch(
                (left, y0), right - left, box, boxstyle="round,pad=0.01",
                fc="#fde2b8" if found else "#eeeeee", ec="#c77c12" if found else "#777",
                lw=1.6 if found else 0.8))
            ax.text(left + 0.12, y0 + box / 2, cls, ha="left", va="center", fontsize=9,
                    weight="bold", family="monospace")
            ax.text(left + 2.45, y0 + box / 2, note, ha="left", va="center", fontsize=8.5)
            if r:
                ax.annotate("", (left + 1.0, y0), (left + 1.0, y0 - (step - box)),
                            arrowprops={"arrowstyle": "->", "lw": 0.8, "color": "#444"})
            r += 1
        bottom = r * step
        ax.plot([left - 0.1, left - 0.18, left - 0.18, left - 0.1],
                [top + 0.05, top + 0.05, bottom - 0.05, bottom - 0.05], color="#666", lw=0.9)
        ax.text(left - 0.26, (top + bottom) / 2, name, ha="right", va="center",
                fontsize=8, style="italic", wrap=True)
    if footer:
        ax.text(left + 0.12, rows * step + 0.15, footer, ha="left", va="center",
                fontsize=8, color="#777", style="italic")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def routing_tree(routed: Sequence[tuple[str, str]], title: str = ""):
    """The debug-level-1 log ``[(op, backend), ...]`` as one tree: the Tensor calls on top,
    ``Dispatch`` under them, one box per backend the log names, each edge labelled with the
    ops routed along it; under ``Autodiff[B]``, the ``B`` it calls after recording."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    backends = list(dict.fromkeys(b for _, b in routed))
    fig, ax = plt.subplots(figsize=(7.4, 2.9))
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.03, 0.99)
    ax.axis("off")

    def box(x, y, text, fill, w=0.24):
        ax.add_patch(FancyBboxPatch((x - w / 2, y - 0.07), w, 0.14, boxstyle="round,pad=0.01",
                                    fc=fill, ec="#555", lw=0.8))
        ax.text(x, y, text, ha="center", va="center", fontsize=9)

    def arrow(a, b, label="", at=0.5):
        ax.annotate("", b, a, arrowprops={"arrowstyle": "->", "lw": 0.9, "color": "#333"})
        if label:
            x, y = a[0] + (b[0] - a[0]) * at, a[1] + (b[1] - a[1]) * at
            ax.text(x, y, label, ha="center", va="center", fontsize=8,
                    bbox={"fc": "white", "ec": "none", "pad": 1.0})

    box(0.5, 0.9, "Tensor ops", _FILL[0])
    box(0.5, 0.62, "Dispatch: the inputs'\ndevices pick", _FILL[0], w=0.3)
    arrow((0.5, 0.83), (0.5, 0.69))
    xs = [0.5] if len(backends) == 1 else [0.14 + 0.72 * i / (len(backends) - 1)
                                           for i in range(len(backends))]
    for x, backend in zip(xs, backends):
        ops = ", ".join(op for op, b in routed if b == backend)
        box(x, 0.3, backend, _FILL[1] if backend.startswith("Autodiff") else _FILL[3])
        arrow((0.5, 0.55), (x, 0.37), ops, at=0.55)
        if backend.startswith("Autodiff[") and backend.endswith("]"):
            box(x, 0.06, backend[len("Autodiff["):-1] + " (computes)", _FILL[3])
            arrow((x, 0.23), (x, 0.13), "")
            ax.text(x + 0.015, 0.18, "records a step, then calls", ha="left",
                    va="center", fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


_OUTCOME = {"plain": ("#dcefd9", "#555"), "autodiff": ("#dbe7f7", "#555"),
            "error": ("#f6d3cf", "#b03a2e"), "": ("#ffffff", "#555")}


def kinds_and_devices(columns: Sequence[tuple[str, Sequence, Sequence, bool]],
                      title: str = ""):
    """One op's two inputs and the choice it makes, one column per framework:
    ``(column title, inputs, rows, chained)``. ``inputs`` is ``[(name, layers)]``, each
    input drawn as nested boxes, outermost first; ``rows`` is ``[(text, outcome, taken)]``
    under them, outcome one of "plain", "autodiff", "error" or "" (the fill, as in
    :func:`kind_grid`), a row not ``taken`` drawn faint (a match arm the pair misses);
    ``chained`` draws an arrow from each row to the next (a path, not a list of arms).
    The figure fits the 752 px text column."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    def step(text: str) -> float:  # the room a layer's label takes above its inner box
        return 0.12 + 0.12 * (text.count("\n") + 1)

    nest_h = max(sum(map(step, layers[:-1])) + 0.04 * len(layers) + 0.36
                 for _, inputs, _, _ in columns for _, layers in inputs) + 0.25
    n_rows = max(len(rows) for _, _, rows, _ in columns)
    row_h = 0.42
    base = row_h * n_rows + 0.08  # the inputs' boxes sit above the rows
    fig, axes = plt.subplots(1, len(columns), figsize=(7.4, base + nest_h + 0.45))
    for ax, (name, inputs, rows, chained) in zip(axes, columns):
        top = base + nest_h
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.05, top + 0.05)
        ax.axis("off")
        ax.set_title(name, fontsize=9.5, weight="bold")
        width = 1 / len(inputs)
        for k, (label, layers) in enumerate(inputs):
            x0, x1 = k * width + 0.015, (k + 1) * width - 0.015
            ax.text((x0 + x1) / 2, top - 0.02, label, ha="center", va="top",
                    fontsize=8, style="italic")
            y1 = top - 0.25
            for i, text in enumerate(layers):
                inset, y0 = 0.025 * i, base + 0.04 * i
                inner = i == len(layers) - 1  # the data: one colour in every input
                ax.add_patch(FancyBboxPatch(
                    (x0 + inset, y0), x1 - x0 - 2 * inset, y1 - y0,
                    boxstyle="round,pad=0.005", fc=_FILL[2] if inner else _FILL[i % 2],
                    ec="#555", lw=0.7))
                ax.text((x0 + x1) / 2, (y0 + y1) / 2 if inner else y1 - step(text) / 2,
                        text, ha="center", va="center", fontsize=6.8,
                        family="monospace", linespacing=1.0)
                y1 -= step(text)
        for r, (text, outcome, taken) in enumerate(rows):
            fill, edge = _OUTCOME[outcome]
            y = row_h * (n_rows - r - 1) + 0.04
            ax.add_patch(FancyBboxPatch(
                (0.02, y), 0.96, row_h - 0.15, boxstyle="round,pad=0.01",
                fc=fill if taken else "#f4f4f4", ec=edge if taken else "#bbb",
                lw=1.6 if taken and outcome == "error" else 0.8))
            ax.text(0.5, y + (row_h - 0.15) / 2, text, ha="center", va="center",
                    fontsize=7.5, family="monospace", linespacing=1.0,
                    color="#222" if taken else "#999")
            if chained and r:
                ax.annotate("", (0.5, y + row_h - 0.14), (0.5, y + row_h + 0.0),
                            arrowprops={"arrowstyle": "->", "lw": 0.8})
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(w_pad=1.0)
    return fig
