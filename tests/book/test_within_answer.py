"""The eps exercise's checker: right answers in other words pass, wrong or self-contradictory
ones do not."""

import numpy as np
import pytest

from minidl_book.within_answer import stays_within, within_answer

RIGHT = ["False", "false, it grows", "No: the gap grows", "not within", "no",
         "No, it doesn't stay within 1e-5", "it exceeds 1e-5", "does not stay within",
         "not true", "NO, it goes beyond the tolerance", False, np.False_, 0]
WRONG = ["True", "true, it stays", "yes", "no, it stays", "it stays within",
         "yes, but it exceeds", "it doesn't exceed 1e-5", "not false", "it grows", "",
         True, 1, 2, None, 0.0001]


@pytest.mark.parametrize("said", RIGHT)
def test_right_answers_pass(said):
    assert within_answer(said, False)


@pytest.mark.parametrize("said", WRONG)
def test_wrong_or_contradictory_answers_fail(said):
    assert not within_answer(said, False)


def test_a_true_truth_is_read_the_same_way():
    assert within_answer("it stays within", True)
    assert within_answer("does not exceed it", True)
    assert not within_answer("not within", True)


def test_contradiction_and_silence_read_as_none():
    assert stays_within("no, it stays") is None
    assert stays_within("the gap grows") is None
