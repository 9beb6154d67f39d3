"""The intro's design, read live: which backends each device chains, beside PyTorch's keys.

burn 0.22 picks the backend at run time from the device: burn-dispatch matches the
``DispatchDevice``, its ``Autodiff`` arm first, and binds ``type B = Autodiff<Flex>``
(``crates/burn-dispatch/src/macros.rs:90-122`` at v0.22.0-pre.2); minidl's ``Dispatch``
does the same (``minidl.dispatch.route``). PyTorch picks autograd's kernel by a dispatch
key each tensor carries.

- :func:`backend_chain`: the backends a ``Linear`` forward's matrix product passes below
  ``Dispatch`` on a device, outermost first, read from a trace.
- :func:`torch_keys`: a tensor's dispatch keys, as PyTorch prints them.
- :func:`design_figure`: the picture: burn 0.21's type per backend, burn 0.22's match on
  the device, PyTorch's keys and kernels, a column each.
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
#: v0.21.0), burn 0.22 (``Tensor<D, K>``, ``base.rs:73`` at v0.22.0-pre.2: burn-dispatch's
#: ``match`` on the inputs' kinds, ``Autodiff`` arms first, ``macros.rs:810-841``; a plain + autodiff
#: pair has no arm: ``panic!``, ``:838``); fusion is a Cargo feature (``burn-dispatch/Cargo.toml:90``) whose
#: backend wraps ``CubeBackend`` only (``burn-cubecl/src/fusion.rs:126``): no device, no
#: ``Fusion<Flex>``.
BURN_021 = ("burn 0.21\na type per backend\nTensor<B, D, K>",
            "Linear<Autodiff<Flex>>\ncompiled per backend",
            "Autodiff<Flex>\nrecords", "Flex\ncomputes")
BURN_022 = ("burn 0.22\nthe device, at run time\nTensor<D, K>",
            "Dispatch: match on device\nAutodiff arms first\nplain + autodiff: panic!\n"
            "fusion: a build feature\n(no Fusion<Flex>)",
            "Autodiff<Flex>\nrecords", "Flex\ncomputes")


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


def design_figure() -> Flowchart:
    """Three labelled columns: burn 0.21 (a type per backend, compiled per backend), burn
    0.22 (``Dispatch`` matches the inputs' kinds at run time; a plain + autodiff pair
    panics; fusion a build feature, not a device), and PyTorch's: a parameter's dispatch
    keys, the dispatcher, then ``addmm``'s kernel for each key, autograd's first (read
    live from PyTorch: the keys the parameter carries, the kernels ``addmm`` has)."""
    fc = Flowchart("TB", title="Who picks the backends: the type (burn 0.21), the device "
                   "at run time (burn 0.22), each tensor's keys (PyTorch)")
    _column(fc, "a", BURN_021)
    _column(fc, "b", BURN_022)
    keys = torch_keys(torch.nn.Linear(4, 2).weight).split(", ")
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    used = [(key, job) for key, job in (("AutogradCPU", "records"), ("CPU", "computes"))
            if key in keys and has("aten::addmm", key.removesuffix("CPU") or "CPU")]
    _column(fc, "t", ["PyTorch\neach tensor's keys\n" + ", ".join(k for k, _ in used),
                      "dispatcher\nreads the keys",
                      *(f"addmm, {key}\nkernel: {job}" for key, job in used)])
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
