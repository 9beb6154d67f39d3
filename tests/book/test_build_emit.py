"""The capture chapter's emit build-it: the reference passes, each planted slip is refused
with its own reason, and the emitted source replays the real step as graph.replay does."""

from __future__ import annotations

import re

import numpy as np
import pytest

from minidl_book import build_emit

EXPECTED = {
    "state not written in place": "from step 2 on it diverges",
    "in place although a later call reads the old value": "reads the old value",
    "a state's copy left out": "never reached it",
    "a declared scalar frozen as N[i]": "the value at capture",
    "two declared floats swapped": "follow the calls",
    "inputs bound in reading order": "Bind inputs by their position",
}


@pytest.fixture(scope="module")
def checker():
    return build_emit.exercise(n_generated=10)


def test_the_reference_passes(checker):
    assert checker.find_failure(build_emit.emit) is None


@pytest.mark.parametrize("slip", sorted(build_emit.PLANTED))
def test_each_slip_is_named(checker, slip):
    verdict = checker.find_failure(build_emit.PLANTED[slip])
    assert verdict is not None and EXPECTED[slip] in verdict.text, verdict


def test_a_later_read_of_the_old_weight_is_copied_not_written_in_place(checker):
    """A generated step reads a weight after its update: the reference copies it after
    the last call; the all-in-place emit of the earlier book is refused by name."""
    cases = [c for c in checker.cases if "np.copyto" in build_emit.emit(
        **{k: c[k] for k in ("run1", "run2", "kinds", "inputs", "outputs")})]
    assert cases
    naive = build_emit.PLANTED["in place although a later call reads the old value"]
    verdict = checker.find_failure(naive)
    assert verdict is not None and "reads the old value" in verdict.text


def test_a_right_emit_written_otherwise_passes(checker):
    """The same program with its copies in another order passes."""
    def emit(run1, run2, kinds, inputs, outputs):
        source = build_emit.emit(run1, run2, kinds, inputs, outputs)
        lines = source.split("\n")
        copies = [ln for ln in lines if "np.copyto" in ln]
        rest = [ln for ln in lines if "np.copyto" not in ln]
        return "\n".join(rest[:-1] + copies[::-1] + rest[-1:])

    assert checker.find_failure(emit) is None


def _two_floats(checker):
    return [c for c in checker.cases
            if {"lr", "wd"} <= {x["number"] for x in c["run2"]}]


def test_swapped_declared_floats_are_refused(checker):
    """With lr and wd in one step, s0 and s1 swapped in the calls (or in the signature)
    feed the rate to the weight decay: refused, the call and both names said."""
    assert _two_floats(checker)

    def signature_swapped(run1, run2, kinds, inputs, outputs):
        source = build_emit.emit(run1, run2, kinds, inputs, outputs)
        head, body = source.split("\n", 1)
        return head.replace("s0, s1", "s1, s0") + "\n" + body

    for slip in (build_emit.PLANTED["two declared floats swapped"], signature_swapped):
        verdict = checker.find_failure(slip)
        assert verdict is not None and "'wd'" in verdict.text, verdict
        assert "'lr'" in verdict.text and "in call order" in verdict.text


def test_one_parameter_per_declared_name_passes(checker):
    """s0 for every lr read, s1 for every wd read (names in order of first use):
    the same program, accepted."""
    def per_name(run1, run2, kinds, inputs, outputs):
        source = build_emit.emit(run1, run2, kinds, inputs, outputs)
        names = list(dict.fromkeys(c["number"] for c in run2
                                   if isinstance(c["number"], str)))
        k = iter(range(len(run2)))
        order = [c["number"] for c in run2 if isinstance(c["number"], str)]

        def param(_):
            return f"s{names.index(order[next(k)])}"

        head, body = source.split("\n", 1)
        body = re.sub(r"\bs\d+\b", param, body)
        head = re.sub(r"(, )?s\d+", "", head).rstrip("):").rstrip(", ")
        params = [f"s{j}" for j in range(len(names))]
        head = ", ".join([head] + params) + "):" if params else head + "):"
        return head.replace("(, ", "(") + "\n" + body

    assert any(len(re.findall(r"\bs0\b", per_name(**{k: c[k] for k in (
        "run1", "run2", "kinds", "inputs", "outputs")}))) > 2 for c in checker.cases)
    assert checker.find_failure(per_name) is None


def test_a_placeholder_is_asked_for(checker, capsys):
    def emit(run1, run2, kinds, inputs, outputs):
        ...

    assert not checker.check(emit).ok


def test_the_real_step_replays_like_graph_replay():
    from minidl import Device, Tensor
    from minidl.capture import capture
    from minidl.nn import CrossEntropyLossConfig, LinearConfig, Relu, Sequential
    from minidl.optim import SgdConfig
    from minidl_book import build_guard, capture_lab

    device = Device.flex().autodiff()

    def trainer():
        device.seed(5)
        state = {"model": Sequential(LinearConfig(6, 5).init(device), Relu(),
                                     LinearConfig(5, 3).init(device)),
                 "optim": SgdConfig().init()}
        loss_fn = CrossEntropyLossConfig().init()

        def step(x, y, lr):
            loss = loss_fn(state["model"](x), y)
            state["model"] = state["optim"].step(lr, state["model"], loss.backward())
            return loss
        return step

    rng = np.random.default_rng(0)
    x = Tensor.from_numpy(rng.standard_normal((4, 6)).astype(np.float32), device)
    y = Tensor.from_numpy(rng.integers(0, 3, 4).astype(np.int64), device)
    runs = capture_lab.recorded_runs(device, trainer(), x, y, 0.1)
    kinds = build_guard.classify(runs.run1, runs.run2, runs.inputs, runs.equal)

    def losses(emit):
        r = capture_lab.recorded_runs(device, trainer(), x, y, 0.1)
        k = build_guard.classify(r.run1, r.run2, r.inputs, r.equal)
        fn = r.emitted(emit(r.run1, r.run2, k, r.input_order, r.outputs))
        return [float(fn(x, y, lr)[0][0]) for lr in (0.1, 0.05, 0.05)]

    g = capture(device, trainer(), x, y, 0.1)
    replay = runs.emitted(build_emit.emit(runs.run1, runs.run2, kinds, runs.input_order,
                                          runs.outputs))
    for lr in (0.1, 0.05, 0.2):
        np.testing.assert_allclose(replay(x, y, lr)[0], g.replay(x, y, lr).to_numpy(),
                                   rtol=1e-6)
    right = losses(build_emit.emit)
    stuck = losses(build_emit.PLANTED["state not written in place"])
    assert stuck[0] == right[0] and stuck[1] == stuck[2] == right[0] != right[1]
    frozen = losses(build_emit.PLANTED["a declared scalar frozen as N[i]"])
    assert frozen[:2] == right[:2] and frozen[2] != right[2]


def test_the_annotated_example_is_emit_with_a_rule_per_line():
    case = build_emit.EXAMPLES[0]
    annotated = build_emit.annotated(**case).splitlines()
    assert [a.split("  #")[0].rstrip() for a in annotated] == \
        build_emit.emit(**case).splitlines()
    assert all("# " in a for a in annotated) and "in place" in annotated[-2]


def _copied_back(run1, run2, kinds, inputs, outputs):
    """Reader 3's emit: in place only when the call itself does not read the old value
    (last read < j), so every update here is copied with np.copyto after the last call."""
    lines = build_emit.emit(run1, run2, kinds, inputs, outputs).split("\n")
    copies = []
    for n, line in enumerate(lines):
        if ", out=st" in line:
            buf = line.split("out=")[1].rstrip(")")
            lines[n] = line.replace(f", out={buf}", "")
            j = int(line.split("=")[0].strip()[1:])
            copies.append(f"    np.copyto({buf}, t{j})")
    return "\n".join(lines[:-1] + copies + lines[-1:])


def test_a_copy_back_after_the_last_reader_passes(checker):
    """Copying the new weight after the step (not in place) computes the same: accepted."""
    assert "np.copyto" in _copied_back(**build_emit.EXAMPLES[0])
    assert checker.find_failure(_copied_back) is None


def test_a_copy_back_replays_the_real_step_like_the_reference():
    from minidl import Device, Tensor
    from minidl.nn import CrossEntropyLossConfig, LinearConfig, Sequential
    from minidl.optim import SgdConfig
    from minidl_book import build_guard, capture_lab

    device = Device.flex().autodiff()

    def losses(emit):
        device.seed(3)
        state = {"model": Sequential(LinearConfig(6, 3).init(device)),
                 "optim": SgdConfig().init()}
        loss_fn = CrossEntropyLossConfig().init()

        def step(x, y, lr):
            loss = loss_fn(state["model"](x), y)
            state["model"] = state["optim"].step(lr, state["model"], loss.backward())
            return loss

        rng = np.random.default_rng(1)
        x = Tensor.from_numpy(rng.standard_normal((4, 6)).astype(np.float32), device)
        y = Tensor.from_numpy(rng.integers(0, 3, 4).astype(np.int64), device)
        r = capture_lab.recorded_runs(device, step, x, y, 0.1)
        k = build_guard.classify(r.run1, r.run2, r.inputs, r.equal)
        fn = r.emitted(emit(r.run1, r.run2, k, r.input_order, r.outputs))
        return [float(fn(x, y, lr)[0][0]) for lr in (0.1, 0.05, 0.05)]

    right = losses(build_emit.emit)
    assert losses(_copied_back) == right and right[1] != right[2]


def _copied_too_early(run1, run2, kinds, inputs, outputs):
    """Copies each copied-after value right after the call that makes it: a later call
    then reads the new weight where it should read the old one."""
    source = build_emit.emit(run1, run2, kinds, inputs, outputs)
    lines = source.split("\n")
    copies = [ln for ln in lines if "np.copyto" in ln]
    rest = [ln for ln in lines if "np.copyto" not in ln]
    for copy in copies:
        t = copy.split(", ")[1].rstrip(")").split("[")[0]
        at = next(n for n, ln in enumerate(rest) if ln.strip().startswith(f"{t} ="))
        rest.insert(at + 1, copy)
    return "\n".join(rest)


def _copied_into_the_wrong_buffer(run1, run2, kinds, inputs, outputs):
    """Copies every new value into the first state's buffer: the other states keep
    their old weights, which replay 2 reads again (stale)."""
    return re.sub(r"np\.copyto\(st\d+,", "np.copyto(st0,",
                  _copied_back(run1, run2, kinds, inputs, outputs))


def test_a_too_new_weight_is_refused(checker):
    verdict = checker.find_failure(_copied_too_early)
    assert verdict is not None and "too-new" in verdict.text, verdict


def test_a_stale_weight_is_refused(checker):
    verdict = checker.find_failure(_copied_into_the_wrong_buffer)
    assert verdict is not None and not verdict.ok, verdict
    assert "replay 2" in verdict.text or "still holds" in verdict.text, verdict
