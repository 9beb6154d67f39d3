"""answer_before_reason: the answer is read, the reason after it is not."""

import pytest

from minidl_book.answer_head import answer_before_reason


@pytest.mark.parametrize("text, head", [
    ("the first and the third; the second reuses the plan", "the first and the third"),
    ("first and third, the second is a store hit", "first and third"),
    ("conv2d, whose weight is not ready", "conv2d"),
    ("conv2d - it is not recorded", "conv2d"),
    ("conv2d which is not recorded", "conv2d"),
    ("2 since the scalar is not in the key", "2"),
    ("y and z (x is only read)", "y and z"),
    ("z, and y because it is held", "z, and y"),
])
def test_reason_is_cut(text, head):
    assert answer_before_reason(text) == head


@pytest.mark.parametrize("text", [
    "z, not y", "the first, not the third", "2 or 3", "y, z and x",
    "the first and the third, not the second", "max_pool2d or conv2d",
])
def test_answer_is_kept_whole(text):
    assert answer_before_reason(text) == text


def test_nothing_before_the_reason_keeps_the_text():
    assert answer_before_reason("(2)") == "(2)"
