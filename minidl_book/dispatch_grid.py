"""The dispatch chapter's predict-the-grid exercise: where burn and minidl run ``a @ b``
for each pair of input devices (plain Flex, Autodiff[Flex], plain NdArray), two grids of
nine cells the reader fills, burn's from its ``match`` on kinds and minidl's from route's
rules 1-3, before the page draws them.

minidl's truth is measured live (:func:`minidl_grid`), burn's read from burn-dispatch
v0.22.0-pre.2's ``binary_float_arms!`` (:func:`burn_grid`); the checker names every wrong
cell with the rule that decides it, without giving the cell's answer."""

from __future__ import annotations

import re
from typing import Any

from minidl_book.exercises import Exercise
from minidl_book.verdict import RIGHT, TODO, WRONG

__all__ = ["KINDS", "OUTCOMES", "GridExercise", "burn_grid", "cell_name",
           "grid_exercise", "minidl_grid", "run_matmul"]

KINDS = ("plain Flex", "Autodiff[Flex]", "plain NdArray")
OUTCOMES = ("Flex", "NdArray", "Autodiff[Flex]", "error")

_ERROR_WORDS = re.compile(
    r"err|fail|raise|refuse|panic|wrongdevice|exception|crash|throw")  # "err": an error, short


def _device(kind: str):
    from minidl import Device

    return {"plain Flex": Device.flex(), "Autodiff[Flex]": Device.flex().autodiff(),
            "plain NdArray": Device.ndarray()}[kind]


def run_matmul(lhs: str, rhs: str) -> tuple[str, str]:
    """``a @ b`` with ``a`` on ``lhs``'s device and ``b`` on ``rhs``'s, run now:
    ``(outcome, the backend that ran it or "error")``, outcome one of "plain", "autodiff",
    "error" (the grid's colours). Only the "wrong device" ValueError counts as an error."""
    from minidl import Tensor, debug
    from minidl.dispatch import backend_for

    a = Tensor.ones((2, 2), device=_device(lhs))
    b = Tensor.ones((2, 2), device=_device(rhs))
    try:
        with debug.debug_level(1, capture=True) as log:
            out = a @ b
    except ValueError as err:
        if "wrong device" not in str(err):
            raise
        return "error", "error"
    op, backend = log.lines[-1].split(" → ")
    assert op == "float_matmul" and backend == backend_for(out.device).__name__
    return ("autodiff" if backend.startswith("Autodiff") else "plain"), backend


def minidl_grid() -> tuple[tuple[str, ...], ...]:
    """The nine cells, rows ``a``'s device and columns ``b``'s, in :data:`KINDS` order."""
    return tuple(tuple(run_matmul(lhs, rhs)[1] for rhs in KINDS) for lhs in KINDS)


def burn_grid() -> tuple[tuple[str, ...], ...]:
    """burn's nine cells, read from burn-dispatch v0.22.0-pre.2 ``src/macros.rs:796-840``
    (``binary_float_arms!``, the match ``float_matmul`` expands into): one arm per backend
    for two tensors of its kind, one for two Autodiff kinds, then ``(lhs, rhs) => panic!``.
    So the diagonal runs on the pair's own backend and every other pair is an error."""
    return tuple(tuple(run if lhs == rhs else "error" for rhs, run in
                       zip(KINDS, ("Flex", "Autodiff[Flex]", "NdArray"))) for lhs in KINDS)


_NOTE = re.compile(r"(.+?)\s*(?:\(([^()]*)\)|[,;:]\s*(.*))\s*")  # "Flex (no error)"
_NEGATED = re.compile(  # "no error", "not an error", "doesn't fail": the note denies it
    r"\b(?:no|not|never|without|doesn't|does not|won't|isn't)\s+(?:an?\s+)?[\w\[\]<>]+")
_BACKENDS = re.compile(r"flex|ndarray|autodiff")


def cell_name(cell: Any) -> str | None:
    """One written cell as one of :data:`OUTCOMES`, or None when it names none or hedges:
    case, spaces and the word "plain" do not matter; ``Autodiff<Flex>``, ``Autodiff(Flex)``
    and a bare "autodiff" name Autodiff[Flex]; "ValueError", "err", "fails", "panic",
    "wrong device" name an error. A cell naming an error and a backend ("Autodiff[Flex] or
    error") names none. A note after a name, in parentheses or after ``,``/``;``/``:``
    ("Autodiff[Flex] (x lifted)", "Flex (no error)"), is read as a note unless it names
    another outcome; what it denies ("no error") it does not name."""
    if not isinstance(cell, str):
        return None
    note = _NOTE.fullmatch(cell)
    if note:
        said_text = _NEGATED.sub(" ", (note[2] or note[3] or "").lower())
        head, said = _cell_name(note[1]), _cell_name(said_text)
        if head is not None and said in (None, head):
            return head
    return _cell_name(cell)


def _cell_name(cell: str) -> str | None:
    text = re.sub(r"[\s_\-'\"]|plain|backend", "", cell.lower())
    if _ERROR_WORDS.search(text):
        return None if _BACKENDS.search(text) else "error"  # a hedge names no one outcome
    if re.fullmatch(r"autodiff(?:[\[<(]flex[\]>)])?", text):
        return "Autodiff[Flex]"
    return {"flex": "Flex", "ndarray": "NdArray"}.get(text)


def _rows(prediction: Any) -> list[list[Any]] | None:
    if isinstance(prediction, (list, tuple)) and len(prediction) == 3 and all(
            isinstance(r, (list, tuple)) and len(r) == 3 for r in prediction):
        return [list(r) for r in prediction]
    return None


def _pair(prediction: Any) -> tuple[list[list[Any]], list[list[Any]]] | None:
    """``(burn's rows, minidl's rows)`` when the answer is two 3 x 3 grids, else None."""
    if isinstance(prediction, (list, tuple)) and len(prediction) == 2:
        burn, minidl = map(_rows, prediction)
        if burn is not None and minidl is not None:
            return burn, minidl
    return None


def _rule(lhs: str, rhs: str, truth: str, who: str = "minidl") -> str:
    """The rule that decides a cell, as a question (never the cell's answer)."""
    if who == "burn":
        return "burn's match: is there an arm for this pair of kinds?"
    if truth == "error":
        return "rule 2: is b's device == a's when == ignores the autodiff flag?"
    if lhs != rhs:
        return "rules 2 and 3: == ignores autodiff; then, is any input on an autodiff device?"
    return "rules 1-3 with both inputs on one device: which backend owns it?"


def compare_grid(prediction: Any, truth: Any) -> bool:
    """Both grids, ``(burn, minidl)``, cell by cell against ``truth`` (the same pair)."""
    grids = _pair(prediction)
    return grids is not None and all(
        cell_name(rows[i][j]) == cells[i][j] for rows, cells in zip(grids, truth)
        for i in range(3) for j in range(3))


class GridExercise(Exercise):
    """An :class:`Exercise` whose answer is two 3 x 3 grids, ``(burn, minidl)``: a right
    answer is told burn's grid matches the source (it is read from burn-dispatch, not run)
    and minidl's the run; a wrong answer names each wrong cell (burn or minidl, a on ...,
    b on ...) and the rule that decides it; a grid with ``...`` left in reminds the reader to fill it."""

    def check(self, prediction: Any = ...) -> bool:
        grids = _pair(prediction)
        if prediction is Ellipsis or (grids and any(
                c is Ellipsis for rows in grids for r in rows for c in r)):
            print(f"{TODO} Fill every cell first: replace each ... and run the cell again.")
            return False
        if grids is None:
            print(f"{WRONG} Not quite: write two grids, (burn, minidl), each three rows "
                  "of three cells, [[..., ..., ...], [...], [...]].")
            return False
        if self.accepts(prediction):  # burn's half is read, not run: say so
            print(f"{RIGHT} Right: burn's grid matches its source (pre.2's match), "
                  "minidl's what the experiment measured.")
            return True
        ok = super().check(prediction)
        if not ok:
            for who, rows, truth in zip(("burn", "minidl"), grids, self.measure()):
                for i, lhs in enumerate(KINDS):
                    for j, rhs in enumerate(KINDS):
                        said, at = cell_name(rows[i][j]), f"  {who}, a on {lhs}, b on {rhs}"
                        if said is None:
                            print(f"{at}: {rows[i][j]!r} names none of "
                                  + ", ".join(OUTCOMES))
                        elif said != truth[i][j]:
                            print(f"{at}: {_rule(lhs, rhs, truth[i][j], who)}")
        return ok


def grid_exercise() -> GridExercise:
    return GridExercise(
        "a @ b for a and b on plain Flex, Autodiff[Flex], plain NdArray: in burn pre.2 and "
        "in minidl, which backend runs each of the nine pairs, or does it fail?",
        truth=lambda: (burn_grid(), minidl_grid()),
        compare=compare_grid,
        hint="burn pre.2: walk each pair through the match's arms. minidl: walk it through the "
        "picture above: rule 1 (a sets the expectation), rule 2 (== ignores the autodiff "
        "flag), rule 3 (an autodiff input sets the backend).",
    )
