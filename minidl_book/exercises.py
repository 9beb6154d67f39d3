"""Think-about-it exercises: predict first, then check against a live run.

The burn book ends its sections with questions the reader answers before reading on ("a
``Linear(256, 64)`` on a fresh device: what is the largest weight it can draw?"). In this
book such a question is executable. An :class:`Exercise` holds the question, a *callable*
that runs the experiment (never a stored answer: if the library changes, the answer
changes with it), a way to compare, and a hint. The reader writes a prediction in a cell;
:meth:`Exercise.check` runs the experiment live and says right or wrong, with the hint
when wrong, never the answer. The solution stays hidden in the built book until opened.

The pattern a chapter copies (MyST Markdown notebook; ``glue`` puts live numbers into the
solution's prose)::

    ```{exercise} Kaiming bound of Linear(256, 64)
    :label: ex-mod-kaiming

    `Linear(256, 64)` draws its weight from U(-a, a). What is a?
    ```

    ```{code-cell} ipython3
    :tags: [hide-input]

    ex_kaiming = Exercise(
        "Kaiming bound a of Linear(256, 64)",
        truth=lambda: kaiming_bound(fan_in=256, gain=1 / np.sqrt(3)),  # the experiment
        compare="close", rtol=1e-3,
        hint="The default gain is 1/sqrt(3); the bound is sqrt(3)*gain/sqrt(fan_in).",
    )
    ex_kaiming.glue("mod_kaiming_a")  # the live answer, for the solution below
    ```

    ```{code-cell} ipython3
    prediction = ...  # ← replace ... with your prediction, then run the cell
    ex_kaiming.check(prediction);  # the ; keeps the returned True/False off the page
    ```

    ```{solution} ex-mod-kaiming
    :class: dropdown

    a = {glue:text}`mod_kaiming_a:.4f`, that is 1/sqrt(256) ...
    ```

``{solution}`` with ``:class: dropdown`` (sphinx-exercise + sphinx-togglebutton) renders
hidden until the reader clicks it. ``hide-input`` folds the cell that defines the exercise,
so its experiment does not give the answer away at a glance. When the solution is code rather than prose, put
``ex.solution()`` in a cell tagged ``hide-output``: the site shows the call and hides what
it prints until opened. A prediction of ``...`` (the placeholder a chapter ships with) only
prints "write your prediction first", so the book builds and the tests pass without one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Exercise"]

RIGHT, WRONG, TODO = "✓", "✗", "✎"

Compare = Callable[[Any, Any], bool]


def _plain(x: Any) -> Any:
    """Tuples for sequences and shapes, Python scalars for NumPy scalars, arrays as is."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, list | tuple) or type(x).__name__ == "Size":  # torch.Size is a tuple
        return tuple(_plain(v) for v in x)
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # a torch tensor
        return x.detach().cpu().numpy()
    return x


def _as_array(x: Any) -> np.ndarray:
    x = _plain(x)
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        x = x.to_numpy()
    return np.asarray(x)


def exact(prediction: Any, truth: Any) -> bool:
    """Equal, with lists and tuples alike, strings compared after stripping spaces."""
    p, t = _plain(prediction), _plain(truth)
    if isinstance(p, str) and isinstance(t, str):
        return p.strip() == t.strip()
    if isinstance(p, np.ndarray) or isinstance(t, np.ndarray):
        pa, ta = _as_array(p), _as_array(t)
        return pa.shape == ta.shape and bool(np.array_equal(pa, ta))
    return bool(p == t)


def close(rtol: float = 1e-2, atol: float = 0.0) -> Compare:
    """A comparison of numbers (or arrays of one shape) within ``rtol``/``atol``."""

    def compare(prediction: Any, truth: Any) -> bool:
        try:
            p = _as_array(prediction).astype(np.float64)
            t = _as_array(truth).astype(np.float64)
        except (TypeError, ValueError):
            return False
        return p.shape == t.shape and bool(np.allclose(p, t, rtol=rtol, atol=atol))

    compare.__name__ = f"close(rtol={rtol:g}, atol={atol:g})"
    return compare


class Exercise:
    """A think-about-it question whose answer is measured live when the reader checks.

    Args:
        question: the question, shown when the exercise is displayed.
        truth: a callable with no arguments that runs the experiment and returns the
            answer. It runs at every :meth:`check`, so the answer cannot go stale.
        compare: ``"exact"`` (default), ``"close"`` (numbers or arrays within
            ``rtol``/``atol``) or a callable ``(prediction, truth) -> bool``.
        rtol, atol: tolerances for ``compare="close"``.
        hint: printed when the prediction is wrong. It must not give the answer away.
        explanation: printed by :meth:`solution` after the measured answer.
    """

    def __init__(
        self,
        question: str,
        truth: Callable[[], Any],
        *,
        compare: str | Compare = "exact",
        rtol: float = 1e-2,
        atol: float = 0.0,
        hint: str = "",
        explanation: str = "",
    ) -> None:
        if not callable(truth):
            raise TypeError(
                "Exercise truth must be a callable that runs the experiment "
                f"(e.g. lambda: ...), got {type(truth).__name__}"
            )
        if compare == "exact":
            self._compare: Compare = exact
        elif compare == "close":
            self._compare = close(rtol, atol)
        elif callable(compare):
            self._compare = compare
        else:
            raise ValueError(f"compare must be 'exact', 'close' or a callable, got {compare!r}")
        self.question = question
        self.truth = truth
        self.hint = hint
        self.explanation = explanation

    def measure(self) -> Any:
        """Run the experiment now and return its answer."""
        return self.truth()

    def check(self, prediction: Any = ...) -> bool:
        """Compare ``prediction`` with a live run; print ✓ or ✗ (+ hint); return whether right.

        ``...`` (Ellipsis) means "no prediction yet": it prints a reminder and returns
        ``False`` without running anything, so a chapter builds with the placeholder.
        """
        if prediction is Ellipsis:
            print(
                f"{TODO} Write your prediction first: replace ... with it and run the cell again."
            )
            return False
        truth = self.measure()
        try:
            ok = bool(self._compare(prediction, truth))
        except Exception:  # a prediction of the wrong kind is just wrong
            ok = False
        if ok:
            print(f"{RIGHT} Right: {prediction!r} matches what the experiment measured.")
        else:
            print(f"{WRONG} Not quite: {prediction!r} is not what the experiment gives.")
            if self.hint:
                print(f"  Hint: {self.hint}")
        return ok

    def assert_solution(self, stated: Any) -> None:
        """Fail the build when a solution's stated answer is not what the experiment gives.

        A chapter writes the answer its ``{solution}`` states (``ex.assert_solution(4)``) in a
        ``remove-input`` cell after the solution, so a solution that says 4 while the live
        run gives 5 stops the build. The comparison is the one :meth:`check` uses.
        """
        truth = self.measure()
        if not bool(self._compare(stated, truth)):
            raise AssertionError(
                f"{self.question!r}: the solution states {stated!r}, the experiment gives {truth!r}"
            )

    def solution(self) -> Any:
        """Run the experiment, print its answer and the explanation, return the answer."""
        truth = self.measure()
        print(f"Measured just now: {truth!r}")
        if self.explanation:
            print(self.explanation)
        return truth

    def glue(self, name: str) -> None:
        """Run the experiment and ``glue`` the answer under ``name`` for the chapter's prose.

        Use ``{glue:text}`name:.4f``` in a ``{solution}`` block. Nothing is displayed and
        nothing is returned, so the answer does not show up next to the question.
        """
        from myst_nb import glue  # only chapters need myst-nb

        glue(name, self.measure(), display=False)

    def _repr_markdown_(self) -> str:
        return f"**Think about it.** {self.question}"

    def __repr__(self) -> str:
        return f"Exercise({self.question!r})"
