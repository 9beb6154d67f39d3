"""The modules chapter's map build-it: ``map_params(module, fn)``, and the SGD step on it.

The reference passes; each planted slip gets its verdict kind, its own words and its own
hint; a reader's map written in a cell of its own (judged as the reader's code, calling the
book's ``with_fields``) passes; the SGD step built on the map matches minidl's SGD on an
untied model and keeps a tied pair tied, where minidl's optimizer splits it.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.nn import LinearConfig
from minidl.optim import SgdConfig
from minidl_book import build_map_params

PLANTED = build_map_params.PLANTED


def test_reference_solution_passes():
    assert build_map_params.exercise(max_examples=4).find_failure(
        build_map_params.map_params) is None


@pytest.mark.parametrize("planted", sorted(PLANTED))
def test_planted_solution_gets_its_verdict(planted):
    wrong, kind = PLANTED[planted]
    verdict = build_map_params.exercise(max_examples=4).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict and verdict.text


@pytest.mark.parametrize(("planted", "words", "hint"), [
    ("the library's Module.map", "library's own", "named_fields"),
    ("mutates in place", "changed the original module", "never assign"),
    ("new ids", "got a new id", "with_value"),
    ("dict entries skipped", "was not mapped", "a_dict.items()"),
    ("tied param mapped twice", "tie is broken", "param.id"),
    ("flags mapped", "called fn on a flag", "is_flag"),
    ("constants lost", "constant field", "not an empty one"),
    ("tuple rebuilt as a list", "its own kind", "type(value)"),
    ("sorted dict keys", "another order", "never sorted"),
    # copy.copy + setattr(new, name, ...): refused by the rules; the hint names with_fields
    ("setattr on a copy", "cannot read", "with_fields"),
    # setattr(module, name, ...) or module.__dict__[name] = ... on the module handed in:
    # the sandbox refuses both, but the verdict leads with the real bug, not the rule
    ("setattr on the original", "You changed the caller's model", "with_fields"),
    ("__dict__ write on the original", "You changed the caller's model", "with_fields"),
])
def test_each_slip_gets_its_own_verdict_and_hint(planted, words, hint, capsys):
    ex = build_map_params.exercise(max_examples=2)
    verdict = ex.check(PLANTED[planted][0])
    assert words.casefold() in verdict.text.casefold(), verdict.text
    assert len(verdict.hints) == 1 and hint.casefold() in verdict.hints[0].casefold(), \
        verdict.hints


@pytest.mark.parametrize("new_param", [
    "value.map(fn)",
    "value.with_value(fn(value.val()))",  # the hint's own words: calls the checker's fn
    "Param(value.id, fn(value.val()))",
])
def test_a_readers_map_in_its_own_cell_passes(new_param, tmp_path):
    """The reader's code is judged as the reader's: with_fields and the checker's fn must be
    helpers it may call (the fn handed in was once refused as "the checker's")."""
    path = tmp_path / "cell.py"
    path.write_text(
        "from minidl.module import Module, Param\n"
        "from minidl_book.module_fields import with_fields\n"
        "def map_params(module, fn):\n"
        "    done = {}\n"
        "    def go(value):\n"
        "        if isinstance(value, Param) and not value.is_flag():\n"
        "            if value.id not in done:\n"
        f"                done[value.id] = {new_param}\n"
        "            return done[value.id]\n"
        "        if isinstance(value, Module):\n"
        "            return with_fields(value, {n: go(f) for n, f in value.named_fields()})\n"
        "        if isinstance(value, (list, tuple)):\n"
        "            return type(value)(go(v) for v in value)\n"
        "        if isinstance(value, dict):\n"
        "            return {k: go(v) for k, v in value.items()}\n"
        "        return value\n"
        "    return go(module)\n")
    spec = importlib.util.spec_from_file_location("cell", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert build_map_params.exercise(max_examples=3).find_failure(module.map_params) is None


def _weights(model):
    return [p.val().to_numpy() for p in model.parameters().values()]


def test_sgd_on_the_map_matches_minidls_sgd_on_an_untied_model():
    ad = Device.flex().autodiff()
    ad.seed(3)
    model = LinearConfig(4, 3).init(ad)
    x = Tensor.from_numpy(np.random.default_rng(1).standard_normal((6, 4)).astype("f4"), ad)
    mine = build_map_params.sgd_step(model, (model(x) ** 2).mean().backward(), 0.1)
    theirs = SgdConfig().init().step(0.1, model, (model(x) ** 2).mean().backward())
    for a, b in zip(_weights(mine), _weights(theirs), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert [p.id for p in mine.parameters().values()] == list(
        p.id for p in model.parameters().values())
    assert mine.weight.val().is_require_grad()


def test_sgd_on_the_map_keeps_a_tied_pair_tied():
    from minidl_book.build_param_walk import Tied

    ad = Device.flex().autodiff()
    ad.seed(4)
    tied = Tied(ad)
    x = Tensor.from_numpy(np.random.default_rng(2).standard_normal((3, 4)).astype("f4"), ad)
    w0 = tied.first.weight.val().to_numpy().copy()
    loss = lambda m: (m.second(m.first(x)) ** 2).mean()  # noqa: E731
    mine = build_map_params.sgd_step(tied, loss(tied).backward(), 0.1)
    assert mine.first.weight is mine.second.weight
    assert not np.array_equal(mine.first.weight.val().to_numpy(), w0)
    theirs = SgdConfig().init().step(0.1, tied, loss(tied).backward())
    assert np.array_equal(theirs.second.weight.val().to_numpy(), w0)
    np.testing.assert_allclose(mine.first.weight.val().to_numpy(),
                               theirs.first.weight.val().to_numpy(), rtol=1e-6, atol=1e-7)


def test_a_dict_rebuilt_in_sorted_key_order_is_refused():
    """The walk's checker refused a walk that sorts a dict's keys; the map's accepted the
    same slip (``{k: go(v[k]) for k in sorted(v)}``), which reorders parameters() and the
    record on Blocks."""
    verdict = build_map_params.exercise(max_examples=2).check(
        build_map_params.PLANTED["sorted dict keys"][0])
    assert verdict.kind == "check" and "another order" in verdict.text, verdict.text
    assert "heads.left" in verdict.text and "never sorted" in verdict.hints[0]


@pytest.mark.parametrize("planted", ["setattr on the original", "__dict__ write on the original"])
def test_a_write_into_the_callers_model_is_told_before_the_sandbox_rule(planted, capsys):
    """A map that writes into the module it was handed broke a sandbox rule too (a computed
    setattr, a __dict__ read); the verdict once led with that rule ("a name the checker
    cannot read") and the lesson showed only in a hint."""
    verdict = build_map_params.exercise(max_examples=2).check(PLANTED[planted][0])
    assert verdict.kind == "check", verdict.text
    assert verdict.text.startswith("You changed the caller's model"), verdict.text
    assert "cannot read" not in verdict.text and "leads out" not in verdict.text
    assert "at 'stem.weight'" in verdict.text, verdict.text
