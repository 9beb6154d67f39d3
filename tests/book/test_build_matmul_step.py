"""The autodiff chapter's Matmul build-it: the reference passes; each planted wrong step (keeps
both sides whatever is tracked, transposes on the wrong side, no sum over a broadcast batch
dim) gets the verdict a reader should see."""

from __future__ import annotations

import pytest

from minidl.autodiff import Step
from minidl.autodiff.ops.arithmetic import Matmul as LibraryMatmul
from minidl.autodiff.step import sum_to_shape
from minidl_book import build_matmul_step


def test_reference_and_library_step_pass():
    assert build_matmul_step.exercise(max_examples=10).find_failure(build_matmul_step.Matmul) is None
    assert build_matmul_step.exercise(max_examples=10).find_failure(LibraryMatmul) is None


@pytest.mark.parametrize("planted", sorted(build_matmul_step.PLANTED))
def test_planted_wrong_step_gets_its_verdict(planted):
    wrong, kind = build_matmul_step.PLANTED[planted]
    verdict = build_matmul_step.exercise(max_examples=10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()


def test_keeping_both_names_the_bytes_held_for_nothing():
    wrong = build_matmul_step.PLANTED["keeps both sides always"][0]
    verdict = build_matmul_step.exercise(max_examples=4).find_failure(wrong)
    assert "backward needs ['rhs']" in verdict.text and "bytes" in verdict.text


def test_a_failing_case_prints_shapes_not_values():
    """A reader's failing case is named by its shapes and what is tracked: a [2, 3, 4] and a
    [2, 3, 5] array printed whole were walls of numbers that did not help find the bug."""
    wrong = build_matmul_step.PLANTED["forgets the batch-dim sum"][0]
    text = build_matmul_step.exercise(max_examples=10).find_failure(wrong).render()
    assert "lhs = f32[2, 3, 4], tracked" in text and "rhs = f32[4, 5], tracked" in text
    assert "[[" not in text.split("Failing case:")[1]


def test_a_missing_batch_sum_opens_the_batch_hint_first(capsys):
    """Right products but the batch dims left in: the first hint is the batch sum's, not
    the transpose hint (which asks which product has lhs's shape: the products had it)."""
    ex = build_matmul_step.exercise(max_examples=10)
    wrong = build_matmul_step.PLANTED["forgets the batch-dim sum"][0]
    verdict = ex.check(wrong)
    assert verdict.kind == "shape" and len(verdict.hints) == 1
    assert "sum_to_shape" in verdict.hints[0] and "transposed" not in verdict.hints[0]
    assert "Hint 1 of 1" in capsys.readouterr().out
    assert ex.hint_ladder[1][0] == frozenset({"value", "shape"})  # the ladder is restored


def test_a_wrong_product_still_opens_the_transpose_hint():
    ex = build_matmul_step.exercise(max_examples=10)
    verdict = ex.check(build_matmul_step.PLANTED["transposes swapped"][0])
    assert verdict.kind == "value" and "transposed" in verdict.hints[0]


NUMPY_STEP = """
import numpy as np
from minidl.autodiff import Step


class NumpyMatmul(Step):
    def forward(self, B, lhs, rhs):
        return np.matmul(lhs, rhs)

    def keeps(self, tracked):
        return ("lhs", "rhs")

    def backward(self, B, grad, state):
        return None, None
"""


def test_numpy_in_a_step_gets_a_hint(capsys):
    """A step computing with NumPy breaks a rule: its verdict names the way out (B's ops)."""
    cell = {}
    exec(compile(NUMPY_STEP, "<cell>", "exec"), cell)  # the reader's code, as in a cell
    verdict = build_matmul_step.exercise(max_examples=4).check(cell["NumpyMatmul"])
    assert verdict.kind == "rule" and len(verdict.hints) == 1
    assert "B.float_matmul" in verdict.hints[0]


OPERATOR_STEP = """
from minidl.autodiff import Step
from minidl.autodiff.step import sum_to_shape


class Matmul(Step):
    def forward(self, B, lhs, rhs):
        return B.float_matmul(lhs, rhs)

    def keeps(self, tracked):
        return (("rhs",) if tracked[0] else ()) + (("lhs",) if tracked[1] else ())

    def backward(self, B, grad, state):
        d_lhs = d_rhs = None
        if self.tracked[0]:
            d_lhs = sum_to_shape(B, grad @ B.float_transpose(state["rhs"]), self.shapes[0])
        if self.tracked[1]:
            d_rhs = sum_to_shape(B, B.float_transpose(state["lhs"]) @ grad, self.shapes[1])
        return d_lhs, d_rhs
"""


def test_numpy_operator_in_backward_is_refused_and_never_plugged_in(capsys):
    """``grad @ B.float_transpose(rhs)``: NumPy's ``@`` on the bare arrays gives the right
    values and the forward's B.float_matmul met "must reach": it passed, was plugged in, and
    the chapter's later backtrace of Flex.float_matmul in backward found no hit. Refused as
    a rule, with the B.float_matmul hint; plug_in keeps the book's step."""
    from minidl.autodiff.ops import arithmetic
    from minidl_book.tour_path import plug_in

    cell = {}
    exec(compile(OPERATOR_STEP, "<cell>", "exec"), cell)  # the reader's code, as in a cell
    ex = build_matmul_step.exercise(max_examples=10)
    verdict = ex.check(cell["Matmul"])
    assert verdict.kind == "rule" and "NumPy's matmul" in verdict.text
    assert "B.float_matmul" in verdict.hints[0]
    try:
        assert plug_in(cell["Matmul"], ex) is build_matmul_step.Matmul
        assert "until yours passes the checker" in capsys.readouterr().out
    finally:
        arithmetic.Matmul = LibraryMatmul


class GuardedMatmul(Step):
    """A right answer written differently: backward asks ``in state`` what was kept
    (refused with a KeyError before ``State.__contains__``)."""

    def forward(self, B, lhs, rhs):
        return B.float_matmul(lhs, rhs)

    def keeps(self, tracked):
        return [name for name, t in (("rhs", tracked[0]), ("lhs", tracked[1])) if t]

    def backward(self, B, grad, state):
        d_lhs = d_rhs = None
        if "rhs" in state:
            d_lhs = B.float_matmul(grad, B.float_transpose(state["rhs"]))
            d_lhs = sum_to_shape(B, d_lhs, self.shapes[0])
        if "lhs" in state:
            d_rhs = B.float_matmul(B.float_transpose(state["lhs"]), grad)
            d_rhs = sum_to_shape(B, d_rhs, self.shapes[1])
        return d_lhs, d_rhs


def test_a_backward_guarded_with_in_state_is_accepted():
    assert build_matmul_step.exercise(max_examples=10).find_failure(GuardedMatmul) is None
