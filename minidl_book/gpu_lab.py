"""Helpers for the pages that show minidl's GPU device (``Device.wgpu()``): a generated shader
printed without the helper functions every kernel carries (or trimmed to what one thread
does), a recorded dispatch named by the generator that wrote it, and the cost of one dispatch
measured against the same op on Flex."""

from __future__ import annotations

import re
import time

import matplotlib.pyplot as plt
import numpy as np

from minidl import Device, Tensor
from minidl.backends.wgpu import shaders
from minidl.backends.wgpu.runtime import runtime

HELPERS_CUT = "// ... the helper functions every kernel carries (is_nan, erf_, powf_, ...)\n"


def without_helpers(source: str) -> str:
    """``source`` with the shared helper functions replaced by one comment line."""
    return source.replace(shaders.HELPERS, "\n" + HELPERS_CUT).rstrip("\n")


def trimmed(source: str) -> str:
    """What one thread of a generated kernel does: the bindings, then ``main``'s body with
    the built-in arguments and the thread-number arithmetic replaced by one comment line."""
    lines = without_helpers(source).splitlines()
    keep = [line for line in lines if line.startswith("@group")]
    start = next(k for k, line in enumerate(lines) if line.lstrip().startswith("let i = "))
    keep.append("fn main(...) {  // thread i computes output element i")
    keep += lines[start + 1:]
    return "\n".join(keep)


def _map_names(n_inputs: int) -> list[str]:
    return [f"a{k}" for k in range(n_inputs)] + ["out"]


def _slot_names(n_inputs: int) -> dict[str, str]:
    """``p[...]`` text in an element-wise kernel → the slot's name (``off_a1``,
    ``strides_a1[d]``), from the layout ``map_kernel`` writes."""
    first = shaders.map_layout(n_inputs)[0]
    names = {"p[0]": "size", "p[1]": "rank", "p[2 + d]": "shape[d]"}
    for k, name in enumerate(_map_names(n_inputs)):
        block = first + k * (1 + shaders.MAXD)
        names[f"p[{block}]"] = f"off_{name}"
        names[f"p[{block + 1} + d]"] = f"strides_{name}[d]"
    return names


def named(source: str, n_inputs: int) -> str:
    """What one thread of an element-wise kernel does (:func:`trimmed`), each ``p[...]`` slot
    replaced by its name, and one comment line sending the reader to :func:`draw_params`'
    figure, which names every slot of ``p`` over its value (a p[index] scheme in the
    listing was machinery: the figure carries it)."""
    text = trimmed(source)
    body_at = text.index("fn main")
    body = text[body_at:]
    for raw, name in sorted(_slot_names(n_inputs).items(), key=lambda kv: -len(kv[0])):
        body = body.replace(raw, name)
    assert "p[" not in body, body  # every slot named
    layout = "// size, rank, shape, off_*, strides_*: slots of p, drawn below\n"
    return text[:body_at] + layout + body


def map_slots(dispatched, n_inputs: int) -> dict:
    """An element-wise dispatch's ``p`` by name: ``shape``, and per operand (``a0``, ``a1``,
    ..., ``out``) its ``(offset, strides)``, the arguments :func:`read_view` takes."""
    p, first = dispatched.params, shaders.map_layout(n_inputs)[0]
    rank = p[1]
    slots = {"shape": tuple(p[2:2 + rank])}
    for k, name in enumerate(_map_names(n_inputs)):
        block = first + k * (1 + shaders.MAXD)
        slots[name] = (p[block], tuple(p[block + 1:block + 1 + rank]))
    return slots


def buffer(tensor: Tensor) -> list[float]:
    """The whole device buffer under a Wgpu tensor, read back (a sync point), as a list."""
    prim = tensor.primitive.backend_tensor
    raw = runtime(prim.index).read(prim.buffer, prim.buffer.size)
    return np.frombuffer(raw, dtype=np.float32).tolist()


def draw_params(dispatched, n_inputs: int, highlight: str = "a1"):
    """The ``p`` array of an element-wise dispatch as labelled groups of cells (the slots a
    rank-r launch does not use left out), the ``highlight`` operand's strides in orange."""
    slots = map_slots(dispatched, n_inputs)
    groups = [("size", [dispatched.params[0]]), ("rank", [len(slots["shape"])]),
              ("shape", list(slots["shape"]))]
    for name in _map_names(n_inputs):
        offset, strides = slots[name]
        groups += [(f"off_{name}", [offset]), (f"strides_{name}", list(strides))]
    width = sum(len(values) for _, values in groups) + len(groups) * 0.3
    fig, ax = plt.subplots(figsize=(9.5, 1.5))
    x = 0.0
    for title, values in groups:
        hot = title == f"strides_{highlight}"
        for k, v in enumerate(values):
            ax.add_patch(plt.Rectangle((x + k, 0), 1, 1, ec="white",
                                       color="tab:orange" if hot else "tab:blue",
                                       alpha=0.9 if hot else 0.3))
            ax.text(x + k + 0.5, 0.5, str(v), ha="center", va="center", fontsize=10)
        ax.text(x + len(values) / 2, 1.25, title, ha="center", va="bottom", fontsize=8,
                rotation=0 if len(values) > 1 or len(title) < 6 else 30)
        x += len(values) + 0.3
    ax.set_xlim(0, width)
    ax.set_ylim(0, 2.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("the kernel's p, as launched (unused slots of shape and strides left out)",
                 fontsize=9)
    return fig


def label(dispatched) -> str:
    """A short name for one recorded dispatch: the generator that wrote its WGSL and, for an
    element-wise kernel, the expression it computes."""
    source = dispatched.source
    if source == shaders.matmul_kernel():
        return "matmul_kernel()"
    for dist in ("uniform", "normal", "bernoulli", "int"):
        if source == shaders.random_kernel(dist):
            return f"random_kernel({dist!r})"
    for op in ("sum", "max", "min", "prod"):
        if source == shaders.reduce_kernel("f32", "f32", op):
            return f"reduce_kernel({op!r})"
    found = re.search(r"out\[oo\] = (.*);\n\}", source)
    if found:
        return f"map_kernel(...)  out = {found.group(1)}"
    return dispatched.entry


def per_op_seconds(device: Device, n: int = 40, repeats: int = 5) -> float:
    """Seconds one small element-wise add adds to a chain of ``n`` read back once: the best of
    ``repeats`` runs of ``n`` adds minus the best of one add, over ``n - 1`` (on a shared
    machine interference only adds time, so the best sample is the cost)."""
    a = Tensor.ones((8,), device)
    (a + a).to_numpy()  # compile and warm
    best = {}
    for k in (1, n):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            y = a
            for _ in range(k):
                y = y + a
            y.to_numpy()
            times.append(time.perf_counter() - start)
        best[k] = min(times)
    return max(best[n] - best[1], 0.0) / (n - 1)
