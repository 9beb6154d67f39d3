"""The store chapter's answer readers (minidl_book/store_models.py): right answers written
another way pass, plausible wrong ones do not."""

import pytest

from minidl_book.store_models import (
    KEY_REASON_HINT,
    SKIPPED_HINT,
    WRONG_EXCEPTION_HINT,
    Applied,
    applied_names,
    count_or_sum,
    draws_answer,
    key_reason,
    none_applied,
    outcome_answer,
    partial_load_slip,
)


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


@pytest.mark.parametrize("answer, ok", [
    ("10 — not 11", True), ("10, not 11", True),
    ("10 (with num_batches_tracked 11)", False), ("10 (11 with the counter)", False)])
def test_ex1_a_negated_second_count_passes_a_hedge_does_not(answer, ok):
    assert count_or_sum(answer, 10) is ok


def test_ex2_a_label_then_the_count():
    assert draws_answer("once per param: 4", 4)
    assert not draws_answer("once per param: 8", 4)


@pytest.mark.parametrize("answer, ok", [
    ("it does not, the shapes differ", True), ("not without validate(False)", True),
    ("it doesn't", True), ("it does", False), ("loads without error", False)])
def test_ex3_does_not_answers_the_question(answer, ok):
    assert outcome_answer(answer, "error") is ok


@pytest.mark.parametrize("answer, ok", [
    ("1 of 10", True), ("only the bias of fc", True), ("2 of 10", False),
    ("only the weight of fc", False)])
def test_ex4_count_of_total_and_bias_of_fc(answer, ok):
    assert applied_names(answer, ("fc.bias",)) is ok


@pytest.mark.parametrize("answer, ok", [
    ("10, since num_batches_tracked is not saved", True),
    ("ten, since the counter is not saved", True), ("10, 8 params and 2 buffers", True),
    ("10, or 11", False), ("10 or 11", False), ("10, maybe 11", False),
    ("10, 11 with the counter", False), ("11, because the counter is saved", False),
    ("10, 8 params and 3 buffers", False)])
def test_ex1_a_count_then_a_comma_and_its_reason_is_a_statement(answer, ok):
    assert count_or_sum(answer, 10) is ok


@pytest.mark.parametrize("answer, ok", [
    ("4, one per random param", True), ("4, one per param drawn", True),
    ("4, two weights and two biases", True), ("5, one per param", False),
    ("4, or 8", False), ("0, saving draws nothing", False)])
def test_ex2_a_count_then_a_comma_and_its_reason_is_a_statement(answer, ok):
    assert draws_answer(answer, 4) is ok


@pytest.mark.parametrize("answer, ok", [
    ("the 4 conv and linear weights and biases", True), ("4 weights and biases", True),
    ("2 weights and biases", False), ("not 4", False), ("4 or 2", False)])
def test_ex2_a_count_inside_a_sentence(answer, ok):
    assert draws_answer(answer, 4) is ok


def test_show_never_breaks_a_line_inside_a_shape(capsys):
    from minidl_book.store_models import show

    show({"bn.beta": [6], "bn.gamma": [6], "bn.running_mean": [6], "bn.running_var": [6],
          "conv.bias": [6], "conv.weight": [6, 3, 3, 3], "fc.bias": [5],
          "fc.weight": [96, 5], "ln.beta": [96], "ln.gamma": [96]})
    out = capsys.readouterr().out
    assert all(line.count("[") == line.count("]") and len(line) <= 80
               for line in out.splitlines())


def test_show_never_breaks_a_key_of_a_list(capsys):
    """A list of keys is one [...]: it may break between keys, never inside one (a reader
    saw 'bn.w' / 'eight' on two lines)."""
    from minidl_book.store_models import show

    keys = ["bn.beta", "bn.gamma", "bn.running_mean", "bn.running_var", "bn.weight",
            "conv.bias", "conv.weight", "fc.bias", "fc.weight", "ln.beta", "ln.weight"]
    show(keys)
    out = capsys.readouterr().out
    words = {w.strip("[]',") for w in out.split()}
    assert set(keys) <= words and all(len(line) <= 80 for line in out.splitlines()), out


_EIGHT = Applied(("fc.bias",), 9)  # Ex 'eight channels': fc.bias applied, 9 errors


@pytest.mark.parametrize("answer", ["1 tensor: fc.bias; 9 errors",
                                    "1 (fc.bias), the other 9 are errors", "1, but 9 errors",
                                    "one, the other nine fail", "1 applied and 9 errors",
                                    "fc.bias; the rest are shape mismatches", "1 of 11"])
def test_applied_names_reads_the_error_count_apart(answer):
    """A reader's report: "1 tensor: fc.bias; 9 errors" was refused (9 read as a second
    count of the applied) with a hint that sent a right reader back to the derivation."""
    assert applied_names(answer, _EIGHT)


@pytest.mark.parametrize("answer", ["1; 8 errors", "1 (fc.bias), the other 10 are errors",
                                    "2; 9 errors", "fc.weight; 9 errors", "9 errors",
                                    "not fc.bias; 9 errors", "all but fc.bias"])
def test_applied_names_refuses_a_wrong_error_count_or_applied(answer):
    assert not applied_names(answer, _EIGHT)


@pytest.mark.parametrize("answer", ["no, the fc tensors are skipped", "no, fc is left out",
                                    "no, it leaves fc out", "No - fc.weight and fc.bias "
                                    "are ignored", "yes, fc is skipped"])
def test_outcome_answer_refuses_a_load_with_tensors_left_out(answer):
    """A reader's report: "no, the fc tensors are skipped" was accepted, a wrong model
    (what validate(False) does: the load goes through without them)."""
    assert not outcome_answer(answer, "error")
    assert partial_load_slip(answer, "error") == SKIPPED_HINT


@pytest.mark.parametrize("answer", ["no, it fails; nothing is skipped",
                                    "it fails, fc is not skipped", "no", "no, shape mismatch"])
def test_outcome_answer_keeps_a_failure_with_nothing_left_out(answer):
    assert outcome_answer(answer, "error") and partial_load_slip(answer, "error") is None


def test_the_skipped_slip_hint_only_for_left_out_answers():
    assert partial_load_slip("yes", "error") is None and partial_load_slip("it loads", "error") is None
    assert outcome_answer("loads, fc skipped", "loads")


@pytest.mark.parametrize("answer", ["it raises a KeyError", "no, KeyError", "raises TypeError",
                                    "No, a RuntimeError", "it fails with an IndexError"])
def test_outcome_answer_refuses_an_exception_the_load_does_not_raise(answer):
    """A reader's report: "it raises a KeyError" was accepted (a load raises ApplyFailed,
    a ValueError)."""
    assert not outcome_answer(answer, "error")
    assert partial_load_slip(answer, "error") == WRONG_EXCEPTION_HINT


@pytest.mark.parametrize("answer", ["it raises ApplyFailed", "no, it raises a ValueError",
                                    "raises a StoreError", "it raises an exception",
                                    "no, an error is raised", "No: ApplyFailed (ValueError)"])
def test_outcome_answer_keeps_the_exceptions_a_load_raises(answer):
    assert outcome_answer(answer, "error") and partial_load_slip(answer, "error") is None


@pytest.mark.parametrize("answer", ["no: Missing keys error", "no, missing keys",
                                    "No \u2014 missing keys", "it fails with unexpected keys",
                                    "no, fc.weight and fc.bias are missing",
                                    "fails, key mismatch", "no: the keys don't match"])
def test_outcome_answer_refuses_a_key_problem_as_the_reason(answer):
    """A reader's report: "no: Missing keys error" was accepted, the right outcome for the
    wrong reason (every key matches; allow_partial would excuse missing ones anyway)."""
    assert key_reason(answer)
    assert not outcome_answer(answer, "error")
    assert partial_load_slip(answer, "error") == KEY_REASON_HINT


@pytest.mark.parametrize("answer", ["no", "no, shape mismatch",
                                    "No: allow_partial excuses missing keys, not shapes",
                                    "it fails: no missing keys, but fc's shapes differ",
                                    "fails, not because of missing keys: a shape mismatch",
                                    "no, it fails: it only forgives missing keys",
                                    "no, the keys match but the shapes do not"])
def test_outcome_answer_keeps_a_shape_reason_that_mentions_keys(answer):
    assert not key_reason(answer)
    assert outcome_answer(answer, "error") and partial_load_slip(answer, "error") is None


_HALF = Applied((), 10)  # Ex 'half precision': nothing applied, 10 dtype errors


@pytest.mark.parametrize("answer", [0, "0", "zero", "none", "None of them", "no tensors",
                                    "not one", "zero tensors; all 10 are errors",
                                    "0, all 10 are errors", "none (10 dtype errors)",
                                    "none: 10 errors", "zero, ten errors",
                                    "0 (all ten float16 tensors fail the dtype check)"])
def test_none_applied_reads_none_and_a_right_error_count(answer):
    assert none_applied(answer, _HALF)


@pytest.mark.parametrize("answer", ["zero, 11 errors", "none (9 dtype errors)",
                                    "0; 8 errors", "10", "1", "all", "none, 10 are cast",
                                    "0 errors, 10 are loaded", "10; 0 errors",
                                    "2, 10 errors"])
def test_none_applied_refuses_a_wrong_error_count_or_count(answer):
    """A reader's report: "zero, 11 errors" was accepted (the load lists 10), while the
    eight-channel exercise refuses "1; 8 errors": a stated error count must be right."""
    assert not none_applied(answer, _HALF)


# The reader panel's cases (read3-store): the idea decides, not the wording or punctuation.
@pytest.mark.parametrize("answer", ["0 \u2014 fails with ApplyFailed", "0, it raises ApplyFailed",
                                    "0 - fails", "none (it raises)", "1 \u2014 fails with ApplyFailed"])
def test_a_validate_false_load_said_to_raise_is_refused(answer):
    """validate(False) loads go through: a count beside "it raises" is the wrong idea."""
    assert not none_applied(answer, _HALF)
    assert not applied_names(answer, Applied(("fc.bias",), 9))


@pytest.mark.parametrize("answer", ["0, nothing is cast", "0: validate(False) does not cast",
                                    "0, it converts nothing", "none; no tensor is loaded"])
def test_none_applied_reads_a_negated_cast_clause_as_the_reason(answer):
    """A reader's report (read4-store): the solution's own "0, it converts nothing" was
    refused, as any clause naming a cast was, even one saying nothing is cast."""
    assert none_applied(answer, _HALF)


@pytest.mark.parametrize("answer", ["0, everything is cast", "0: validate(False) casts them",
                                    "none, 10 are converted", "0, all loaded"])
def test_none_applied_still_refuses_a_cast_clause_said_to_happen(answer):
    assert not none_applied(answer, _HALF)


@pytest.mark.parametrize("answer", ["nothing applied, load succeeds", "none; the load succeeds",
                                    "0 (no error raised)", "0, all 10 fail their dtype check"])
def test_none_applied_keeps_a_load_said_to_go_through(answer):
    assert none_applied(answer, _HALF)


@pytest.mark.parametrize("answer", ["only the fc bias", "the fc bias", "just the fc layer's bias"])
def test_applied_names_reads_a_layer_and_its_tensor_in_words(answer):
    assert applied_names(answer, ("fc.bias",))


@pytest.mark.parametrize("answer", ["only the fc weight", "fc bias and fc weight"])
def test_applied_names_refuses_the_wrong_tensor_in_words(answer):
    assert not applied_names(answer, ("fc.bias",))


@pytest.mark.parametrize("answer", ["it fails because allow_partial only skips missing keys",
                                    "it fails: allow_partial skips only missing keys",
                                    "no, allow_partial ignores missing keys, not shapes"])
def test_outcome_answer_keeps_what_allow_partial_skips_as_the_reason(answer):
    assert outcome_answer(answer, "error") and partial_load_slip(answer, "error") is None


def test_outcome_answer_still_refuses_the_fc_tensors_skipped():
    answer = "no, allow_partial skips the fc tensors"
    assert not outcome_answer(answer, "error")
    assert partial_load_slip(answer, "error") == SKIPPED_HINT


_HALF_COUNTED = Applied((), 10, 1)  # the live truth: 10 dtype errors, the counter ignored


@pytest.mark.parametrize("answer", ["0 (10 errors + 1 ignored)", "0; 10 errors, 1 ignored",
                                    "zero (ten errors plus one ignored)",
                                    "0, 10 errors and the counter ignored",
                                    "none: the dtypes mismatch, and validate(False) skips "
                                    "them instead of casting",
                                    "0, skipped rather than cast"])
def test_none_applied_reads_the_answer_before_a_trailing_note(answer):
    """A reader's report (r1-store): a right count with a note on the ignored counter, and
    a reason saying validate(False) skips "instead of casting", were refused."""
    assert none_applied(answer, _HALF_COUNTED)


@pytest.mark.parametrize("answer", ["0 (10 errors + 2 ignored)", "0 (11 errors + 1 ignored)",
                                    "1 (10 errors + 1 ignored)", "0, casting instead of skipping",
                                    "none (9 dtype errors + 1 ignored)"])
def test_none_applied_still_checks_the_note(answer):
    assert not none_applied(answer, _HALF_COUNTED)
