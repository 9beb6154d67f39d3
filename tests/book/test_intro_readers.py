"""The intro's design checkers: right answers written differently pass, the plausible wrong
ones do not, and an answer with nothing to read in it is asked again."""

import pytest

from minidl_book.intro_readers import (
    chain_hedged,
    chain_read,
    chain_unclear,
    outcome_hedged,
    outcome_read,
    outcome_unclear,
    same_chain,
    same_outcome,
)


@pytest.mark.parametrize("answer", [
    "grad", "Grad", "yes", "Yes: Dispatch lifts x onto the autodiff device", True,
    "the weight gets a gradient", "it gets its gradient, x is lifted into the graph",
    "No error: the weight gets its gradient", "it does not raise; the weight has a grad",
    "yes, since the weight is on the autodiff device it records",
    "the matmul is recorded by Autodiff[Flex], so the weight gets a gradient",
])
def test_a_gradient_said_in_words_reads_grad(answer):
    assert same_outcome(answer, "grad") and not outcome_unclear(answer)


@pytest.mark.parametrize("answer", [
    "no grad", "no", "No: nothing records", False, "the weight's grad is None",
    "it runs but the weight gets no gradient", "nothing is recorded",
    "x is on Flex, so nothing records", "no gradient, it runs on Flex without error",
])
def test_no_gradient_said_in_words_reads_no_grad(answer):
    assert same_outcome(answer, "no grad") and not outcome_unclear(answer)


@pytest.mark.parametrize("answer", [
    "error", "an error", "it raises", "RuntimeError", "No, it raises a RuntimeError",
    "RuntimeError: Inference tensors cannot be saved for backward",
    "an exception: x cannot be saved for backward", "it raises, so no gradient",
    "the devices differ: ValueError", "autograd refuses to save x",
])
def test_an_error_said_in_words_reads_error(answer):
    assert same_outcome(answer, "error") and not outcome_unclear(answer)


@pytest.mark.parametrize("answer", ["it trains", "maybe", "it raises and the weight gets a "
                                    "gradient", "Device.flex()"])
def test_an_answer_with_no_single_outcome_is_asked_again(answer):
    assert outcome_read(answer) is None and outcome_unclear(answer)
    assert not any(same_outcome(answer, t) for t in ("grad", "no grad", "error"))


TRUTH = "Autodiff[Fusion[Flex]]"


@pytest.mark.parametrize("answer", [
    TRUTH, "autodiff[fusion[flex]]", "Autodiff<Fusion<Flex>>", "autodiff -> fusion -> flex",
    "Autodiff → Fusion[Flex] → Flex", "Autodiff wrapping Fusion wrapping Flex",
    "Flex inside Fusion inside Autodiff", "Dispatch -> Autodiff[Fusion[Flex]]",
    ["Autodiff", "Fusion", "Flex"], "Autodiff[Fusion[Flex]], then Fusion[Flex], then Flex",
    "Fusion[Flex] wrapped by Autodiff", "Autodiff[Fused[Flex]]",
])
def test_the_chain_written_in_plausible_ways_passes(answer):
    assert same_chain(answer, TRUTH)


@pytest.mark.parametrize("answer", [
    "Fusion[Autodiff[Flex]]", "Autodiff[Flex]", "Fusion[Flex]", "Autodiff[Flex] inside Fusion",
    "fusion -> autodiff -> flex", "Autodiff wrapped by Fusion", "Flex", "Autodiff[Fusion]",
    None, 3,
])
def test_a_wrong_chain_is_refused(answer):
    assert not same_chain(answer, TRUTH)


def test_a_sentence_naming_no_backend_is_asked_again():
    assert chain_unclear("the lazy one outside") and chain_read("Dispatch only") is None
    assert not chain_unclear(TRUTH) and not chain_unclear("Fusion[Autodiff[Flex]]")


@pytest.mark.parametrize("answer", ["Autodiff wrapping Fusion", "Autodiff[Fusion]", "Fusion",
                                    "autodiff -> fusion"])
def test_a_chain_that_stops_before_flex_is_asked_again_not_judged(answer):
    assert chain_unclear(answer) and not same_chain(answer, TRUTH)


@pytest.mark.parametrize("answer", [
    "Autodiff[Fusion[Flex]] or Fusion[Autodiff[Flex]]",
    "Autodiff[Fusion[Flex]], maybe Fusion[Autodiff[Flex]]",
    "Fusion[Autodiff[Flex]] / Autodiff[Fusion[Flex]]",
])
def test_a_hedge_naming_two_chains_is_refused(answer):
    assert chain_hedged(answer) and not same_chain(answer, TRUTH)
    assert not chain_unclear(answer)  # refused as a hedge, not asked to be read again


def test_one_chain_said_twice_is_no_hedge():
    answer = "Autodiff[Fusion[Flex]], i.e. Autodiff around Fusion around Flex"
    assert not chain_hedged(answer) and same_chain(answer, TRUTH)


@pytest.mark.parametrize("answer", [
    "x gets no grad but the weight does", "x: no grad; weight: grad", "no error",
    "it works", "It works: x is lifted", "x gets no gradient, the weight gets one",
])
def test_the_weight_gets_its_grad_said_beside_x_or_as_it_runs_reads_grad(answer):
    assert same_outcome(answer, "grad") and not outcome_unclear(answer)


@pytest.mark.parametrize("answer", [
    "the weight does not get a grad", "x: grad; weight: no grad", "it doesn't work",
    "no error, but nothing records",
])
def test_the_weight_denied_or_a_failure_is_not_grad(answer):
    assert not same_outcome(answer, "grad")


@pytest.mark.parametrize("answer", [
    "the weight's gradient is zero", "a zero gradient", "grad for the bias only",
    "only the bias gets a gradient", "the bias alone records",
])
def test_a_zero_gradient_or_the_bias_alone_is_refused_not_read_as_grad(answer):
    assert not same_outcome(answer, "grad") and not outcome_unclear(answer)


@pytest.mark.parametrize("answer", ["It raises? no, no grad", "grad or error",
                                    "maybe an error, maybe no grad"])
def test_two_outcomes_in_one_answer_are_a_hedge(answer):
    assert outcome_hedged(answer)


@pytest.mark.parametrize("answer", ["error?", "it raises", "no error: grad", "it works"])
def test_one_outcome_with_a_doubt_is_no_hedge(answer):
    assert not outcome_hedged(answer)


@pytest.mark.parametrize("answer", [
    "not Fusion[Autodiff[Flex]] but Autodiff[Fusion[Flex]]",
    "Autodiff[Fusion[Flex]], not Fusion[Autodiff[Flex]]",
    "Autodiff<Fusion<Flex>> rather than Fusion<Autodiff<Flex>>",
])
def test_the_right_chain_beside_a_denied_one_passes(answer):
    assert same_chain(answer, "Autodiff[Fusion[Flex]]")


@pytest.mark.parametrize("answer", [
    "not Autodiff[Fusion[Flex]] but Fusion[Autodiff[Flex]]",
    "Fusion[Autodiff[Flex]], not Autodiff[Fusion[Flex]]",
])
def test_the_wrong_chain_beside_the_right_one_denied_is_refused(answer):
    assert not same_chain(answer, "Autodiff[Fusion[Flex]]")


# reader r4: x is lifted as a constant (no gradient for x); the weight's gradient is xᵀ·1
@pytest.mark.parametrize("answer", [
    "grad for x", "a gradient for x", "x's grad", "the weight's gradient is all ones",
    "the weight gets a gradient of ones", "the weight gets an all-1s gradient",
])
def test_a_grad_for_x_or_an_all_ones_gradient_is_refused(answer):
    assert not same_outcome(answer, "grad")


@pytest.mark.parametrize("answer", [
    "grad: xᵀ times ones", "the weight gets x transposed times ones",
    "x's grad is None, the weight gets one", "no grad for x, grad for the weight",
])
def test_the_weights_grad_said_beside_x_or_as_x_transposed_passes(answer):
    assert same_outcome(answer, "grad")
