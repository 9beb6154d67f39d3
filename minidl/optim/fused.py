"""A **speed trick** (ARCHITECTURE.md, "Where speed tricks may live"): Adam's whole update of
one parameter as one backend call, when the parameter's backend offers one.

:func:`minidl.optim.adam.adaptive_update` is the rule, fourteen tensor ops per parameter, and
it is what every backend runs. Flex also offers ``adam_step`` (``Flex.adam_step``, one numba
kernel, ``minidl/backends/flex/kernels/optim.py``), outside burn's protocol, as torch offers
``Adam(fused=True)``; ``Fusion[Flex]`` offers the same kernel on ready handles
(``minidl/fusion/eager.py``) and declines (``None``) while its stream records every op. On the
training chapter's CNN (12 small parameters) the fourteen ops cost the step 0.6 ms of Python
where the kernel takes a few microseconds. It computes what the tensor ops compute
(``tests/optim/test_fused_adam.py`` compares the two).
"""

from __future__ import annotations

from typing import Any

from minidl.dispatch import DispatchTensor
from minidl.dispatch.route import backend_for
from minidl.tensor import Tensor


def fused_adam_step(lr: float, tensor: Tensor, grad: Tensor, state: Any | None, beta_1: float,
                    beta_2: float, epsilon: float) -> tuple[Tensor, int, Tensor, Tensor] | None:
    """``(new tensor, time, moment_1, moment_2)`` from the backend's ``adam_step`` (``state`` an
    ``AdamState`` or ``None``), or ``None`` when ``tensor``'s backend has none or declines (then
    the caller runs the tensor ops)."""
    device = tensor.device
    adam_step = getattr(backend_for(device), "adam_step", None)
    if adam_step is None or grad.device is not device:
        return None
    param, g = tensor.primitive.backend_tensor, grad.primitive.backend_tensor
    if param.dtype != g.dtype or param.shape != g.shape:
        return None
    if state is None:
        time, m1, m2 = 1, None, None
    else:
        time = state.time + 1
        m1, m2 = state.moment_1.primitive.backend_tensor, state.moment_2.primitive.backend_tensor
    out = adam_step(param, g, m1, m2, lr, beta_1, beta_2, epsilon, 1.0 - beta_1 ** time, 1.0 - beta_2 ** time)
    if out is None:  # the backend declined (Fusion[B] while its stream records every op)
        return None
    new, m1, m2 = out
    kind = tensor.kind  # the three results spelled out: a generator per parameter and step cost more
    return (Tensor(DispatchTensor(new, device), kind), time, Tensor(DispatchTensor(m1, device), kind),
            Tensor(DispatchTensor(m2, device), kind))
