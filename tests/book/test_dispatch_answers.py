"""The dispatch chapter's forwarded-linear count and bool-op backend read answers as readers
write them."""

import pytest

from minidl_book.dispatch_answers import count_or_lines, first_backend_named, route_lines_said
from minidl_book.dispatch_linear import plain_linear_routes

compare = count_or_lines(plain_linear_routes)


@pytest.mark.parametrize("right", [
    1, "one", "1 line", "1: linear -> Flex", "linear → Flex", "linear -> flex",
    ["linear → Flex"],
    "linear → Flex; then Flex does matmul, reshape, add",  # the solution's own words
    "linear -> Flex, then Flex runs matmul, reshape and add",
    "linear → Flex then Flex does the rest",
    "linear -> Flex (Flex runs the default body)",  # a reader's note in parentheses
    "linear → Flex (Flex runs the default body, then reshape, matmul, add)",
])
def test_accepts_the_count_or_the_line_with_an_explanation(right):
    assert compare(right, 1), right


@pytest.mark.parametrize("wrong", [
    3, 4, "three; then Flex", "float_matmul → Flex", "linear → Autodiff[Flex]",
    "linear → Flex, float_matmul → Flex", ["linear → Flex", "float_add → Flex"],
    "linear → Flex; then float_matmul → Flex",  # a second routed line after "then"
    "linear → Flex; then Flex does matmul -> Flex",  # an arrow in the "explanation"
    "linear -> Autodiff[Flex] (Flex runs the default body)",  # a note does not save it
    "linear -> Flex (then float_matmul -> Flex)",  # a routed line inside the note
])
def test_refuses_other_counts_and_extra_routed_lines(wrong):
    assert not compare(wrong, 1), wrong


def test_explanation_is_cut_but_lines_are_read():
    said = route_lines_said("linear → Flex; then Flex does matmul, reshape, add")
    assert said == [("linear", "flex")]
    assert route_lines_said("Flex does it all") is None
    assert route_lines_said(1) is None


@pytest.mark.parametrize("right", [
    "autodiff[flex]", "Autodiff [Flex]", "the Autodiff[Flex] backend", "Autodiff<Flex>",
    "autodiff", "Autodiff[Flex], then Flex", "Autodiff[Flex] (it passes through to Flex)",
    "Autodiff(Flex) backend", "Autodiff[Flex], not Flex", "not Flex but Autodiff[Flex]",
    # the path, said from its end: the op reaches Flex by way of Autodiff[Flex]
    "Flex via Autodiff[Flex]", "Flex, via Autodiff[Flex]", "Flex through Autodiff[Flex]",
    "Flex, via the Autodiff[Flex] backend", "it ends on Flex via autodiff",
])
def test_bool_op_backend_accepts_autodiff_flex_however_said(right):
    assert first_backend_named(right, "Autodiff[Flex]"), right


@pytest.mark.parametrize("wrong", [
    "Flex", "the Flex backend", "NdArray", "not Autodiff[Flex]", "Flex, not Autodiff",
    "Autodiff[NdArray]", "neither", 1, "not Flex, not Autodiff[Flex]",
    "Flex (not Autodiff[Flex])", "Autodiff[Flex] or Flex", "either Flex or Autodiff[Flex]",
    "Flex, not via Autodiff[Flex]",  # the via negated: straight to Flex
    "Autodiff[Flex] via Flex", "Flex via Autodiff[NdArray]", "Flex via NdArray",
])
def test_bool_op_backend_refuses_flex_and_hedges(wrong):
    assert not first_backend_named(wrong, "Autodiff[Flex]"), wrong


@pytest.mark.parametrize("right", [
    "one route; 3 kernels", "just one: linear", "only 1 op", "one route but 3 kernels",
    "1 (linear), then Flex runs 3 kernels"])
def test_a_count_before_a_trailing_note_is_read(right):
    assert compare(right, 1), right


@pytest.mark.parametrize("wrong", [
    "three routes; 1 kernel", "3 routes: matmul, reshape, add", "one or three",
    "3; one linear", "two: linear and matmul"])
def test_a_wrong_count_before_a_note_is_refused(wrong):
    assert not compare(wrong, 1), wrong
