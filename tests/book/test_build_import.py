"""The storing-and-loading chapter's build-it (import a pretrained body under a new head): the
reference passes, a solution that renames the old head away instead of skipping it passes
too, and each planted slip gets its verdict kind and the first hint of its own cause."""

from __future__ import annotations

import pytest

from minidl_book import build_import as bi


def test_reference_passes():
    assert bi.exercise(4).find_failure(bi.import_pretrained) is None


def test_renaming_the_old_head_away_is_right_too():
    def renames_head_away(store, model):
        store = (store.with_top_level_key("state_dict")
                 .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
                 .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
                 .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
                 .with_key_remapping(r"^classifier\.(.*)$", "old_head.$1")
                 .allow_partial(True))
        model, result = store.apply_to(model)
        return model, tuple(result.missing)

    assert bi.exercise(4).find_failure(renames_head_away) is None


@pytest.mark.parametrize("name", sorted(bi.PLANTED))
def test_planted_slip_gets_its_kind_and_its_own_hint(name):
    slip, kind, cause = bi.PLANTED[name]
    ex = bi.exercise(4)
    verdict = ex.check(slip)
    assert verdict.kind == kind and ex.cause == cause, (verdict.render(), ex.cause)
    assert verdict.hints == [bi.HINTS[cause][0]]
    assert "Traceback" not in verdict.render()


def test_a_loaded_head_is_refused():
    """Loading the file's head into a module of as many classes breaks the new task."""
    def loads_head(store, model):
        store = (store.with_top_level_key("state_dict")
                 .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
                 .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
                 .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
                 .allow_partial(True).validate(False))
        model, _ = store.apply_to(model)
        model.classifier.bias = model.classifier.bias.map(lambda t: t + 1.0)
        return model, ["classifier.weight", "classifier.bias"]

    verdict = bi.exercise(2).find_failure(loads_head)
    assert verdict is not None and verdict.kind == "check"
    assert "The head was loaded" in verdict.text


def test_crossed_rules_are_diagnosed_as_wrong_layers():
    """fc1's and fc2's rules swapped: the names did change, into the wrong layers (the biases,
    of one shape, load silently); the verdict names which file tensor each layer got, not
    'the body's names did not change'."""
    ex = bi.exercise(4)
    verdict = ex.check(bi.rules_swapped)
    assert ex.cause == "wrong layers", verdict.render()
    assert "fc1.bias got the file's features.1.0.bias" in verdict.text
    assert "fc2.bias got the file's features.0.0.bias" in verdict.text
    assert "did not change" not in verdict.text


def test_a_discarded_loaded_module_is_diagnosed_as_such():
    """The PyTorch in-place habit: load_into/apply_to return a NEW module; returning the one
    handed in is diagnosed as that, not as 'the body's names did not change' (the renaming
    was right)."""
    def load_into_discarded(store, model):
        store = (store.with_top_level_key("state_dict")
                 .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
                 .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
                 .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
                 .with_key_remapping(r"^classifier\.(.*)$", "old_head.$1")
                 .allow_partial(True))
        store.load_into(model)
        return model, ["classifier.weight", "classifier.bias"]

    for slip in (load_into_discarded, bi.module_discarded):
        ex = bi.exercise(4)
        verdict = ex.check(slip)
        assert ex.cause == "returned module discarded", verdict.render()
        assert verdict.hints == [bi.HINTS["returned module discarded"][0]]
        assert "names did not change" not in verdict.text
        assert "NEW store" not in verdict.render()


def test_a_missing_rule_is_named_by_the_file_keys_it_never_matched():
    """Chained rules that leave out features.1.1 (the LayerNorm): the renaming did take
    effect, so the verdict names the file keys no rule renamed, not 'reassign or chain
    the calls' (a reader's report: the chained solution got the dropped-store hint)."""
    ex = bi.exercise(4)
    verdict = ex.check(bi.rule_missing)
    assert ex.cause == "rule missing", verdict.render()
    assert "features.1.1.bias, features.1.1.weight to norm" in verdict.text
    assert "did not change" not in verdict.text
    assert "NEW store" not in verdict.render()


def test_a_left_out_typed_in_fails_on_another_head_name():
    """The checker's Classifier names its head classifier, head or out: a left_out typed in
    as the page's names (with the load right) passes the first fixed case and fails the
    next, whose verdict names the head's own tensors."""
    def typed_in(store, model):
        store = (store.with_top_level_key("state_dict")
                 .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
                 .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
                 .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
                 .allow_partial(True).validate(False))
        model, _ = store.apply_to(model)
        return model, ["classifier.weight", "classifier.bias"]

    assert bi.exercise(0).examples[0]["_head"] == "classifier"
    ex = bi.exercise(0)
    verdict = ex.find_failure(typed_in)
    assert verdict is not None and ex.cause == "left_out", verdict.render()
    assert "['out.bias', 'out.weight']" in verdict.text and "head='out'" in verdict.inputs
    assert {case["_head"] for case in bi.exercise(0).examples} == {"classifier", "out"}


@pytest.mark.parametrize("head", bi.HEADS)
def test_the_reference_passes_whatever_the_head_is_named(head):
    ex = bi.exercise(0)
    ex.examples = [bi._fixed_case(head)]
    assert ex.find_failure(bi.import_pretrained) is None
