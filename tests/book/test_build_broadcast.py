"""The tensors chapter's broadcast build exercise: the strides that read an operand as the
output's shape (stride 0 where a size-1 dim stretches), burn's equal-rank rule refused
otherwise, checked by reading the operand through them against NumPy's broadcast_to."""

from __future__ import annotations

import pytest

from minidl_book import build_broadcast


def test_reference_passes():
    assert build_broadcast.exercise(30).find_failure(build_broadcast.broadcast_strides) is None


def test_a_comprehension_solution_passes():
    def mine(shape, strides, out_shape):
        if len(shape) != len(out_shape) or any(
                n not in (1, m) for n, m in zip(shape, out_shape, strict=True)):
            raise ValueError("shapes do not broadcast")
        return tuple(0 if n != m else s for n, s, m in zip(shape, strides, out_shape,
                                                          strict=True))

    assert build_broadcast.exercise(30).find_failure(mine) is None


def test_zero_for_every_size_one_dim_passes():
    """A size-1 dim of the output reads one place: its stride may be anything, 0 included."""
    def zero_all_ones(shape, strides, out_shape):
        if len(shape) != len(out_shape) or any(
                n not in (1, m) for n, m in zip(shape, out_shape, strict=True)):
            raise ValueError("shapes do not broadcast")
        return tuple(0 if n == 1 else s for n, s in zip(shape, strides, strict=True))

    assert build_broadcast.exercise(30).find_failure(zero_all_ones) is None


@pytest.mark.parametrize("planted", sorted(build_broadcast.PLANTED))
def test_planted_slip_is_refused_with_its_own_words(planted):
    wrong, kind, phrase = build_broadcast.PLANTED[planted]
    verdict = build_broadcast.exercise(20).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert phrase in verdict.text, verdict.text


def test_the_checker_generates_every_kind_of_case():
    from hypothesis import given, settings

    seen = set()

    @settings(max_examples=200, database=None, deadline=None)
    @given(build_broadcast._cases())
    def collect(case):
        seen.add(case["_why"])

    collect()
    assert seen == {"", "rank", "wrong side", "sizes"}


def test_the_mean_of_x_minus_mean():
    assert build_broadcast.broadcast_strides((2, 1), (1, 1), (2, 3)) == (1, 0)
    with pytest.raises(ValueError):
        build_broadcast.broadcast_strides((3,), (1,), (4, 3))
