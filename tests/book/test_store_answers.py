"""The store chapter's answer readers (minidl_book/store_models.py): right answers written
another way pass, plausible wrong ones do not."""

import pytest

from minidl_book.store_models import applied_names, count_or_sum, draws_answer, outcome_answer


@pytest.mark.parametrize("answer", ["10", "ten", "8 params + 2 buffers", "8 + 2 = 10",
                                    "8 params, 2 buffers", "10 (8 params + 2 buffers)",
                                    "4 layers: 2+4+2+2", "10: conv 2, ..."])
def test_count_or_sum_reads_a_total_with_its_breakdown(answer):
    assert count_or_sum(answer, 10)


@pytest.mark.parametrize("answer", ["9", "8 + 1", "8 + 2 = 11", "10 (8 + 1)", "8 or 10",
                                    "24,576"])
def test_count_or_sum_refuses_wrong_or_inconsistent_totals(answer):
    assert not count_or_sum(answer, 10)


@pytest.mark.parametrize("answer", ["4 (the two weights and two biases)",
                                    "two weights and two biases", "2 weights + 2 biases",
                                    "conv.weight, conv.bias, fc.weight, fc.bias"])
def test_draws_answer_reads_number_words_in_sums(answer):
    assert draws_answer(answer, 4)


@pytest.mark.parametrize("answer", ["No \u2014 it raises", "no it fails", "no, it fails",
                                    "No", "it won't load", False])
def test_outcome_answer_reads_a_leading_no_as_the_answer(answer):
    assert outcome_answer(answer, "error")


@pytest.mark.parametrize("answer", ["no error", "no errors", "yes", "it loads", True,
                                    "loads without error", "no, it doesn't fail"])
def test_outcome_answer_refuses_loads(answer):
    assert not outcome_answer(answer, "error")


@pytest.mark.parametrize("answer", ["1", "one", "just fc.bias", "1, fc.bias",
                                    "fc.bias only (1)", ("fc.bias",)])
def test_applied_names_reads_count_and_names_together(answer):
    assert applied_names(answer, ("fc.bias",))


@pytest.mark.parametrize("answer", ["2, fc.bias", "not fc.bias", "fc.weight",
                                    "fc.bias, fc.weight", "eight", 0])
def test_applied_names_refuses_wrong_names_or_counts(answer):
    assert not applied_names(answer, ("fc.bias",))
