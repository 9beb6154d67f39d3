"""The chapters' build exercises: each reference solution passes; each planted wrong one fails
with the verdict a reader should see (wrong value, wrong gradient, forbidden op, wrong shape)."""

from __future__ import annotations

import numpy as np
import pytest

from minidl_book import (
    build_backend,
    build_guard,
    build_layer,
    build_linear,
    build_softplus,
)

EXERCISES = {"softplus": build_softplus, "backend": build_backend, "layer": build_layer,
             "linear": build_linear, "guard": build_guard}
REFERENCES = {"softplus": build_softplus.Softplus, "backend": build_backend.Complete,
              "layer": build_layer.RmsNormConfig, "linear": build_linear.linear,
              "guard": build_guard.guard}


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_reference_solution_passes(name):
    assert EXERCISES[name].exercise(max_examples=10).find_failure(REFERENCES[name]) is None


PLANTED = [(name, planted) for name, module in sorted(EXERCISES.items()) for planted in module.PLANTED]


@pytest.mark.parametrize(("name", "planted"), PLANTED)
def test_planted_wrong_solution_gets_its_verdict(name, planted):
    wrong, kind = EXERCISES[name].PLANTED[planted]
    verdict = EXERCISES[name].exercise(max_examples=10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()


def test_capture_classify_reference_passes_and_planted_classifiers_get_their_verdicts():
    """The capture chapter's build-it (classify the arrays of two recorded runs)."""
    ex = build_guard.classify_exercise(max_examples=10)
    assert ex.find_failure(build_guard.classify) is None
    for name, (wrong, kind) in build_guard.CLASSIFY_PLANTED.items():
        verdict = build_guard.classify_exercise(max_examples=10).find_failure(wrong)
        assert verdict is not None and verdict.kind == kind, (name, verdict)
        assert "Traceback" not in verdict.render()


def test_softplus_wrong_gradient_is_caught_by_both_references():
    ex = build_softplus.exercise(10)
    verdict = ex.find_failure(build_softplus.SoftplusWrongGrad)
    assert verdict.output == "grad" and "(PyTorch)" in verdict.text
    ex.references = ex.references[1:]  # central differences alone catch it too
    verdict = ex.find_failure(build_softplus.SoftplusWrongGrad)
    assert verdict.output == "grad" and "float64 central differences" in verdict.text


def test_softplus_self_consistent_wrong_forward_does_not_pass():
    verdict = build_softplus.exercise(10).find_failure(build_softplus.SoftplusSelfConsistent)
    assert verdict.kind == "value" and verdict.output in ("out", "grad")


def test_softplus_keeping_two_arrays_is_named():
    verdict = build_softplus.exercise(5).find_failure(build_softplus.SoftplusKeepsBoth)
    assert "['out', 'tensor']" in verdict.text


def test_softplus_numpy_is_named_with_its_line():
    verdict = build_softplus.exercise(5).find_failure(build_softplus.SoftplusNumpy)
    assert verdict.rule == "no NumPy" and "np.log1p" in verdict.text and "forward" in verdict.call


def test_backend_borrowed_op_names_the_other_backend_and_the_line():
    verdict = build_backend.exercise(5).find_failure(build_backend.Borrowed)
    assert "NdArray.float_exp" in verdict.text and "return NdArray.float_exp(tensor)" in verdict.call


def test_forgetful_backend_is_refused_without_float_exp():
    with pytest.raises(TypeError, match="required op\\(s\\): float_exp"):
        type("Incomplete", (build_backend.ForgetfulNdArray,), {})


def test_layer_hidden_from_the_module_walk_is_named_before_any_value():
    verdict = build_layer.exercise(5).find_failure(build_layer.TensorFieldConfig)
    assert verdict.kind == "check" and "found params []" in verdict.text


def test_layer_reference_matches_burns_documented_example():
    # burn's rms.rs test: arange(0..9) as [3, 3], epsilon 1e-5, gamma ones
    from minidl import Device, Tensor

    layer = build_layer.RmsNormConfig(3).init(Device.flex())
    out = layer(Tensor.arange(0, 9, device=Device.flex()).float().reshape([3, 3])).to_numpy()
    expected = [[0.0, 0.7746, 1.5492], [0.7348, 0.9798, 1.2247], [0.8514, 0.9933, 1.1352]]
    assert abs(out - expected).max() < 1e-4


def test_linear_in_pytorchs_layout_fails_at_the_readers_matmul_with_minidls_message():
    verdict = build_linear.exercise(10).find_failure(build_linear.linear_torch_layout)
    assert verdict.kind == "error" and "weight.transpose()" in verdict.text
    assert "inner dimension" in verdict.text and "Traceback" not in verdict.render()


def test_linear_without_its_bias_gets_a_hint_of_its_own():
    """A dropped bias is not told to drop a transpose: its verdict and hint name the bias."""
    ex = build_linear.exercise(10)
    verdict = ex.check(build_linear.linear_bias_dropped)
    assert verdict.kind == "check" and "no bias" in verdict.text
    assert verdict.hints and all("transpose" not in h for h in verdict.hints)
    assert "bias" in verdict.hints[-1]


def test_linear_bias_shaped_for_a_2d_output_only_is_refused_on_a_3d_input():
    verdict = build_linear.exercise(10).find_failure(build_linear.linear_bias_for_2d_only)
    assert verdict.kind == "error" and "rank" in verdict.text
    assert "f32[2, 2, 3]" in verdict.render()


def test_softplus_numpy_operator_on_the_primitive_is_refused():
    """``1 + B.float_exp(x)`` names no NumPy function, yet it is NumPy's ``+`` on Flex's array:
    the run on Wgpu (a WgpuTensor has no operators) refuses it at the reader's line."""
    from minidl_book.build_default_op import wgpu_missing

    if wgpu_missing() is not None:
        pytest.skip(wgpu_missing())
    verdict = build_softplus.exercise(5).find_failure(build_softplus.SoftplusOperator)
    assert verdict.kind == "error" and "WgpuTensor" in verdict.text
    assert "B's ops" in verdict.text and "1 + B.float_exp" in verdict.render()


@pytest.mark.parametrize(("planted", "cause", "words"), [
    ("gamma not reshaped", "rank", "same rank"),
    ("epsilon outside the root", "nan", "inside the root"),
    ("gamma not a Param", "structure", "Param fields"),
    # self._gamma: the walk skips a leading "_", the trap the chapter teaches; say so
    ("gamma named _gamma", "underscore", "starts with '_'"),
    # x.square().mean(): a rank-1 rms also fails with "different ranks", but the fix is
    # mean_dim, not a reshape of gamma
    ("mean over every number", "mean", "mean_dim"),
    # gamma.unsqueeze(0): right on a rank-2 x only; the fixed rank-3 case refuses it
    ("gamma unsqueezed once", "rank", "x.rank - 1 ones"),
])
def test_layer_slips_get_the_hint_for_their_cause(planted, cause, words, capsys):
    ex = build_layer.exercise(max_examples=10)
    verdict = ex.check(build_layer.PLANTED[planted][0])
    assert ex.cause == cause and len(verdict.hints) == 1 and words in verdict.hints[0]


def test_layer_failing_case_says_what_gamma_and_g_are():
    verdict = build_layer.exercise(max_examples=10).find_failure(build_layer.EpsOutsideConfig)
    assert "g = " in verdict.inputs and "the upstream gradient" in verdict.inputs
    assert "loaded into gamma by load_record" in verdict.inputs


def test_layer_that_hard_codes_epsilon_is_refused_by_name():
    """Each case builds RmsNormConfig(d).with_epsilon(e): a forward that adds 1e-5 whatever the
    config says (right on the default config only) is named, with the hint for that slip."""
    ex = build_layer.exercise(max_examples=10)
    verdict = ex.check(build_layer.HardEpsConfig)
    assert verdict.kind == "check" and "ignores its config's epsilon" in verdict.text
    assert ex.cause == "epsilon" and "self.epsilon" in verdict.hints[0]
    assert "with_epsilon(" in verdict.inputs
    # the failing case is the probe the message talks about, not the generated x
    assert "[[0.01" in verdict.inputs and "the probe row" in verdict.inputs
    assert "upstream gradient" not in verdict.inputs


def test_layer_reference_agrees_with_torch_at_each_epsilon():
    for eps in build_layer.EPSILONS:
        case = {"x": np.full((2, 3), 0.01, np.float32), "gamma": np.ones(3, np.float32),
                "g": np.ones((2, 3), np.float32), "epsilon": eps}
        assert build_layer.exercise(1).verdict_for(build_layer.RmsNormConfig, case) is None
