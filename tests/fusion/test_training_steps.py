"""The book's training steps on the fusion device: the training chapter's CNN (batch 32, Adam)
and the MLP 784-256-10 (SGD), from ``minidl_book.workloads``. Fused results equal eager Flex's
over several steps (losses, updated parameters, BatchNorm's running statistics); a step makes
a known number of drains and kernel launches (a sync point that sneaks back fails here); the
second identical step performs no search. Each runs twice: as a user gets the device (small
ops with ready inputs run eagerly on Flex) and recording every op (``Stream.eager_below = 0``)."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backends.flex.fusion import FusionFlex
from minidl.dispatch import Device
from minidl.fusion.stream import Stream
from minidl_book.workloads import CNN_LR, minidl_cnn_step, minidl_mlp_step

# every test here sets the policy itself (the suite's default records every op)
pytestmark = pytest.mark.fusion_eager_policy

STEPS = 3
NOISE_ONLY = {"conv1.bias", "conv2.bias"}


def _state(step) -> dict[str, np.ndarray]:
    """Every parameter and BatchNorm running statistic of the step's current model."""
    model = step.state["model"]
    out = {path: p.val().to_numpy() for path, p in model.parameters().items()}
    for name in ("bn1", "bn2"):
        bn = getattr(model, name, None)
        if bn is not None:
            out[f"{name}.running_mean"] = bn.running_mean.value().to_numpy()
            out[f"{name}.running_var"] = bn.running_var.value().to_numpy()
    return out


@pytest.fixture(params=["as_shipped", "record_every_op"])
def policy(request, monkeypatch):
    """The fusion device as shipped, or with every op recorded (``eager_below = 0``)."""
    if request.param == "record_every_op":
        monkeypatch.setattr(Stream, "eager_below", 0)
    return request.param


@pytest.mark.parametrize("build", [minidl_cnn_step, minidl_mlp_step], ids=["cnn", "mlp"])
def test_fused_steps_equal_eager_flex_steps(build, policy):
    eager = build(Device.flex().autodiff())
    eager_losses = [eager() for _ in range(STEPS)]
    eager_state = _state(eager)
    fused = build(Device.fusion().autodiff())  # reseeds the inner device: the same dropout masks
    fused_losses = [fused() for _ in range(STEPS)]
    np.testing.assert_allclose(fused_losses, eager_losses, rtol=1e-5, atol=1e-6)
    fused_state = _state(fused)
    assert fused_state.keys() == eager_state.keys() and len(fused_state) >= 4
    for path, want in eager_state.items():
        if path in NOISE_ONLY:
            # a conv bias before BatchNorm has a zero gradient in exact arithmetic (the norm
            # subtracts the channel mean), so Adam's update of it is rounding noise over epsilon,
            # which differs with the order of the sums; Adam moves a value at most ~lr a step
            np.testing.assert_allclose(fused_state[path], want, atol=STEPS * CNN_LR, err_msg=path)
            continue
        np.testing.assert_allclose(fused_state[path], want, rtol=1e-4, atol=1e-5, err_msg=path)


# drains per step, steady state. Recording every op: conv2d, the two max-pools,
# argmax/gather/scatter of the cross-entropy and the three backward module ops each drain (the
# fusion chapter lists them); the MLP's gather, argmax and scatter. As shipped, the CNN's tensors
# are all under Stream.eager_below (every op runs eagerly, nothing is recorded) and the MLP
# records its large ops (784x256 and 128x256), drained once, at the loss's argmax
COUNTS = {("cnn", "record_every_op"): 9, ("mlp", "record_every_op"): 3, ("cnn", "as_shipped"): 0,
          ("mlp", "as_shipped"): 1}
BUILDS = {"cnn": minidl_cnn_step, "mlp": minidl_mlp_step}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_a_step_drains_a_known_number_of_times_and_the_second_step_searches_nothing(name, policy):
    build, drains = BUILDS[name], COUNTS[name, policy]
    step = build(Device.fusion().autodiff())
    for _ in range(3):
        # the first three steps search: Adam's first update has a branch of its own, and each
        # step's update is recorded into the segment the next step's conv2d drains
        step()
    stream = FusionFlex.stream
    before = stream.counts()
    step()
    after = stream.counts()
    delta = {k: after[k] - before[k] for k in after}
    assert delta["searches"] == 0, delta
    assert delta["drains"] == drains, delta
    params = step.state["model"].parameters()
    if policy == "record_every_op":
        # every parameter's update fuses: more kernels than parameters (the optimizer's
        # updates alone are one kernel each, or fewer)
        assert delta["launches"] >= len(params) and delta["eager"] == 0, delta
    elif name == "cnn":
        # every op runs eagerly; Adam's update is one adam_step per parameter (171 ops a step,
        # where the rule's fourteen tensor ops per parameter made it 327)
        assert delta["recorded"] == 0 and 150 < delta["eager"] < 200, delta
    else:  # the large weight's update fuses into its gradient's matmul; the small ones run eagerly
        assert delta["recorded"] > 0 and delta["eager"] > 0 and delta["launches"] >= 2, delta
    reasons = [r.reason for r in stream.history[len(stream.history) - drains:]]
    assert not any("reshape" in r or "expand" in r or "swap_dims" in r for r in reasons), reasons


def test_as_shipped_the_cnn_updates_each_parameter_with_one_adam_step(policy):
    """Fusion[Flex] offers Flex's fused Adam kernel on ready handles (``minidl/fusion/eager.py``,
    a speed trick): as shipped, one ``adam_step`` per parameter runs eagerly; recording every op,
    Adam's tensor ops are recorded (and fused) instead."""
    from collections import Counter

    from minidl.fusion import STREAM_LISTENERS

    step = minidl_cnn_step(Device.fusion().autodiff())
    step(), step()
    eager: Counter = Counter()

    def listen(kind, **details):
        if kind == "eager":
            eager[details["op"]] += 1

    STREAM_LISTENERS.append(listen)
    try:
        step()
    finally:
        STREAM_LISTENERS.remove(listen)
    params = step.state["model"].parameters()
    if policy == "as_shipped":
        assert eager["adam_step"] == len(params) == 12, eager
    else:
        assert eager["adam_step"] == 0, eager


def test_as_shipped_the_cnn_step_costs_at_most_a_third_more_python_calls_than_on_flex():
    """Fusion's eager path is a wrapper over Flex's ops (the same ops run): its Python calls per
    step are the measure of its cost that a shared machine's load does not blur. 15,008 against
    7,078 with Adam's tensor ops through the wrapper, 10,533 with Flex's adam_step, 9,075 with
    the eager paths' fast paths (``minidl/fusion/eager.py``, ``record.py``)."""
    import cProfile
    import pstats

    def calls(device) -> int:
        step = minidl_cnn_step(device)
        step(), step()
        profile = cProfile.Profile()
        profile.enable()
        step()
        profile.disable()
        return pstats.Stats(profile).total_calls

    fusion, flex = calls(Device.fusion().autodiff()), calls(Device.flex().autodiff())
    assert fusion <= 1.35 * flex, (fusion, flex)
