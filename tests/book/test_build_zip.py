"""The tensors chapter's fifth build-it: ``zip_op(fn, a, b)``, an element-wise op over two
strided views broadcast to one shape, written from ``read_view`` and ``broadcast_strides``."""

from __future__ import annotations

import itertools
import operator

import pytest

from minidl_book import build_zip


def test_the_reference_passes():
    assert build_zip.exercise(30).find_failure(build_zip.zip_op) is None


def test_right_answers_written_differently_pass():
    """Lists for the shape, nested values, index loops instead of read_view: all right."""

    def by_index(fn, a, b):
        if len(a.shape) != len(b.shape) or any(
                n != m and 1 not in (n, m) for n, m in zip(a.shape, b.shape)):
            raise ValueError("shapes do not broadcast")
        shape = [max(n, m) for n, m in zip(a.shape, b.shape)]

        def at(t, idx):
            return t.buffer[t.offset + sum((0 if n == 1 else i) * s
                                           for i, n, s in zip(idx, t.shape, t.strides))]

        return shape, [fn(at(a, i), at(b, i))
                       for i in itertools.product(*map(range, shape))]

    assert build_zip.exercise(30).find_failure(by_index) is None


@pytest.mark.parametrize("planted", sorted(build_zip.PLANTED))
def test_each_planted_slip_is_caught_by_its_kind(planted):
    wrong, kind = build_zip.PLANTED[planted]
    verdict = build_zip.exercise(20).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict


def test_the_swapped_operands_are_caught():
    def swapped(fn, a, b):
        return build_zip.zip_op(fn, b, a)

    assert build_zip.exercise(0).find_failure(swapped) is not None
    assert build_zip.zip_op(operator.sub, build_zip.View([5, 7], 1, (1,), (1,)),
                            build_zip.View([2], 0, (1,), (1,))) == ((1,), [5])
