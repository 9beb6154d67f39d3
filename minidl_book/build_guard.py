"""Build exercise of the capture chapter: the guard a replay runs before its program.

A captured program is fixed to what the capture saw at each argument position: a tensor's
shape, dtype and device, a scalar input, a static value. The reader writes
``guard(specs, args)``: return ``None`` when ``args`` fit ``specs``, else raise
``ReplayMismatchError`` with a message that names the argument's position and what differs
(both values). The specs here are plain dicts, not minidl's ``_Spec`` objects, so the
library's own check cannot be pasted in. The checker generates specs and argument lists
(fitting ones, ones where a declared scalar has another value, which must go through, and
ones with one argument changed: its shape, dtype, device, kind, or a static value, or one
argument too many or too few), and compares which calls are refused, at
which position, with the generator's own record of what it changed; a guard must look at
shapes, dtypes and devices only, never at a tensor's values.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.capture import ReplayMismatchError
from minidl_book.build_check import BuildExercise, Reference, Rules

__all__ = ["PLANTED", "exercise", "guard"]

DEVICES = {"flex+ad": Device.flex().autodiff(), "flex": Device.flex()}


def guard(specs: list[dict], args: tuple) -> None:
    """Refuse ``args`` that do not fit ``specs``, naming the position and what differs."""
    if len(args) != len(specs):
        raise ReplayMismatchError(f"{len(args)} arguments, the capture had {len(specs)}")
    for i, (spec, arg) in enumerate(zip(specs, args)):
        where = f"argument {i}"
        if spec["kind"] == "tensor":
            if not isinstance(arg, Tensor):
                raise ReplayMismatchError(f"{where} must be a Tensor, found {type(arg).__name__}")
            # Device equality ignores autodiff: Device.flex() == Device.flex().autodiff()
            for field, found, same in (
                    ("shape", tuple(arg.shape), lambda a, b: a == b),
                    ("dtype", arg.dtype, lambda a, b: a == b),
                    ("device", arg.device, lambda a, b: a == b and a.is_autodiff() == b.is_autodiff())):
                if not same(found, spec[field]):
                    raise ReplayMismatchError(
                        f"{where} has {field} {found}, the capture had {spec[field]}")
        elif spec["kind"] == "scalar":
            if not isinstance(arg, int | float) or isinstance(arg, bool):
                raise ReplayMismatchError(f"{where} must be a number, found {arg!r}")
        elif arg != spec["value"]:
            raise ReplayMismatchError(f"{where} is {arg!r}, the capture had {spec['value']!r}")


# ----- planted wrong solutions ---------------------------------------------------------------
def shapes_only(specs: list[dict], args: tuple) -> None:
    """Checks shapes and nothing else: another dtype or device goes through."""
    for i, (spec, arg) in enumerate(zip(specs, args)):
        if spec["kind"] == "tensor" and tuple(arg.shape) != spec["shape"]:
            raise ReplayMismatchError(f"argument {i} has shape {tuple(arg.shape)}, "
                                      f"the capture had {spec['shape']}")


def scalar_frozen(specs: list[dict], args: tuple) -> None:
    """Refuses any other value of a declared scalar, which a replay must accept (another
    learning rate is what a scalar input is for)."""
    guard(specs, args)
    for i, (spec, arg) in enumerate(zip(specs, args)):
        if spec["kind"] == "scalar" and arg != spec["value"]:
            raise ReplayMismatchError(f"argument {i} is {arg!r}, the capture had {spec['value']!r}")


def vague(specs: list[dict], args: tuple) -> None:
    """Refuses the right calls, but its message says neither where nor what."""
    try:
        guard(specs, args)
    except ReplayMismatchError:
        raise ReplayMismatchError("replay: the arguments do not match") from None


def wrong_error(specs: list[dict], args: tuple) -> None:
    """Raises a TypeError, which a caller catching replay mismatches does not catch."""
    try:
        guard(specs, args)
    except ReplayMismatchError as err:
        raise TypeError(str(err)) from None


def reads_values(specs: list[dict], args: tuple) -> None:
    """Right verdicts, but it pulls each tensor's values to the host to learn its shape."""
    for arg in args:
        if isinstance(arg, Tensor):
            np.asarray(arg.to_numpy())
    guard(specs, args)


#: name → (wrong solution, the verdict kind it must get)
PLANTED = {
    "shapes only": (shapes_only, "value"),
    "a scalar frozen at its capture value": (scalar_frozen, "value"),
    "vague message": (vague, "check"),
    "another exception": (wrong_error, "error"),
    "reads the values": (reads_values, "rule"),
}


# ----- cases: specs, arguments, and what the generator changed -----------------------------
def _spec_strategy() -> st.SearchStrategy:
    tensor = st.fixed_dictionaries({
        "kind": st.just("tensor"),
        "shape": st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
        "dtype": st.sampled_from(["float32", "int64"]),
        "device": st.sampled_from(sorted(DEVICES)),
    })
    scalar = st.fixed_dictionaries({"kind": st.just("scalar"), "value": st.floats(0.001, 1.0)})
    static = st.fixed_dictionaries({"kind": st.just("static"),
                                    "value": st.sampled_from([True, False, "sum", "mean", 3])})
    return st.one_of(tensor, tensor, scalar, static)


CHANGES = ("none", "scalar", "shape", "dtype", "device", "kind", "static", "extra", "missing")


def _cases() -> st.SearchStrategy:
    return st.fixed_dictionaries({
        "specs": st.lists(_spec_strategy(), min_size=1, max_size=4),
        "change": st.sampled_from(CHANGES),
        "at": st.integers(0, 3),
    })


def _value(spec: dict) -> Any:
    if spec["kind"] == "tensor":
        return ("tensor", spec["shape"], spec["dtype"], spec["device"])
    return spec["value"]


def arguments(case: dict) -> tuple[list, int]:
    """The case's argument list (tensors as descriptions) and the position it changed
    (-1: none, or a count mismatch)."""
    specs, change = case["specs"], case["change"]
    values = [_value(s) for s in specs]
    if change == "extra":
        return values + [0.5], -1
    if change == "missing":
        return values[:-1], -1
    if change == "none":
        return values, -1
    wanted = {"scalar": "scalar", "shape": "tensor", "dtype": "tensor", "device": "tensor", "kind": None,
              "static": "static"}[change]
    fits = [i for i, s in enumerate(specs) if wanted is None or s["kind"] == wanted]
    if not fits:
        return values, -1
    i = fits[case["at"] % len(fits)]
    spec = specs[i]
    if change == "shape":
        values[i] = ("tensor", spec["shape"][:-1] + (spec["shape"][-1] + 1,), spec["dtype"],
                     spec["device"])
    elif change == "dtype":
        other = "int64" if spec["dtype"] == "float32" else "float32"
        values[i] = ("tensor", spec["shape"], other, spec["device"])
    elif change == "device":
        other = "flex" if spec["device"] == "flex+ad" else "flex+ad"
        values[i] = ("tensor", spec["shape"], spec["dtype"], other)
    elif change == "scalar":  # a new value of a declared scalar: the replay must accept it
        values[i] = round(spec["value"] / 2 + 0.25, 6)
    elif change == "kind":
        values[i] = "a string" if spec["kind"] != "static" else None
    else:
        values[i] = "another" if spec["value"] != "another" else "other"
    return values, i


def _make(value: Any) -> Any:
    if isinstance(value, tuple) and value and value[0] == "tensor":
        _, shape, dtype, device = value
        return Tensor.from_numpy(np.zeros(shape, dtype), DEVICES[device])
    return value


def _reader_specs(specs: list[dict]) -> list[dict]:
    out = []
    for s in specs:
        if s["kind"] == "tensor":
            dtype = Tensor.from_numpy(np.zeros(1, s["dtype"]), Device.flex()).dtype
            out.append({"kind": "tensor", "shape": s["shape"], "dtype": dtype,
                        "device": DEVICES[s["device"]]})
        else:
            out.append(dict(s))
    return out


def guard_run(solution: Any, case: dict) -> dict:
    """Call ``solution(specs, args)``; outputs whether it refused with a
    ReplayMismatchError (1) or let the call through (0), the position its message names
    (-1: none), and the message (``_message``, for the check)."""
    values, _ = arguments(case)
    args = tuple(_make(v) for v in values)
    try:
        solution(_reader_specs(case["specs"]), args)
    except ReplayMismatchError as err:
        found = re.search(r"argument (\d+)", str(err))
        return {"refused": np.int64(1), "argument": np.int64(int(found.group(1)) if found else -1),
                "_message": str(err)}
    return {"refused": np.int64(0), "argument": np.int64(-1), "_message": ""}


def _expected(case: dict) -> dict:
    values, at = arguments(case)
    if case["change"] in ("extra", "missing"):
        return {"refused": np.int64(1)}
    refused = case["change"] != "scalar" and values != [_value(s) for s in case["specs"]]
    return {"refused": np.int64(int(refused)), "argument": np.int64(at if refused else -1)}


def _names_what_differs(solution, case, outputs, trace) -> str | None:
    """A refusal of a changed argument names its position, and shows what it found."""
    values, at = arguments(case)
    if at < 0 or not outputs["refused"]:
        return None
    message, change = outputs["_message"], case["change"]
    if f"argument {at}" not in message:
        return (f"Your guard refused the call, but its message {message!r} does not say "
                f"'argument {at}': a reader of the error cannot tell which argument differs")
    if change == "shape":
        shape = values[at][1]
        if str(shape) not in message and str(list(shape)) not in message:
            return (f"Your message {message!r} does not show the shape it found ({shape}): "
                    "say what the replay got, beside what the capture had")
    return None


def exercise(max_examples: int = 20) -> BuildExercise:
    """The checker for the reader's ``guard(specs, args)``."""
    return BuildExercise(
        "the guard a replay runs before its program",
        cases=_cases(),
        run=guard_run,
        references=[Reference("the case generator's record of what it changed", _expected)],
        rules=Rules(no_data=True, no_numpy=True),
        checks=[_names_what_differs],
        hints=[
            "Compare the number of arguments first; then walk specs and args together "
            "with their position.",
            "A tensor spec has shape, dtype and device: compare tuple(arg.shape), "
            "arg.dtype and arg.device with them (no values needed).",
            "Two devices compare equal whether or not one has autodiff: compare "
            "is_autodiff() too. A scalar must be an int or float but not a bool (True is an int in Python); "
            "a static value must be equal.",
        ],
        reference_solution=guard,
        examples=[{"specs": [{"kind": "tensor", "shape": (8, 12), "dtype": "float32",
                              "device": "flex+ad"}, {"kind": "scalar", "value": 0.1}],
                   "change": change, "at": 0} for change in ("none", "scalar", "shape")],
        max_examples=max_examples,
        order=("specs", "change", "at"),
    )
