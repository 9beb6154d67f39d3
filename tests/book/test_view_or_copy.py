"""View or copy? asks two answers, minidl's and burn Flex's: the checker takes the pair
written several ways and refuses the plausible wrong pairs (one rule for both, swapped,
one set alone)."""

from __future__ import annotations

import numpy as np
import pytest

from minidl_book import view_or_copy
from minidl_book.view_or_copy import burn_flex_reshape_is_view, grid

EX = view_or_copy.exercise()
TRUTH = (frozenset("BCF"), frozenset("F"))


def test_the_two_rules_give_the_chapters_answers():
    assert EX.measure() == TRUTH


@pytest.mark.parametrize("answer", [
    ({"B", "C", "F"}, {"F"}), ("BCF", "F"), (["F", "B", "C"], ["f"]), ("b, c, f", "F"),
    "BCF, F", [["B", "C", "F"], ["F"]], ({"B", "C", "F"}, "F"),
    "({'B','C','F'},{'F'})", ' [["B", "C", "F"], ["F"]] ', "('BCF', 'F')",
])
def test_the_right_pair_written_differently_passes(answer):
    assert EX.accepts(answer)


@pytest.mark.parametrize("answer", [
    ({"B", "C", "F"}, {"B", "C", "F"}),  # burn's Flex taken to follow minidl's rule
    ({"F"}, {"B", "C", "F"}),  # the two swapped
    ({"F"}, {"F"}),  # minidl taken to follow burn's
    ({"B", "C", "F"}, set()),  # flip taken to copy in burn too
    ({"B", "C", "F"}, {"B", "F"}),  # B's transpose-then-reshape kept as a view
    ({"B", "C", "F"}, {"C", "F"}),
    ({"B", "C"}, {"F"}),  # flip's negative stride missed
    {"B", "C", "F"}, "BCF",  # one set, no pair
    "({'B','C','F'},{'B','C','F'})", "({'F'},{'B','C','F'})", "{'B','C','F'}",
    "({'B','C','F'},{'F'}",  # unclosed: not a literal, refused
    ({"B", "C", "F"},), ({"B", "C", "F"}, {"F"}, {"F"}),
])
def test_plausible_wrong_pairs_are_refused(answer):
    assert not EX.accepts(answer)


def test_burns_reshape_rule_is_row_order_from_offset_zero():
    g = grid()
    buffer = g.primitive.backend_tensor
    assert burn_flex_reshape_is_view(buffer, buffer)
    rows = g.slice([(1, 3)]).primitive.backend_tensor  # row order, but at offset 4
    assert rows.flags.c_contiguous and not burn_flex_reshape_is_view(rows, buffer)
    assert np.shares_memory(g.slice([(1, 3)]).reshape([8]).primitive.backend_tensor,
                            buffer)  # minidl: a view all the same
    assert not burn_flex_reshape_is_view(g.T.primitive.backend_tensor, buffer)
    expanded = g.slice([(0, 1)]).expand([3, 4]).primitive.backend_tensor
    assert not burn_flex_reshape_is_view(expanded, buffer)  # a stride of 0
