"""A dtype is a plain answer: a reader asked "which dtype?" may type ``np.float32``,
``np.dtype("f4")`` or ``torch.float32`` (the capture chapter's reader was told "a type is not
an answer" for ``(np.float64, np.float32)``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl_book.exercises import Exercise, NotPlain, plain_answer


@pytest.mark.parametrize(("answer", "name"), [
    (np.float32, "float32"), (np.float64, "float64"), (np.int64, "int64"),
    (np.dtype("f4"), "float32"), (np.dtype("<f8"), "float64"),
    (torch.float32, "float32"), (torch.int64, "int64"),
])
def test_a_dtype_answers_by_its_name(answer, name):
    assert plain_answer(answer) == name


def test_a_pair_of_numpy_types_is_checked_as_names():
    ex = Exercise("loss and weight dtype", truth=lambda: ("float64", "float32"))
    assert ex.accepts((np.float64, np.float32))
    assert not ex.accepts((np.float32, np.float32))


def test_other_types_stay_refused():
    for answer in (np.floating, int, object):
        with pytest.raises(NotPlain):
            plain_answer(answer)


def test_a_dict_answer_reaches_a_chapter_comparison():
    """The capture chapter's reader typed {"loss": np.float64, "weight": "float32"}; its
    comparison reads dicts, but the dict was refused as "not plain" before it got there."""
    got = plain_answer({"loss": np.float64, "weight": "float32"})
    assert got == {"loss": "float64", "weight": "float32"} and type(got) is dict
    ex = Exercise("dtypes", truth=lambda: ("float64", "float32"),
                  compare=lambda p, t: isinstance(p, dict) and (p["loss"], p["weight"]) == t)
    assert ex.accepts({"loss": "float64", "weight": np.float32})
    assert not ex.accepts({"loss": "float32", "weight": "float32"})
    assert not Exercise("dtypes", truth=lambda: ("float64", "float32")).accepts(
        {"loss": "float64", "weight": "float32"})  # the default comparison still refuses
