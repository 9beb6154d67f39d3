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


def test_an_error_in_the_books_read_view_is_named_as_the_books_not_minidls():
    """A zip_op handing read_view strides that run past the buffer fails inside the
    reference read_view the checker binds: the verdict names that function, not minidl."""

    def no_broadcast(fn, a, b):
        shape = tuple(max(n, m) for n, m in zip(a.shape, b.shape))
        xs = read_view(a.buffer, a.offset, a.strides, shape)  # noqa: F821 - bound by the checker
        ys = read_view(b.buffer, b.offset, b.strides, shape)  # noqa: F821
        return shape, [fn(x, y) for x, y in zip(xs, ys)]

    verdict = build_zip.exercise(20).find_failure(no_broadcast)
    assert verdict is not None and verdict.kind == "error", verdict
    assert "raised inside the book's read_view, by minidl_book/build_view.py" in verdict.text
    assert "raised inside minidl," not in verdict.text
