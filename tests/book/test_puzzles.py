"""The Puzzles appendix: every reference solution passes its checker; planted wrong solutions
get the verdict a reader should see."""

from __future__ import annotations

import pytest

from minidl_book.puzzles import BASE, PLANTED, PUZZLES


def test_at_least_fifteen_puzzles_each_with_a_hint():
    assert len(PUZZLES) >= 15
    assert all(p.hints for p in PUZZLES.values())


@pytest.mark.parametrize("name", sorted(PUZZLES))
def test_reference_solution_passes(name):
    puzzle = PUZZLES[name]
    assert puzzle.exercise(max_examples=8).find_failure(puzzle.solution) is None


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_wrong_solution_gets_its_verdict(name):
    puzzle, wrong, kind = PLANTED[name]
    verdict = PUZZLES[puzzle].exercise(max_examples=15).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert verdict.inputs  # the failing case is shown
    assert "Traceback" not in verdict.render()
    if kind == "value":
        assert verdict.index is not None and "expected" in verdict.text and "found" in verdict.text
    if kind == "rule":
        assert verdict.call and wrong.__name__ in verdict.call  # the reader's line that broke it


def test_forbidden_op_is_named_with_the_line():
    verdict = PUZZLES["cumsum"].exercise(5).find_failure(PLANTED["cumsum_forbidden"][1])
    assert "sum_dim is not an allowed op" in verdict.text
    assert ".sum_dim(0)" in verdict.call


def test_pulling_values_out_breaks_the_no_data_rule():
    verdict = PUZZLES["flip"].exercise(5).find_failure(PLANTED["flip_data_out"][1])
    assert verdict.rule == "no data out" and "tolist" in verdict.text


def test_base_ops_are_enough_for_the_base_only_puzzles():
    for name in ("outer", "eye", "triu", "vstack", "heaviside", "repeat", "sequence_mask"):
        assert PUZZLES[name].allowed == BASE


def test_a_functional_or_backend_op_called_directly_is_not_allowed():
    from minidl import functional
    from minidl_book.puzzles import checker

    def ones(a):
        return functional.relu(a * 0 + 1)  # relu is not a puzzle op

    verdict = checker("ones").find_failure(ones)
    assert verdict.kind == "rule" and "relu is not an allowed op" in verdict.text
    assert "functional.relu(a * 0 + 1)" in verdict.call
