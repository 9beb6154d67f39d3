"""Helpers of the train-and-inference chapter: its data, its small models, its printers.

- :func:`T` and :func:`vec`: a float32 tensor from an array; floats printed as burn prints an
  ``f32`` (the fewest digits that read back), so burn's printed digits can be compared.
- :func:`batch`: batch ``k`` of burn's BatchNorm experiment (4 samples × 3 features).
- :func:`mini_model`: ``Linear(4, 8) → Dropout(0.5) → Linear(8, 1)``, the chapter's model.
- :func:`modes_table`: what each mode method leaves in a model (flag, frozen mark, weight's
  device, wish for gradients) and whether its dropout then drops an autodiff input.
- :func:`decision_chart`: the two questions a mode-dependent layer's ``forward`` asks.
"""

from __future__ import annotations

import numpy as np
import torch

from minidl import Device, Tensor
from minidl.debug import Table
from minidl.debug.flowchart import Flowchart
from minidl.nn import DropoutConfig, LinearConfig, Sequential

__all__ = ["T", "batch", "decision_chart", "mini_model", "mode_state", "modes_table",
           "random_batch", "vec"]


def T(array, device: Device) -> Tensor:
    """A float32 minidl tensor holding ``array`` on ``device``."""
    return Tensor.from_numpy(np.ascontiguousarray(array, dtype=np.float32), device)


def vec(values, decimals: int | None = None) -> str:
    """Floats of a minidl tensor, a torch tensor or an array, as burn prints an f32.

    Each float32 gets the fewest digits that read back to it (Rust's ``{:?}``);
    ``decimals`` rounds instead, as the PyTorch scripts beside burn print.
    """
    if isinstance(values, torch.Tensor):
        values = values.detach().numpy()
    elif isinstance(values, Tensor):
        values = values.to_numpy()
    flat = np.asarray(values, dtype=np.float32).ravel()
    if decimals is not None:
        return "[" + ", ".join(f"{v:.{decimals}f}" for v in flat) + "]"
    shortest = (np.format_float_positional(v, unique=True, trim="0") for v in flat)
    return "[" + ", ".join(shortest) + "]"


def batch(k: int) -> np.ndarray:
    """Batch k of burn's BatchNorm experiment: x[i, j] = 2 sin(3i + j + k + 1) + j, 4 × 3.

    burn's experiment never prints its batches, but its printed statistics pin them down.
    """
    i, j = np.arange(4)[:, None], np.arange(3)[None, :]
    return (2 * np.sin(3 * i + j + k + 1) + j).astype(np.float32)


SCALE, OFFSET = np.array([1.0, 1.5, 0.8]), np.array([0.1, 1.0, 2.0])


def random_batch(k: int, n: int = 4) -> np.ndarray:
    """Random batch k: n samples of 3 features (spread SCALE, offset OFFSET), reproducible."""
    normal = np.random.default_rng(100 + k).standard_normal((n, 3))
    return (normal * SCALE + OFFSET).astype(np.float32)


def mini_model(device: Device) -> Sequential:
    """Linear(4, 8) → Dropout(0.5) → Linear(8, 1), its Linears built on ``device``."""
    return Sequential(
        LinearConfig(4, 8).init(device),
        DropoutConfig(0.5).init(),
        LinearConfig(8, 1).init(device),
    )


def mode_state(model: Sequential) -> tuple[bool, bool, bool, bool, bool]:
    """(flag on, frozen, first weight on autodiff, weight wants grad, dropout drops).

    "drops" runs the model's dropout on ``ones(1, 1000)`` on the autodiff device.
    """
    flag, weight = model[1].training.val(), model[0].weight
    ones = Tensor.ones((1, 1000), Device.flex().autodiff())
    drops = bool((model[1](ones).to_numpy() == 0).any())
    return (flag.is_enabled(), flag.is_frozen(), weight.val().device.is_autodiff(),
            weight.require_grad, drops)


def modes_table(models: dict[str, Sequential]) -> Table:
    """One row per model: what :func:`mode_state` reads, as a table."""
    mark = {True: "yes", False: "-"}
    rows = []
    for label, model in models.items():
        on, frozen, on_ad, wants, drops = mode_state(model)
        rows.append([label, mark[on], mark[frozen], "autodiff" if on_ad else "plain",
                     mark[wants], mark[drops]])
    headers = ["model", "flag on", "frozen", "weights on", "want grad", "drops"]
    return Table(headers, rows)


def decision_chart() -> Flowchart:
    """The two questions of Dropout's and BatchNorm's forward; PyTorch's one."""
    chart = Flowchart("TB", title="Training or inference behaviour: what forward checks")
    chart.node("forward", "a layer's forward")
    chart.node("flag", "training flag\non?", shape="diamond")
    chart.node("device", "tensor reaching it\non an autodiff\ndevice?", shape="diamond")
    chart.node("inference", "inference behaviour", shape="round")
    chart.node("training", "training behaviour", shape="round")
    chart.node("torch", "PyTorch looks\nonly at the flag")
    chart.edge("forward", "flag")
    chart.edge("flag", "inference", "no")
    chart.edge("flag", "device", "yes")
    chart.edge("device", "inference", "no")
    chart.edge("device", "training", "yes")
    chart.edge("torch", "flag", dashed=True)
    return chart
