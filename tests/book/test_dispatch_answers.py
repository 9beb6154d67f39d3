"""The dispatch chapter's forwarded-linear count reads answers as readers write them."""

import pytest

from minidl_book.dispatch_answers import count_or_lines, route_lines_said
from minidl_book.dispatch_linear import plain_linear_routes

compare = count_or_lines(plain_linear_routes)


@pytest.mark.parametrize("right", [
    1, "one", "1 line", "1: linear -> Flex", "linear → Flex", "linear -> flex",
    ["linear → Flex"],
    "linear → Flex; then Flex does matmul, reshape, add",  # the solution's own words
    "linear -> Flex, then Flex runs matmul, reshape and add",
    "linear → Flex then Flex does the rest",
])
def test_accepts_the_count_or_the_line_with_an_explanation(right):
    assert compare(right, 1), right


@pytest.mark.parametrize("wrong", [
    3, 4, "three; then Flex", "float_matmul → Flex", "linear → Autodiff[Flex]",
    "linear → Flex, float_matmul → Flex", ["linear → Flex", "float_add → Flex"],
    "linear → Flex; then float_matmul → Flex",  # a second routed line after "then"
    "linear → Flex; then Flex does matmul -> Flex",  # an arrow in the "explanation"
])
def test_refuses_other_counts_and_extra_routed_lines(wrong):
    assert not compare(wrong, 1), wrong


def test_explanation_is_cut_but_lines_are_read():
    said = route_lines_said("linear → Flex; then Flex does matmul, reshape, add")
    assert said == [("linear", "flex")]
    assert route_lines_said("Flex does it all") is None
    assert route_lines_said(1) is None
