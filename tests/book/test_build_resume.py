"""The training chapter's build-it ``resume``: the reference passes, each planted slip is
refused with the reason and hint written for it."""

from __future__ import annotations

import inspect

import pytest

from minidl import Device
from minidl_book import build_resume as br


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    device = Device.flex().autodiff()
    folder = tmp_path_factory.mktemp("ckpt")
    run = br.uninterrupted(folder, 2, device)
    return br.exercise(folder, 1, run, device)


def test_reference_passes(checker):
    assert checker.find_failure(br.resume) is None
    assert checker.steps == 40  # a whole epoch


@pytest.mark.parametrize("name", sorted(br.PLANTED))
def test_planted_slip_refused_with_its_hint(checker, name):
    wrong, phrase = br.PLANTED[name]
    verdict = checker.find_failure(wrong)
    assert verdict is not None and not verdict.ok
    assert phrase in (verdict.text + " ".join(verdict.hints))


@pytest.mark.parametrize("name", sorted(br.PLANTED))
def test_check_refuses_a_planted_slip_as_a_reader_sees_it(checker, name, capsys):
    # check() is what a reader's cell calls: a refusal is falsy (Verdict.__bool__ is ok), and
    # check() once turned every refusal into a pass with `find_failure(...) or Verdict(True...)`
    wrong, _ = br.PLANTED[name]
    verdict = checker.check(wrong)
    assert not verdict.ok and "✗" in capsys.readouterr().out


def test_check_refuses_a_resume_that_returns_nothing(checker):
    assert not checker.check(lambda ckpt_dir, epoch, device: None).ok


def test_reference_typed_into_a_cell_passes(checker):
    namespace = {k: v for k, v in vars(br).items() if not k.startswith("__")}
    exec(compile(inspect.getsource(br.resume), "<cell>", "exec"), namespace)
    assert checker.find_failure(namespace["resume"]) is None


def test_a_model_returned_through_valid_is_told_inference_mode(checker):
    # the device is seeded right here: "the dropout masks differ, seed it" was the wrong cause
    verdict = checker.find_failure(br.returned_valid)
    assert verdict is not None and "inference mode" in verdict.text
    assert "Seed it" not in " ".join(verdict.hints)
