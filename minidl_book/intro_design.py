"""The intro's design, read live: which backends each device chains, beside PyTorch's keys.

burn 0.22 picks the backend at run time from the device: burn-dispatch matches the
``DispatchDevice``, its ``Autodiff`` arm first, and binds ``type B = Autodiff<Flex>``
(``crates/burn-dispatch/src/macros.rs:90-122`` at v0.22.0-pre.2); minidl's ``Dispatch``
does the same (``minidl.dispatch.route``). PyTorch picks autograd's kernel by a dispatch
key each tensor carries.

- :func:`backend_chain`: the backends a ``Linear`` forward's matrix product passes below
  ``Dispatch`` on a device, outermost first, read from a trace.
- :func:`torch_keys`: a tensor's dispatch keys, as PyTorch prints them.
- :func:`addmm_route`: what PyTorch's dispatcher does at each key of a tensor for addmm.
- :func:`design_figure`: the picture: burn 0.21's type per backend, burn 0.22's match on
  the device, PyTorch's keys and kernels, a column each, in that order.
- :func:`outcome_of`, :func:`mixed_step`, :func:`inference_step`: the two "does the weight
  get a gradient?" experiments, minidl's ``x`` on a plain device and PyTorch's ``x`` made
  under ``torch.inference_mode()``, each read as ``"grad"``, ``"no grad"`` or ``"error"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from minidl import Device, Tensor, debug
from minidl.debug.flowchart import Flowchart
from minidl.nn import LinearConfig

#: The three columns' headings and boxes below them, outermost first: burn 0.21 (a type per
#: backend, ``Tensor<B, D, K>``, ``crates/burn-tensor/src/tensor/api/base.rs:76`` at
#: v0.21.0; ``Dispatch`` already there as an opt-in backend, the ``dispatch`` feature,
#: ``crates/burn/Cargo.toml:196``, ``crates/burn-dispatch/src/backend.rs:22-45``), burn
#: 0.22 (``Tensor<D, K>``, ``base.rs:73``; one ``Linear`` for every backend; burn-dispatch's
#: ``match`` on the inputs' kinds, ``Autodiff`` arms first, ``macros.rs:810-841`` at
#: v0.22.0-pre.2). A plain + autodiff pair is left out: it is the chapter's exercise
#: (pre.2 panics, ``:838``; the burn book's 0.22.1 ``mixed`` run lifts the plain input).
#: 0.22's lane has five boxes, as PyTorch's: the layout's barycenter
#: sweeps keep equal-length lanes in insertion order (a shorter burn lane let PyTorch's
#: slide between them).
BURN_021 = ("burn 0.21\nthe type picks\nTensor<B, D, K>",
            "Linear<Autodiff<Flex>>\ncompiled per backend\n(Dispatch: opt-in)",
            "Autodiff<Flex>\nrecords", "Flex\ncomputes")
BURN_022 = ("burn 0.22\nthe device, at run time\nTensor<D, K>",
            "Linear\none compiled model", "Dispatch: match on device\nAutodiff arms first",
            "Autodiff<Flex>\nrecords", "Flex\ncomputes")
#: What the dispatcher does at each key for ``aten::addmm``, by its dispatch table's entry.
JOBS = (("fallthrough", "falls through"), ("autograd kernel", "autograd's kernel records"),
        ("[kernel]", "kernel computes"))


def device_of(name: str) -> Device:
    """The device a name such as ``"Device.fusion().autodiff()"`` builds."""
    device = Device.fusion() if name.startswith("Device.fusion()") else Device.flex()
    return device.autodiff() if name.endswith(".autodiff()") else device


def backend_chain(device: Device) -> tuple[str, ...]:
    """The backends below ``Dispatch`` that a ``Linear(4, 2)`` forward's matrix product
    passes on ``device``, outermost first (``("Autodiff[Flex]", "Flex")``), from a trace
    stopped at the product's kernel (``Fusion[Flex]`` runs so small an op at once, as a
    user gets the device)."""
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.zeros((3, 4), np.float32), device)
    layer(x)  # the params first: the trace sees the forward only
    run = debug.trace(lambda: layer(x).to_numpy(), breakpoints=r"^kernel gemm", echo=False)
    chain = run.first().chain()
    below = chain[chain.index("Dispatch.float_matmul") + 1:]
    return tuple(f.removesuffix(".float_matmul") for f in below if not f.startswith("kernel"))


def torch_keys(tensor: torch.Tensor) -> str:
    """``"CPU, ADInplaceOrView, AutogradCPU, AutocastCPU"``: the tensor's dispatch keys."""
    keys = str(torch._C._dispatch_keys(tensor))
    return keys.removeprefix("DispatchKeySet(").removesuffix(")")


def _column(fc: Flowchart, lane: str, labels: Sequence[str]) -> None:
    ids = [f"{lane}{j}" for j in range(len(labels))]
    for j, (i, label) in enumerate(zip(ids, labels)):
        fc.node(i, label, shape="round" if j == 0 else "box")
    for a, b in zip(ids, ids[1:]):
        fc.edge(a, b)


def addmm_route(tensor: torch.Tensor) -> list[tuple[str, str]]:
    """Each of ``tensor``'s keys, highest first, and what PyTorch's dispatcher does there
    for ``aten::addmm``: ``"off"`` (autocast, not enabled), ``"falls through"``
    (``ADInplaceOrView``), ``"autograd's kernel records"`` (``AutogradCPU``, filled by the
    ``Autograd`` alias kernel) or ``"kernel computes"`` (``CPU``); read live."""
    table = dict(line.split(": ", 1) for line in
                 torch._C._dispatch_dump_table("aten::addmm").splitlines() if ": " in line)
    excluded = torch._C._dispatch_tls_is_dispatch_key_excluded
    route = []
    for key in reversed(torch_keys(tensor).split(", ")):
        if excluded(getattr(torch._C.DispatchKey, key)):
            route.append((key, "off"))
            continue
        entry = table.get(key, "")
        route.append((key, next(job for tag, job in JOBS if tag in entry)))
    return route


def design_figure() -> Flowchart:
    """Three labelled columns, left to right: burn 0.21 (the type picks, compiled per
    backend, Dispatch opt-in), burn 0.22 (one compiled ``Linear``; ``Dispatch`` matches
    the inputs' devices at run time), and PyTorch's: a parameter's keys, highest first,
    and what ``addmm``'s dispatcher does at each (read live by :func:`addmm_route`)."""
    fc = Flowchart("TB", title="Who picks the backends: the type (burn 0.21), the device "
                   "at run time (burn 0.22), each tensor's keys (PyTorch)")
    _column(fc, "a", BURN_021)
    _column(fc, "b", BURN_022)
    route = addmm_route(torch.nn.Linear(4, 2).weight)
    _column(fc, "t", ["PyTorch: addmm\nthe weight's keys,\nhighest first",
                      *(f"{key}\n{job}" for key, job in route)])
    return fc


def outcome_of(step: Callable[[], object]) -> tuple[str, str]:
    """Run ``step`` (it returns the weight's gradient, or ``None``): ``("grad", "")``,
    ``("no grad", "")``, or ``("error", "RuntimeError: <first sentence>")``."""
    try:
        grad = step()
    except Exception as err:  # noqa: BLE001 - the error is the experiment's answer
        return "error", f"{type(err).__name__}: {str(err).split('.')[0]}"
    return ("no grad", "") if grad is None else ("grad", "")


def mixed_step(rows: np.ndarray, on: Device | None = None) -> Callable[[], object]:
    """minidl: ``x`` on ``Device.flex()``, a ``Linear(4, 2)`` on ``on`` (by default
    ``Device.flex().autodiff()``); the step runs ``layer(x).sum().backward()`` and
    returns the weight's gradient."""
    on = Device.flex().autodiff() if on is None else on

    def step() -> object:
        layer = LinearConfig(4, 2).init(on)
        x = Tensor.from_numpy(rows, Device.flex())
        grads = layer(x).sum().backward()
        return layer.weight.val().grad(grads)

    return step


def inference_step(rows: np.ndarray, inference: bool = True) -> Callable[[], object]:
    """PyTorch: ``x`` made under ``torch.inference_mode()`` (or ``torch.no_grad()`` when
    not ``inference``), an ``nn.Linear(4, 2)`` made outside it; the step runs
    ``lin(x).sum().backward()`` and returns ``lin.weight.grad``."""

    def step() -> object:
        lin = torch.nn.Linear(4, 2)
        with torch.inference_mode() if inference else torch.no_grad():
            x = torch.from_numpy(rows).clone()
        lin(x).sum().backward()
        return lin.weight.grad

    return step
