"""The intro's route exercise: the straight route of a Conv2d forward and the detour of a
Linear forward, read from traces, and the checker reading linear's detour written in
several ways, refusing the straight route, a detour without the way back and wrong
orders."""

import pytest

from minidl import Device
from minidl_book.intro_map import trace_layer
from minidl_book.intro_route import (
    PACKAGE_OF_BOX,
    RouteExercise,
    conv_route,
    linear_route,
    route_of,
    route_read,
    route_unclear,
    same_route,
    without_repeats,
)

CONV = ("nn", "tensor", "dispatch", "autodiff", "flex")
LINEAR = ("nn", "tensor", "dispatch", "backend", "dispatch", "autodiff", "flex")


def test_the_routes_are_read_from_traces():
    assert conv_route() == CONV
    assert conv_route(Device.flex()) == ("nn", "tensor", "dispatch", "flex")
    # Dispatch.linear is written in the protocol's file but runs as Dispatch's
    assert linear_route() == LINEAR == route_of(trace_layer().first())
    assert linear_route(Device.flex()) == tuple(b for b in LINEAR if b != "autodiff")


@pytest.mark.parametrize("answer", [
    "nn, tensor, dispatch, backend, dispatch, autodiff, flex",
    "minidl.nn → minidl.tensor → minidl.dispatch → minidl.backend → minidl.dispatch → "
    "minidl.autodiff → minidl.backends.flex",
    [PACKAGE_OF_BOX[b] for b in LINEAR],
    ("nn", "tensor", "dispatch", "backend", "dispatch", "autodiff", "backends.flex"),
    "burn-nn > burn-tensor > burn-dispatch > burn-backend > burn-dispatch > burn-autodiff"
    " > burn-flex",
    "nn -> module -> tensor -> dispatch -> backend -> dispatch -> Autodiff[Flex] -> Flex",
    "nn, tensor, Dispatch.linear, the protocol's default body, Dispatch.float_matmul, "
    "Autodiff[Flex], Flex",
    "nn → tensor → dispatch → the default body (minidl.backend) → dispatch → autodiff "
    "→ flex",
    "NN tensor Dispatch protocol Dispatch Autodiff Flex",
    "minidl.nn minidl.tensor minidl.dispatch minidl.backend minidl.dispatch "
    "minidl.autodiff minidl.backends.flex",
    "nn\ntensor\ndispatch\nbackend\ndispatch\nautodiff\nflex",
    "nn then tensor then dispatch then backend then dispatch then autodiff then flex",
    # spaces only, and the page's own name for the protocol's box (both read as conv's)
    "nn tensor dispatch backend dispatch autodiff flex",
    "nn → tensor → dispatch → default body → dispatch → autodiff → flex",
    "nn -> tensor -> dispatch -> default body -> dispatch -> autodiff -> flex",
    # the loop back up and down written once per call of the default body
    "nn, tensor, dispatch, backend, dispatch, autodiff, flex, backend, dispatch, "
    "autodiff, flex, backend, dispatch, autodiff, flex",
])
def test_the_detour_written_in_plausible_ways_passes(answer):
    assert same_route(answer, LINEAR) and not route_unclear(answer)


@pytest.mark.parametrize("answer", [
    "nn, tensor, dispatch, autodiff, flex",  # the straight route, a forwarder's
    [PACKAGE_OF_BOX[b] for b in CONV],
    "nn, tensor, dispatch, backend, autodiff, flex",  # not back through Dispatch
    "nn, tensor, dispatch, backend, flex",
    "nn, tensor, dispatch, autodiff, flex, backend",  # the default body below Flex
    "nn, tensor, dispatch, autodiff, backend, flex",
    "nn, tensor, backend, dispatch, autodiff, flex",
    "nn, tensor, dispatch, backend, dispatch, flex",  # without autodiff: the plain device's
    "nn, tensor, dispatch, backend, dispatch, flex, autodiff",
    "tensor, nn, dispatch, backend, dispatch, autodiff, flex",
    "tensor, dispatch, backend, dispatch, autodiff, flex",
    "module, nn, tensor, dispatch, backend, dispatch, autodiff, flex",
    "nn, tensor, dispatch, backend, dispatch, autodiff, flex, backend",
    "nn, tensor, dispatch, backend, dispatch, autodiff, flex, dispatch, autodiff, flex",
    "backend", 7, None, ["nn", 3],
    "nn, tensor, dispatch, the autodiff backend, flex",  # a qualifier, not a box
    "nn tensor dispatch autodiff flex",
    "nn → tensor → dispatch → default body → autodiff → flex",
])
def test_a_wrong_route_is_refused(answer):
    assert not same_route(answer, LINEAR)


def test_only_a_whole_loop_back_is_dropped():
    loops = LINEAR + ("backend", "dispatch", "autodiff", "flex") * 2
    assert without_repeats(loops) == LINEAR
    assert without_repeats(LINEAR + ("backend",)) == LINEAR + ("backend",)
    assert without_repeats(CONV) == CONV


def test_a_sentence_that_denies_is_asked_for_the_route():
    assert route_read("it skips the backend") is None
    assert route_unclear("nn, tensor, dispatch, flex (not autodiff)")
    assert route_unclear("hello") and not route_unclear(["nn"])


def test_the_exercise_reads_a_list_and_asks_for_a_route_it_cannot_read(capsys):
    runs = []
    ex = RouteExercise("Which boxes?", truth=lambda: runs.append(1) or LINEAR,
                       compare=same_route, unclear=route_unclear,
                       ask="Write the route.", hint="the hint")
    assert ex.check(list(LINEAR))
    assert "Right" in capsys.readouterr().out
    assert not ex.check("it skips the backend")
    out = capsys.readouterr().out
    assert "Write the route." in out and "the hint" not in out and len(runs) == 1
    assert not ex.check(["nn", 3])
    assert "Write the route." in capsys.readouterr().out and len(runs) == 1
    assert not ex.check("nn, tensor, dispatch, autodiff, flex")  # the straight route
    assert "the hint" in capsys.readouterr().out
