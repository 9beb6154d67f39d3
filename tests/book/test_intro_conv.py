"""The intro's map exercise: the route of a Conv2d forward, read from a trace, and the
checker reading a route written in several ways, refusing linear's detour, a route
without autodiff and a wrong order."""

import pytest

from minidl import Device
from minidl_book.intro_conv import (
    PACKAGE_OF_BOX,
    RouteExercise,
    conv_route,
    route_of,
    route_read,
    route_unclear,
    same_route,
)
from minidl_book.intro_map import trace_layer

CONV = ("nn", "tensor", "dispatch", "autodiff", "flex")
LINEAR = ("nn", "tensor", "dispatch", "backend", "dispatch", "autodiff", "flex")


def test_the_routes_are_read_from_traces():
    assert conv_route() == CONV
    assert conv_route(Device.flex()) == ("nn", "tensor", "dispatch", "flex")
    # Dispatch.linear is written in the protocol's file but runs as Dispatch's
    assert route_of(trace_layer().first()) == LINEAR


@pytest.mark.parametrize("answer", [
    "nn, tensor, dispatch, autodiff, flex",
    "minidl.nn → minidl.tensor → minidl.dispatch → minidl.autodiff → minidl.backends.flex",
    ["minidl.nn", "minidl.tensor", "minidl.dispatch", "minidl.autodiff",
     "minidl.backends.flex"],
    ("nn", "tensor", "dispatch", "autodiff", "backends.flex"),
    "burn-nn > burn-tensor > burn-dispatch > burn-autodiff > burn-flex",
    "nn -> module -> tensor -> dispatch -> Autodiff[Flex] -> Flex",  # the param read too
    "nn, tensor, dispatch, the autodiff backend, the flex kernels",
    "NN tensor Dispatch Autodiff Flex", "nn\ntensor\ndispatch\nautodiff\nflex",
    "nn then tensor then dispatch then autodiff then flex",
])
def test_the_route_written_in_plausible_ways_passes(answer):
    assert same_route(answer, CONV) and not route_unclear(answer)


@pytest.mark.parametrize("answer", [
    "nn, tensor, dispatch, backend, dispatch, autodiff, flex",  # linear's detour
    [PACKAGE_OF_BOX[b] for b in LINEAR],
    "nn, tensor, dispatch, backend, autodiff, flex",
    "nn, tensor, dispatch, flex",  # without autodiff: the plain device's route
    "nn, tensor, dispatch, flex, autodiff",  # wrong order
    "nn, tensor, autodiff, dispatch, flex", "tensor, nn, dispatch, autodiff, flex",
    "nn, tensor, dispatch, autodiff, flex, backend",  # on into the protocol
    "tensor, dispatch, autodiff, flex", "module, nn, tensor, dispatch, autodiff, flex",
    "autodiff", 5, None, ["nn", 3],
])
def test_a_wrong_route_is_refused(answer):
    assert not same_route(answer, CONV)


def test_a_sentence_that_denies_is_asked_for_the_route():
    assert route_read("it skips the backend") is None
    assert route_unclear("nn, tensor, dispatch, flex (not autodiff)")
    assert route_unclear("hello") and not route_unclear(["nn"])


def test_the_exercise_reads_a_list_and_asks_for_a_route_it_cannot_read(capsys):
    runs = []
    ex = RouteExercise("Which boxes?", truth=lambda: runs.append(1) or CONV,
                       compare=same_route, unclear=route_unclear,
                       ask="Write the route.", hint="the hint")
    assert ex.check(["nn", "tensor", "dispatch", "autodiff", "flex"])
    assert "Right" in capsys.readouterr().out
    assert not ex.check("it skips the backend")
    out = capsys.readouterr().out
    assert "Write the route." in out and "the hint" not in out and len(runs) == 1
    assert not ex.check(["nn", 3])
    assert "Write the route." in capsys.readouterr().out and len(runs) == 1
    assert not ex.check("nn, tensor, dispatch, flex")
    assert "the hint" in capsys.readouterr().out
