"""The training chapter's build-it ``train_step``: the reference agrees with the PyTorch
twin, each planted slip is refused with the reason and hint written for it."""

from __future__ import annotations

import pytest

from minidl import Device
from minidl_book import build_train_step as bt


@pytest.fixture(scope="module")
def checker():
    return bt.TrainStepExercise(Device.flex().autodiff(), steps=3)


def test_reference_passes(checker):
    assert checker.find_failure(bt.train_step) is None


@pytest.mark.parametrize("name", sorted(bt.PLANTED))
def test_planted_slip_refused_with_its_hint(checker, name):
    wrong, phrase = bt.PLANTED[name]
    verdict = checker.find_failure(wrong)
    assert verdict is not None and not verdict.ok
    assert phrase in (verdict.text + " ".join(verdict.hints))


@pytest.mark.parametrize("name", sorted(bt.PLANTED))
def test_check_refuses_a_planted_slip_as_a_reader_sees_it(checker, name, capsys):
    wrong, _ = bt.PLANTED[name]
    assert not checker.check(wrong).ok and "✗" in capsys.readouterr().out


def test_check_refuses_a_step_that_returns_nothing(checker):
    assert not checker.check(lambda model, adam, images, targets: None).ok


def test_reference_typed_into_a_cell_passes(checker):
    namespace = {k: v for k, v in vars(bt).items() if not k.startswith("__")}
    exec(compile(bt.inspect.getsource(bt.train_step), "<cell>", "exec"), namespace)
    assert checker.find_failure(namespace["train_step"]) is None


def test_raw_gradients_without_from_grads_pass(checker):
    # minidl's optimizer also takes backward()'s Gradients (burn's takes GradientsParams only)
    def raw(model, adam, images, targets):
        loss = bt.loss_fn(model(images), targets)
        return adam.step(3e-3, model, loss.backward()), loss

    assert checker.find_failure(raw) is None
