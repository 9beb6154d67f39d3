"""The cases the build-it checkers draw: float32 arrays of finite, normal values.

One strategy for every checker, so their cases differ only in shapes and bounds, never in how an
array is made. (Hypothesis is the checkers' random-case engine; burn's own tests use fixed cases.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import strategies as st


def float32_arrays(bound: float) -> Callable[..., st.SearchStrategy[np.ndarray]]:
    """A maker of float32 array strategies with values in ``[-bound, bound]``.

    The maker takes a shape as arguments or as one sequence: ``arrays(2, 3)`` or
    ``arrays([2, 3])``. No NaN, infinity or subnormal is drawn: the checkers compare values, and
    a subnormal flushed to zero by one kernel and kept by another is not the reader's error.
    """
    value = st.floats(-bound, bound, width=32, allow_nan=False, allow_subnormal=False)

    def arrays(*shape: int | Sequence[int]) -> st.SearchStrategy[np.ndarray]:
        dims = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        size = int(np.prod(dims))
        return st.lists(value, min_size=size, max_size=size).map(
            lambda v: np.array(v, dtype=np.float32).reshape(dims))

    return arrays


def linear_cases(scenarios: Sequence[str]) -> st.SearchStrategy[dict]:
    """Cases of a linear layer run under one of ``scenarios``: ``{"scenario", "_x": [n, d_in],
    "_w": [d_in, d_out], "_b": [d_out], "_g": [n, d_out]}`` (``_g`` the output's gradient),
    dims 1-3, values in [-3, 3] (the forwarder and route checkers')."""
    arrays = float32_arrays(3)

    def case(scenario, n, d_in, d_out):
        return st.fixed_dictionaries({
            "scenario": st.just(scenario), "_x": arrays(n, d_in), "_w": arrays(d_in, d_out),
            "_b": arrays(d_out), "_g": arrays(n, d_out)})

    dims = st.tuples(st.sampled_from(list(scenarios)), st.integers(1, 3), st.integers(1, 3),
                     st.integers(1, 3))
    return dims.flatmap(lambda d: case(*d))


def linear_example(scenario: str) -> dict:
    """One fixed case of :func:`linear_cases` for ``scenario`` (x [2, 3], w [3, 2]), drawn from
    a generator seeded by the scenario name's length, so a page shows the same case every run."""
    rng = np.random.default_rng(len(scenario))
    draw = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    return {"scenario": scenario, "_x": draw(2, 3), "_w": draw(3, 2), "_b": draw(2),
            "_g": draw(2, 2)}


#: The layout ops :func:`view_steps` chains (each returns a view on Flex).
VIEW_OPS = ("permute", "slice", "flip", "expand")


@st.composite
def view_steps(draw, shape: Sequence[int], ops: Sequence[str] = VIEW_OPS, *,
               count: tuple[int, int] = (1, 3), slice_steps: int = 1) -> tuple[list, tuple]:
    """A chain of 1-3 layout ops drawn from ``ops`` on a tensor of ``shape``: ``(steps,
    final shape)``, each step an ``(op, argument)`` for the Tensor method of that name (the
    view checkers' cases). An op listed twice is drawn twice as often; slices take steps up to
    ``slice_steps`` (``(start, end, step)`` when the step is above 1); an ``expand`` with no
    dim of size 1 to stretch is skipped."""
    steps, current = [], list(shape)
    for _ in range(draw(st.integers(*count))):
        op = draw(st.sampled_from(list(ops)))
        rank = len(current)
        if op == "permute":
            arg = list(draw(st.permutations(range(rank))))
            current = [current[a] for a in arg]
        elif op == "flip":
            arg = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
        elif op == "slice":
            arg = []
            for n in current:
                start = draw(st.integers(0, n - 1))
                end = draw(st.integers(start + 1, n))
                step = draw(st.integers(1, slice_steps)) if slice_steps > 1 else 1
                arg.append((start, end, step) if step > 1 else (start, end))
            current = [len(range(*a)) for a in arg]
        else:
            ones = [d for d, n in enumerate(current) if n == 1]
            if not ones:
                continue
            arg = [draw(st.integers(2, 3)) if d in ones else n for d, n in enumerate(current)]
            current = arg
        steps.append((op, arg))
    return steps, tuple(current)
