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
