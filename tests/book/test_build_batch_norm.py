"""The train-and-inference chapter's build-it (BatchNorm's forward, both paths): the reference
passes; each planted wrong forward is refused with its own named slip; the NumPy simulation
the slips are named from agrees with minidl's BatchNorm when it has no slip."""

from __future__ import annotations

import numpy as np
import pytest

from minidl_book import build_batch_norm


def test_reference_passes():
    assert build_batch_norm.exercise(4).find_failure(build_batch_norm.batch_norm_forward) is None


@pytest.mark.parametrize("planted", sorted(build_batch_norm.PLANTED))
def test_planted_wrong_forward_is_refused_with_its_hint(planted):
    wrong, kind, phrase = build_batch_norm.PLANTED[planted]
    verdict = build_batch_norm.exercise(4).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert phrase in verdict.text, verdict.text
    assert "Traceback" not in verdict.render()


def test_the_simulation_without_slips_is_minidls_batchnorm():
    case = build_batch_norm.chapter_case()
    real = build_batch_norm._minidl(case)
    simulated = build_batch_norm.simulate(case)
    for name, value in simulated.items():
        np.testing.assert_allclose(real[name].to_numpy(), value, rtol=1e-5, atol=1e-6)


def test_the_chapter_case_reads_the_stale_mean_burn_printed():
    from minidl_book.modes import vec

    out = build_batch_norm.bn_run(build_batch_norm.batch_norm_forward,
                                  build_batch_norm.chapter_case())
    assert vec(out["step 2 running_mean.value()"]) == "[0.009881697, 0.09698707, 0.1868625]"


def test_calling_the_layer_itself_breaks_the_rule():
    def borrowed(bn, x):
        return bn(x)

    verdict = build_batch_norm.exercise(2).find_failure(borrowed)
    assert verdict is not None and verdict.kind == "rule", verdict


def test_a_fold_without_detach_is_refused_as_keeping_the_graph():
    """Outputs, gradients and values all agree without detach(); only the running state
    still holding the graph tells it apart, and the verdict must name it."""
    from minidl.tensor.module import batch_norm

    def forgets_detach(bn, x):
        if not (bn.training.is_enabled() and x.device.is_autodiff()):
            mean, var = bn.running_mean.value(), bn.running_var.value()
            return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)
        c, m = x.shape[1], bn.momentum
        mean = x.mean_dim(0).reshape([c])
        var = ((x - mean.reshape([1, c])) ** 2).mean_dim(0).reshape([c])
        bn.running_mean.update(bn.running_mean.value_sync() * (1 - m) + mean * m)
        bn.running_var.update(bn.running_var.value_sync() * (1 - m) + var * m)
        return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)

    verdict = build_batch_norm.exercise(4).find_failure(forgets_detach)
    assert verdict is not None and verdict.kind == "check", verdict
    assert "still in the graph" in verdict.text and "detach()" in verdict.text, verdict.text


def test_a_named_slip_opens_its_own_hint_first(capsys):
    """Each slip the checker names opens the hint that mends it (Hint 1 of 2), then the
    general one; another slip starts its own ladder; the reference still passes after."""
    ex = build_batch_norm.exercise(4)
    ex.check(build_batch_norm.flag_only)
    first = capsys.readouterr().out
    assert "Hint 1 of 2: Test both at the top" in first, first
    ex.check(build_batch_norm.flag_only)
    second = capsys.readouterr().out
    assert "Hint 2 of 2: Replay the steps" in second, second
    ex.check(build_batch_norm.keras_momentum)
    keras = capsys.readouterr().out
    assert "Hint 1 of 2: new = value_sync() * (1 - momentum)" in keras, keras
    for wrong, _, _ in build_batch_norm.PLANTED.values():
        verdict = ex.find_failure(wrong)
        assert any(p in verdict.text for p, _ in build_batch_norm.SLIP_HINTS), verdict.text
    assert ex.check(build_batch_norm.batch_norm_forward)


def test_epsilon_outside_the_square_root_is_named_with_its_own_hint(capsys):
    """sqrt(var) + eps instead of sqrt(var + eps): refused, named, and its hint says where
    epsilon goes (the reader panel's unnamed slip)."""
    ex = build_batch_norm.exercise(4)
    verdict = ex.find_failure(build_batch_norm.eps_outside_sqrt)
    assert verdict is not None and "outside the square root" in verdict.text, verdict
    ex.check(build_batch_norm.eps_outside_sqrt)
    assert "Hint 1 of 2: Divide by (var + epsilon).sqrt()" in capsys.readouterr().out


def test_value_on_the_variance_only_is_named_with_its_own_hint(capsys):
    """The fourth reader's mixed slip (value_sync() for the mean, value() for the variance
    on the training path) got a bare numeric diff; it is named, with its own hint."""
    ex = build_batch_norm.exercise(4)
    verdict = ex.find_failure(build_batch_norm.var_reads_value)
    assert verdict is not None and "running_var.value() but" in verdict.text, verdict
    ex.check(build_batch_norm.var_reads_value)
    assert "Hint 1 of 2: On the training path read value_sync() of both" in (
        capsys.readouterr().out)


@pytest.mark.parametrize("wrong, hint", [
    (build_batch_norm.keras_var_only, "Hint 1 of 2: The same fold for both"),
    (build_batch_norm.fixed_momentum, "Hint 1 of 2: m = bn.momentum"),
    (build_batch_norm.var_never_updated, "Hint 1 of 2: After the mean's update"),
])
def test_the_sixth_readers_unnamed_slips_get_their_own_hint(wrong, hint, capsys):
    """Keras's order on the running variance only, a momentum of 0.1 typed in, and a
    forgotten running_var.update() each got a bare "expected …, found …"; each is named
    and opens the hint that mends it."""
    ex = build_batch_norm.exercise(4)
    ex.check(wrong)
    assert hint in capsys.readouterr().out


def test_a_forgotten_fold_opens_the_rule_not_the_code(capsys):
    """The fourth reader of round 4: a training path with no update() got, as Hint 1, the
    whole fold line. The hint names the rule; the reader still writes the code."""
    from minidl.tensor.module import batch_norm

    def never_folds(bn, x):
        c = x.shape[1]
        mean, var = x.mean_dim(0).reshape([c]), x.var_bias(0).reshape([c])
        return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)

    ex = build_batch_norm.exercise(4)
    verdict = ex.find_failure(never_folds)
    assert verdict is not None and "left the running statistics alone" in verdict.text
    ex.check(never_folds)
    out = capsys.readouterr().out
    assert "Hint 1 of 2: The rule, per statistic" in out, out
    hint = out.split("Hint 1 of 2:")[1]
    assert "update(bn." not in hint and "value_sync() *" not in hint, hint
    for _, mend in build_batch_norm.SLIP_HINTS:  # no hint hands out a whole fold line
        assert ".update(bn.running_" not in mend, mend
