"""The tensors chapter's sixth build-it: ``reduce_dim(fn, view, dim)``, a reduction along one
dim of a strided view that keeps the dim, read through ``read_view``."""

from __future__ import annotations

import itertools

import pytest

from minidl_book import build_reduce


def test_the_reference_passes():
    assert build_reduce.exercise(30).find_failure(build_reduce.reduce_dim) is None


def test_right_answers_written_differently_pass():
    """A list for the shape, an index loop instead of read_view: right."""

    def by_index(fn, view, dim):
        shape = list(view.shape)
        shape[dim] = 1
        out = []
        for idx in itertools.product(*map(range, shape)):
            run = []
            for k in range(view.shape[dim]):
                at = list(idx)
                at[dim] = k
                run.append(view.buffer[view.offset + sum(
                    i * s for i, s in zip(at, view.strides))])
            out.append(fn(run))
        return shape, out

    assert build_reduce.exercise(30).find_failure(by_index) is None


@pytest.mark.parametrize("planted", sorted(build_reduce.PLANTED))
def test_each_planted_slip_is_caught_by_its_kind(planted):
    wrong, kind = build_reduce.PLANTED[planted]
    verdict = build_reduce.exercise(20).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict


def test_the_kept_dim_is_named_in_the_verdict():
    verdict = build_reduce.exercise(5).find_failure(build_reduce.dim_dropped)
    assert "keep" in verdict.text


def test_the_reference_on_a_transposed_view():
    view = build_reduce.View([1, 2, 3, 4, 5, 6], 0, (3, 2), (1, 3))  # [[1,4],[2,5],[3,6]]
    assert build_reduce.reduce_dim(sum, view, 1) == ((3, 1), [5, 7, 9])
    assert build_reduce.reduce_dim(max, view, 0) == ((1, 2), [3, 6])
