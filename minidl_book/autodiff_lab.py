"""The autodiff chapter's measuring machinery, kept off the page.

* :func:`chain` and :func:`deep_block`: the two checkpointing workloads (an element-wise chain;
  matmuls with residual element-wise units between them);
* :func:`costs`: what a graph keeps, the peak NumPy allocation through forward + backward
  (``tracemalloc``), the forward ops backward re-runs (``debug.coverage``), the best backward
  time;
* :func:`live_bytes`: the live NumPy bytes through one forward + backward, step by step;
* :func:`grads_both`: the gradients of ``sum(out * w)`` for every input, in minidl and PyTorch;
* :func:`apply_step`: run a reader's unary ``Step`` class on a tensor (recorded on an autodiff
  device, forward only on a plain one), so ``gradcheck`` can test it;
* :func:`walk_trace` and :func:`gradient_chart`: the backward walk of a loss, node by node, and
  drawn as its graph with the gradient each step sends written on every edge;
* :func:`kept_chart`: a graph with each value that some step keeps for backward in green,
  naming the steps that keep it (an array kept twice is one box);
* :func:`recompute_trace` and :func:`recompute_figure`: under checkpointing, which forward value
  each backward step reads, which it rebuilds, and which are alive while it runs;
* :func:`gradcheck`: the largest gap between backward's gradients and a central-difference
  estimate, over every input element, in float64;
* :func:`data` and :func:`show_source`: a fixed random tensor; a library object's source;
* :func:`fresh_ids`: restart minidl's node-id counter, so an example's printed ids and its
  figures' numbers are the same small numbers;
* :func:`run_step` and :func:`yours_or_reference`: the step runner the walk exercise hands
  over, and the reader's ``record``, ``Softplus`` and ``backward_walk`` where each passes its
  checker (else the book's), for the whole-engine listing.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import torch

from minidl import Device, Tensor, debug, no_grad
from minidl.autodiff import graph_memory

__all__ = [
    "ad_leaf",
    "FORWARD_OPS",
    "apply_step",
    "memory_chart",
    "kept_chart",
    "chain",
    "chain_loss",
    "costs",
    "deep_block",
    "gradient_chart",
    "gradcheck",
    "grads_both",
    "live_bytes",
    "walk_trace",
    "data",
    "show_source",
    "node_of",
    "recompute_trace",
    "recompute_figure",
    "fresh_ids",
    "run_step",
    "yours_or_reference",
]

START = np.random.default_rng(0).standard_normal((128, 128)).astype(np.float32)
_rng = np.random.default_rng(1)
BLOCK_WS = [_rng.standard_normal((128, 128)).astype(np.float32) / 11 for _ in range(8)]
BLOCK_X = _rng.standard_normal((128, 128)).astype(np.float32)
FORWARD_OPS = ("float_sin", "float_tanh", "float_exp", "float_mul", "float_mul_scalar", "float_add")


def chain(x: Tensor, length: int) -> Tensor:
    """``length`` rounds: sin, a product with x, exp of a half (two ops), tanh, again."""
    y = x
    for i in range(length):
        kind = i % 4
        if kind == 0:
            y = y.sin()
        elif kind == 1:
            y = y * x
        elif kind == 2:
            y = (y * 0.5).exp()
        else:
            y = y.tanh()
    return y


def chain_loss(dev: Device) -> Tensor:
    """The chain of 40 rounds (50 element-wise ops: ``(y * 0.5).exp()`` is two) from a
    tracked [128, 128] leaf, summed."""
    return chain(Tensor.from_numpy(START, dev).require_grad(), 40).sum()


def deep_block(dev: Device) -> Tensor:
    """Eight rounds of ``h @ w`` (w tracked) and two residual units
    ``h = tanh(sin(h) * 0.5) + h``, summed to a loss."""
    h = Tensor.from_numpy(BLOCK_X, dev)
    for w in BLOCK_WS:
        h = h @ Tensor.from_numpy(w, dev).require_grad()
        for _ in range(2):
            h = ((h.sin() * 0.5).tanh()) + h
    return h.sum()


def costs(build: Callable[[Device], Tensor], dev: Device, repeats: int = 15) -> dict:
    """Kept bytes, peak bytes through forward + backward, Flex forward calls made during
    backward, the best backward seconds of ``repeats`` runs (load on a shared machine only
    adds time, so the minimum is the stable figure)."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    loss = build(dev)
    kept = graph_memory(loss)
    loss.backward()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    loss = build(dev)
    calls = debug.coverage(lambda: loss.backward())
    forward_calls = sum(calls.count("Flex", op) for op in FORWARD_OPS)
    best = float("inf")
    for _ in range(repeats):
        loss = build(dev)
        t0 = time.perf_counter()
        loss.backward()
        best = min(best, time.perf_counter() - t0)
    return {"kept": kept, "peak": peak, "forward_calls": forward_calls, "seconds": best}


def live_bytes(build: Callable[[Device], Tensor], dev: Device) -> dict:
    """Live traced bytes (``tracemalloc``) through one forward + backward of ``build(dev)``:
    ``forward``, the highest during the forward; ``steps``, for each backward step in the
    order backward runs them, the highest while that step ran (its recomputes included);
    ``peak``, the highest of all (what :func:`costs` reports). The engine is not changed: the
    checkpointer's ``release``, called once after each step, takes the sample."""
    from minidl.autodiff.checkpoint import Checkpointer

    release, steps = Checkpointer.release, []

    def sampled(self, node) -> None:
        release(self, node)
        steps.append(tracemalloc.get_traced_memory()[1] - base)
        tracemalloc.reset_peak()

    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    loss = build(dev)
    forward = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.reset_peak()
    Checkpointer.release = sampled
    try:
        loss.backward()
    finally:
        Checkpointer.release = release
        tracemalloc.stop()
    return {"forward": forward, "steps": steps, "peak": max([forward, *steps])}


def grads_both(fn_ours, fn_theirs, shapes: dict, seed: int = 0) -> dict:
    """``{input name: (minidl gradient, torch gradient)}`` of ``sum(out * w)`` with fixed
    random ``w``, from the same random inputs (name → shape)."""
    ad = Device.flex().autodiff()
    rng = np.random.default_rng(seed)
    arrays = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    ours = {n: Tensor.from_numpy(a, ad).require_grad() for n, a in arrays.items()}
    theirs = {n: torch.from_numpy(a).requires_grad_(True) for n, a in arrays.items()}
    out, t_out = fn_ours(*ours.values()), fn_theirs(*theirs.values())
    w = rng.standard_normal(t_out.shape).astype(np.float32)
    grads = (out * Tensor.from_numpy(w, ad)).sum().backward()
    (t_out * torch.from_numpy(w)).sum().backward()
    return {n: (ours[n].grad(grads), theirs[n].grad) for n in shapes}


def apply_step(step_cls: type, x: Tensor) -> Tensor:
    """``step_cls`` (a unary ``Step``) applied to ``x``: recorded in the graph on an autodiff
    device (as an op Autodiff overrides would be), its forward alone on a plain device."""
    from minidl.dispatch import backend_for
    from minidl.dispatch.tensor import DispatchTensor
    from minidl_book.harness import attach_step

    B = backend_for(x.device)
    if x.device.is_autodiff():
        out = attach_step(B, step_cls(), x.primitive.backend_tensor)
    else:
        out = step_cls().forward(B, x.primitive.backend_tensor)
    return Tensor(DispatchTensor(out, x.device))


def walk_trace(loss: Tensor) -> list[dict]:
    """The backward walk of ``loss`` in visit order, one row per node: its id, its step's
    name (``"leaf"`` for a leaf), the gradients that arrived (``(from id, values)`` each) and
    what its step sent (``(to id, values)`` each). The graph is retained, so ``loss.backward()``
    still runs afterwards."""
    from minidl.autodiff.checkpoint import Checkpointer
    from minidl.autodiff.engine import reachable
    from minidl.autodiff.step import State
    from minidl.backend.dtype import DType
    from minidl.dispatch import backend_for

    B = backend_for(loss.device)._inner
    root = loss.primitive.backend_tensor
    arrived = {root.node.id: [(None, np.ones(loss.shape))]}
    pending = {
        root.node.id: B.float_ones(
            root.shape, DType.of(root.inner.dtype), B.float_device(root.inner)
        )
    }
    checkpointer, rows = Checkpointer(B), []
    for node in reachable(root.node):
        grad, step = pending.pop(node.id, None), node.step
        row = {
            "id": node.id,
            "op": "leaf" if step is None else type(step).__name__,
            "in": arrived.get(node.id, []),
            "out": [],
        }
        if step is not None and grad is not None:
            outs = step.backward(B, grad, State(step, node, checkpointer))
            for parent, tracked, g in zip(step.inputs, step.tracked, outs, strict=True):
                if tracked and g is not None:
                    row["out"].append((parent.id, B.float_into_data(g).array))
                    arrived.setdefault(parent.id, []).append((node.id, B.float_into_data(g).array))
                    pending[parent.id] = (
                        g if parent.id not in pending else B.float_add(pending[parent.id], g)
                    )
            checkpointer.release(node)
        rows.append(row)
    return rows


def gradient_chart(loss: Tensor, names: dict[int, str] | None = None, digits: int = 3):
    """The backward walk of ``loss`` as one picture: the root on top, each node below the steps
    that consume it, every edge labelled with the gradient that step sends down it, each box
    with what reached it (the sum, where several gradients arrive). Built from
    :func:`walk_trace`, so the numbers are the real steps' output; the graph is retained."""
    from minidl.debug.diagram import COLORS
    from minidl.debug.flowchart import Flowchart

    names = dict(names or {})

    def fmt(a) -> str:
        vals = [f"{v:.{digits}g}" for v in np.ravel(a)]
        return vals[0] if len(vals) == 1 else "[" + ", ".join(vals) + "]"

    rows = walk_trace(loss)
    fc = Flowchart("TB", title="the backward walk: the gradient on every edge")
    for row in sorted(rows, key=lambda r: r["id"]):  # leaves left to right as in forward
        got = [g for _, g in row["in"]]
        total = "ones" if row["in"] and row["in"][0][0] is None else fmt(sum(got))
        if row["op"] == "leaf":
            name = names.get(row["id"], "#" + str(row["id"]))
            terms = " + ".join(fmt(g) for g in got).replace("+ -", "- ")
            summed = f"\n{terms}\n= {total}" if len(got) > 1 else f" {total}"
            label = f"{name} (leaf)\ngradient{summed}"
            fill, stroke = COLORS["nn"]
            fc.node(str(row["id"]), label, shape="round", fill=fill, stroke=stroke)
        else:
            head = f"#{row['id']} {row['op']}"
            label = f"{head}\ngets {total}" if len(got) < 2 else f"{head}\nsum {total}"
            fill, stroke = COLORS["autodiff"]
            fc.node(str(row["id"]), label, fill=fill, stroke=stroke)
    for row in rows:
        sent: dict[int, list] = {}
        for to, g in row["out"]:  # x * x sends to x twice: one edge, "2 + 2"
            sent.setdefault(to, []).append(fmt(g))
        for to, parts in sent.items():
            fc.edge(str(row["id"]), str(to), " + ".join(parts))
    return fc, rows


def memory_chart(*ys: Tensor, names: dict[int, str] | None = None, title: str = "",
                 checkpointing: bool = False):
    """The graph behind the tensors ``ys`` with each step coloured by what it holds for backward: green, a
    kept array (a leaf, a constant, or a cached compute-bound output); orange, a compute-bound
    step, whose output stays cached; grey, an input recomputed in backward; white, nothing.
    Consumed steps (their backward already ran) are greyed with a dashed note."""
    from minidl.autodiff.node import walk
    from minidl.autodiff.step import Recompute
    from minidl.debug.diagram import COLORS
    from minidl.debug.flowchart import Flowchart

    names = dict(names or {})
    fc = Flowchart("TB", title=title)
    found = {n.id: n for y in ys for n in walk(y.primitive.backend_tensor.node)}
    nodes = [found[i] for i in sorted(found)]
    for node in nodes:
        step = node.step
        if step is None:
            label = names.get(node.id, f"#{node.id} leaf")
            fill, stroke = COLORS["nn"] if str(node.requirement) == "Grad" else COLORS["user"]
            fc.node(str(node.id), label, shape="round", fill=fill, stroke=stroke)
            continue
        lines = [f"#{node.id} {type(step).__name__}"]
        kinds = set()
        inputs = dict(zip(step.input_names(len(step.inputs)), step.inputs))
        for name, value in step.saved.items():
            source = inputs.get(name)
            if isinstance(value, Recompute):
                lines.append(f"{name}: recomputed")
                kinds.add("recompute")
            elif source is not None and source.step is not None and checkpointing:
                lines.append(f"{name}: #{source.id}'s cached output")
                kinds.add("kept")
            else:
                lines.append(f"{name}: kept, {getattr(value, 'nbytes', 0)} B")
                kinds.add("kept")
        if not step.memory_bound and checkpointing:
            lines.append("output cached")
            kinds.add("cached")
        if step.consumed:
            lines, kinds = [lines[0], "consumed: already run"], {"consumed"}
        if "consumed" in kinds:
            fill, stroke = "#E0E0E0", "#9E9E9E"
        elif "cached" in kinds:
            fill, stroke = COLORS["dispatch"]
        elif "kept" in kinds:
            fill, stroke = COLORS["nn"]
        elif "recompute" in kinds:
            fill, stroke = "#ECEFF1", "#78909C"
        else:
            fill, stroke = "#FFFFFF", "#BDBDBD"
        fc.node(str(node.id), "\n".join(lines), fill=fill, stroke=stroke)
    for node in nodes:
        for parent in node.parents:
            fc.edge(str(parent.id), str(node.id))
    return fc


def kept_chart(y: Tensor, names: dict[int, str] | None = None):
    """``debug.graph(y)``'s chart (each step's saved names) with every value a step keeps
    for backward in green, labelled with the steps and names that keep it; the leaves in
    grey. Returns the chart and ``{node id: [(keeping step id, saved name), ...]}``."""
    from minidl.autodiff.node import walk
    from minidl.debug.diagram import COLORS

    names = dict(names or {})
    fc = debug.graph(y).chart()
    kept: dict[int, list[tuple[int, str]]] = {}
    nodes = {n.id: n for n in walk(y.primitive.backend_tensor.node)}
    for node in nodes.values():
        step = node.step
        if step is None:
            continue
        inputs = dict(zip(step.input_names(len(step.inputs)), step.inputs))
        for name in step.saved:
            source = node if name == "out" else inputs[name]
            kept.setdefault(source.id, []).append((node.id, name))
    labels = fc.nodes
    for node_id, node in nodes.items():
        label = labels[str(node_id)]
        if node_id in kept:
            who = ", ".join(f"#{s} {n}" for s, n in sorted(kept[node_id]))
            name = f" = {names[node_id]}" if node_id in names else ""
            fc.node(str(node_id), f"{label}\nkept array{name}\n(by {who})",
                    fill=COLORS["nn"][0], stroke=COLORS["nn"][1])
        elif node.step is None:
            fc.node(str(node_id), label, shape="round", fill=COLORS["user"][0],
                    stroke=COLORS["user"][1])
    return fc, kept


def rule_chart(y: Tensor, names: dict[int, str] | None = None, title: str = ""):
    """The graph behind ``y`` on a checkpointing device, each value coloured by the balanced
    strategy's rule for it: green, kept (a leaf: nothing could recompute it); orange, cached
    (a compute-bound step's output: recomputing it would cost a matmul, a reduction);
    grey, a recipe (a memory-bound step's output: replayed in backward from its inputs).
    ``names``: node id → what the value is (``"sin x"``), shown after the step's name."""
    from minidl.autodiff.node import walk
    from minidl.debug.flowchart import Flowchart

    names = dict(names or {})
    fc = Flowchart("TB", title=title)
    nodes = sorted(walk(y.primitive.backend_tensor.node), key=lambda n: n.id)
    for node in nodes:
        step = node.step
        if step is None:
            head, rule = names.get(node.id, f"#{node.id} leaf"), "kept: a leaf"
            fill, stroke = "#C8E6C9", "#43A047"
        else:
            head = f"#{node.id} {type(step).__name__}"
            head += f": {names[node.id]}" if node.id in names else ""
            if step.memory_bound:
                rule, fill, stroke = "recipe: memory-bound", "#ECEFF1", "#78909C"
            else:
                rule, fill, stroke = "cached: compute-bound", "#FFE0B2", "#FB8C00"
        fc.node(str(node.id), f"{head}\n{rule}", fill=fill, stroke=stroke,
                shape="round" if step is None else "box")
    for node in nodes:
        for parent in node.parents:
            fc.edge(str(parent.id), str(node.id))
    return fc


def gradcheck(fn, shapes: dict, difference: Callable, h: float = 1e-6) -> float:
    """Largest |backward - difference(loss, input, h)| over every element of every input.

    The inputs are float64 standard-normal arrays of ``shapes`` on ``Device.flex().autodiff()``;
    the loss is ``sum(fn(*inputs) * w)`` for a fixed random ``w``; ``difference`` estimates
    the loss's derivative with respect to one input array (the page's central difference).
    """
    dev = Device.flex().autodiff()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes.values()]
    tracked = [Tensor.from_numpy(a, dev).require_grad() for a in arrays]
    out = fn(*tracked)
    w = rng.standard_normal(out.shape)
    grads = (out * Tensor.from_numpy(w, dev)).sum().backward()
    worst = 0.0
    for k, t in enumerate(tracked):

        def loss(a_k: np.ndarray, k: int = k) -> float:
            values = [a_k if j == k else a for j, a in enumerate(arrays)]
            with no_grad():  # the forward alone, nothing recorded
                plain = [Tensor.from_numpy(v, dev) for v in values]
                return float((fn(*plain).to_numpy() * w).sum())

        gap = np.abs(difference(loss, arrays[k], h) - t.grad(grads).to_numpy())
        worst = max(worst, float(gap.max()))
    return worst


def apply(step, *tensors: Tensor) -> Tensor:
    """Record ``step`` on tensors of an autodiff device, as ``Autodiff[B]`` records its ops."""
    from minidl.autodiff.ops.base import record
    from minidl.dispatch import backend_for
    from minidl.dispatch.tensor import DispatchTensor

    device = tensors[0].device
    inputs = [t.primitive.backend_tensor for t in tensors]  # AutodiffTensors
    return Tensor(DispatchTensor(record(backend_for(device), step, *inputs), device))


def walk_orders(loss: Tensor) -> list[dict]:
    """Every node behind ``loss``, in creation order: ``number`` (1, 2, ...), ``op`` (the step's
    name, ``"leaf"``), ``parents`` (numbers), ``depth`` (burn's ``order``: 0 for a leaf, one
    more than the deepest parent, ``burn-autodiff/src/tensor.rs:142``), ``by_id`` (minidl's
    visit: highest id first) and ``by_depth`` (burn's tape: greatest depth first)."""
    from minidl.autodiff.node import walk

    nodes = walk(loss.primitive.backend_tensor.node)  # increasing id
    number = {n.id: k + 1 for k, n in enumerate(nodes)}
    rows, depth = [], {}
    for n in nodes:
        depth[n.id] = 1 + max((depth[p.id] for p in n.parents), default=-1)
        rows.append({"number": number[n.id], "op": "leaf" if n.step is None else type(n.step).__name__,
                     "parents": [number[p.id] for p in n.parents], "depth": depth[n.id]})
    for k, row in enumerate(sorted(rows, key=lambda r: -r["number"])):
        row["by_id"] = k + 1
    for k, row in enumerate(sorted(rows, key=lambda r: (-r["depth"], -r["number"]))):
        row["by_depth"] = k + 1
    return rows


def walk_orders_figure(rows: list[dict], names: dict[int, str] | None = None,
                       marked: int | None = None):
    """Two panels over the same nodes: minidl's walk (one row per node, highest id on top)
    and burn's (one row per depth, deepest on top; nodes of a row in any order). Arrows go
    from a consumer to its input: in a valid order every arrow points down. ``marked``: a
    node number drawn with a heavy edge (the one the two orders place differently)."""
    import matplotlib.pyplot as plt

    names = dict(names or {})
    rows_by_depth: dict[int, list[dict]] = {}
    for r in rows:
        rows_by_depth.setdefault(r["depth"], []).append(r)
    xpos = {}
    for members in rows_by_depth.values():
        for k, r in enumerate(members):
            xpos[r["number"]] = 0.1 + (k - (len(members) - 1) / 2) * 1.05
    top = len(rows)
    # 7.4 in wide: shown at full size in the book's 752 px text column
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 3.9))
    panels = (("minidl: by id, highest first", lambda r: top + 1 - r["by_id"]),
              ("burn: by depth, deepest first",
               lambda r: 1 + r["depth"] * (top - 1) / max(rows_by_depth)))
    for axis, (title, ypos) in zip(axes, panels):
        at = {r["number"]: (xpos[r["number"]], ypos(r)) for r in rows}
        for r in rows:
            for p in set(r["parents"]):
                (x0, y0), (x1, y1) = at[r["number"]], at[p]
                axis.annotate("", xy=(x1, y1 + 0.25), xytext=(x0, y0 - 0.25),
                              arrowprops={"arrowstyle": "->", "color": "0.55"})
        for r in rows:
            x, y = at[r["number"]]
            label = names.get(r["number"], r["op"])
            visit = r["by_id"] if axis is axes[0] else r["by_depth"]
            axis.text(x, y, f"#{r['number']} {label}", ha="center", va="center", fontsize=9,
                      bbox={"boxstyle": "round,pad=0.25",
                            "fc": "#FFF3E0" if r["op"] != "leaf" else "#E8F5E9",
                            "ec": "black" if r["number"] == marked else "0.5",
                            "lw": 2.0 if r["number"] == marked else 1.0})
            if axis is axes[0]:
                axis.text(-2.3, y, f"visit {visit}", ha="left", va="center", fontsize=9,
                          color="0.3")
        if axis is axes[1]:
            for d, members in rows_by_depth.items():
                visits = sorted(r["by_depth"] for r in members)
                span = str(visits[0]) if len(visits) == 1 else f"{visits[0]}-{visits[-1]}"
                axis.text(-2.3, 1 + d * (top - 1) / max(rows_by_depth),
                          f"depth {d}\nvisit {span}", ha="left", va="center", fontsize=9,
                          color="0.3")
        axis.set_title(title, fontsize=10)
        axis.set_xlim(-2.35, 1.9)
        axis.set_ylim(0.4, top + 0.6)
        axis.axis("off")
    fig.tight_layout()
    return fig


def data(shape, device, seed: int = 0) -> Tensor:
    """A float32 tensor of standard-normal values on ``device``, the same for the same seed."""
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return Tensor.from_numpy(values, device)


def node_of(tensor: Tensor):
    """The graph node an autodiff device gave ``tensor`` (burn's ``AutodiffTensor.node``),
    or ``None`` off an autodiff device, where nothing is recorded."""
    return getattr(tensor.primitive.backend_tensor, "node", None)


def show_source(obj) -> None:
    """Display the library's own source of ``obj`` (a function, method or class)."""
    import inspect
    import textwrap

    from IPython.display import Code, display

    display(Code(textwrap.dedent(inspect.getsource(obj)), language="python"))


def recompute_trace(loss: Tensor) -> dict:
    """One real ``loss.backward()`` under checkpointing, watched step by step. The engine is not
    changed: ``State.__getitem__`` (a step reading what it kept) and ``Checkpointer.release``
    (called once after each step) are wrapped for the call. Returns ``nodes`` (the graph's nodes,
    increasing id: ``(id, op)``), ``kept`` (ids whose array the graph holds since forward: leaves,
    constants, compute-bound outputs) and ``rows``, one per backward step in the order they run:
    ``id``, ``op``, ``reads`` (ids of the values its backward read), ``rebuilt`` (ids whose
    forward re-ran during the step, in order) and ``alive`` (ids of the rebuilt values held
    while it ran)."""
    from minidl.autodiff.checkpoint import Checkpointer
    from minidl.autodiff.node import walk
    from minidl.autodiff.step import Recompute, State

    root = loss.primitive.backend_tensor.node
    nodes = walk(root)
    kept: set[int] = set()
    for n in nodes:
        if n.step is None:
            continue
        names = dict(zip(n.step.input_names(len(n.step.inputs)), n.step.inputs))
        for name, value in n.step.saved.items():
            if not isinstance(value, Recompute):
                kept.add(names[name].id if name in names else n.id)
    rows: list[dict] = []
    reads: list[int] = []
    before: set[int] = set()
    getitem, release = State.__getitem__, Checkpointer.release

    def watched_getitem(self, name):
        saved = self.step.saved.get(name)
        names = dict(zip(self.step.input_names(len(self.step.inputs)), self.step.inputs))
        source = saved.node if isinstance(saved, Recompute) else names.get(name, self.node)
        reads.append(source.id)
        return getitem(self, name)

    def watched_release(self, node) -> None:
        rows.append({"id": node.id, "op": type(node.step).__name__, "reads": list(reads),
                     "rebuilt": [i for i in self.cache if i not in before],
                     "alive": sorted(self.cache)})
        reads.clear()
        release(self, node)
        before.clear()
        before.update(self.cache)

    State.__getitem__, Checkpointer.release = watched_getitem, watched_release
    try:
        loss.backward()
    finally:
        State.__getitem__, Checkpointer.release = getitem, release
    ops = [(n.id, "leaf" if n.step is None else type(n.step).__name__) for n in nodes]
    return {"nodes": ops, "kept": kept, "rows": rows}


def recompute_figure(trace: dict, labels: dict[int, str]):
    """:func:`recompute_trace` as a grid: one row per moment (after forward, then each backward
    step), one column per forward value; a cell says whether the value is held (kept since
    forward, rebuilt in this step, or still alive from an earlier rebuild), framed in black
    where the step reads it. ``labels``: node id → column heading."""
    import matplotlib.pyplot as plt

    nodes = [i for i, op in trace["nodes"] if i in labels]
    number = {i: k + 1 for k, (i, _) in enumerate(trace["nodes"])}
    rows = [("after forward", set(), [], set())]
    for r in trace["rows"]:
        rows.append((f"step {len(rows)}: #{number[r['id']]} {r['op']}", set(r["reads"]),
                     r["rebuilt"], set(r["alive"])))
    colours = {"kept": "#C8E6C9", "rebuilt": "#64B5F6", "alive": "#E3F2FD", "": "#FFFFFF"}
    # 7.4 in: shown at full size in the book's 752 px text column
    fig, axis = plt.subplots(figsize=(7.4, 0.55 * len(rows) + 0.9))
    for y, (_, reads, rebuilt, alive) in enumerate(rows):
        for x, i in enumerate(nodes):
            state = ("kept" if i in trace["kept"] else "rebuilt" if i in rebuilt
                     else "alive" if i in alive else "")
            read = i in reads
            axis.add_patch(plt.Rectangle((x, -y - 1), 0.94, 0.86, fc=colours[state],
                                         ec="black" if read else "0.75",
                                         lw=2.2 if read else 0.8))
            if state == "rebuilt":
                state_text = f"rebuilt {rebuilt.index(i) + 1}"
            else:
                state_text = state
            text = state_text + (", read" if read and state else "read" if read else "")
            axis.text(x + 0.47, -y - 0.57, text, ha="center", va="center", fontsize=9,
                      weight="bold" if state == "rebuilt" else "normal")
    for y, (name, _, _, _) in enumerate(rows):  # the cells say what is read, rebuilt
        axis.text(-0.1, -y - 0.57, name, ha="right", va="center", fontsize=9)
    for x, i in enumerate(nodes):
        axis.text(x + 0.47, 0.3, labels[i], ha="center", va="center", fontsize=9)
    axis.set_xlim(-1.3, len(nodes) + 0.02)
    axis.set_ylim(-len(rows) - 0.2, 0.7)
    axis.axis("off")
    fig.tight_layout()
    return fig


def fresh_ids() -> None:
    """Restart minidl's node-id counter at 1, so the next example's ids (printed by the code
    and drawn by its figures) are small. Only safe where no tensor made before is mixed into
    the graphs that follow: the chapter calls it at the start of a new example."""
    import itertools

    from minidl.autodiff import node

    node._IDS = itertools.count(1)


def run_step(node, grad) -> list:
    """One recorded step's backward on Flex: ``[(parent node, its gradient), ...]`` for the
    step's tracked inputs (the ``run_step`` the walk exercise hands to ``backward_walk``)."""
    from minidl.backends.flex import Flex

    step = node.step
    grads = step.backward(Flex, grad, step.saved)
    return list(zip(node.parents, [g for g, t in zip(grads, step.tracked) if t]))


def ad_leaf(values, tracked: bool = True):
    """An ``AutodiffTensor`` (a Flex array ``.inner`` and its ``.node``: burn-autodiff's
    ``AutodiffTensor``) holding ``values``; a ``Grad`` leaf if ``tracked``, else untracked."""
    from minidl import Device, Tensor

    t = Tensor.from_data(values, Device.flex().autodiff())
    return (t.require_grad() if tracked else t).primitive.backend_tensor


def yours_or_reference(record_fn, softplus_step, walk_fn) -> tuple:
    """The reader's ``record``, ``Softplus`` class and ``backward_walk`` where each passes a
    short run of its checker, else the reference; prints which."""
    from minidl_book import build_backward_walk, build_record, build_softplus, reader_code

    def passes(exercise):
        return lambda fn: exercise.find_failure(fn) is None

    return (reader_code.yours_or_reference(record_fn, build_record.record, "record",
                                           passes(build_record.exercise(max_examples=5))),
            reader_code.yours_or_reference(softplus_step, build_softplus.Softplus, "Softplus",
                                           passes(build_softplus.exercise(max_examples=5))),
            reader_code.yours_or_reference(walk_fn, build_backward_walk.backward_walk,
                                           "backward_walk",
                                           passes(build_backward_walk.exercise(max_examples=5))))
