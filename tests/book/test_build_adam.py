"""The training chapter's build-it ``adam_step``: the reference agrees with
``torch.optim.Adam`` on the twin, each planted slip is refused and named, and right answers
written differently pass."""

from __future__ import annotations

import inspect

import pytest

from minidl import Device
from minidl_book import build_adam as ba


@pytest.fixture(scope="module")
def checker():
    return ba.AdamExercise(Device.flex().autodiff())


def test_reference_passes(checker):
    assert checker.find_failure(ba.adam_step) is None


@pytest.mark.parametrize("name", sorted(ba.PLANTED))
def test_planted_slip_refused_and_named(checker, name):
    wrong, phrase = ba.PLANTED[name]
    verdict = checker.find_failure(wrong)
    assert verdict is not None and not verdict.ok
    assert phrase in (verdict.text + " ".join(verdict.hints))


def test_check_refuses_a_slip_as_a_reader_sees_it(checker, capsys):
    assert not checker.check(ba.no_bias_correction).ok and "✗" in capsys.readouterr().out


def test_placeholder_asks_for_a_solution(checker, capsys):
    def adam_step(lr, model, grads, state):
        ...

    assert not checker.check(adam_step).ok and "Write your solution" in capsys.readouterr().out


def test_reference_typed_into_a_cell_passes(checker):
    namespace = {}
    exec(compile(inspect.getsource(ba.adam_step), "<cell>", "exec"), namespace)
    assert checker.find_failure(namespace["adam_step"]) is None


def test_variant_keyed_by_path_with_burns_eps_passes(checker):
    # state by path, values returned by path, burn's folded corrections (adam.rs:194-208)
    def variant(lr, model, grads, state):
        out = {}
        for path, param in model.parameters().items():
            g = grads.get(param.id)
            if g is None:
                continue
            s = state.setdefault(path, {"t": 0, "m": 0.0, "v": 0.0})
            s["t"] += 1
            s["m"] = s["m"] * 0.9 + g * 0.1
            s["v"] = s["v"] * 0.999 + g.square() * 0.001
            c2 = (1 - 0.999 ** s["t"]) ** 0.5
            factor = c2 / (1 - 0.9 ** s["t"])
            step = s["m"] * factor / (s["v"].sqrt() + 1e-5 * c2)
            out[path] = param.val().inner() - step * lr
        return out

    assert checker.find_failure(variant) is None


def test_a_frozen_param_that_moves_is_refused(checker):
    def moves_frozen(lr, model, grads, state):
        out = ba.adam_step(lr, model, grads, state)
        for param in model.parameters().values():
            out.setdefault(param.id, param.val().inner() * 0.5)
        return out

    verdict = checker.find_failure(moves_frozen)
    assert verdict is not None and "frozen" in verdict.text


def test_first_step_without_bias_correction_is_about_3_lr():
    ad = Device.flex().autodiff()
    assert abs(ba.first_step_ratio(ba.adam_step, ad) - 1) < 0.02
    assert 2.9 < ba.first_step_ratio(ba.no_bias_correction, ad) < 3.2


def test_t_advanced_for_a_frozen_param_is_named_apart_from_a_global_count(checker):
    # per-param t, but advanced before asking for the gradient: conv1's t runs on at step 3
    def frozen_t_runs_on(lr, model, grads, state):
        new = {}
        for param in model.parameters().values():
            t, m, v = state.get(param.id, (0, 0.0, 0.0))
            t += 1
            g = grads.get(param.id)
            if g is None:
                state[param.id] = (t, m, v)
                continue
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            state[param.id] = (t, m, v)
            m_hat, v_hat = m / (1 - 0.9**t), v / (1 - 0.999**t)
            new[param.id] = param.val().inner() - lr * m_hat / (v_hat.sqrt() + 1e-5)
        return new

    verdict = checker.find_failure(frozen_t_runs_on)
    said = verdict.text + " ".join(verdict.hints)
    assert "frozen" in said and "stays where it was" in said and "whole model" not in said
    global_t = checker.find_failure(ba.PLANTED["one step count for the model"][0])
    assert "whole model" in global_t.text and "stays where it was" not in global_t.text


def test_pytorchs_default_eps_is_named(checker):
    # the reference as a reader types it, with torch.optim.Adam's default eps in its signature
    source = inspect.getsource(ba.adam_step).replace("eps=1e-5", "eps=1e-8")
    namespace = {}
    exec(compile(source, "<cell>", "exec"), namespace)
    verdict = checker.find_failure(namespace["adam_step"])
    assert verdict is not None and "eps = 1e-8" in verdict.text


def test_state_keyed_by_position_that_raises_is_named_not_a_raw_error(checker):
    # a reader's version: a counter over the params with a gradient; at step 3 conv1 has
    # none, so conv2's gradient meets conv1's moments and the add raises
    def by_position(lr, model, grads, state, beta_1=0.9, beta_2=0.999, eps=1e-5):
        out, k = {}, 0
        for p in model.parameters().values():
            g = grads.get(p.id)
            if g is None:
                continue
            t, m, v = state.get(k, (0, 0.0, 0.0))
            t += 1
            m, v = beta_1 * m + (1 - beta_1) * g, beta_2 * v + (1 - beta_2) * g * g
            state[k] = (t, m, v)
            k += 1
            m_hat, v_hat = m / (1 - beta_1**t), v / (1 - beta_2**t)
            out[p.id] = p.val().inner() - lr * m_hat / (v_hat.sqrt() + eps)
        return out

    verdict = checker.find_failure(by_position)
    assert verdict is not None and not verdict.ok
    assert "keyed by position; key by param id" in verdict.text
    assert "TensorCheckError: ===" not in verdict.text  # not the raw error
