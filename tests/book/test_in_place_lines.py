"""The in-place exercise's lines on the toy backend: only A writes into grid's buffer, and
watching the buffer is no handle (a grid watched alone is still written in place)."""

from __future__ import annotations

from minidl_book import toy_backend
from minidl_book.in_place_lines import GridLines
from minidl_book.toy_ownership import handles, moved

REFS = [ref for ref, _ in toy_backend.REFERENCES.values()]


def _mine():
    from minidl.backends.ndarray import NdArray

    return toy_backend.with_fallback(toy_backend.assembled(*REFS), NdArray)


def test_only_line_a_overwrites_grid():
    assert GridLines(_mine()).overwritten() == frozenset("A")


def test_a_new_grid_is_its_buffers_one_handle_and_watching_adds_none():
    lines = GridLines(_mine())
    grid = lines.new_grid()
    assert handles(grid) == 1
    out = lines.B.float_add(moved(grid), lines.ones())
    assert lines.in_grid_buffer(out)


def test_a_result_elsewhere_is_not_in_grids_buffer():
    lines = GridLines(_mine())
    assert not lines.in_grid_buffer(lines.ones())  # no grid made yet
    grid = lines.new_grid()
    assert not lines.in_grid_buffer(lines.B.float_add(lines.ones(), grid))
