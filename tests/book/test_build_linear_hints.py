"""The tour's linear build-it: a wrong output shape gets the hint that fits its input."""

from __future__ import annotations

from minidl_book import build_linear


def test_flattened_batch_dims_get_the_batch_dims_hint():
    """Folding a [2, 1, 1] input into rows gives [2, 2]: the hint names batch dims, not a
    1-D input."""
    verdict = build_linear.exercise(10).check(build_linear.linear_flattens_batch_dims)
    assert verdict.kind == "shape" and "[2, 1, 1]" in verdict.render()
    assert verdict.hints == [build_linear.BATCH_HINT]


def test_a_kept_batch_dim_on_a_1d_input_gets_the_1d_hint():
    verdict = build_linear.exercise(10).check(build_linear.linear_keeps_batch_dim)
    assert verdict.kind == "shape" and verdict.hints == [build_linear.ONE_D_HINT]


def test_the_hint_follows_the_latest_failure():
    ex = build_linear.exercise(10)
    assert ex.check(build_linear.linear_flattens_batch_dims).hints == [build_linear.BATCH_HINT]
    hints = ex.check(build_linear.linear_keeps_batch_dim).hints
    assert build_linear.ONE_D_HINT in hints and build_linear.BATCH_HINT not in hints
