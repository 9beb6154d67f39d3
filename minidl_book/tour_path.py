"""The tour's pictures: recorded backtraces drawn as the packages they crossed.

Each box is one minidl package (and the burn crate it mirrors) with the frames the call spent
in it, outermost first, and the wrapper and shape in which the input reached that package
(read from the recorded arguments: ``<Tensor f32[3,4] flex ad>`` is a ``Tensor``,
``<f32[3,4] flex ad>`` a ``DispatchTensor``, ``<ad f32[3,4]>`` an ``AutodiffTensor``, an
argument of Flex or of a kernel a NumPy ``ndarray``). Everything in a box is read from the
recorded frames; a package one path crosses and the other does not is drawn as an empty,
grey "not crossed" box so that the same package sits on the same row in both columns.
"""

from __future__ import annotations

import re

from minidl.debug.diagram import COLORS
from minidl.debug.flowchart import Flowchart
from minidl.debug.frames import Frame, Hit, split_args
from minidl.debug.trace import Trace
from minidl_book.exercises import Exercise

__all__ = ["CRATES", "ROLES", "package_of", "package_groups", "package_path",
           "package_map", "paths_side_by_side",
           "wrapper_of", "walk_steps", "backward_walk",
           "torch_twin", "to_torch", "step_backwards", "computes", "matmul_grads", "data",
           "show_source", "numbered", "compact_ids", "loss_sketch", "HintedExercise",
           "record_backward", "plug_in", "graph_chart", "Captioned", "step_timeline",
           "policy_table", "minidl_tree", "torch_tree", "autograd_beside",
           "batch_sum_figure"]

#: minidl package → (burn crate, colour key of ``minidl.debug.diagram.COLORS``)
CRATES = {
    "module": ("minidl only", "nn"),  # Module.__call__: burn calls forward itself
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


def _plugged_step(frame: Frame) -> bool:
    """A step method outside minidl (the reader's plugged-in ``Matmul``): given a ``B``."""
    return not frame.library and frame.name.endswith((".forward", ".backward")) \
        and _B_ARG.search(frame.args or "") is not None


def _groups(hit: Hit) -> list[tuple[str, list[Frame]]]:
    groups: list[tuple[str, list[Frame]]] = []
    for frame in reversed([f for f in hit.frames if f.library or _plugged_step(f)]):
        pkg = "autodiff" if _plugged_step(frame) else package_of(frame.path)
        if groups and groups[-1][0] == pkg:
            groups[-1][1].append(frame)
        else:
            groups.append((pkg, [frame]))
    return groups


def package_groups(hit: Hit) -> list[tuple[str, list[str]]]:
    """The library frames of ``hit``, outermost first, grouped by consecutive package."""
    return [(pkg, [f.name + (" (default)" if f.note else "") for f in frames])
            for pkg, frames in _groups(hit)]


_TENSOR_ARG = re.compile(r"<(Tensor |ad )?(\w+\[[\d,]*\])( [\w ]+)?>")


def wrapper_of(frame: Frame) -> str | None:
    """The wrapper and shape of the first tensor argument of ``frame``, as its recorded
    argument list shows it: ``"Tensor f32[3,4]"``, ``"AutodiffTensor f32[3,4]"``, ..."""
    for arg in split_args(frame.args):
        m = _TENSOR_ARG.search(arg)
        if m is None:
            continue
        prefix, shape, where = m.groups()
        if prefix == "Tensor ":
            kind = "Tensor"
        elif prefix == "ad ":
            kind = "AutodiffTensor"
        elif frame.layer in ("backend", "kernel") or not where:
            kind = "ndarray"  # Flex's primitive and the kernels' arguments
        else:
            kind = "DispatchTensor"
        return f"{kind} {shape}"
    return None


_B_ARG = re.compile(r"\bB=(\w+)")


def _frame_line(f: Frame, num: int | None = None, mark: bool = False) -> str:
    """``  Matmul.backward  B=Flex``: the frame's name, ``(default)`` for a protocol default,
    and the backend ``B`` it was given when its recorded arguments name one and its name
    does not (``linear.linear[Dispatch]`` already does); ``num``: its backtrace number
    (``#3``), ``mark``: a ``▶`` in front."""
    line = ("▶ " if mark else "  ") + (f"#{num:<3}" if num is not None else "") + f.name + (
        " (default)" if f.note else "") + (" (plugged in)" if not f.library else "")
    b = _B_ARG.search(f.args or "")
    return line + (f"  B={b.group(1)}" if b and "[" not in f.name else "")


def _label(pkg: str, frames: list[Frame], var, nums: dict | None = None,
           marks: tuple = ()) -> str:
    """``var``: the input's name, or ``{package: name}`` (a package left out: no line);
    ``nums``: ``id(frame)`` → its backtrace number; ``marks``: frame names given a ``▶``."""
    crate, _ = CRATES[pkg]
    name = var.get(pkg) if isinstance(var, dict) else var
    held = name and next((w for w in map(wrapper_of, frames) if w), None)
    lines = [f"minidl.{pkg} · {crate}"]
    if held:
        lines.append(f"{name} as {held}")
    lines += [_frame_line(f, (nums or {}).get(id(f)), f.name in marks) for f in frames]
    return "\n".join(lines)


def _add_column(chart: Flowchart, hit: Hit, tag: str, var,
                rows: list[str] | None = None, head: str | None = None,
                numbered: bool = False, marks: tuple = ()) -> None:
    groups = dict(_groups(hit))
    nums = {id(f): i for i, f in enumerate(hit.frames)} if numbered else None
    order = rows or [pkg for pkg, _ in _groups(hit)]
    prev = None
    if head is not None:
        fill, stroke = COLORS["tensor"]
        prev = f"{tag}head"
        chart.node(prev, head, shape="round", fill=fill, stroke=stroke)
    for i, pkg in enumerate(order):
        nid = f"{tag}{i}"
        if pkg in groups:
            fill, stroke = COLORS[CRATES[pkg][1]]
            chart.node(nid, _label(pkg, groups[pkg], var, nums, marks), align="left",
                       shape="round" if pkg == "backend" else "box", fill=fill, stroke=stroke)
        else:
            fill, stroke = COLORS["user"]
            chart.node(nid, f"minidl.{pkg}\nnot crossed", fill="#FFFFFF", stroke=stroke)
        if prev is not None:
            chart.edge(prev, nid, dashed=pkg not in groups or order[i - 1] not in groups)
        prev = nid


def package_path(hit: Hit, title: str | None = None, var: str | None = "x") -> Flowchart:
    """One box per package crossed: ``minidl.pkg · burn crate``, the wrapper and shape in
    which ``var`` (the input) arrived there (no such line when ``var`` is None), and the
    frames."""
    chart = Flowchart("TB", title=title)
    _add_column(chart, hit, "p", var)
    return chart


def paths_side_by_side(hits: list[Hit], title: str | None = None, var="x",
                       heads: list[str] | None = None, numbered: list[bool] | None = None,
                       marks: tuple = ()) -> Flowchart:
    """Several recorded paths in columns, one row per package in the order of ``CRATES``;
    a package a path does not cross is an empty grey box in that column. ``var``: one
    name for every column, or a list (one per column) of names or ``{package: name}``;
    ``heads``: a rounded box on top of each column (the call that was traced);
    ``numbered``: per column, whether each frame shows its backtrace number (``#0`` the
    innermost, as lldb's ``bt``); ``marks``: frame names drawn with a ``▶``."""
    crossed = {pkg for hit in hits for pkg, _ in _groups(hit)}
    rows = [pkg for pkg in CRATES if pkg in crossed]
    chart = Flowchart("TB", title=title)
    names = var if isinstance(var, list) else [var] * len(hits)
    for i, hit in enumerate(hits):
        _add_column(chart, hit, f"c{i}_", names[i], rows, heads[i] if heads else None,
                    bool(numbered and numbered[i]), marks)
    return chart


#: minidl package → its role in one forward op (the tour's map, :func:`package_map`)
ROLES = {
    "module": "Module.__call__ (as torch's): calls forward",
    "nn": "Linear: holds weight and bias, calls the op",
    "tensor": "module.linear: the functional op on Tensors",
    "backend": "default body: linear built of smaller ops",
    "dispatch": "Dispatch: routes an op to the device's backend",
    "autodiff": "Autodiff[Flex]: records one step, calls Flex",
    "backends.flex": "Flex: runs the op on arrays",
    "backends.flex.kernels": "numba kernel: the loops",
}


def package_map(hit: Hit, var: str = "x"):
    """The map of ``hit``'s path (a matplotlib figure): one box per package it crossed,
    in call order along a snake (the top row left to right, the bottom row right to left),
    each with the package (under ``minidl.``), the burn crate, its role (:data:`ROLES`) and the wrapper and
    shape in which ``var`` arrived there, read from the recorded arguments. No frame is
    listed: the frames are :func:`paths_side_by_side`'s."""
    import textwrap

    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    groups = _groups(hit)
    per_row = (len(groups) + 1) // 2
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    w, h, gap_x, gap_y = 1.46, 1.15, 0.2, 0.34
    centres = []
    for i, (pkg, frames) in enumerate(groups):
        row, col = divmod(i, per_row)
        col = col if row == 0 else per_row - 1 - col
        cx, cy = col * (w + gap_x) + w / 2, -row * (h + gap_y) + h / 2
        centres.append((cx, cy))
        crate, colour = CRATES[pkg]
        fill, stroke = COLORS[colour]
        ax.add_patch(FancyBboxPatch((cx - w / 2, cy - h / 2), w, h, fc=fill, ec=stroke,
                                    lw=1, boxstyle="round,pad=0,rounding_size=0.06"))
        held = next((wr for wr in map(wrapper_of, frames) if wr), None)
        ax.text(cx, cy + h / 2 - 0.07, f"{pkg}\n{crate}",
                ha="center", va="top", fontsize=8.5, weight="bold")
        ax.text(cx, cy - 0.03, textwrap.fill(ROLES[pkg], 24), ha="center", va="center",
                fontsize=8.5)
        if held:
            ax.text(cx, cy - h / 2 + 0.06, f"{var}: {held}",
                    ha="center", va="bottom", fontsize=8, color="#444")
    for (x0, y0), (x1, y1) in zip(centres, centres[1:]):
        if y0 == y1:  # along a row
            s = 1 if x1 > x0 else -1
            start, end = (x0 + s * w / 2, y0), (x1 - s * w / 2, y1)
        else:  # down to the next row
            start, end = (x0, y0 - h / 2), (x1, y1 + h / 2)
        ax.annotate("", end, start, arrowprops=dict(arrowstyle="-|>", color="#333", lw=1))
    ax.set_xlim(-0.05, per_row * (w + gap_x) - gap_x + 0.05)
    ax.set_ylim(-(h + gap_y) - 0.05, h + 0.05)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout(pad=0.2)
    return fig


_GRAD_ARG = re.compile(r"grad=<\w+\[([\d,]*)\]")


def _shape(shape) -> str:
    return "[" + ",".join(str(n) for n in shape) + "]"


def _edge_label(op: str, i: int, shapes: list, grad: tuple, same: bool) -> str:
    """What step ``op`` hands its input ``i``, from the shapes of its inputs and of the
    gradient ``grad`` it received: the rule, then the shape that reaches the input."""
    to = _shape(shapes[i])
    if op == "Matmul":  # y = x W: dL/dx = g W^T, dL/dW = x^T g
        x, w = shapes
        if i == 0:
            return f"g·Wᵀ\n{_shape(grad)}·{_shape(w[::-1])}\n→ {to}"
        return f"xᵀ·g\n{_shape(x[::-1])}·{_shape(grad)}\n→ {to}"
    if op == "Mean":
        n = 1
        for d in shapes[0]:
            n *= d
        return f"g/{n} each → {to}"
    if op == "Mul":
        return f"g·lhs + g·rhs → {to}" if same else f"g·other → {to}"
    if op == "Add" and tuple(shapes[i]) != tuple(grad):
        return f"column-sum\n→ {to}"
    if op == "Reshape":
        return f"reshaped → {to}"
    if op == "Sub" and i == 1:
        return f"-g\n→ {to}"
    return to  # handed on unchanged


def walk_steps(trace: Trace, loss, names: dict, breakpoint: int = 1) -> list[dict]:
    """The steps ``loss.backward()`` ran, in the order the hits of ``breakpoint`` (each
    step's ``backward``) recorded them: ``order``, node ``id``, ``op``, the ``grad`` shape
    it received (read from the hit's arguments), the numba ``kernels`` it ran (each name
    once), ``calls``: how many times it ran each kernel that is a breakpoint too, and
    ``edges``: one per input, ``(input, label, shape, tracked)``, where ``input`` is the
    input's name in ``names`` (``{name: tensor}``) or its node id."""
    from minidl.autodiff.node import walk
    from minidl.autodiff.tensor import autodiff_tensor_of

    named = {autodiff_tensor_of(t).node.id: name for name, t in names.items()}
    nodes = {n.id: n for n in walk(autodiff_tensor_of(loss).node)}
    hits = trace.hits_of(breakpoint)
    recorded = sorted((n for n in nodes.values() if n.step is not None),
                      key=lambda n: -n.id)
    # a kernel that is a breakpoint of its own is counted: each of its hits belongs to the
    # step whose hit came last before it (a step's kernels otherwise are names, each once)
    calls: list[dict[str, int]] = [{} for _ in hits]
    step_no = -1
    for h in trace.hits:
        if hits and h.breakpoint == hits[0].breakpoint:
            step_no += 1
        elif h.name.startswith("kernel ") and step_no >= 0:
            name = h.name.removeprefix("kernel ").removesuffix(" [numba]")
            calls[step_no][name] = calls[step_no].get(name, 0) + 1
    out = []
    for k, (node, hit) in enumerate(zip(recorded, hits), start=1):
        step = node.step
        op = type(step).__name__
        if hit.name != f"{op}.backward":
            raise AssertionError(f"hit {k} is {hit.name}, the graph's step is {op}")
        grad = tuple(int(d) for d in _GRAD_ARG.search(hit.frames[0].args).group(1).split(",")
                     if d)
        ids = [p.id for p in step.inputs]
        edges, seen = [], set()
        for i, (parent, tracked) in enumerate(zip(step.inputs, step.tracked)):
            if parent.id in seen:
                continue
            seen.add(parent.id)
            label = _edge_label(op, i, list(step.shapes), grad, ids.count(parent.id) > 1)
            edges.append((named.get(parent.id, parent.id), label, tuple(step.shapes[i]),
                          bool(tracked)))
        kernels = [k.removeprefix("kernel ").removesuffix(" [numba]") for k in hit.kernels]
        out.append({"order": k, "id": node.id, "op": op, "grad": grad, "kernels": kernels,
                    "calls": calls[k - 1], "edges": edges})
    return out


def backward_walk(trace: Trace, loss, names: dict, breakpoint: int = 1,
                  title: str | None = None, direction: str = "TB",
                  ids: dict[int, int] | None = None) -> Flowchart:
    """The recorded graph of ``loss`` drawn the way backward walks it: the loss on top, each
    step numbered in the order it ran, with the kernels it ran; on each arrow, what the step
    hands that input and its shape; an untracked input (named in ``names``) gets a dashed
    arrow: its gradient is never computed. Nodes are numbered 1, 2, 3... in the order they
    were recorded, as :func:`numbered` prints them (``ids``: another numbering)."""
    from minidl.autodiff.node import walk
    from minidl.autodiff.tensor import autodiff_tensor_of

    steps = walk_steps(trace, loss, names, breakpoint)
    if ids is None:
        recorded = sorted(n.id for n in walk(autodiff_tensor_of(loss).node))
        ids = {node_id: k for k, node_id in enumerate(recorded, 1)}
    chart = Flowchart(direction, title=title)
    fill, stroke = COLORS["tensor"]
    chart.node("start", "loss.backward()\ng = ones " + _shape(steps[0]["grad"]), shape="round",
               fill=fill, stroke=stroke)
    fill, stroke = COLORS["autodiff"]
    for s in steps:
        ran = ", ".join(k + (f" ×{s['calls'][k]}" if s["calls"].get(k, 1) > 1 else "")
                        for k in s["kernels"]) or "no kernel"
        chart.node(str(s["id"]), f"{s['order']}. {s['op']}  #{ids.get(s['id'], s['id'])}\n{ran}",
                   fill=fill, stroke=stroke)
    chart.edge("start", str(steps[0]["id"]), _shape(steps[0]["grad"]))
    for s in steps:
        for parent, label, shape, tracked in s["edges"]:
            if isinstance(parent, str):
                fill, stroke = COLORS["nn"] if tracked else COLORS["user"]
                rule = label.split("\n")[0]
                what = "leaf, Grad: kept" if tracked else f"not tracked:\n{rule} skipped"
                chart.node(parent, f"{parent} {_shape(shape)}\n{what}", shape="round",
                           fill=fill, stroke=stroke)
            chart.edge(str(s["id"]), str(parent), label if tracked else None,
                       dashed=not tracked)
    return chart


def loss_sketch(x, weight, bias, target) -> Flowchart:
    """The graph ``((layer(x) - target)²).mean()`` records, sketched before it is shown:
    each input's shape and whether it is tracked (read from the tensors), the layer's own
    steps left as a question, the loss's three ops. Dashed: no gradient goes that way."""
    chart = Flowchart("LR", title="the graph of the loss, the layer's part left open")

    def leaf(name: str, t) -> None:
        tracked = t.is_require_grad()
        fill, stroke = COLORS["nn"] if tracked else COLORS["user"]
        what = "leaf, tracked" if tracked else "node, not tracked"
        chart.node(name, f"{name} {_shape(t.shape)}\n{what}", shape="round", fill=fill,
                   stroke=stroke)

    for name, t in (("x", x), ("weight", weight), ("bias", bias)):
        leaf(name, t)
        chart.edge(name, "layer", dashed=not t.is_require_grad())
    fill, stroke = COLORS["autodiff"]
    chart.node("layer", "layer(x)\n? steps", fill="#FFFFFF", stroke=stroke)
    for nid, label in (("sub", "Sub\ny - target"), ("mul", "Mul\ndiff * diff"),
                       ("mean", "Mean\nloss")):
        chart.node(nid, label, fill=fill, stroke=stroke)
    leaf("target", target)
    chart.edge("layer", "sub", "y").edge("target", "sub",
                                         dashed=not target.is_require_grad())
    chart.edge("sub", "mul", "diff").edge("mul", "mean")
    return chart


def to_torch(*tensors):
    """minidl tensors as torch tensors (their values copied)."""
    import torch

    out = tuple(torch.from_numpy(t.to_numpy()) for t in tensors)
    return out if len(out) > 1 else out[0]


def torch_twin(layer):
    """PyTorch's ``nn.Linear`` holding ``layer``'s values: the weight copied in transposed
    (torch keeps ``[d_output, d_input]``), the bias as it is."""
    import torch

    d_input, d_output = layer.weight.val().shape
    twin = torch.nn.Linear(d_input, d_output, bias=layer.bias is not None)
    with torch.no_grad():
        twin.weight.copy_(to_torch(layer.weight.val()).T)
        if layer.bias is not None:
            twin.bias.copy_(to_torch(layer.bias.val()))
    return twin


def step_backwards(graph) -> str:
    """A breakpoint on the ``backward`` of every step class in ``graph`` (``debug.graph``'s
    result): ``^(Matmul|Reshape|...)\\.backward$``."""
    return r"^(" + "|".join(dict.fromkeys(graph.ops)) + r")\.backward$"


def computes(hit: Hit) -> bool:
    """Whether a kernel hit computed numbers. ``binary_same_shape`` is Flex's first try for
    an element-wise op: entered on operands of two shapes (a bias row added to a matrix), it
    compares the shapes and returns without computing, and another kernel does the op."""
    if "binary_same_shape" not in hit.name:
        return True
    caller = hit.frames[1]  # broadcast.binary(op, a, b, ...): the shapes it was given
    shapes = re.findall(r"<\w+(\[[^\]]*\])>", caller.args)
    return len(shapes) >= 2 and shapes[0] == shapes[1]


def matmul_grads(skipped: str = "x"):
    """The two products of a matmul's backward, ``g·Wᵀ`` (x's gradient) and ``xᵀ·g`` (the
    weight's), as shape boxes; the one for ``skipped`` greyed out."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    rows = [("x", [("g", (3, 2)), ("Wᵀ", (2, 4)), ("dL/dx", (3, 4))]),
            ("weight", [("xᵀ", (4, 3)), ("g", (3, 2)), ("dL/dW", (4, 2))])]
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 1.9))
    for ax, (who, boxes) in zip(axes, rows):
        grey = who == skipped
        fc, ec, tc = ("#eeeeee", "#bbbbbb", "#999999") if grey else ("#dbe7f7", "#555", "k")
        x0 = 0.0
        for k, (name, (r, c)) in enumerate(boxes):
            ax.add_patch(Rectangle((x0, 4 - r), c, r, fc=fc, ec=ec, lw=0.8))
            ax.text(x0 + c / 2, 4 - r / 2, f"{name}\n[{r}, {c}]", ha="center",
                    va="center", fontsize=7.5, color=tc)
            x0 += c
            if k < 2:
                ax.text(x0 + 0.6, 2.5, "·" if k == 0 else "=", ha="center", va="center",
                        fontsize=12, color=tc)
                x0 += 1.2
        ax.set_xlim(-0.2, 12.6)  # one scale for both rows (the wider is 12.4)
        ax.set_ylim(-0.2, 4.2)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(f"{who}'s gradient" + (" (skipped)" if grey else ""), fontsize=9,
                     color=tc)
    fig.tight_layout()
    return fig


def compact_ids(graph) -> dict[int, int]:
    """The node ids of ``graph`` (``debug.graph``'s result) → 1, 2, 3... in the order they
    were recorded. Real ids come from one counter shared by the whole process, so they skip
    the nodes of every other tensor made in between (data, other devices)."""
    return {node_id: k for k, node_id in enumerate(sorted(r.id for r in graph.records), 1)}


def numbered(graph) -> str:
    """``graph``'s table (its leaves named) with its nodes numbered by :func:`compact_ids`."""
    ids = compact_ids(graph)

    def renumber(text: str) -> str:
        return re.sub(r"#(\d+)", lambda m: f"#{ids.get(int(m.group(1)), m.group(1))}", text)

    header = ("node", "step", "parents", "requirement", "saved")
    rows = [header] + [tuple(map(renumber, row)) for row in graph.rows()]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [renumber(str(graph).splitlines()[0])]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4]
              for row in rows]
    return "\n".join(line.rstrip() for line in lines)


_SAVED = re.compile(r"(\w+(?: = \w+)*): float32\[([\d, ]*)\] \((\d+) B(?:, one array)?\)")


class Captioned:
    """A flowchart with a caption drawn under it, visible on the page (a flowchart's own
    title is an SVG ``<title>``: a tooltip only)."""

    def __init__(self, chart: Flowchart, caption: str, legend: bool = False) -> None:
        self.chart, self.caption, self.legend = chart, caption, legend

    def _repr_html_(self) -> str:
        from html import escape

        if self.legend:  # a figure's key: several sentences, read left to right
            return (self.chart._repr_html_() + '<p class="minidl-legend" style="'
                    'font-size:0.9em;max-width:752px;margin-top:0">'
                    f"{escape(self.caption)}</p>")
        return (self.chart._repr_html_() + '<p style="text-align:center;margin-top:0">'
                f"<em>{escape(self.caption)}</em></p>")

    def __repr__(self) -> str:
        return f"{self.caption}\n{self.chart!r}"


def graph_chart(graph, title: str | None = None) -> Captioned:
    """``graph`` (``debug.graph``'s result, leaves named) drawn left to right: each node
    numbered by :func:`compact_ids`, a step with what it saved for backward, one arrow per
    parent; under it a visible caption: ``title`` or the graph's own (steps, bytes kept)."""
    ids = compact_ids(graph)
    caption = re.sub(r"graph of #\d+: ", "", str(graph).splitlines()[0])
    caption = title or f"the recorded graph: {caption}"
    chart = Flowchart("LR", title=caption)
    for r, (_, op, _, req, saved) in zip(graph.records, graph.rows()):
        nid = str(r.id)
        if r.op == "leaf":
            fill, stroke = COLORS["nn"]
            chart.node(nid, f"#{ids[r.id]} {op}\n{req}", shape="round", fill=fill,
                       stroke=stroke)
            continue
        fill, stroke = COLORS["autodiff"]
        kept = [m.groups() for m in _SAVED.finditer(saved)]  # (name, shape, bytes)
        lines = [f"#{ids[r.id]} {op}"] + [f"saved {name}\nf32[{shape.replace(' ', '')}]"
                                           f" {nbytes} B" for name, shape, nbytes in kept]
        chart.node(nid, "\n".join(lines), fill=fill, stroke=stroke)
    for r in graph.records:
        for parent in dict.fromkeys(r.parents):  # Mul's one input twice: one arrow
            chart.edge(str(parent), str(r.id))
    return Captioned(chart, caption)


def step_timeline():
    """A step's life in two rows: what ``record`` does with it during the forward, and what
    the engine hands it during backward; the kept arrays are the link between the rows."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    rows = [("forward\n(record)", [
        "forward(B, lhs, rhs)\nB = Flex, bare arrays\n→ out, wrapped",
        "self.tracked:\nwhich want a grad\nself.shapes:\nthe inputs'",
        "keeps(self.tracked)\n→ names of arrays\nthe graph keeps"]),
        ("backward", [
        "backward(B, grad, state)\ngrad: out's shape\nstate[name]:\na kept array",
        "returns (d_lhs, d_rhs)\nNone for an\nuntracked side"])]
    fig, ax = plt.subplots(figsize=(7.4, 3.0))  # 10 pt text: legible in the 752 px column
    ax.set_xlim(0, 10.4)
    ax.set_ylim(0, 4.2)
    ax.axis("off")
    width, height, centres = 2.8, 1.6, {}
    for r, (label, boxes) in enumerate(rows):
        y = 3.2 - r * 2.2
        ax.text(0.0, y, label, ha="left", va="center", fontsize=10, weight="bold")
        for k, text in enumerate(boxes):
            x = 1.4 + k * 3.05
            fill = "#dbe7f7" if r == 0 else "#e4f2e4"
            ax.add_patch(FancyBboxPatch((x, y - height / 2), width, height,
                                        boxstyle="round,pad=0.02", fc=fill, ec="#555", lw=0.8))
            ax.text(x + width / 2, y, text, ha="center", va="center", fontsize=10)
            centres[r, k] = (x, y)
            if k:
                ax.annotate("", (x, y), (x - 0.4, y), arrowprops={"arrowstyle": "->"})
    (x0, y0), (x1, y1) = centres[0, 2], centres[1, 0]
    ax.add_patch(FancyArrowPatch((x0 + width / 2, y0 - height / 2),
                                 (x1 + width / 2, y1 + height / 2), arrowstyle="->",
                                 mutation_scale=10, linestyle="--", color="#555",
                                 connectionstyle="arc3,rad=0.0"))
    ax.text(centres[1, 1][0] + width + 0.35, y1, "the kept arrays,\nheld by the graph\n"
            "until backward:\nstate", ha="left", va="center", fontsize=10, style="italic")
    fig.tight_layout()
    return fig


def data(shape, device, seed: int):
    """A float32 tensor of standard-normal values on ``device``, the same for the same
    seed."""
    import numpy as np

    from minidl import Tensor

    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return Tensor.from_numpy(values, device)


def show_source(obj) -> None:
    """Display the library's own source of ``obj`` (a function, method or class)."""
    import inspect

    from IPython.display import Code, display

    display(Code(inspect.getsource(obj), language="python"))


class HintedExercise(Exercise):
    """An :class:`Exercise` with a hint of its own for a known wrong answer (``answer_hints``:
    ``{answer: hint}``; an answer matches as :meth:`Exercise.accepts` compares, so "seven"
    matches 7), in place of the general hint."""

    def __init__(self, *args, answer_hints: dict, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.answer_hints = dict(answer_hints)

    def check(self, prediction=...) -> bool:
        general = self.hint
        if prediction is not Ellipsis:
            self.hint = next((text for answer, text in self.answer_hints.items()
                              if self.accepts(prediction, answer)), general)
        try:
            return super().check(prediction)
        finally:
            self.hint = general


def record_backward(loss, kernels: str = r"^kernel gemm") -> Trace:
    """``loss.backward()`` under ``debug.trace``, with a breakpoint on the ``backward`` of
    every step class in the loss's graph and one on ``kernels``; nothing printed (the step
    classes resolve only during the run, as lldb's pending breakpoints do).
    ``trace.result`` is the gradients."""
    from minidl import debug

    steps = step_backwards(debug.graph(loss))
    return debug.trace(lambda: loss.backward(), breakpoints=[steps, kernels], echo=False)


def plug_in(step_class: type, exercise) -> type:
    """From now on ``Autodiff``'s ``float_matmul`` records ``step_class`` (the reader's
    ``Matmul``) when it passes ``exercise``'s checker, the book's reference step otherwise;
    prints which, returns it."""
    from minidl.autodiff.ops import arithmetic
    from minidl_book.harness import is_placeholder

    ok = not is_placeholder(step_class) and exercise.find_failure(step_class) is None
    chosen = step_class if ok else exercise.reference_solution
    arithmetic.Matmul = chosen  # float_matmul's record(cls, Matmul(), lhs, rhs) reads it
    print("✓ Your Matmul is plugged in: every matmul on an autodiff device records it."
          if ok else "Plugged in: the book's Matmul. It records every matmul until yours "
          "passes the checker; then run this cell again.")
    return chosen


def policy_table(x_shape, weight_shape) -> str:
    """burn_std's BetterTiling conditions for ``x @ weight``, evaluated for these shapes, as
    an HTML table (condition | value | merge?); the last row is the action."""
    from minidl.backend.modules.matmul_policy import (
        ROW_TILE,
        MatmulTransformAnalysis,
        _squarer,
        matmul_transform,
    )

    a = MatmulTransformAnalysis.from_shapes(x_shape, weight_shape)
    merged = a.batches * a.rows
    rows = [
        ("w's batch dims all 1 (rhs_shared)", "yes" if a.mergeable else "no", a.mergeable),
        ("more than one batch", f"{a.batches} batches", a.batches > 1),
        (f"rows per batch not a multiple of {ROW_TILE}", f"{a.rows} rows",
         a.rows % ROW_TILE != 0),
        ("merged output closer to square", f"[{merged}, {a.cols}] vs [{a.rows}, {a.cols}]",
         _squarer(merged, a.rows, a.cols)),
    ]
    action = matmul_transform(x_shape, weight_shape)
    cells = "".join(f"<tr><td>{c}</td><td>{v}</td><td>{'✓' if ok else '✗'}</td></tr>"
                    for c, v, ok in rows)
    return ("<table style='border-collapse: separate; border-spacing: 14px 2px'>"
            f"<tr><th>merge only if</th><th>x {list(x_shape)} @ w "
            f"{list(weight_shape)}</th><th></th></tr>{cells}<tr><td><b>action</b></td>"
            f"<td colspan=2><b>{getattr(action, '__name__', action)}</b></td></tr></table>")


def _tree(root, children, label, marked) -> list[str]:
    """``root`` and what it depends on as an indented tree, one node a line; a node reached
    twice (Mul's one input) drawn once; ``◀`` after each node in ``marked``."""
    lines: list[str] = []

    def visit(node, prefix: str, tail: str) -> None:
        lines.append(prefix + tail + label(node) + (" ◀" if node in marked else ""))
        kids = list(dict.fromkeys(children(node)))
        pad = prefix + ("" if not tail else ("  " if tail == "└ " else "│ "))
        for k, kid in enumerate(kids):
            visit(kid, pad, "└ " if k == len(kids) - 1 else "├ ")

    visit(root, "", "")
    return lines


def minidl_tree(graph, layer_graph) -> list[str]:
    """``graph`` (``debug.graph(loss, names=...)``) as a tree from the loss down to its
    leaves, its steps recorded inside the layer (``layer_graph``'s, the layer output's
    graph) marked ``◀``."""
    by_id = {r.id: (r, row[1]) for r, row in zip(graph.records, graph.rows())}
    marked = {r.id for r in layer_graph.steps}
    return _tree(graph.steps[-1].id, lambda i: [p for p in by_id[i][0].parents if p in by_id],
                 lambda i: by_id[i][1].split("(")[0] if by_id[i][0].op != "leaf"
                 else by_id[i][1], marked)


def torch_tree(t_loss, t_y, names: dict) -> list[str]:
    """PyTorch's graph of ``t_loss``: ``t_loss.grad_fn`` and its ``next_functions`` as a
    tree, the nodes ``t_y.grad_fn`` reaches (the layer's) marked ``◀``; an
    ``AccumulateGrad`` named by ``names`` (name → parameter), an untracked input ``None``."""
    def kids(fn):
        return [] if fn is None else [nf for nf, _ in fn.next_functions]

    def label(fn):
        if fn is None:
            return "None (untracked)"
        var = getattr(fn, "variable", None)
        who = [n for n, p in names.items() if p is var]
        return type(fn).__name__ + (f" ({who[0]})" if who else "")

    layer, todo = set(), [t_y.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is not None and type(fn).__name__ != "AccumulateGrad":
            layer.add(fn)
            todo += kids(fn)
    return _tree(t_loss.grad_fn, kids, label, layer)


def autograd_beside(left: list[str], right: list[str], heads=("minidl", "PyTorch"),
                    gap: int = 4) -> str:
    """Two trees side by side under their heads, as one text block."""
    width = max(len(s) for s in [heads[0], *left]) + gap
    rows = [heads] + [(a, b) for a, b in zip(left + [""] * len(right),
                                             right + [""] * len(left))][
        :max(len(left), len(right))]
    return "\n".join((a.ljust(width) + b).rstrip() for a, b in rows)


def batch_sum_figure(b: int = 3, k: int = 4, m: int = 2):
    """A batched ``lhs`` times one shared weight: ``lhsᵀ @ grad`` gives ``b`` slabs of the
    weight's shape ``[k, m]``, one per batch element; summed over the batch, one ``[k, m]``."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    fig, ax = plt.subplots(figsize=(6.6, 3.3))
    for i in reversed(range(b)):  # the back slab first, each one offset up and right
        x0, y0 = 0.5 * i, 0.5 * i
        ax.add_patch(Rectangle((x0, y0), m, k, fc="#dbe7f7", ec="#555", lw=0.8))
        ax.text(x0 + m / 2, y0 + k / 2, f"b={i}\n[{k}, {m}]" if i == 0 else "",
                ha="center", va="center", fontsize=10)
    ax.text((m + 0.5 * (b - 1)) / 2, -0.5, f"lhsᵀ @ grad: [b, {k}, {m}]", ha="center",
            va="top", fontsize=10)
    right = m + 0.5 * b + 4.6
    ax.add_patch(FancyArrowPatch((m + 0.5 * b + 0.4, k / 2 + 0.5), (right - 0.4,
                                 k / 2 + 0.5), arrowstyle="-|>", mutation_scale=12))
    ax.text((m + 0.5 * b + right) / 2, k / 2 + 0.9, "sum over b\n(sum_to_shape)",
            ha="center", va="bottom", fontsize=10)
    ax.add_patch(Rectangle((right, 0.5), m, k, fc="#dbe7f7", ec="#555", lw=0.8))
    ax.text(right + m / 2, 0.5 + k / 2, f"[{k}, {m}]", ha="center", va="center",
            fontsize=10)
    ax.text(right + m / 2, -0.5, "the weight's gradient", ha="center", va="top",
            fontsize=10)
    ax.set_xlim(-1.4, right + m + 1.4)
    ax.set_ylim(-1.4, k + 0.5 * b)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    return fig
