"""The two walks the reader builds: autodiff's backward walk and a module's parameter walk.

Each reference solution passes, and each planted wrong one gets the verdict kind it must.
"""

from __future__ import annotations

import pytest

from minidl_book import build_backward_walk, build_param_walk

WALKS = {"backward": (build_backward_walk, build_backward_walk.backward_walk),
         "params": (build_param_walk, build_param_walk.named_params)}


@pytest.mark.parametrize("name", sorted(WALKS))
def test_reference_solution_passes(name):
    module, reference = WALKS[name]
    assert module.exercise(max_examples=5).find_failure(reference) is None


@pytest.mark.parametrize(("name", "planted"), [
    (name, planted) for name, (module, _) in sorted(WALKS.items()) for planted in module.PLANTED
])
def test_planted_solution_gets_its_verdict(name, planted):
    module, _ = WALKS[name]
    wrong, kind = module.PLANTED[planted]
    verdict = module.exercise(max_examples=5).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict and verdict.text


@pytest.mark.parametrize(("planted", "words", "hint"), [
    ("the library's parameters()", "library's own walk", "named_fields"),
    ("leading dot", "start with a dot", "if path else name"),
    ("dict keyed by index", "not its position", "value.items()"),
    ("keeps flags", "flag(s) as params", "is_flag"),
    ("sorted dict keys", "wrong order", "do not sort"),
])
def test_param_walk_slips_get_their_own_verdict_and_hint(planted, words, hint, capsys):
    ex = build_param_walk.exercise(max_examples=2)
    verdict = ex.check(build_param_walk.PLANTED[planted][0])
    assert words in verdict.text, verdict.text
    assert len(verdict.hints) == 1 and hint in verdict.hints[0], verdict.hints


def test_the_walk_cards_say_the_models_they_run_not_generated_cases():
    from minidl_book import build_map_params

    for ex in (build_param_walk.exercise(), build_map_params.exercise()):
        card = ex._repr_markdown_()
        assert "generated cases" not in card and "six fixed models" in card, card


def test_a_walk_testing_a_literal_attribute_is_judged_by_what_it_does(tmp_path):
    """hasattr(value.val(), "shape") names its attribute with a literal: no rule is broken
    (the watch once refused it as a name it could not read); the walk draws, and says so."""
    import importlib.util

    path = tmp_path / "cell.py"
    path.write_text(
        "from minidl.module import Module, Param\n"
        "def named_params(module):\n"
        "    found = {}\n"
        "    def walk(value, path):\n"
        "        if isinstance(value, Param):\n"
        "            if hasattr(value.val(), 'shape'):\n"
        "                found[path] = value\n"
        "        elif isinstance(value, Module):\n"
        "            for name, field in value.named_fields():\n"
        "                walk(field, f'{path}.{name}' if path else name)\n"
        "        elif isinstance(value, (list, tuple)):\n"
        "            for i, item in enumerate(value):\n"
        "                walk(item, f'{path}.{i}')\n"
        "        elif isinstance(value, dict):\n"
        "            for key, item in value.items():\n"
        "                walk(item, f'{path}.{key}')\n"
        "    walk(module, '')\n"
        "    return found\n")
    spec = importlib.util.spec_from_file_location("cell", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    verdict = build_param_walk.exercise(max_examples=2).find_failure(module.named_params)
    assert verdict.kind == "check" and "your walk drew" in verdict.text, verdict.text


def test_literal_attribute_names_are_read_whatever_the_object_expression():
    from minidl_book.watch import _constant_attr_calls

    def calls(value, n, c):
        hasattr(value.val(), "shape")
        getattr(value.x, "shape", None)
        getattr(value, n if c else "shape")
        getattr(value, n)

    names = sorted(_constant_attr_calls(calls.__code__).values())
    assert names == ["shape", "shape"]


def test_adding_in_place_is_caught_on_the_explicit_example_and_named():
    """``pending[i] += g`` corrupts the other parent of an ``Add`` (both get one array):
    random programs rarely show it, so an explicit example must, with a hint naming it."""
    wrong, _ = build_backward_walk.PLANTED["adds in place (+=)"]
    verdict = build_backward_walk.exercise(max_examples=1).find_failure(wrong)
    assert verdict is not None and verdict.kind == "check", verdict and verdict.text
    assert "+=" in verdict.text and "fresh sum" in verdict.text


def test_a_step_run_twice_is_named_by_its_op_not_a_raw_node_id():
    """The push-down walk runs a shared step once per path; the verdict names that step by
    the ``ops`` entry (or the loss part) the failing case prints, not by a node id the
    reader cannot find."""
    wrong, _ = build_backward_walk.PLANTED["depth first, step per path"]
    verdict = build_backward_walk.exercise(max_examples=5).find_failure(wrong)
    assert "ran" in verdict.text and "#" not in verdict.text, verdict.text
    assert "ops[" in verdict.text or "the loss's" in verdict.text, verdict.text
