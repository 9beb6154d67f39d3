"""The capture chapter's dtype exercise reads which dtype goes with which noun: the right
pairing (loss float64, weight float32) in either order of mention, never the reversed one."""

from __future__ import annotations

import numpy as np
import pytest

from minidl_book.capture_answers import dtype_pair

RIGHT = ("float64", "float32")


@pytest.mark.parametrize("answer", [
    ("float64", "float32"), "float64, float32", "f64 and f32", (np.float64, np.float32),
    (np.dtype("f8"), np.dtype("f4")), {"weight": np.float32, "loss": np.float64},
    "loss float64, weight float32", "weight: float32, loss: float64",
    "float32 weight, float64 loss", "float32 weights and float64 loss",
    "float64 loss, float32 weight", "weight float32 loss float64",
    "float32 weight float64 loss", "the weight stays float32, the loss is float64",
    "float32 for the weight, float64 for the loss", "float64 loss, float32",
    "weight: np.float32, loss: np.float64",
])
def test_the_right_pairing_is_read_in_either_order(answer):
    assert dtype_pair(answer) == RIGHT


@pytest.mark.parametrize("answer", [
    "float64 weight, float32 loss", "float64 weights and float32 loss",
    "float64 weight float32 loss", "weight float64 loss float32",
    "loss float32, weight float64", "float32 loss, float64 weight",
    "the weight becomes float64, the loss stays float32", "float64 weight, float32",
    "float64 for the weight, float32 for the loss", ("float32", "float64"),
    {"loss": "float32", "weight": "float64"},
])
def test_the_reversed_pairing_is_refused(answer):
    assert dtype_pair(answer) == ("float32", "float64")


@pytest.mark.parametrize("answer", ["float64", "float64, float32, float64",
                                    {"loss": "float64"}, "the loss"])
def test_not_two_dtypes_is_no_answer(answer):
    assert dtype_pair(answer) is None


# ----- word answers: frozen, follows, refused, checked ------------------------------------
from minidl_book.capture_answers import said, same_word  # noqa: E402


@pytest.mark.parametrize(("answer", "truth"), [
    ("the weights don't move", "frozen"),  # a reader's right answer, once "Not quite"
    ("the weights don’t move", "frozen"), ("they do not change", "frozen"),
    ("nothing moves: no error", "frozen"), ("the rate doesn't change", "frozen"),
    ("refused — it can't be frozen or checked", "refused"),  # the other one
    ("refused: it cannot be frozen or checked", "refused"),
    ("it is neither frozen nor checked: refused", "refused"),
    ("Frozen, in silence", "frozen"), ("it does not follow: frozen", "frozen"),
    ("nothing raises; the weights stay frozen", "frozen"),
    ("refused: the rate would be frozen", "refused"), ("refused rather than frozen", "refused"),
    ("it would be checked but capture refuses", "refused"), ("capture fails", "refused"),
    ("frozen (the program writes old buffers, which no longer follow)", "frozen"),
    ("they no longer follow: frozen", "frozen"),
])
def test_right_word_answers_are_read(answer, truth):
    assert same_word(answer, truth), said(answer)


@pytest.mark.parametrize(("answer", "truth"), [
    ("the weights move on", "frozen"), ("they don't freeze: they move", "frozen"),
    ("they keep training", "frozen"), ("not frozen", "frozen"),
    ("it follows, not frozen", "frozen"), ("they follow: nothing stays", "frozen"),
    ("frozen or refused", "refused"), ("checked, no error", "refused"),
    ("frozen rather than refused", "refused"), ("refused but frozen", "refused"),
    ("it can't be refused: frozen", "refused"), ("not refused or frozen", "refused"),
    ("frozen: capture would refuse it", "refused"), ("the weights don't move", "follows"),
    ("no longer frozen: they follow", "frozen"),
])
def test_wrong_or_unclear_word_answers_are_not(answer, truth):
    assert not same_word(answer, truth), said(answer)


from minidl_book.capture_answers import rate_said  # noqa: E402


@pytest.mark.parametrize("answer, truth", [
    (0.1, "frozen"), ("0.1", "frozen"), ("0.10", "frozen"), ("still 0.1", "frozen"),
    ("it stays at 0.1", "frozen"), ("frozen", "frozen"), ("frozen at 0.1", "frozen"),
    (0.025, "follows"), ("0.025", "follows"), ("follows", "follows"),
])
def test_the_schedule_rate_said_as_its_number_is_read(answer, truth):
    assert rate_said(answer, truth)


@pytest.mark.parametrize("answer, truth", [
    (0.025, "frozen"), ("0.025", "frozen"), ("0.1 or 0.025", "frozen"), (0.05, "frozen"),
    ("refused", "frozen"), ("follows: 0.1", "frozen"), ("1", "frozen"), ("", "frozen"),
    (0.1, "follows"), ("0.1", "refused"),
])
def test_another_rate_or_verdict_is_not(answer, truth):
    assert not rate_said(answer, truth)
