"""The toy backend's in-place rule: burn-flex's (a moved lhs, its buffer's only handle,
contiguous from offset 0, not broadcast) and nothing looser."""

from __future__ import annotations

import numpy as np

from minidl_book import toy_backend
from minidl_book.toy_ownership import clone, handles, moved

REFS = [ref for ref, _ in toy_backend.REFERENCES.values()]


def _mine():
    from minidl.backends.ndarray import NdArray

    return toy_backend.with_fallback(toy_backend.assembled(*REFS), NdArray)


def _grid(Mine):
    return Mine.float_from_data(np.arange(12, dtype=np.float32).reshape(3, 4))


def _ones(Mine, shape=(3, 4)):
    return Mine.float_from_data(np.ones(shape, np.float32))


def test_a_moved_lone_lhs_takes_the_sum_in_its_own_buffer():
    Mine = _mine()
    lone = _grid(Mine)
    assert handles(lone) == 1
    buffer_id = id(lone.buffer)  # a name on the buffer itself would be a second holder
    out = Mine.float_add(moved(lone), _ones(Mine))
    assert id(out.buffer) == buffer_id and out is lone  # burn returns the lhs itself
    np.testing.assert_array_equal(Mine.float_into_data(out).array,
                                  np.arange(1, 13, dtype=np.float32).reshape(3, 4))


def test_a_clone_is_a_second_handle_and_is_left_alone():
    Mine = _mine()
    shared = _grid(Mine)
    twin = clone(shared)
    assert twin.buffer is shared.buffer
    assert handles(shared) == 2  # (apart: pytest keeps an assert's operands alive)
    assert handles(twin) == 2
    out = Mine.float_mul(moved(shared), _ones(Mine))
    assert out.buffer is not shared.buffer
    np.testing.assert_array_equal(Mine.float_into_data(twin).array,
                                  np.arange(12, dtype=np.float32).reshape(3, 4))
    del twin
    assert handles(shared) == 1


def test_a_view_is_a_handle_too():
    Mine = _mine()
    grid = _grid(Mine)
    row = Mine.float_reshape(grid, [12])  # a view: the same buffer
    assert handles(grid) == 2
    out = Mine.float_sub(moved(grid), _ones(Mine))
    assert out.buffer is not row.buffer
    assert Mine.float_into_data(row).array.tolist() == list(range(12))


def test_a_borrowed_lhs_is_never_written():
    """What a Tensor passes: its primitive, not moved. The buffer stays the tensor's."""
    Mine = _mine()
    lone = _grid(Mine)
    out = Mine.float_add(lone, _ones(Mine))
    assert out.buffer is not lone.buffer
    assert Mine.float_into_data(lone).array.tolist()[0] == [0.0, 1.0, 2.0, 3.0]


def test_only_row_order_from_offset_zero_is_written():
    Mine = _mine()
    swapped = Mine.float_swap_dims(_grid(Mine), 0, 1)  # one handle, not row order
    assert handles(swapped) == 1
    out = Mine.float_add(moved(swapped), _ones(Mine, (4, 3)))
    assert out.buffer is not swapped.buffer
    np.testing.assert_array_equal(Mine.float_into_data(out).array,
                                  np.arange(12, dtype=np.float32).reshape(3, 4).T + 1)
    lone = _grid(Mine)
    rows = toy_backend.Strided(lone.buffer, 4, (2, 4), (4, 1))  # row order, offset 4
    del lone
    assert handles(rows) == 1
    assert Mine.float_add(moved(rows), _ones(Mine, (2, 4))).buffer is not rows.buffer


def test_a_broadcast_lhs_gets_a_new_buffer():
    Mine = _mine()
    row = Mine.float_from_data(np.arange(4, dtype=np.float32)[None])
    out = Mine.float_add(moved(row), _ones(Mine))
    assert out.buffer is not row.buffer and out.shape == (3, 4)
    assert Mine.float_into_data(row).array.tolist() == [[0.0, 1.0, 2.0, 3.0]]


def test_through_a_tensor_nothing_is_overwritten():
    from minidl import Tensor
    from minidl.dispatch.register import register_backend

    device = register_backend("mine_own_test", _mine(), toy_backend.Strided)
    x = Tensor.from_data(np.arange(12, dtype=np.float32).reshape(3, 4), device)
    y = (x * x) + x  # the product is a temporary, still held by its Tensor
    assert x.to_numpy().tolist()[0] == [0.0, 1.0, 2.0, 3.0]
    assert y.to_numpy().tolist()[0] == [0.0, 2.0, 6.0, 12.0]
    assert y.primitive.backend_tensor.buffer is not x.primitive.backend_tensor.buffer


def _recursive_read_view(buffer, offset, strides, shape):
    """A right read_view in a common style: a nested function that calls itself. The
    closure makes a reference cycle (rec → its cell → rec) that keeps ``buffer`` alive
    until the garbage collector runs."""
    out = []

    def rec(dim, pos):
        if dim == len(shape):
            out.append(buffer[pos])
            return
        for i in range(shape[dim]):
            rec(dim + 1, pos + i * strides[dim])

    rec(0, offset)
    return out


def _zip_through_recursive_reads(fn, a, b):
    """The reference zip_op, its operands read by the recursive read_view (as the page's
    zip_op reads with the reader's own)."""
    from minidl_book.build_broadcast import broadcast_strides

    shape = tuple(max(m, n) for m, n in zip(a.shape, b.shape))
    xs, ys = (_recursive_read_view(t.buffer, t.offset,
                                   broadcast_strides(t.shape, t.strides, shape), shape)
              for t in (a, b))
    return shape, [fn(x, y) for x, y in zip(xs, ys)]


def test_a_recursive_closure_read_view_does_not_count_as_a_handle():
    from minidl.backends.ndarray import NdArray

    refs = list(REFS)
    refs[0], refs[3] = _recursive_read_view, _zip_through_recursive_reads
    Mine = toy_backend.with_fallback(toy_backend.assembled(*refs), NdArray)
    lone = _grid(Mine)
    Mine.float_into_data(lone)  # leaves a garbage cycle that holds the buffer
    assert handles(lone) == 1
    buffer_id = id(lone.buffer)
    out = Mine.float_add(moved(lone), _ones(Mine))  # zip_op reads through rec too
    assert id(out.buffer) == buffer_id and out is lone
    np.testing.assert_array_equal(Mine.float_into_data(out).array,
                                  np.arange(1, 13, dtype=np.float32).reshape(3, 4))
