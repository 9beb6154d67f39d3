"""The strides exercise of the tensors chapter reads a nested-tuple answer typed as a
string, as its kept-dims exercise reads a flat one, and still refuses wrong ones."""

from __future__ import annotations

import pytest

from minidl_book.parsed_answer import ParsedAnswerExercise, parsed


def _exercise() -> ParsedAnswerExercise:
    return ParsedAnswerExercise(
        "Strides", truth=lambda: ((1, 4), (0, 1)), hint="elements",
        mistakes=lambda t: {tuple(tuple(4 * s for s in p) for p in t): "These are bytes"})


@pytest.mark.parametrize("right", [((1, 4), (0, 1)), [[1, 4], [0, 1]], "((1, 4), (0, 1))",
                                   "[[1,4],[0,1]]", " (1, 4), (0, 1) "])
def test_right_answers_written_differently_pass(right):
    assert _exercise().accepts(right)


@pytest.mark.parametrize("wrong", [((4, 1), (0, 1)), "((4, 1), (1, 0))", "((1, 4), (4, 1))",
                                   "((4, 16), (0, 4))", "1, 4, 0, 1", "__import__('os')", "strides"])
def test_wrong_answers_are_refused(wrong):
    assert not _exercise().accepts(wrong)


def test_bytes_typed_as_a_string_get_the_bytes_hint(capsys):
    assert not _exercise().check("((4, 16), (0, 4))")
    assert "These are bytes" in capsys.readouterr().out


def test_a_non_literal_is_left_as_typed():
    assert parsed("__import__('os')") == "__import__('os')" and parsed("error") == "error"
