"""The capture chapter numbers a call one way: the number capture's and verify's messages give
(``call 46``) is the listing's ``t46``, the line of the same op, and the side-by-side figure's
``k``."""

from __future__ import annotations

import re

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.capture import CaptureError, capture
from minidl.nn import CrossEntropyLossConfig, LinearConfig, Relu, Sequential
from minidl.optim import SgdConfig
from minidl_book import build_guard, capture_lab, capture_runs

DEVICE = Device.flex().autodiff()
RNG = np.random.default_rng(0)
X = Tensor.from_numpy(RNG.standard_normal((8, 12)).astype(np.float32), DEVICE)
Y = Tensor.from_numpy(RNG.integers(0, 3, 8).astype(np.int64), DEVICE)


def trainer():
    """The chapter's seeded 12-16-3 SGD trainer: ``(state, step(x, y, lr))``."""
    DEVICE.seed(5)
    model = Sequential(LinearConfig(12, 16).init(DEVICE), Relu(),
                       LinearConfig(16, 3).init(DEVICE))
    state = {"model": model, "optim": SgdConfig().init()}
    loss_fn = CrossEntropyLossConfig().init()

    def step(x, y, lr):
        loss = loss_fn(state["model"](x), y)
        state["model"] = state["optim"].step(lr, state["model"], loss.backward())
        return loss

    return state, step


def listed(op_line: str) -> tuple[int, str]:
    """``(k, op)`` of a listing line ``tk = op(...)``."""
    found = re.match(r"\s+t(\d+) = ([\w.]+)\(", op_line)
    assert found, op_line
    return int(found.group(1)), found.group(2)


@pytest.fixture(scope="module")
def listing() -> dict[int, str]:
    """The listing of the trainer captured with its rate declared: ``{k: line}``."""
    lines = capture_lab.listing(capture(DEVICE, trainer()[1], X, Y, 0.1)).splitlines()
    return {listed(line)[0]: line for line in lines if re.match(r"\s+t\d+ = ", line)}


def scheduled():
    """The trainer reading its own rate from a schedule (refused at capture)."""
    _, step = trainer()
    rates = iter([0.1 * 0.9 ** i for i in range(10)])
    return lambda x, y: step(x, y, next(rates))


def test_a_refusal_names_the_listing_line_of_its_op(listing):
    with pytest.raises(CaptureError) as err:
        capture(DEVICE, scheduled(), X, Y)
    k, op = re.search(r"call (\d+) \((\w+),", str(err.value)).groups()
    assert op == "float_mul_scalar"
    # the same call, not only the same op: the first of the four updates' rate products,
    # the one the listing gives the first rate, s0
    assert listed(listing[int(k)]) == (int(k), op) and ", s0)" in listing[int(k)]


def test_the_build_its_classify_names_the_same_call(listing):
    runs = capture_lab.recorded_runs(DEVICE, scheduled(), X, Y, names=())
    with pytest.raises(CaptureError) as err:
        build_guard.classify(runs.run1, runs.run2, runs.inputs, runs.equal)
    k, op = re.search(r"call (\d+) \((\w+)\)", str(err.value)).groups()
    assert listed(listing[int(k)]) == (int(k), "float_" + op)
    assert ", s0)" in listing[int(k)]


def test_a_verify_message_names_the_listing_line_of_its_op(listing):
    rate = [0.1]
    _, step = trainer()
    graph = capture(DEVICE, lambda x, y: step(x, y, rate[0]), X, Y, verify=True)
    rate[0] = 0.0  # the eager step beside the replay trains at 0: the state parts
    with pytest.raises(CaptureError) as err:
        graph.replay(X, Y)
    slot, k, op = re.search(r"state (\d+) .*made by call (\d+) (\w+)\)",
                            str(err.value)).groups()
    assert op in listing[int(k)] and f"out=st{slot})" in listing[int(k)]


def test_the_listing_keeps_the_programs_numbers(listing):
    """No renumbering: the two device queries (17, 23) leave gaps, and every line's k is
    the recorded call k of the same op."""
    graph = capture(DEVICE, trainer()[1], X, Y, 0.1)
    assert sorted(listing) == [k for k, op in enumerate(graph.program.names)
                               if not op.endswith("_device")]
    for k, line in listing.items():
        name = graph.program.names[k]
        assert listed(line)[1] == name or f"# {name}, in place" in line, (k, line)


def test_the_side_by_side_kinds_use_the_same_k(listing):
    graph = capture(DEVICE, trainer()[1], X, Y, 0.1)
    events = capture_runs.recording(DEVICE, trainer()[1], X, Y, 0.1)
    calls = capture_runs.call_kinds(graph, events)
    assert [c["k"] for c in calls if c["replayed"]] == sorted(listing)
    kinds = {c["kind"] for c in calls}
    assert kinds == {"kernel", "kernel, in place", "device query", "host read", "guard"}
    placed = [c["k"] for c in calls if c["kind"] == "kernel, in place"]
    assert all("in place" in listing[k] for k in placed) and len(placed) == 4
    assert [c["kind"] for c in calls if c["k"] == 17] == ["device query"]
    labels = [capture_runs._block_text(b) for b in capture_runs.blocks(calls)]
    assert ("float_device: device query", "skipped: makes no array") in labels
    assert capture_runs.draw_recording_and_replay(graph, events) is not None
