"""The tour's linear build-it: each failure gets the hint that fits it (the shape that
failed, the op an error names, a broken rule)."""

from __future__ import annotations

from minidl_book import build_linear


def test_flattened_batch_dims_get_the_batch_dims_hint():
    """Folding a [2, 2, 3] input into rows gives [4, 2]: the hint names batch dims, not a
    1-D input."""
    verdict = build_linear.exercise(10).check(build_linear.linear_flattens_batch_dims)
    assert verdict.kind == "shape" and "[2, 2, 3]" in verdict.render()
    assert verdict.hints == [build_linear.BATCH_HINT]


def test_a_kept_batch_dim_on_a_1d_input_gets_the_1d_hint():
    verdict = build_linear.exercise(10).check(build_linear.linear_keeps_batch_dim)
    assert verdict.kind == "shape" and verdict.hints == [build_linear.ONE_D_HINT]


def test_the_hint_follows_the_latest_failure():
    ex = build_linear.exercise(10)
    assert ex.check(build_linear.linear_flattens_batch_dims).hints == [build_linear.BATCH_HINT]
    hints = ex.check(build_linear.linear_keeps_batch_dim).hints
    assert build_linear.ONE_D_HINT in hints and build_linear.BATCH_HINT not in hints


def test_the_first_failing_case_has_no_size_one_dims():
    """PyTorch's habit fails on a case whose shapes a reader can map back to the slip."""
    shapes = [v.shape for v in build_linear.EXAMPLE.values()]
    assert all(1 not in shape for shape in shapes)
    d_input, d_output = build_linear.EXAMPLE["weight"].shape
    assert d_input != d_output  # a square weight hides the transposition


def test_pytorch_habit_gets_the_transposition_hint_first():
    verdict = build_linear.exercise(10).check(build_linear.linear_torch_layout)
    assert verdict.kind == "error" and "Operation: 'matmul'" in verdict.text
    assert verdict.hints == [build_linear.ERROR_HINTS["matmul"]]
    assert "transpose" in verdict.hints[0]


def test_a_rank_2_bias_gets_the_add_hint_not_the_matmul_one():
    verdict = build_linear.exercise(10).check(build_linear.linear_bias_for_2d_only)
    assert verdict.kind == "error" and verdict.hints == [build_linear.ERROR_HINTS["add"]]


def test_a_broken_rule_opens_a_rule_hint_before_the_recipe():
    verdict = build_linear.exercise(10).check(build_linear.linear_borrowed)
    assert verdict.kind == "rule" and len(verdict.hints) == 1
    assert "@ and +" in verdict.hints[0] and "reshaped" not in verdict.hints[0]
