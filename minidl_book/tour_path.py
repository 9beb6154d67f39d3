"""The tour's picture: one recorded backtrace drawn as the packages it crossed.

Each box is one minidl package (and the burn crate it mirrors) with the number of frames the
call spent in it and their names, outermost first, so the path, the packages and the frame
counts are one figure in one vocabulary. Everything in it is read from the recorded frames.
"""

from __future__ import annotations

from minidl.debug.diagram import COLORS
from minidl.debug.flowchart import Flowchart
from minidl.debug.frames import Hit

__all__ = ["CRATES", "package_of", "package_groups", "package_path"]

#: minidl package → (burn crate, colour key of ``minidl.debug.diagram.COLORS``)
CRATES = {
    "module": ("burn-core", "nn"),
    "nn": ("burn-nn", "nn"),
    "tensor": ("burn-tensor", "tensor"),
    "backend": ("burn-backend", "user"),
    "dispatch": ("burn-dispatch", "dispatch"),
    "autodiff": ("burn-autodiff", "autodiff"),
    "backends.flex": ("burn-flex", "backend"),
    "backends.flex.kernels": ("burn-flex", "kernel"),
}


def package_of(path: str) -> str:
    """``minidl/nn/x.py`` → ``nn``; ``minidl/backends/flex/kernels/x.py`` →
    ``backends.flex.kernels``; paths shortened with ``...`` keep their tail."""
    parts = path.split("/")[:-1]
    if "kernels" in parts:
        return "backends.flex.kernels"
    if "backends" in parts:
        return "backends.flex"
    if "modules" in parts:  # minidl/backend/modules/linear.py: the protocol's default bodies
        return "backend"
    return parts[1] if parts and parts[0] == "minidl" else parts[-1]


def package_groups(hit: Hit) -> list[tuple[str, list[str]]]:
    """The library frames of ``hit``, outermost first, grouped by consecutive package."""
    groups: list[tuple[str, list[str]]] = []
    for frame in reversed([f for f in hit.frames if f.library]):
        pkg = package_of(frame.path)
        name = frame.name + (" (default)" if frame.note else "")
        if groups and groups[-1][0] == pkg:
            groups[-1][1].append(name)
        else:
            groups.append((pkg, [name]))
    return groups


def package_path(hit: Hit, title: str | None = None) -> Flowchart:
    """One box per package crossed: ``minidl.pkg · burn crate · n frames`` and the frames."""
    chart = Flowchart("TB", title=title)
    for i, (pkg, names) in enumerate(package_groups(hit)):
        crate, colour = CRATES[pkg]
        fill, stroke = COLORS[colour]
        n = len(names)
        head = f"minidl.{pkg} · {crate} · {n} frame{'s' if n > 1 else ''}"
        label = "\n".join([head] + [f"  {name}" for name in names])
        shape = "round" if pkg == "backend" else "box"
        chart.node(f"p{i}", label, shape=shape, align="left", fill=fill, stroke=stroke)
        if i:
            chart.edge(f"p{i - 1}", f"p{i}")
    return chart


def wrapper_boxes(layers: list[tuple[str, str]]):
    """Nested boxes, outermost first: ``[(type name, what it adds), ...]`` → a matplotlib
    figure in which each wrapper holds the next, as ``y`` holds its result."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    colours = ["tensor", "dispatch", "autodiff", "backend", "kernel"]
    fig, ax = plt.subplots(figsize=(7.5, 2.9))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 40)
    ax.axis("off")
    for depth, (name, adds) in enumerate(layers):
        fill, stroke = COLORS[colours[depth % len(colours)]]
        x0, y0 = 2 + 6 * depth, 2 + 4 * depth
        ax.add_patch(FancyBboxPatch((x0, y0), 100 - 2 * x0, 40 - 2 * y0 - 1,
                                    boxstyle="round,pad=0,rounding_size=1.2",
                                    facecolor=fill, edgecolor=stroke, linewidth=1.5))
        ax.text(x0 + 1.5, 40 - y0 - 3.2, f"{name}: {adds}", fontsize=9.5,
                family="monospace", va="center")
    fig.tight_layout()
    return fig
