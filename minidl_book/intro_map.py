"""The intro's path map and layout figure, and its first exercise's experiment.

- :data:`BOXES`: the seven packages a call crosses, each with its burn crate.
- :func:`torch_column`: what PyTorch does at each box, read from PyTorch itself (the
  dispatcher's keys of a parameter, the profiler's op tree of ``nn.Linear``).
- :func:`package_map`: the boxes and the route of a traced call through them
  (:func:`route_steps`), laid out by hand as a :class:`PathMap`, every label beside its
  arrow, numbered in call order: straight down by device for an op with a forwarder
  (``conv(image)``, the intro's map); for ``layer(x)`` into the default body
  (``minidl.backend``), its three calls back up through ``Dispatch`` and down to ``Flex``;
  with ``pytorch``, each box also says what PyTorch does there.
- :func:`torch_op_tree`: the profiler's op tree of one call, with the profiler's own
  start/stop lines kept off the page.
- :func:`packages_on_the_path`, :func:`skipped_on_plain`: the first exercise's experiment.
- :func:`draw_layouts`: ``x·W + b`` beside PyTorch's ``x·weightᵀ + b``, the same numbers.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from html import escape

import numpy as np
import torch

from minidl import Device, Tensor, debug
from minidl.debug.flowchart import (
    EDGE_COLOR,
    FONT_FAMILY,
    Flowchart,
)
from minidl.debug.flowchart_layout import (
    FONT_SIZE,
    LINE_H,
    MARGIN,
    PAD_X,
    PAD_Y,
    label_size,
    text_width,
)
from minidl.debug.trace import Trace
from minidl.nn import LinearConfig

Box = tuple[str, str, str, str]  # id, package in minidl, burn crate, what it holds

#: The seven packages of one Linear.forward, top to bottom.
BOXES: tuple[Box, ...] = (
    ("nn", "nn", "burn-nn", "Linear, Dropout, BatchNorm"),
    ("module", "module", "burn-core", "Module, Param, Config"),
    ("tensor", "tensor", "burn-tensor", "Tensor, functional ops"),
    ("dispatch", "dispatch", "burn-dispatch", "Dispatch: routes each op by device"),
    ("autodiff", "autodiff", "burn-autodiff", "Autodiff[B]: wraps B, records"),
    ("flex", "backends.flex", "burn-flex", "CPU backend, numba kernels"),
    ("backend", "backend", "burn-backend", "the Backend protocol, default ops"),
)

#: The boxes down the picture's spine, in the order the call reaches them; ``module`` sits
#: beside ``nn`` (the forward reads the parameter and comes back).
SPINE = ("nn", "tensor", "dispatch", "autodiff", "flex", "backend")


def computing(hits: Sequence) -> list[bool]:
    """For each kernel hit of a trace, whether it computed numbers: a kernel that another
    kernel follows under the same op call was only a probe (Flex's ``binary_same_shape``,
    entered on operands of two shapes it does not handle, returns without computing and the
    op calls another kernel); the last kernel of an op call computed its result."""
    kernels = [hit for hit in hits if hit.name.startswith("kernel ")]
    return [not (nxt is not None and hit.name != nxt.name
                 and hit.chain()[:-1] == nxt.chain()[:-1])
            for hit, nxt in zip(kernels, [*kernels[1:], None])]


#: The detour's two arrows, drawn on the right of the spine (down, then back up).
DETOUR_EDGES = (("dispatch", "backend"), ("backend", "dispatch"))


def _circled(k: int) -> str:
    """1 → ①, …, 20 → ⑳."""
    return chr(0x2460 + k - 1)


def box_of(frame: str) -> str | None:
    """The box of :data:`BOXES` a frame of a trace's chain runs in, by its name: a default
    body run with ``B = Dispatch`` (``linear.linear[Dispatch]``) is ``minidl.backend``'s."""
    if frame.endswith("[Dispatch]"):
        return "backend"
    for prefix, box in (("Linear.", "nn"), ("module.", "tensor"), ("Dispatch.", "dispatch"),
                        ("Autodiff[", "autodiff"), ("Flex.", "flex")):
        if frame.startswith(prefix):
            return box
    return "nn" if frame.endswith(".forward") else None  # Conv2d.forward, …


def detour_calls(run) -> list[tuple[list[str], list[str]]]:
    """Each op the default body calls, in call order: (its frames from ``Dispatch.float_…``
    down to ``Flex``, the kernels that computed under it), read from the hits of ``run``
    (a :class:`minidl.debug.trace.Trace` with breakpoints at ``Flex.``, maybe ``kernel``)."""
    did = iter(computing(run.hits))
    calls: dict[str, tuple[list[str], list[str]]] = {}
    for hit in run.hits:
        chain = hit.chain()
        kernel = hit.name.startswith("kernel ")
        computed = next(did) if kernel else False
        if "linear.linear[Dispatch]" not in chain:
            continue
        below = chain[chain.index("linear.linear[Dispatch]") + 1:]
        below = below[next(i for i, n in enumerate(below) if n.startswith("Dispatch.")):]
        frames, kernels = calls.setdefault(below[0], ([], []))
        if kernel:
            if computed:
                kernels.append(hit.name.removeprefix("kernel ").removesuffix(" [numba]"))
        elif not frames:
            frames.extend(below)
    return list(calls.values())


def straight_steps(chain: Sequence[str]) -> tuple[tuple[str, str, str, bool], ...]:
    """The arrows of an op with a forwarder (``Conv2d``'s ``conv2d``), read from one
    backtrace: straight down, one arrow into each box, labelled with the frame that
    enters it, numbered in call order."""
    start = next(i for i, name in enumerate(chain) if box_of(name) == "nn")
    steps = [("nn", "module", "weight.val()", False)]
    at = "nn"
    for name in chain[start + 1:]:
        box = box_of(name)
        if box is not None and box != at:
            steps.append((at, box, f"{_circled(len(steps))} {name}", False))
            at = box
    return tuple(steps)


def route_steps(run) -> tuple[tuple[str, str, str, bool], ...]:
    """The arrows of one traced ``layer(x)`` across the boxes: (from, to, label, dashed),
    numbered in call order: down to ``Dispatch.linear``, which has no forwarder, into the
    protocol's default body (``minidl.backend``), then each op it calls back up through
    ``Dispatch`` and down, by device, ``Autodiff[Flex]`` to ``Flex``. Kernels are left off.
    A call with no default body on its path goes straight down (:func:`straight_steps`)."""
    first = run.hits[0].chain()
    if "linear.linear[Dispatch]" not in first:
        return straight_steps(first)
    top = first[first.index("Linear.forward"):first.index("linear.linear[Dispatch]") + 1]
    top = [name for name in top if name != "module.linear_impl"]
    steps = [("nn", "module", "weight.val()", False)]
    for k, (a, b) in enumerate(zip(top, top[1:]), start=1):
        label = f"{_circled(k)} {b}"
        if box_of(b) == "backend":
            label = f"{_circled(k)} no forwarder:\nthe default body"
        steps.append((box_of(a), box_of(b), label, False))
    calls = [frames for frames, _ in detour_calls(run)]
    numbers = [_circled(len(top) + k) for k in range(len(calls))]
    steps.append(("backend", "dispatch", "\n".join(
        f"{n} {frames[0].removeprefix('Dispatch.')}" for n, frames in zip(numbers, calls)),
        False))
    below = {tuple(box_of(f) for f in frames) for frames in calls}
    (down,) = below  # every call takes the same boxes down
    roles = {"dispatch": "by device", "autodiff": "to Flex"}  # not "recorded": an exercise asks what
    for a, b in zip(down, down[1:]):
        steps.append((a, b, f"{' '.join(numbers)} {roles[a]}", False))
    return tuple(steps)


def trace_layer(device: Device | None = None):
    """A trace of one ``Linear(4, 2)`` forward on ``device`` (``Device.flex().autodiff()``),
    stopping at every ``Flex`` op."""
    device = device or Device.flex().autodiff()
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.zeros((3, 4), np.float32), device)
    layer(x)  # draw the params first: the trace below sees the forward only
    return debug.trace(lambda: layer(x), breakpoints=r"^Flex\.", echo=False)


@contextmanager
def _quiet_stderr():
    """Send the process's stderr (file descriptor 2) to /dev/null: PyTorch's profiler writes
    its ``profiler_start``/``profiler_stop`` lines there, below Python."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def torch_op_tree(call: Callable[[], object]) -> dict[str, list[str]]:
    """Run ``call`` under ``torch.profiler``; each aten op's children, by name, in order
    (``""`` holds the top-level ops)."""
    with _quiet_stderr(), torch.profiler.profile() as prof:
        call()
    tree: dict[str, list[str]] = {}
    for event in prof.events():
        parent = event.cpu_parent.name if event.cpu_parent is not None else ""
        tree.setdefault(parent, []).append(event.name)
    return tree


def torch_column(linear: torch.nn.Linear, rows: torch.Tensor) -> dict[str, str]:
    """What PyTorch does at each box of :data:`BOXES` for ``linear(rows)``, read from PyTorch:
    the dispatcher's keys of the weight and the profiler's op tree of one forward."""
    keys = str(torch._C._dispatch_keys(linear.weight))  # DispatchKeySet(CPU, …, AutogradCPU…)
    named = [k for k in ("AutogradCPU", "CPU") if k in keys.split("(")[1].split(", ")]
    tree = torch_op_tree(lambda: linear(rows))
    composite = " + ".join(op.removeprefix("aten::") for op in tree["aten::linear"])
    in_addmm = [op.removeprefix("aten::") for op in tree["aten::addmm"]]
    bias = "copy_ bias" if "copy_" in in_addmm else "?"
    return {
        "nn": "nn.Linear",
        "module": "nn.Module, nn.Parameter",
        "tensor": "F.linear → aten::linear",
        "dispatch": f"dispatcher, by key: {', '.join(named)}",
        "autodiff": "autograd: the AutogradCPU key",
        "flex": f"CPU kernels; addmm = {bias} + GEMM",
        "backend": f"composite ops: linear = {composite}",
    }


#: The detour's colour: the default op and the calls it sends back up.
DETOUR = "#D9730D"
_GAP = 44.0  # between two boxes of the spine: room for an arrow and its label beside it
_INNER, _OUTER = 22.0, 46.0  # the detour's two lines, right of the spine


class PathMap(Flowchart):
    """The route of ``layer(x)``, laid out by hand: the spine nn → tensor → dispatch →
    autodiff → flex → backend straight down, module beside nn, the detour dispatch →
    backend → dispatch as two lines on the right of the spine (down outside, up inside),
    every label beside its arrow, none on a box."""

    def _size(self, key: str) -> tuple[float, float]:
        lines = self._nodes[key].lines
        return (max(text_width(line) for line in lines) + 2 * PAD_X,
                len(lines) * LINE_H + 2 * PAD_Y)

    def place(self) -> dict[str, tuple[float, float, float, float]]:
        """Each box's (left, top, width, height), and each label's, keyed ``label:<text>``."""
        spine_w = max(self._size(k)[0] for k in SPINE if k != "nn")
        labels = {e.label: label_size(e.label) for e in self._edges if e.label}
        by_pair = {(e.a, e.b): e.label for e in self._edges}
        left = MARGIN
        cx = left + spine_w / 2
        out: dict[str, tuple[float, float, float, float]] = {}
        y = MARGIN
        for key in SPINE:
            w, h = self._size(key)
            out[key] = (left, y, w, h) if key == "nn" else (left, y, spine_w, h)
            y += h + _GAP
        nx, ny, nw, nh = out["nn"]
        mw, mh = self._size("module")
        side = labels[by_pair["nn", "module"]][0] + 24
        out["module"] = (nx + nw + side, ny + (nh - mh) / 2, mw, mh)
        for (a, b), text in by_pair.items():  # above the side arrow, right of the spine's
            w, h = labels[text]
            ax, ay, aw, ah = out[a]
            if b == "module":
                at = (nx + nw + (side - w) / 2, ny + nh / 2 - h - 3)
            elif (a, b) in DETOUR_EDGES:  # right of the outer line, by the box it leaves
                sx, sy, sw, sh = out["dispatch" if b == "backend" else "flex"]
                at = (sx + sw + _OUTER + 10, sy + sh / 2 + (8 if b == "backend" else -8))
            else:
                at = (cx + 8, ay + ah + (_GAP - h) / 2)
            out[f"label:{text}"] = (*at, w, h)
        return out

    def svg(self) -> str:
        box = self.place()
        right = max(x + w for x, _, w, _ in box.values()) + MARGIN
        bottom = max(y + h for _, y, _, h in box.values()) + MARGIN
        uid = "mdfc-" + hashlib.sha1(self._key().encode()).hexdigest()[:10]
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="minidl-flowchart" id="{uid}" '
            f'width="{right:.0f}" height="{bottom:.0f}" viewBox="0 0 {right:.1f} {bottom:.1f}" '
            f'role="img" style="max-width:100%;height:auto" '
            f'font-family="{escape(FONT_FAMILY)}" font-size="{FONT_SIZE:g}">',
        ]
        if self.title:
            out.append(f"<title>{escape(self.title)}</title>")
        out.append(
            f'<defs><marker id="{uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
            'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{EDGE_COLOR}"/></marker>'
            f'<marker id="{uid}-detour" viewBox="0 0 10 10" refX="9" refY="5" '
            'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{DETOUR}"/></marker></defs>')
        cx = box["tensor"][0] + box["tensor"][2] / 2
        labels = []
        for e in self._edges:
            (ax, ay, aw, ah), (bx, by, bw, bh) = box[e.a], box[e.b]
            if (e.a, e.b) in DETOUR_EDGES:
                right = ax + aw
                if e.b == "backend":  # down, outside: from dispatch's top to backend's foot
                    d = (f"M{right:.1f},{ay + 14:.1f} H{right + _OUTER:.1f} "
                         f"V{by + bh - 14:.1f} H{bx + bw:.1f}")
                else:  # up, inside: from backend's top to dispatch's foot
                    d = (f"M{right:.1f},{ay + 14:.1f} H{right + _INNER:.1f} "
                         f"V{by + bh - 14:.1f} H{bx + bw:.1f}")
                out.append(
                    f'<path class="edge detour" data-from="{escape(e.a)}" '
                    f'data-to="{escape(e.b)}" d="{d}" fill="none" stroke="{DETOUR}" '
                    f'stroke-width="1.8" marker-end="url(#{uid}-detour)"/>')
                lx, ly, lw, lh = box[f"label:{e.label}"]
                labels.append(self._edge_label(e.label, (lx + lw / 2, ly + lh / 2)))
                continue
            if e.b == "module":
                d = f"M{ax + aw:.1f},{ay + ah / 2:.1f} H{bx:.1f}"
            else:
                d = f"M{cx:.1f},{ay + ah:.1f} V{by:.1f}"
            dash = ' stroke-dasharray="5 4"' if e.dashed else ""
            out.append(
                f'<path class="edge" data-from="{escape(e.a)}" data-to="{escape(e.b)}" '
                f'd="{d}" fill="none" stroke="{EDGE_COLOR}" stroke-width="1.4"{dash} '
                f'marker-end="url(#{uid}-arrow)"/>')
            if e.label:
                lx, ly, lw, lh = box[f"label:{e.label}"]
                labels.append(self._edge_label(e.label, (lx + lw / 2, ly + lh / 2)))
        for key in self._nodes:
            x, y, w, h = box[key]
            n = self._nodes[key]
            n.x, n.y, n.w, n.h = x + w / 2, y + h / 2, w, h
            out.append(self._node_svg(n))
        out.extend(labels)
        out.append("</svg>")
        return "\n".join(out)


def package_map(
    run=None, pytorch: Mapping[str, str] | bool | None = None, boxes: Sequence[Box] = BOXES,
    call: str = "layer(x)",
) -> PathMap:
    """The seven boxes and the route of a traced ``layer(x)`` through them
    (:func:`route_steps`); ``run`` is a trace, a call to trace (stopped at every ``Flex``
    op) or, by default, :func:`trace_layer`'s; ``pytorch`` maps a box id
    to what PyTorch does there (printed as a last line, ``torch: …``), or is ``True``: then
    :func:`torch_column` reads it from a fresh ``nn.Linear(4, 2)`` on a ``[3, 4]`` input;
    ``call`` names the call in the title."""
    if run is not None and not isinstance(run, Trace):  # a call (a Trace is callable too)
        run = debug.trace(run, breakpoints=r"^Flex\.", echo=False)
    if pytorch is True:
        pytorch = torch_column(torch.nn.Linear(4, 2), torch.zeros(3, 4))
    title = f"The route of {call} through the seven packages"
    if pytorch:
        title += ", and what PyTorch does at each"
    chart = PathMap("TB", title=title)
    for key, package, crate, holds in boxes:
        label = f"minidl.{package:<15}{crate}\n{holds}"
        if pytorch and pytorch.get(key):
            label += f"\ntorch: {pytorch[key]}"
        chart.node(key, label, align="left")
    for a, b, label, dashed in route_steps(trace_layer() if run is None else run):
        chart.edge(a, b, label, dashed=dashed)
    return chart


def packages_on_the_path(device: Device, rows: np.ndarray) -> list[str]:
    """Trace one ``Linear(4, 2)`` forward on ``device`` down to the gemm kernel; the minidl
    packages of its frames (``minidl.backends.flex`` for Flex), each once, outermost first."""
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(rows, device)
    layer(x)  # draw the params first: the trace below sees the forward only
    hit = debug.trace(lambda: layer(x), breakpoints=r"^kernel gemm", echo=False).first()
    names: list[str] = []
    for frame in reversed(hit.frames):
        if frame.library:
            parts = frame.path.split("/")[1:-1]  # minidl/backends/flex/… → backends.flex
            package = ".".join(parts[:2]) if parts[0] == "backends" else parts[0]
            if f"minidl.{package}" not in names:
                names.append(f"minidl.{package}")
    return names


def skipped_on_plain(rows: np.ndarray) -> str:
    """The one package a forward on ``Device.flex()`` skips that one on its autodiff twin
    crosses."""
    on_autodiff = packages_on_the_path(Device.flex().autodiff(), rows)
    on_plain = packages_on_the_path(Device.flex(), rows)
    (skipped,) = sorted(set(on_autodiff) - set(on_plain))
    return skipped


def draw_layouts(weight: np.ndarray, x: np.ndarray | None = None,
                 y: np.ndarray | None = None, rows: int = 3, bias: np.ndarray | None = None):
    """The two layouts of one ``Linear``'s weight, as shapes: minidl's (burn's) ``x·W`` with
    ``W`` ``[d_input, d_output]``, above PyTorch's ``x·Wᵀ`` with ``weight``
    ``[out_features, in_features]``; each weight's cells coloured and labelled by value, so
    the same numbers show transposed; ``x``, if given, is written into its grids (the input
    the weight's gradient is read from), and ``y``, the output, into its grids (the same
    numbers in both layouts); ``bias``, if given, is drawn as a row ``b [d_output]`` after
    the weight, so ``y[0, 0]`` can be checked by hand. Returns the matplotlib figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    d_in, d_out = weight.shape
    rows = rows if x is None else x.shape[0]
    span = float(np.abs(weight).max()) or 1.0
    cmap = plt.get_cmap("coolwarm")
    fig, ax = plt.subplots(figsize=(5.6 if bias is None else 7.0, 5.1))

    def grid(x0: float, y0: float, shape: tuple[int, int], name: str,
             values: np.ndarray | None = None, tint: bool = True,
             label: str | None = None) -> float:
        """A grid of ``shape`` cells, top-left at (x0, y0), its name and shape below it;
        returns its right edge."""
        r, c = shape
        for i in range(r):
            for j in range(c):
                tinted = values is not None and tint
                fill = cmap(0.5 + 0.5 * values[i, j] / span) if tinted else "#EEEEEE"
                ax.add_patch(Rectangle((x0 + j, y0 - i - 1), 1, 1, facecolor=fill,
                                       edgecolor="#555555", linewidth=0.8))
                if values is not None:
                    ax.text(x0 + j + 0.5, y0 - i - 0.5, f"{values[i, j]:.2f}", ha="center",
                            va="center", fontsize=8)
        ax.text(x0 + c / 2, y0 - r - 0.3, label or f"{name} [{r}, {c}]", ha="center", va="top",
                fontsize=9, family="monospace")
        return x0 + c

    def sign(x0: float, y0: float, text: str) -> float:
        ax.text(x0 + 0.6, y0, text, ha="center", va="center", fontsize=20)
        return x0 + 1.2

    top, width = 0.0, 0.0
    for title, w_name, w_values in (
        ("minidl, burn:  y = x·W + b", "W", weight),
        ("PyTorch:  y = x·weightᵀ + b", "weight", weight.T),
    ):
        ax.text(0, top + 0.9, title, fontsize=10, fontweight="bold", va="center")
        right = grid(0, top, (rows, d_in), "x", x, tint=False)
        right = sign(right, top - rows / 2, "·")
        right = grid(right, top, w_values.shape, w_name, w_values)
        if w_name == "weight":
            ax.text(right + 0.1, top + 0.1, "T", fontsize=12, va="top")
            right += 0.5
        if bias is not None:
            right = sign(right, top - 0.5, "+")
            right = grid(right, top, (1, d_out), "b", bias.reshape(1, -1),
                         label=f"b [{d_out}]")
        right = sign(right, top - rows / 2, "→")
        width = max(width, grid(right, top, (rows, d_out), "y", y, tint=False))
        top -= max(w_values.shape[0], rows) + 2.9
    ax.set_xlim(-0.2, width + 0.2)
    ax.set_ylim(top + 1.3, 1.5)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout(pad=0.2)
    return fig
