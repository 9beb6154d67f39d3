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
