"""The performance chapter's loop-swap build-it: the right kernel passes, each slip is named."""

import numpy as np

from minidl_book.build_gemm import LoopSwap, reference


def not_zeroed(a, b, c):
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            for j in range(b.shape[1]):
                c[i, j] += a[i, p] * b[p, j]


def overwrite(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            for j in range(b.shape[1]):
                c[i, j] = a[i, p] * b[p, j]


def swapped(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            for j in range(b.shape[1]):
                c[j, i] += a[i, p] * b[p, j]


def same_order(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            for p in range(a.shape[1]):
                c[i, j] += a[i, p] * b[p, j]


def placeholder(a, b, c):
    ...


def test_slips_are_named_and_the_solution_passes(capsys):
    ex = LoopSwap(np.ones((4, 8), np.float32), np.ones((8, 8), np.float32), rows=4,
                  naive_rows=2)
    assert ex.slip(reference) is None
    assert ex.slip(not_zeroed) == "not zeroed"
    assert ex.slip(overwrite) == "overwrite"
    assert ex.slip(swapped) == "swapped"
    assert ex.slip(same_order) == "column"
    assert ex.check(placeholder) is False and ex.kernel is None
    assert ex.check(swapped) is False and "swapped" in capsys.readouterr().out
    assert ex.check(reference) is True and ex.kernel is not None
    point = ex.point()
    assert point.name == "yours" and point.intensity == 0.5


def library(a, b, c):
    c[:] = a @ b


def library_dot(a, b, c):
    c[:] = np.dot(a, b)


def jpi(a, b, c):  # innermost i: walks C and A down their columns
    c[:] = 0
    for j in range(b.shape[1]):
        for p in range(a.shape[1]):
            for i in range(a.shape[0]):
                c[i, j] += a[i, p] * b[p, j]


def row_slice(a, b, c):  # right: a[i, p] scales row p of B, as a whole row
    c[:] = 0
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            c[i, :] += a[i, p] * b[p, :]


def column_slice(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            c[i, j] = np.sum(a[i, :] * b[:, j])


def test_library_calls_other_orders_and_row_slices(capsys):
    ex = LoopSwap(np.ones((4, 8), np.float32), np.ones((8, 8), np.float32), rows=4,
                  naive_rows=2)
    assert ex.slip(library) == "library"
    assert ex.slip(library_dot) == "library"
    assert ex.check(library) is False and "no @" in capsys.readouterr().out
    assert ex.slip(jpi) == "across"
    assert ex.slip(column_slice) == "column"
    assert ex.slip(row_slice) is None
    assert ex.check(row_slice) is True and "column" not in capsys.readouterr().out
