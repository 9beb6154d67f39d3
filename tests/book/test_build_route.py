"""The dispatch chapter's route build-it: the reference passes; each planted wrong routing
gets its verdict; minidl's own routing is back in place after every run, even a failing one."""

from __future__ import annotations

import pytest

from minidl.dispatch import route as route_module
from minidl_book import build_route


def test_reference_routing_passes():
    assert build_route.exercise().find_failure(build_route.routing_device) is None


@pytest.mark.parametrize("planted", sorted(build_route.PLANTED))
def test_planted_wrong_routing_gets_its_verdict(planted):
    wrong, kind = build_route.PLANTED[planted]
    verdict = build_route.exercise().find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()


def test_routing_and_listeners_are_restored():
    original = route_module._routing_device
    build_route.exercise().find_failure(build_route.first_device_only)
    assert route_module._routing_device is original and not route_module.ROUTE_LISTENERS


def _typed(source: str, name: str):
    """A reader's function, compiled from its text as a notebook cell would."""
    namespace = {"tensor_inputs": build_route.tensor_inputs,
                 "validate_checkpointing": build_route.validate_checkpointing}
    exec(compile(source, "<reader cell>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def test_a_typo_in_the_readers_code_is_blamed_on_their_line():
    source = (
        "def routing_device(op, args):\n"
        "    devices = [t.devce for _n, t in tensor_inputs(args)]\n"
        "    return devices[0] if devices else args['device']\n")
    verdict = build_route.exercise().find_failure(_typed(source, "routing_device"))
    assert verdict is not None and verdict.kind == "error", verdict
    text = verdict.render()
    assert "devce" in text and "line 2" in text, text
    assert "crashed inside a backend" not in text and "list of tensors" not in text, text


def test_an_error_in_the_readers_code_gets_no_list_hint():
    source = ("def routing_device(op, args):\n"
              "    raise RuntimeError('not yet')\n")
    ex = build_route.exercise()
    verdict = ex.find_failure(_typed(source, "routing_device"))
    assert verdict is not None and verdict.kind == "error", verdict
    assert "look inside it" not in verdict.render()


def test_the_last_input_deciding_passes():
    source = ("def routing_device(op, args):\n"
              "    devices = [t.device for _n, t in tensor_inputs(args)]\n"
              "    if not devices:\n"
              "        return args['device']\n"
              "    for d in devices:\n"
              "        if d != devices[-1]:\n"
              "            raise ValueError(f'{op}: Input tensor is on the wrong device')\n"
              "    ads = [d for d in devices if d.is_autodiff()]\n"
              "    for d in ads[1:]:\n"
              "        validate_checkpointing(op, ads[0], d)\n"
              "    return ads[-1] if ads else devices[-1]\n")
    assert build_route.exercise().find_failure(_typed(source, "routing_device")) is None


def test_rule_3_for_float_ops_only_is_refused_with_its_hint():
    verdict = build_route.exercise().find_failure(build_route.autodiff_floats_only)
    assert verdict is not None and verdict.kind == "check", verdict
    assert "whatever the op" in verdict.render() and "bool_and" in verdict.render()


def test_strategies_checked_only_against_a_first_autodiff_input_is_refused_with_its_hint():
    """cat([plain, autodiff, checkpointing]): minidl raises 'Autodiff strategy mismatch';
    a walk that compares strategies only with the first input lets it run."""
    verdict = build_route.exercise().find_failure(
        build_route.strategy_only_against_a_first_autodiff)
    assert verdict is not None and verdict.kind == "check", verdict
    text = verdict.render()
    assert "only with the first input" in text and "Tensor.cat" in text, text


def test_a_forgotten_creation_op_is_named_as_the_zeros_call():
    """A routing that forgets the op with no tensor input fails on Tensor.zeros, and the
    verdict's failing case names that call, not a linear scenario it happened to run in."""
    source = (
        "def routing_device(op, args):\n"
        "    devices = [t.device for _, t in tensor_inputs(args)]\n"
        "    autodiff = [d for d in devices if d.is_autodiff()]\n"
        "    for d in devices[1:]:\n"
        "        if d != devices[0]:\n"
        "            raise ValueError('wrong device')\n"
        "    for d in autodiff[1:]:\n"
        "        validate_checkpointing(op, autodiff[0], d)\n"
        "    return (autodiff or devices)[0]\n"
    )
    verdict = build_route.exercise().find_failure(_typed(source, "routing_device"))
    assert verdict is not None and "Tensor.zeros" in verdict.inputs, verdict
    assert "plain batch" not in verdict.inputs


def test_a_cat_scenarios_verdict_names_the_cats_inputs():
    verdict = build_route.exercise().find_failure(build_route.lists_not_walked)
    text = verdict.render()
    assert "cat of" in text and "Tensor.cat of a tensor on Device.flex()" in text, text
    assert "w and b" not in text, text


def test_the_banner_says_what_the_routing_is_checked_against():
    banner = build_route.exercise()._repr_markdown_()
    assert build_route.AGAINST in banner and "Checked against: PyTorch," not in banner
