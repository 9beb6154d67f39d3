"""Build exercise of the tensors-and-backends chapter: write a protocol default.

The reader writes ``log_softmax(cls, tensor, dim)`` the way the protocol writes its defaults:
with other ops of the same backend (``cls.float_exp``, ``cls.float_sum_dim``...), no NumPy.
The checker installs it, unchanged, on a subclass of Flex, of NdArray and of Wgpu (when this
machine has a WebGPU adapter, lavapipe counting), runs each on the same inputs (rank 1 to 3,
any dim, values up to ±100 so a naive ``log(sum(exp(x)))`` overflows float32), and compares
each with PyTorch, float32 in, float32 out, shape for shape. Wgpu is the run that closes the
hole NumPy leaves: its primitive is a ``WgpuTensor``, with no operators and no NumPy methods,
so ``tensor - m`` works on the two CPU backends and fails there, as a default written with
anything but ``cls`` ops would fail on a backend that stores its tensors elsewhere.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device
from minidl.backends.flex import Flex
from minidl.backends.ndarray import NdArray
from minidl.backends.wgpu import Wgpu
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import float32_arrays

__trace_hide__ = True  # the trace shows the reader's code and what it dispatched, not this

__all__ = ["ALL_BACKENDS", "PLANTED", "backends", "exercise", "install", "log_softmax",
           "wgpu_missing"]

#: The backends the reader's default is installed on: the class, the device it runs on and
#: the type of its primitive (what every op of that backend returns).
ALL_BACKENDS = {"Flex": (Flex, Device.flex, np.ndarray),
                "NdArray": (NdArray, Device.ndarray, np.ndarray),
                "Wgpu": (Wgpu, Device.wgpu, None)}  # WgpuTensor, imported with the device


@functools.cache
def wgpu_missing() -> str | None:
    """Why ``Device.wgpu()`` cannot run on this machine, or None when it can."""
    try:
        from minidl.backends.wgpu.runtime import runtime

        runtime(0)
    except RuntimeError as error:
        return str(error)
    return None


def backends() -> dict:
    """The backends of :data:`ALL_BACKENDS` this machine runs (Wgpu needs an adapter)."""
    return {k: v for k, v in ALL_BACKENDS.items() if k != "Wgpu" or wgpu_missing() is None}


def _primitive(label: str) -> type:
    if label == "Wgpu":
        from minidl.backends.wgpu.tensor import WgpuTensor

        return WgpuTensor
    return ALL_BACKENDS[label][2]


#: the rule a default breaks by calling a backend's (log_)softmax, its own slot included
OWN_SOFTMAX = "call a backend's own (log_)softmax (compose it from cls ops)"
_RUNNING: list = []  # the installed default running now (a call inside it is a recursion)


def _yours(cls, tensor, dim):
    """The slot ``install`` fills: runs the reader's default once. ``cls.log_softmax`` from
    inside it is this slot again, the reader's own function: the call is refused as a
    recursion (with the rule it breaks) before it exhausts the stack, which would switch the
    checker's profile hook off and be misreported as a call to sys.setprofile."""
    if _RUNNING:
        from minidl_book.watch import _ACTIVE

        why = ("your code called cls.log_softmax, which on a backend that keeps the default "
               "is your function itself: it calls itself forever (a recursion)")
        if _ACTIVE:
            _ACTIVE[-1].add(OWN_SOFTMAX, f"must not {OWN_SOFTMAX}; {why}")
        raise RecursionError(why)
    _RUNNING.append(cls)
    try:
        return cls._default(cls, tensor, dim)
    finally:
        _RUNNING.pop()


def install(default, backend: type) -> type:
    """``backend`` with ``default`` as its ``log_softmax``: the reader's body, run with
    ``cls`` = that backend (the way a protocol default runs on a backend that keeps it)."""
    return type(f"{backend.__name__}WithYours", (backend,),
                {"log_softmax": classmethod(_yours), "_default": staticmethod(default)})


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
    probability under 1e-45 is 0 in float32, and its log is -inf (the underflow verdict).
    (Calling ``cls.softmax`` instead breaks the rule against a backend's own softmax before
    any value is compared.)"""
    e = cls.float_exp(cls.float_sub(tensor, cls.float_max_dim(tensor, dim)))
    return cls.float_log(cls.float_div(e, cls.float_sum_dim(e, dim)))


def with_numpy(cls, tensor, dim):
    """Right values computed with NumPy on the primitive: runs on these two CPU backends only."""
    shifted = tensor - np.max(tensor, axis=dim, keepdims=True)
    return (shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))).astype(tensor.dtype)


def with_operators(cls, tensor, dim):
    """Right values on Flex and NdArray, with NumPy's operators on the primitive (``-``): no
    NumPy function named, yet no default either: a ``WgpuTensor`` has no ``-``."""
    shifted = tensor - cls.float_max_dim(tensor, dim)
    return shifted - cls.float_log(cls.float_sum_dim(cls.float_exp(shifted), dim))


def last_dim(cls, tensor, dim):
    """Normalises along the last dim, whatever ``dim`` says."""
    return log_softmax(cls, tensor, tensor.ndim - 1)


def borrowed(cls, tensor, dim):
    """Right values, somebody else's op."""
    return Flex.log_softmax(tensor, dim)


#: name → (wrong default, the verdict kind it must get); "operators" needs Wgpu to be caught
PLANTED = {
    "no shift": (naive, "check"),
    "log of softmax": (log_of_softmax, "check"),
    "numpy": (with_numpy, "rule"),
    "operators": (with_operators, "error"),
    "last dim only": (last_dim, "value"),
    "borrowed op": (borrowed, "rule"),
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(100)

    def case(shape):
        return st.fixed_dictionaries({"x": arrays(shape), "dim": st.integers(0, len(shape) - 1)})

    return st.lists(st.integers(1, 4), min_size=1, max_size=3).flatmap(case)


NOT_AN_NDARRAY = (" (on Wgpu, whose primitive is a WgpuTensor: a buffer on the device, with no "
                  "operators and no NumPy methods)")


def _run(solution, case: dict) -> dict:
    out = {}
    for label, (backend, device, _) in backends().items():
        B = install(solution, backend)
        x = B.float_from_data(case["x"], device())
        try:
            y = B.log_softmax(x, case["dim"])
        except (TypeError, AttributeError) as err:
            if label == "Wgpu" and "WgpuTensor" in str(err) and err.args:
                err.args = (f"{err.args[0]}{NOT_AN_NDARRAY}", *err.args[1:])
            raise
        if not isinstance(y, _primitive(label)):
            raise TypeError(f"on {label} your default returned {_a(type(y))}, where every op "
                            f"of {label} returns {_a(_primitive(label))}")
        out[f"on {label}"] = y
    return out


def _a(kind: type) -> str:
    return ("an " if kind.__name__[0] in "aeiouAEIOU" else "a ") + kind.__name__


def _torch(case: dict) -> dict:
    expected = torch.log_softmax(torch.from_numpy(case["x"]), case["dim"])
    return {f"on {label}": expected for label in backends()}


#: ln of float32's largest number (3.4e38): e^x overflows to inf above it
LN_MAX = float(np.log(np.finfo(np.float32).max))
#: float32's smallest positive number on each backend: Flex and NdArray keep subnormals
#: (down to 1.4e-45), minidl's Wgpu (lavapipe) flushes them to 0 (down to 1.2e-38 only)
SMALLEST = {"on Flex": float(np.finfo(np.float32).smallest_subnormal),
            "on NdArray": float(np.finfo(np.float32).smallest_subnormal),
            "on Wgpu": float(np.finfo(np.float32).tiny)}
FLUSH = ": Wgpu flushes subnormals to zero, which Flex and NdArray keep down to 1.4e-45"


def _smallest(name: str) -> str:
    """float32's smallest positive number on the backend ``name`` runs on, said in words."""
    tiny = SMALLEST.get(name, SMALLEST["on Flex"])
    return f"{tiny:.1e}, about e^{np.log(tiny):.1f}" + (FLUSH if name == "on Wgpu" else "")


def _overflow(solution, case: dict, outputs: dict, watch) -> str | None:
    """inf, -inf or nan where PyTorch's answer is finite (above -80), in a row whose sum of e^x passes
    float32's largest number: an unshifted e^x overflowed. The verdict says so itself, so
    the first hint it opens can be the fix (the shift), not the formula again."""
    x, dim = case["x"], case["dim"]
    expected = torch.log_softmax(torch.from_numpy(x), dim).numpy()
    log_sum = np.max(x - expected, axis=dim, keepdims=True)  # ln(sum_j e^(x_j)) per row
    for name, found in outputs.items():
        if name.startswith("_") or np.shape(found) != expected.shape:
            continue
        # not where an underflow shows (-inf below -80, _underflow): an overflow spoils
        # the whole row, the row's max (expected near 0) included
        bad = (~np.isfinite(found) & np.isfinite(expected) & (expected > -80)
               & (log_sum > LN_MAX))
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            row = list(index)
            row[dim] = slice(None)
            at_row = list(index)
            at_row[dim] = 0
            return (f"{name}: {found[index]} at {list(index)}, where PyTorch gives "
                    f"{expected[index]:.1f}. That row's largest value is "
                    f"{x[tuple(row)].max():g}, and its sum of e^x is about "
                    f"e^{log_sum[tuple(at_row)]:.1f}: above float32's largest number "
                    f"(3.4e38, about e^{LN_MAX:.1f}), so it overflowed to inf")
    return None


def _underflow(solution, case: dict, outputs: dict, watch) -> str | None:
    """-inf where PyTorch's answer is finite and below -80, and only there: a probability that
    rounded to 0 in float32 before a log (overflow makes the whole row -inf or nan instead)."""
    expected = torch.log_softmax(torch.from_numpy(case["x"]), case["dim"]).numpy()
    for name, found in outputs.items():
        if name.startswith("_") or np.shape(found) != expected.shape:
            continue
        bad = np.isneginf(found) & np.isfinite(expected)
        if bad.any() and (expected[bad] < -80).all():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{name}: -inf at {list(index)}, where PyTorch gives "
                    f"{expected[index]:.1f}; every other element is right. e^"
                    f"{expected[index]:.0f} is below float32's smallest number "
                    f"({_smallest(name)}): a probability that small rounds to 0, and "
                    "log(0) is -inf")
    return None


def _zero_sum(solution, case: dict, outputs: dict, watch) -> str | None:
    """inf or nan where PyTorch's answer is finite, in a row whose sum of e^x does not
    overflow: the default shifted the row by more than its max (the tensor's max, say), every
    e^(x - c) of the row rounded to 0, and x - c - log(0) is inf. Where this happens depends
    on the backend's smallest number: on Wgpu, which flushes subnormals, at a gap of 87.3,
    on Flex and NdArray at 103.3, so the verdict names the backend's own floor."""
    x, dim = case["x"], case["dim"]
    expected = torch.log_softmax(torch.from_numpy(x), dim).numpy()
    log_sum = np.max(x - expected, axis=dim, keepdims=True)
    for name, found in outputs.items():
        if name.startswith("_") or np.shape(found) != expected.shape:
            continue
        bad = ((np.isposinf(found) | np.isnan(found)) & np.isfinite(expected)
               & (log_sum <= LN_MAX))
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{name}: {found[index]} at {list(index)}, where PyTorch gives "
                    f"{expected[index]:.1f}. That is x - c - log(0): after your shift c "
                    "every e^(x - c) of that row rounded to 0, each below float32's "
                    f"smallest number there ({_smallest(name)}), so the sum was 0")
    return None


EXAMPLES = [
    {"x": np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32), "dim": 1},
    {"x": np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32), "dim": 0},
    {"x": np.array([[90.0, 0.0, -30.0]], np.float32), "dim": 1},
    {"x": np.array([[0.0, -110.0, 2.0]], np.float32), "dim": 1},
]


def exercise(max_examples: int = 15) -> BuildExercise:
    """The checker for the reader's ``log_softmax(cls, tensor, dim)``."""
    names = list(backends())
    where = ", ".join(names[:-1]) + " and " + names[-1]
    if "Wgpu" not in names:
        where += " (this machine has no WebGPU adapter, so not on Wgpu)"
    return BuildExercise(
        f"A protocol default: log_softmax on {where}",
        cases=_cases(),
        run=_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5, dtype=True)],
        rules=Rules(forbidden={r"^(Flex|NdArray|Wgpu\w*|FloatTensorOps|ActivationOps|Backend)\."
                               r"(log_softmax|softmax)$": OWN_SOFTMAX},
                    no_numpy=True, helpers=(_yours,)),
        checks=[_overflow, _underflow, _zero_sum],
        hints=[  # a failure opens the first hint of its kind not yet open
            ("error", "When the error names a WgpuTensor: a primitive is whatever its backend "
             "stores, and Wgpu's has no -, no * and no NumPy methods. Write every step as a "
             "cls op (cls.float_sub(a, b) for a - b)."),
            (("value", "shape", "dtype", "rule", "error"),
             "log_softmax(x)_i = x_i - log(sum_j e^(x_j)) along dim. float_sum_dim keeps the "
             "dim, so the subtraction broadcasts."),
            # an overflow and an underflow are both checks whose verdict names the cause;
            # the hints are the fix, which is the same for both
            ("check", "Subtracting any constant c from a row leaves log_softmax unchanged. "
             "Which c leaves no exponent positive, so that e^x cannot overflow, and puts "
             "an e^0 = 1 in the sum, so that the log you take is never log(0)?"),
            ("check", "c = the row's max, cls.float_max_dim(tensor, dim) (it keeps the dim, "
             "so the subtraction broadcasts); then log_softmax = (x - c) - "
             "log(sum_j e^(x_j - c)): the log of the sum, never of a probability."),
        ],
        reference_solution=log_softmax,
        examples=EXAMPLES,
        max_examples=max_examples,
    )
