"""Build exercise of the tensors-and-backends chapter: write a protocol default.

The reader writes ``log_softmax(cls, tensor, dim)`` the way the protocol writes its defaults:
with other ops of the same backend (``cls.float_exp``, ``cls.float_sum_dim``...), no NumPy.
The checker installs it, unchanged, on a subclass of Flex and on a subclass of NdArray, runs
both on the same inputs (rank 1 to 3, any dim, values up to ±100 so a naive
``log(sum(exp(x)))`` overflows float32), and compares both with PyTorch, float32 in, float32
out, shape for shape.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device
from minidl.backends.flex import Flex
from minidl.backends.ndarray import NdArray
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import float32_arrays

__trace_hide__ = True  # the trace shows the reader's code and what it dispatched, not this

__all__ = ["BACKENDS", "PLANTED", "exercise", "install", "log_softmax"]

#: The two backends the reader's default is installed on, with the device each one runs on.
BACKENDS = {"Flex": (Flex, Device.flex), "NdArray": (NdArray, Device.ndarray)}


def install(default, backend: type) -> type:
    """``backend`` with ``default`` as its ``log_softmax``: the reader's body, run with
    ``cls`` = that backend (the way a protocol default runs on a backend that keeps it)."""
    return type(f"{backend.__name__}WithYours", (backend,), {"log_softmax": classmethod(default)})


# ----- the reference solution and planted wrong ones -------------------------------------------
def log_softmax(cls, tensor, dim):
    shifted = cls.float_sub(tensor, cls.float_max_dim(tensor, dim))  # every row's max is 0
    log_sum = cls.float_log(cls.float_sum_dim(cls.float_exp(shifted), dim))
    return cls.float_sub(shifted, log_sum)


def naive(cls, tensor, dim):
    """Right formula, no shift: e^x overflows float32 above 88.7."""
    log_sum = cls.float_log(cls.float_sum_dim(cls.float_exp(tensor), dim))
    return cls.float_sub(tensor, log_sum)


def log_of_softmax(cls, tensor, dim):
    """log(softmax), the softmax composed from cls ops and shifted (so no overflow): a
    probability under 1e-45 is 0 in float32, and its log is -inf. (Calling ``cls.softmax``
    instead breaks the rule against a backend's own softmax before any value is compared.)"""
    e = cls.float_exp(cls.float_sub(tensor, cls.float_max_dim(tensor, dim)))
    return cls.float_log(cls.float_div(e, cls.float_sum_dim(e, dim)))


def with_numpy(cls, tensor, dim):
    """Right values computed with NumPy on the primitive: runs on these two CPU backends only."""
    shifted = tensor - np.max(tensor, axis=dim, keepdims=True)
    return (shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))).astype(tensor.dtype)


def last_dim(cls, tensor, dim):
    """Normalises along the last dim, whatever ``dim`` says."""
    return log_softmax(cls, tensor, tensor.ndim - 1)


def borrowed(cls, tensor, dim):
    """Right values, somebody else's op."""
    return Flex.log_softmax(tensor, dim)


#: name → (wrong default, the verdict kind it must get)
PLANTED = {
    "no shift": (naive, "value"),
    "log of softmax": (log_of_softmax, "value"),
    "numpy": (with_numpy, "rule"),
    "last dim only": (last_dim, "value"),
    "borrowed op": (borrowed, "rule"),
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(100)

    def case(shape):
        return st.fixed_dictionaries({"x": arrays(shape), "dim": st.integers(0, len(shape) - 1)})

    return st.lists(st.integers(1, 4), min_size=1, max_size=3).flatmap(case)


def _run(solution, case: dict) -> dict:
    out = {}
    for label, (backend, device) in BACKENDS.items():
        B = install(solution, backend)
        x = B.float_from_data(case["x"], device())
        out[f"on {label}"] = B.log_softmax(x, case["dim"])
    return out


def _torch(case: dict) -> dict:
    expected = torch.log_softmax(torch.from_numpy(case["x"]), case["dim"])
    return {f"on {label}": expected for label in BACKENDS}


EXAMPLES = [
    {"x": np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32), "dim": 1},
    {"x": np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32), "dim": 0},
    {"x": np.array([[90.0, 0.0, -30.0]], np.float32), "dim": 1},
    {"x": np.array([[0.0, -110.0, 2.0]], np.float32), "dim": 1},
]


def exercise(max_examples: int = 15) -> BuildExercise:
    """The checker for the reader's ``log_softmax(cls, tensor, dim)``."""
    return BuildExercise(
        "A protocol default: log_softmax on Flex and NdArray",
        cases=_cases(),
        run=_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5, dtype=True)],
        rules=Rules(forbidden={r"^(Flex|NdArray|FloatTensorOps|ActivationOps|Backend)\."
                               r"(log_softmax|softmax)$":
                               "call a backend's own (log_)softmax (compose it from cls ops)"},
                    no_numpy=True),
        hints=[
            "log_softmax(x)_i = x_i - log(sum_j e^(x_j)) along dim. float_sum_dim keeps the "
            "dim, so the subtraction broadcasts.",
            "e^90 is inf in float32. Subtracting any constant c from a row leaves log_softmax "
            "unchanged: pick c so that no exponent is positive.",
            "c = the row's max: cls.float_max_dim(tensor, dim) (it keeps the dim too).",
        ],
        reference_solution=log_softmax,
        examples=EXAMPLES,
        max_examples=max_examples,
    )
