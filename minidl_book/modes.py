"""Helpers of the train-and-inference chapter: its data, its small models, its printers.

- :func:`T` and :func:`vec`: a float32 tensor from an array; floats printed as burn prints an
  ``f32`` (the fewest digits that read back), so burn's printed digits can be compared.
- :func:`batch`: batch ``k`` of burn's BatchNorm experiment (4 samples × 3 features).
- :func:`mini_model`: ``Linear(4, 8) → Dropout(0.5) → Linear(8, 1)``, the chapter's model.
- :func:`modes_table`: what each mode method leaves in a model (flag, frozen mark, weight's
  device, wish for gradients) and whether its dropout then drops an autodiff input.
- :func:`decision_chart`: the two questions a mode-dependent layer's ``forward`` asks;
  :func:`modes_chart`: where each mode method leads.
- :func:`as_bool`, :func:`as_number` and the comparisons built on them: the chapter's
  exercises read ``"False"``, ``"4/3"`` or ``"1"`` as the reader means them.
- :func:`stats_used`, :func:`running_state_timeline`, :func:`clone_picture`: the stale-
  statistics table and the two RunningState pictures.
"""

from __future__ import annotations

import numpy as np
import torch

from minidl import Device, Tensor
from minidl.debug import Table
from minidl.debug.flowchart import Flowchart
from minidl.nn import DropoutConfig, LinearConfig, Sequential
from minidl_book.exercises import Exercise

__all__ = ["PairExercise", "T", "as_bool", "as_number", "batch", "clone_picture",
           "close_number", "decision_chart", "is_pair", "mini_model", "mode_state",
           "modes_chart", "modes_table",
           "random_batch", "running_state_timeline", "same_bool", "same_int", "stats_used",
           "vec"]


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
    chart.node("inference", "inference behaviour\ndropout keeps all; BatchNorm\nuses its running "
               "statistics", shape="round")
    chart.node("training", "training behaviour\ndropout drops; BatchNorm uses\nthe batch's "
               "and updates", shape="round")
    chart.node("torch", "PyTorch looks\nonly at the flag")
    chart.edge("forward", "flag")
    chart.edge("flag", "inference", "no: valid(), freeze()")
    chart.edge("flag", "device", "yes")
    chart.edge("device", "inference", "no: a plain tensor")
    chart.edge("device", "training", "yes")
    chart.edge("torch", "training", "flag on", dashed=True)
    chart.edge("torch", "inference", "flag off", dashed=True)
    return chart


# --- the chapter's exercises: answers read as a reader writes them --------------------

_TRUE, _FALSE = {"true", "yes", "y", "moves", "1"}, {"false", "no", "n", "0"}


def as_bool(value) -> bool:
    """``True``/``False`` as a bool or a word (``"False"``, ``"no"``); anything else refused.

    ``bool("False")`` is ``True``, so a string is read as the word it is.
    """
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"not a yes/no answer: {value!r}")


def as_number(value) -> float:
    """A number, also written as a string: ``"4/3"``, ``"1.333"``, ``Fraction(4, 3)``."""
    from fractions import Fraction

    if isinstance(value, str):
        return float(Fraction(value.strip().replace(" ", "")))
    if isinstance(value, bool):
        raise ValueError("a bool is not a number here")
    return float(value)


def same_bool(prediction, truth) -> bool:
    return as_bool(prediction) == truth


def same_int(prediction, truth) -> bool:
    number = as_number(prediction)
    return number == int(number) and int(number) == truth


def close_number(rtol: float = 0.0, atol: float = 0.0):
    """Within ``atol + rtol * |truth|``; ``atol=5e-3`` takes a 2-decimal answer (1.33)."""
    def compare(prediction, truth) -> bool:
        return abs(as_number(prediction) - truth) <= atol + rtol * abs(truth)

    return compare


def is_pair(prediction) -> bool:
    """A tuple or list of two items: the only shape a ``(zeros, moves)`` answer has."""
    return isinstance(prediction, tuple | list) and len(prediction) == 2


def zeros_and_moves(prediction, truth, tolerance: int = 400) -> tuple[bool, bool]:
    """Which half of a ``(zeros, moves)`` prediction is right (each half on its own)."""
    if not is_pair(prediction):
        raise TypeError(f"not a pair: {type(prediction).__name__}")
    zeros, moves = prediction
    try:
        count_ok = abs(as_number(zeros) - truth[0]) <= tolerance
    except (TypeError, ValueError):
        count_ok = False
    try:
        moves_ok = as_bool(moves) == truth[1]
    except ValueError:
        moves_ok = False
    return count_ok, moves_ok


class PairExercise(Exercise):
    """An :class:`Exercise` whose ``(zeros, moves)`` answer says which half is wrong."""

    def __init__(self, question: str, truth, *, hint: str = "") -> None:
        super().__init__(question, truth,
                         compare=lambda p, t: all(zeros_and_moves(p, t)), hint=hint)

    def check(self, prediction=...) -> bool:
        ok = super().check(prediction)
        if not ok and prediction is not Ellipsis and is_pair(prediction):
            try:
                count_ok, moves_ok = zeros_and_moves(prediction, self.measure())
            except (TypeError, ValueError):
                return ok
            right = {True: "right", False: "not right"}
            print(f"  The zero count is {right[count_ok]}; the running-mean half is "
                  f"{right[moves_ok]}.")
        return ok


# --- pictures and tables ------------------------------------------------------------


def stats_used(looks: dict, x0: np.ndarray, eps: float = 1e-5) -> Table:
    """For each output row of batch ``x0``: which running mean and variance normalized it.

    Tries the four pairs (initial or updated mean, initial or updated variance) of a
    BatchNorm that saw one training forward of ``x0`` and names the pair that reproduces
    the row.
    """
    means = {"initial mean 0": 0.0, "updated": 0.1 * x0.mean(axis=0)}
    variances = {"initial var 1": 1.0, "updated": 0.9 + 0.1 * x0.var(axis=0)}
    rows = []
    for label, out in looks.items():
        row = (out.to_numpy() if isinstance(out, Tensor) else np.asarray(out))[0]
        found = [(m, v) for m, mean in means.items() for v, var in variances.items()
                 if np.allclose(row, (x0[0] - mean) / np.sqrt(var + eps), rtol=1e-5)]
        if len(found) != 1:
            raise AssertionError(f"{label}: no single pair of statistics reproduces {row}")
        rows.append([label, *found[0]])
    return Table(["look at row 0 of batch 0", "mean used", "variance used"], rows)


def running_state_timeline(events: list[tuple[str, str, str]]):
    """A two-row strip: the folded value and the pending one of a RunningState, per event.

    ``events``: (event, folded, pending) labels, as measured by the chapter.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 1.9))
    for col, (event, folded, pending) in enumerate(events):
        ax.text(col, 2.05, event, ha="center", va="bottom", fontsize=8)
        for row, (text, colour) in enumerate(((pending, "#FFE0B2"), (folded, "#C8E6C9"))):
            face = colour if text != "-" else "#F5F5F5"
            ax.add_patch(plt.Rectangle((col - 0.42, row + 0.1), 0.84, 0.8, fc=face,
                                       ec="#616161", lw=0.8))
            ax.text(col, row + 0.5, text, ha="center", va="center", fontsize=8)
        if col and events[col - 1][2] != "-" and events[col][1] != events[col - 1][1]:
            ax.annotate("", xy=(col - 0.3, 1.5), xytext=(col - 0.7, 0.5),
                        arrowprops={"arrowstyle": "->", "color": "#2E7D32"})
    ax.text(-0.55, 1.5, "value()\nreads", ha="right", va="center", fontsize=8)
    ax.text(-0.55, 0.5, "pending\n(this thread)", ha="right", va="center", fontsize=8)
    ax.set_xlim(-1.5, len(events) - 0.5)
    ax.set_ylim(0, 2.5)
    ax.axis("off")
    fig.tight_layout()
    return fig


def clone_picture():
    """PyTorch's deepcopy: two statistics; minidl's (burn's) clone(): one shared box."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8, 1.8))
    for ax, title, shared in ((axes[0], "PyTorch: copy.deepcopy(bn)", False),
                              (axes[1], "burn, minidl: bn.clone()", True)):
        for x, name in ((0.2, "bn"), (0.8, "the copy")):
            ax.text(x, 0.85, name, ha="center", va="center", fontsize=8,
                    bbox={"boxstyle": "round", "fc": "#E3F2FD", "ec": "#1565C0"})
        targets = (0.5, 0.5) if shared else (0.2, 0.8)
        labels = ["one RunningState\n(Arc<Mutex<…>>)"] if shared else [
            "running_mean", "running_mean\n(a copy)"]
        for x, label in zip(sorted(set(targets)), labels, strict=True):
            ax.text(x, 0.2, label, ha="center", va="center", fontsize=8,
                    bbox={"boxstyle": "square", "fc": "#FFF3E0", "ec": "#E65100"})
        for x0, x1 in zip((0.2, 0.8), targets, strict=True):
            ax.annotate("", xy=(x1, 0.36), xytext=(x0, 0.72),
                        arrowprops={"arrowstyle": "->", "color": "#424242"})
        ax.set_title(title, fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.axis("off")
    fig.tight_layout()
    return fig


def modes_chart() -> Flowchart:
    """What each mode method leads to, from a model built on the autodiff device; each box
    names the call that leads back (one arrow per pair keeps the labels apart)."""
    chart = Flowchart("TB", title="Mode methods: what each returns (a new module)")
    chart.node("plain", "built on flex()\nflag on, plain device\n(nothing recorded)")
    chart.node("train", "training\nflag on, autodiff,\nwants grad", shape="round")
    chart.node("valid", "valid() snapshot\nflag off, plain device\n(PyTorch: eval + no_grad)"
               "\nback: .train()")
    chart.node("frozen", "frozen\nflag off, no grad; train()\nand valid() keep it frozen"
               "\nback: .unfreeze()")
    chart.node("nograd", "no_grad()\nflag on, no grad\n(dropout still drops)"
               "\nback: .set_require_grad(True)")
    chart.edge("plain", "train", "train(): lifted\nto autodiff")
    chart.edge("train", "valid", "valid()")
    chart.edge("train", "frozen", "freeze()")
    chart.edge("train", "nograd", "no_grad()")
    return chart
