"""The tensors chapter's build exercise: read a view's values through its offset and strides
(real Flex views: permute, slice, flip with negative strides, expand with strides of 0)."""

from __future__ import annotations

import itertools

import pytest

from minidl_book import build_view


def test_reference_passes():
    assert build_view.exercise(10).find_failure(build_view.read_view) is None


def test_an_itertools_solution_passes():
    def mine(buffer, offset, strides, shape):
        return [buffer[offset + sum(i * s for i, s in zip(idx, strides, strict=True))]
                for idx in itertools.product(*map(range, shape))]

    assert build_view.exercise(10).find_failure(mine) is None


@pytest.mark.parametrize("planted", sorted(build_view.PLANTED))
def test_planted_wrong_solution_gets_its_verdict(planted):
    wrong, kind = build_view.PLANTED[planted]
    verdict = build_view.exercise(10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict


def test_cases_hold_negative_and_zero_strides():
    flipped = build_view.make_case((2, 3), [("flip", [0, 1])])
    assert flipped["strides"] == (-3, -1) and flipped["offset"] == 5
    expanded = build_view.make_case((3, 4), [("slice", [(1, 2), (0, 4)]), ("expand", [3, 4])])
    assert expanded["strides"] == (0, 1) and expanded["offset"] == 4


def test_a_nested_answer_gets_the_shape_hint():
    def nested(buffer, offset, strides, shape):
        return [build_view_rows(buffer, offset, strides, shape)]

    def build_view_rows(buffer, offset, strides, shape):
        return [buffer[offset + sum(i * s for i, s in zip(idx, strides, strict=True))]
                for idx in itertools.product(*map(range, shape))]

    verdict = build_view.exercise(5).check(nested)
    assert verdict.kind == "shape" and "flat list" in verdict.hints[-1]


def test_yours_or_reference_falls_back_unless_yours_is_right(capsys):
    def unfinished(buffer, offset, strides, shape):
        ...

    def mine(buffer, offset, strides, shape):
        return [buffer[offset + sum(i * s for i, s in zip(idx, strides, strict=True))]
                for idx in itertools.product(*map(range, shape))]

    assert build_view.yours_or_reference(None) is build_view.read_view
    assert build_view.yours_or_reference(unfinished) is build_view.read_view
    assert build_view.yours_or_reference(mine) is mine
    assert "using your read_view" in capsys.readouterr().out


def test_the_printed_reference_needs_no_import():
    import inspect

    source = inspect.getsource(build_view.read_view)
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - the solution a reader pastes, run bare
    assert namespace["read_view"](list(range(100, 112)), 5, (4, 1), (2, 3)) == [
        105, 106, 107, 109, 110, 111]
