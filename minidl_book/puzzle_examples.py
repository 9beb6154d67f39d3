"""What the puzzles appendix shows beside each puzzle: its example drawn through its plain-loop
spec, and a checker demo on a puzzle of its own.

Tensor-Puzzles states each puzzle twice: as a plain Python loop (the spec) and as a drawing of
an input and its output. :func:`example` does both for the appendix. It runs the reader-visible
loop spec on a small input, draws the input and the target as grids, and checks the spec against PyTorch's
answer on that input and on generated ones, so a spec on the page cannot drift from the puzzle
the checker grades.

:data:`DEMO` is a puzzle that is not one of the reader's (zero the negative elements), with
:data:`DEMO_ATTEMPTS`, wrong solutions of each kind; :func:`demo` checks one on a checker of
its own, so the demo opens none of the reader's hints and shows none of their answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings

from minidl import Tensor
from minidl_book.build_check import Verdict
from minidl_book.puzzles import PUZZLES, Puzzle, vector_cases

__all__ = ["DEMO", "DEMO_ATTEMPTS", "EXAMPLES", "SHAPE_ONLY", "demo", "example", "race", "spec_failure",
           "zero_negatives_loop"]

_F = np.float32
#: One small input per puzzle, as the appendix draws it (arrays, and ints for sizes).
EXAMPLES: dict[str, dict[str, Any]] = {
    "ones": {"a": np.array([3, -1, 2], _F)},
    "sum": {"a": np.array([1, 2, 3], _F)},
    "outer": {"a": np.array([1, 2, 3], _F), "b": np.array([1, -1], _F)},
    "diag": {"a": np.array([[1, 2], [3, 4]], _F)},
    "eye": {"a": np.array([7, 7, 7], _F)},
    "triu": {"a": np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], _F)},
    "cumsum": {"a": np.array([1, 2, 3, 4], _F)},
    "diff": {"a": np.array([1, 4, 9, 16], _F)},
    "vstack": {"a": np.array([1, 2, 3], _F), "b": np.array([4, 5, 6], _F)},
    "roll": {"a": np.array([1, 2, 3, 4], _F)},
    "flip": {"a": np.array([1, 2, 3], _F)},
    "heaviside": {"a": np.array([-2, 0, 3], _F), "b": np.array([5, 5, 5], _F)},
    "repeat": {"a": np.array([1, 2], _F), "d": 3},
    "sequence_mask": {"values": np.array([[1, 2, 3], [4, 5, 6]], _F), "length": np.array([1, 3])},
    "bincount": {"a": np.array([0, 2, 2, 3]), "j": 5},
    "scatter_add": {"values": np.array([1, 2, 3, 4], _F), "link": np.array([0, 2, 0, 1]), "j": 3},
    "pad_to": {"a": np.array([1, 2, 3], _F), "j": 5},
    "compress": {"g": np.array([True, False, True, False]), "v": np.array([1, 2, 3, 4], _F)},
    "flatten": {"a": np.array([[1, 2, 3], [4, 5, 6]], _F)},
    "linspace": {"i": np.array([0], _F), "j": np.array([1], _F), "n": 5},
    "bucketize": {"v": np.array([-1, 0.5, 3], _F), "boundaries": np.array([0, 1, 2], _F)},
}


def _plain(value: Any) -> Any:
    return value.tolist() if isinstance(value, np.ndarray) else value


def _torch_answer(puzzle: Puzzle, case: dict) -> np.ndarray:
    args = [torch.from_numpy(case[p]) if isinstance(case[p], np.ndarray) else case[p]
            for p in puzzle.params]
    return puzzle.torch_ref(*args).numpy()


def _agrees(spec_out: Any, expected: np.ndarray) -> bool:
    got = np.asarray(spec_out, dtype=np.float64)
    return got.shape == expected.shape and bool(np.allclose(got, expected, rtol=1e-6, atol=1e-6))


def spec_failure(name: str, spec: Callable[..., Any], max_examples: int = 25) -> dict | None:
    """A generated case (inputs as lists) where ``spec`` disagrees with PyTorch, or ``None``."""
    puzzle = PUZZLES[name]
    failures: list[dict] = []

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(puzzle.cases)
    def agree(case):
        if not _agrees(spec(*(_plain(case[p]) for p in puzzle.params)), _torch_answer(puzzle, case)):
            failures.append({p: _plain(case[p]) for p in puzzle.params})

    agree()
    return failures[0] if failures else None


#: Inputs whose values play no part in the answer (only their length): drawn grey.
SHAPE_ONLY: dict[str, tuple[str, ...]] = {"ones": ("a",), "eye": ("a",)}


def example(name: str, spec: Callable[..., Any]) -> Any:
    """Draw puzzle ``name``'s example (its inputs, then the target ``spec`` computes) as grids
    and return the target.

    Raises ``AssertionError`` when the spec disagrees with PyTorch's answer, on the example or
    on a generated case, so the page's spec is the puzzle the checker grades.
    """
    puzzle, case = PUZZLES[name], EXAMPLES[name]
    out = spec(*(_plain(case[p]) for p in puzzle.params))
    from minidl_book.puzzle_draw import grids, show

    sizes = ", ".join(f"{p} = {case[p]}" for p in puzzle.params if not isinstance(case[p], np.ndarray))
    panels = [(p, case[p]) for p in puzzle.params if isinstance(case[p], np.ndarray)]
    title = name + (f" ({sizes})" if sizes else "")
    show(grids(panels + [("target", np.asarray(out, dtype=np.float64))], title,
               plain=SHAPE_ONLY.get(name, ())))
    # raised, not asserted: the page's spec must agree with PyTorch under python -O too
    if not _agrees(out, _torch_answer(puzzle, case)):
        raise AssertionError(f"{name}_spec disagrees with PyTorch on the example")
    failing = spec_failure(name, spec)
    if failing is not None:
        raise AssertionError(f"{name}_spec disagrees with PyTorch on {failing}")
    return out


# ----- the checker demo: a puzzle of its own ------------------------------------------------------
def _zero_negatives_sol(a: Tensor) -> Tensor:
    return a.mask_fill(a < 0, 0.0)


DEMO = Puzzle(
    "zero_negatives", "zero_negatives(a: [i]) -> [i]", "`a` with every negative element set to 0.",
    (), ("a",), vector_cases(), lambda a: torch.clamp(a, min=0), _zero_negatives_sol,
    (("value", "Which elements change? Those where a < 0."),
     ("value", "mask_fill(mask, 0.0) writes 0 where mask is true."),
     ("shape", "The answer has the input's shape: which op added a dim?")),
)


def zero_negatives_wrong_value(a: Tensor) -> Tensor:
    return a.mask_fill(a > 0, 0.0)  # the wrong side of zero


def zero_negatives_wrong_shape(a: Tensor) -> Tensor:
    return a.mask_fill(a < 0, 0.0).unsqueeze_dim(0)  # [1, i]


def zero_negatives_forbidden(a: Tensor) -> Tensor:
    return a.clamp_min(0.0)  # right values, but clamp_min is not a puzzle op


def zero_negatives_data_out(a: Tensor) -> Tensor:
    return Tensor.from_data([max(x, 0.0) for x in a.tolist()], a.device)  # values out to Python


def zero_negatives_loop(a: Tensor) -> Tensor:
    n = a.shape[0]
    out, i = a, Tensor.arange(0, n, device=a.device)
    for k in range(n):  # right values, base ops only, but a Python loop over elements
        out = out.mask_fill((i == k) & (a < 0), 0.0)
    return out


#: name → (wrong solution, the verdict kind it must get)
DEMO_ATTEMPTS: dict[str, tuple[Callable[[Tensor], Tensor], str]] = {
    "wrong value": (zero_negatives_wrong_value, "value"),
    "wrong shape": (zero_negatives_wrong_shape, "shape"),
    "forbidden op": (zero_negatives_forbidden, "rule"),
    "data out": (zero_negatives_data_out, "rule"),
    "loop": (zero_negatives_loop, "rule"),
}


def demo(attempt: Callable[[Tensor], Tensor]) -> Verdict:
    """Check ``attempt`` at the demo puzzle on a fresh checker (no reader puzzle's state)."""
    print("Allowed: the base ops only.")
    verdict = DEMO.exercise(max_examples=10).check(attempt)
    from minidl_book.puzzles import draw_verdict

    draw_verdict(verdict, DEMO.name)
    return verdict


# ----- composed or a kernel: the appendix's timing -------------------------------------------------
def _best(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``fn`` (seconds): the least disturbed by other load."""
    import time

    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        if isinstance(out, Tensor):
            Tensor.to_numpy(out)  # the values exist (an eager backend has them already)
        best = min(best, time.perf_counter() - start)
    return best


def race_inputs(n: int) -> dict[str, Any]:
    """The race's case of size ``n``: ``x``, n random floats (and ``x_torch``, the same as a
    torch tensor), ``link``, n random places in ``0..n-1``, and ``n`` (seeded)."""
    from minidl import Device

    rng = np.random.default_rng(0)
    floats = rng.standard_normal(n).astype(np.float32)
    device = Device.flex()
    return {"x": Tensor.from_data(floats, device), "x_torch": torch.from_numpy(floats),
            "link": Tensor.from_data(rng.integers(0, n, n), device), "n": n}


def race(sizes: Sequence[int], inputs: Callable[[int], Any],
         contenders: dict[str, Callable[[Any], Any]], repeat: int = 3) -> dict[str, list[float]]:
    """Time each contender on ``inputs(n)`` (its one argument) for each size ``n`` (best of
    ``repeat``), draw the times against the size (log-log) and return
    ``{label: [seconds per size]}``."""
    times: dict[str, list[float]] = {label: [] for label in contenders}
    for n in sizes:
        args = inputs(n)
        for label, fn in contenders.items():
            fn(args)  # warm up: first-call costs are not the op's
            times[label].append(_best(lambda fn=fn, args=args: fn(args), repeat))
    _draw_race(sizes, times)
    return times


def _draw_race(sizes: Sequence[int], times: dict[str, list[float]]) -> None:
    import matplotlib.pyplot as plt

    from minidl_book.puzzle_draw import show

    fig, ax = plt.subplots(figsize=(6.2, 3.4))
    for k, (label, ts) in enumerate(times.items()):
        composed = k % 2 == 0
        ax.plot(sizes, ts, marker="o", linestyle="-" if composed else "--",
                color=("C3", "C0")[k // 2 % 2], label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (elements)")
    ax.set_ylabel("seconds per call (best of 3)")
    ax.set_title("composed from the puzzle ops (solid) vs a kernel (dashed)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    show(fig)
