"""The tour's linear build-it: each cause of failure has its own hint ladder (the shape
that failed, the op an error names, a wrong bias value, each broken rule), and a hint once
shown keeps its text."""

from __future__ import annotations

import numpy as np

from minidl import Tensor
from minidl_book import build_linear as bl


def test_flattened_batch_dims_get_the_batch_dims_hint():
    """Folding a [2, 2, 3] input into rows gives [4, 2]: the hint names batch dims, not a
    1-D input."""
    verdict = bl.exercise(10).check(bl.linear_flattens_batch_dims)
    assert verdict.kind == "shape" and "[2, 2, 3]" in verdict.render()
    assert verdict.hints == [bl.BATCH_HINT]


def test_a_kept_batch_dim_on_a_1d_input_gets_the_1d_hint():
    verdict = bl.exercise(10).check(bl.linear_keeps_batch_dim)
    assert verdict.kind == "shape" and verdict.hints == [bl.ONE_D_HINT]


def test_the_first_failing_case_has_no_size_one_dims():
    """PyTorch's habit fails on a case whose shapes a reader can map back to the slip."""
    shapes = [v.shape for v in bl.EXAMPLE.values()]
    assert all(1 not in shape for shape in shapes)
    d_input, d_output = bl.EXAMPLE["weight"].shape
    assert d_input != d_output  # a square weight hides the transposition


def test_pytorch_habit_gets_the_transposition_hint_first():
    verdict = bl.exercise(10).check(bl.linear_torch_layout)
    assert verdict.kind == "error" and "Operation: 'matmul'" in verdict.text
    assert verdict.hints == [bl.HINTS["transpose"][0]] and verdict.hints_total == 2
    assert "transpose" in verdict.hints[0]


def test_a_transposed_square_weight_gets_the_transposition_hint():
    """With a square weight the slip is a value failure: still the transposition hint."""
    ex = bl.exercise(0)
    rng = np.random.default_rng(0)
    ex.examples = [{"input": rng.standard_normal((2, 3)).astype(np.float32),
                    "weight": rng.standard_normal((3, 3)).astype(np.float32),
                    "bias": rng.standard_normal(3).astype(np.float32)}]
    verdict = ex.check(bl.linear_torch_layout)
    assert verdict.kind == "value" and verdict.hints == [bl.HINTS["transpose"][0]]


def test_a_rank_2_bias_gets_the_add_hint_not_the_matmul_one():
    verdict = bl.exercise(10).check(bl.linear_bias_for_2d_only)
    assert verdict.kind == "error" and verdict.hints == [bl.HINTS["bias rank"][0]]


def test_a_bias_added_twice_gets_the_bias_hint_not_the_transposition():
    verdict = bl.exercise(10).check(bl.linear_bias_twice)
    assert verdict.kind == "value" and verdict.hints == [bl.HINTS["bias value"][0]]
    assert "transpose" not in verdict.hints[0]


def test_numpy_gets_the_numpy_hint_not_the_own_linear_one():
    verdict = bl.exercise(10).check(bl.linear_numpy)
    assert verdict.kind == "rule" and verdict.hints == [bl.HINTS["no NumPy"][0]]
    assert "minidl's linear" not in verdict.hints[0]


def test_a_broken_rule_opens_a_rule_hint_before_the_recipe():
    verdict = bl.exercise(10).check(bl.linear_borrowed)
    assert verdict.kind == "rule" and verdict.hints == bl.HINTS["own linear"]
    assert "@ and +" in verdict.hints[0] and "reshaped" not in verdict.hints[0]


def _adds_none(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    out = input @ weight
    return out + bias.reshape((1,) * (out.rank - 1) + bias.shape)


def test_a_none_bias_after_other_failures_gets_its_own_first_hint():
    """The third failed check, a None bias, shows the None hint as hint 1 (not the next
    hint of an unrelated ladder)."""
    ex = bl.exercise(10)
    ex.check(bl.linear_torch_layout)
    ex.check(bl.linear_keeps_batch_dim)
    verdict = ex.check(_adds_none)
    assert verdict.kind == "error" and verdict.hints == [bl.HINTS["bias None"][0]]
    assert "Hint 1 of 2" in verdict.render() and "unsqueeze" not in verdict.render()


def test_a_shown_hint_keeps_its_text():
    """A hint the reader saw is shown again, unchanged, when its cause comes back; another
    cause in between does not rewrite it."""
    ex = bl.exercise(10)
    first = ex.check(bl.linear_torch_layout).hints
    ex.check(bl.linear_bias_for_2d_only)
    again = ex.check(bl.linear_torch_layout).hints
    assert again[:1] == first and again == bl.HINTS["transpose"]


def test_every_planted_slip_fails_on_the_fixed_cases_alone():
    """The fixed cases (EXAMPLE and the corners) catch every planted slip with no generated
    case: what hypothesis draws under one seed differs between contexts (the chapter's kernel
    never drew a 1-D input with a bias, and a bias dropped for one row passed there)."""
    ex = bl.exercise(1)

    def first_failure(solution):
        verdicts = (ex.verdict_for(solution, case) for case in ex.examples)
        return next((v for v in verdicts if v is not None), None)

    for name, (wrong, kind) in bl.PLANTED.items():
        verdict = first_failure(wrong)
        assert verdict is not None and verdict.kind == kind, (name, verdict)
    assert first_failure(bl.linear) is None


def test_a_bias_dropped_for_one_row_gets_the_dropped_bias_verdict():
    verdict = bl.exercise(0).check(bl.linear_bias_batched_only)
    assert verdict.kind == "check" and "[3]" in verdict.render()
    assert verdict.hints == [bl.HINTS["bias dropped"][0]]
