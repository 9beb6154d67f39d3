"""Build exercise of the train-and-inference chapter: BatchNorm's forward, both paths.

The reader writes ``batch_norm_forward(bn, x)`` for a minidl ``BatchNorm`` ``bn`` and an input
``x`` of shape ``[batch, channels]``, as burn's ``BatchNorm::forward`` does it
(``burn-nn/src/modules/norm/batch.rs``):

* the **training path**, when ``bn.training.is_enabled()`` and ``x.device.is_autodiff()``:
  normalise with the batch's mean and **biased** variance (divide by ``n``), and fold both
  into the running statistics, read with ``value_sync()``:
  ``running = (1 - momentum) * running + momentum * batch_statistic``, stored with
  ``update`` (PyTorch folds the unbiased variance in; the momentum weights the batch on both);
* the **inference path** otherwise: normalise with ``running_mean.value()`` and
  ``running_var.value()`` (``value()``: maybe one update stale) and change nothing.

The checker drives a sequence of forwards on one layer (training steps, a frozen copy, plain
inputs, sharing the running statistics as the chapter's modes do), reads the output, the
gradient of ``x`` on training steps and ``value()`` of both running statistics after each
step, then ``value_sync()``, and compares with minidl's own ``BatchNorm`` and with PyTorch.
Before that it names the slips it knows (unbiased variance, PyTorch's running variance,
Keras's momentum, epsilon outside the square root, statistics updated in inference, the flag
alone, the wrong read, a fold that keeps the graph).
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.autodiff.node import Requirement
from minidl.autodiff.tensor import autodiff_tensor_of
from minidl.nn import BatchNorm, BatchNormConfig
from minidl.tensor.module import batch_norm
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.modes import batch as chapter_batch

__trace_hide__ = True  # the trace shows the reader's code, not this

__all__ = ["PLANTED", "batch_norm_forward", "exercise", "simulate"]


def batch_norm_forward(bn, x: Tensor) -> Tensor:
    """burn's BatchNorm forward for x of shape [batch, channels]."""
    gamma, beta, eps, m = bn.gamma.val(), bn.beta.val(), bn.epsilon, bn.momentum
    if not (bn.training.is_enabled() and x.device.is_autodiff()):
        # inference: the running statistics as they are (value(): no fold, no update)
        mean, var = bn.running_mean.value(), bn.running_var.value()
        return batch_norm(x, gamma, beta, mean, var, eps)
    channels = x.shape[1]
    mean = x.mean_dim(0).reshape([channels])  # the batch's mean, per channel
    centred = x - mean.reshape([1, channels])
    var = (centred**2).mean_dim(0).reshape([channels])  # biased: divided by n
    # fold in: (1 - momentum) * running + momentum * batch, outside the graph (detach)
    bn.running_mean.update(bn.running_mean.value_sync() * (1 - m) + mean.detach() * m)
    bn.running_var.update(bn.running_var.value_sync() * (1 - m) + var.detach() * m)
    return batch_norm(x, gamma, beta, mean, var, eps)


# ----- planted wrong solutions ---------------------------------------------------------------
def _stats(x: Tensor, correction: int = 0) -> tuple[Tensor, Tensor]:
    channels = x.shape[1]
    mean = x.mean_dim(0).reshape([channels])
    var = x.var(0, correction=correction).reshape([channels])
    return mean, var


def _fold(bn, mean: Tensor, var: Tensor, keras: bool = False, keras_var: bool = False,
          momentum: float | None = None, skip_var: bool = False):
    m = bn.momentum if momentum is None else momentum
    old, new = (m, 1 - m) if keras else (1 - m, m)
    bn.running_mean.update((bn.running_mean.value_sync() * old + mean.detach() * new)
                           .detach())
    if skip_var:
        return
    old, new = (m, 1 - m) if keras or keras_var else (1 - m, m)
    bn.running_var.update((bn.running_var.value_sync() * old + var.detach() * new).detach())


def _infer(bn, x: Tensor, sync: bool = False) -> Tensor:
    if sync:
        mean, var = bn.running_mean.value_sync(), bn.running_var.value_sync()
    else:
        mean, var = bn.running_mean.value(), bn.running_var.value()
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)


def _training(bn, x: Tensor) -> bool:
    return bn.training.is_enabled() and x.device.is_autodiff()


def normalises_unbiased(bn, x: Tensor) -> Tensor:
    """torch.var's default (÷ n - 1) used to normalise, and folded in."""
    if not _training(bn, x):
        return _infer(bn, x)
    mean, var = _stats(x, correction=1)
    _fold(bn, mean, var)
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)


def pytorch_running_var(bn, x: Tensor) -> Tensor:
    """Normalises right, folds the unbiased variance in: PyTorch's running_var."""
    if not _training(bn, x):
        return _infer(bn, x)
    mean, var = _stats(x)
    _fold(bn, mean, _stats(x, correction=1)[1])
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)


def keras_momentum(bn, x: Tensor) -> Tensor:
    """momentum * running + (1 - momentum) * batch: Keras's convention, not burn's."""
    if not _training(bn, x):
        return _infer(bn, x)
    mean, var = _stats(x)
    _fold(bn, mean, var, keras=True)
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)


def _folds_with(**slip):
    def forward(bn, x: Tensor) -> Tensor:
        if not _training(bn, x):
            return _infer(bn, x)
        mean, var = _stats(x)
        _fold(bn, mean, var, **slip)
        return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)
    return forward


keras_var_only = _folds_with(keras_var=True)  # Keras's convention on running_var alone
fixed_momentum = _folds_with(momentum=0.1)  # 0.1 typed in, not bn.momentum
var_never_updated = _folds_with(skip_var=True)  # running_var.update forgotten


def eps_outside_sqrt(bn, x: Tensor) -> Tensor:
    """(x - mean) / (sqrt(var) + epsilon): epsilon added after the square root."""
    gamma, beta, eps = bn.gamma.val(), bn.beta.val(), bn.epsilon
    if _training(bn, x):
        mean, var = _stats(x)
        _fold(bn, mean, var)
    else:
        mean, var = bn.running_mean.value(), bn.running_var.value()
    c = x.shape[1]
    out = (x - mean.reshape([1, c])) / (var.reshape([1, c]).sqrt() + eps)
    return out * gamma.reshape([1, c]) + beta.reshape([1, c])


def updates_in_inference(bn, x: Tensor) -> Tensor:
    """Folds the batch's statistics in on every forward, inference included."""
    mean, var = _stats(x)
    if not _training(bn, x):
        out = _infer(bn, x)
        _fold(bn, mean, var)
        return out
    _fold(bn, mean, var)
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)


def flag_only(bn, x: Tensor) -> Tensor:
    """PyTorch's rule: the training flag alone picks the path."""
    if not bn.training.is_enabled():
        return _infer(bn, x)
    mean, var = _stats(x)
    _fold(bn, mean, var)
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)


def keeps_the_graph(bn, x: Tensor) -> Tensor:
    """Folds the batch's statistics in without detach(): the running state holds the graph."""
    if not _training(bn, x):
        return _infer(bn, x)
    mean, var = _stats(x)
    m = bn.momentum
    bn.running_mean.update(bn.running_mean.value_sync() * (1 - m) + mean * m)
    bn.running_var.update(bn.running_var.value_sync() * (1 - m) + var * m)
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)


def normalises_detached(bn, x: Tensor) -> Tensor:
    """Normalises with detached statistics: right numbers, x's gradient misses their paths."""
    if not _training(bn, x):
        return _infer(bn, x)
    mean, var = _stats(x)
    _fold(bn, mean, var)
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean.detach(), var.detach(),
                      bn.epsilon)


def var_reads_value(bn, x: Tensor) -> Tensor:
    """The training path reads running_var.value() (the mean's value_sync() is right): the
    variance's first update is lost on a second training forward."""
    if not _training(bn, x):
        return _infer(bn, x)
    mean, var = _stats(x)
    m = bn.momentum
    bn.running_mean.update(bn.running_mean.value_sync() * (1 - m) + mean.detach() * m)
    bn.running_var.update(bn.running_var.value() * (1 - m) + var.detach() * m)
    return batch_norm(x, bn.gamma.val(), bn.beta.val(), mean, var, bn.epsilon)


def tracked_not_device(bn, x: Tensor) -> Tensor:
    """Trains when x wants a gradient (x.is_require_grad()), not when x is on an autodiff
    device: a batch of data on the autodiff device is untracked, and burn trains on it."""
    if not (bn.training.is_enabled() and x.is_require_grad()):
        return _infer(bn, x)
    return batch_norm_forward(bn, x)


def infers_synced(bn, x: Tensor) -> Tensor:
    """The inference path reads value_sync(): never stale, unlike burn's."""
    if not _training(bn, x):
        return _infer(bn, x, sync=True)
    return batch_norm_forward(bn, x)


#: name → (wrong solution, the verdict kind it must get, a phrase its verdict names)
PLANTED = {
    "unbiased variance normalises": (normalises_unbiased, "check", "n - 1"),
    "PyTorch's running variance": (pytorch_running_var, "check", "PyTorch's running_var"),
    "Keras's momentum": (keras_momentum, "check", "Keras"),
    "Keras's momentum on the variance only": (keras_var_only, "check", "running_var only uses Keras"),
    "momentum typed in": (fixed_momentum, "check", "typed in"),
    "running_var never updated": (var_never_updated, "check", "never updated"),
    "epsilon outside the square root": (eps_outside_sqrt, "check", "outside the square"),
    "statistics updated in inference": (updates_in_inference, "check", "inference path"),
    "the flag alone": (flag_only, "check", "two questions"),
    "tracked instead of on the device": (tracked_not_device, "check", "not tracked"),
    "inference reads value_sync()": (infers_synced, "check", "value()"),
    "training reads the variance with value()": (var_reads_value, "check",
                                                 "running_var.value() but"),
    "the fold keeps the graph": (keeps_the_graph, "check", "detach()"),
    "normalised with detached statistics": (normalises_detached, "check", "detached"),
}


# ----- the run -------------------------------------------------------------------------------
def _kind(step: dict) -> str:
    if not step["flag"]:
        return "frozen copy (flag off), input on ad"
    if not step["autodiff"]:
        return "flag on, input on plain"
    return "flag on, input on ad" if step.get("tracked", True) else (
        "flag on, input on ad, not tracked")


def _layer(case: dict) -> BatchNorm:
    channels, ad = case["gamma"].shape[0], Device.flex().autodiff()
    bn = BatchNormConfig(channels, momentum=case["momentum"]).init(ad)
    bn.gamma = bn.gamma.with_value(Tensor.from_numpy(case["gamma"], ad), True)
    bn.beta = bn.beta.with_value(Tensor.from_numpy(case["beta"], ad), True)
    return bn


def _pending(state) -> list:
    return [state._value, *state._pending.values()]


def _in_graph(state) -> bool:
    """Whether a value the state holds is still tracked by autodiff (not detached)."""
    return any(t.device.is_autodiff()
               and autodiff_tensor_of(t).node.requirement is not Requirement.NONE
               for t in _pending(state) if isinstance(t, Tensor))


def bn_run(solution, case: dict) -> dict:
    """The case's steps on one fresh layer; what each step gives and leaves."""
    ad, plain = Device.flex().autodiff(), Device.flex()
    bn, out = _layer(case), {}
    for i, step in enumerate(case["steps"], 1):
        layer = bn if step["flag"] else bn.freeze()  # freeze(): shares the running stats
        x = Tensor.from_numpy(step["x"], ad if step["autodiff"] else plain)
        tracked = step["autodiff"] and step.get("tracked", True)
        if tracked:  # data on the autodiff device is untracked unless asked: both happen
            x = x.require_grad()
        before = {name: _pending(getattr(bn, name)) for name in ("running_mean", "running_var")}
        y = solution(layer, x)
        out[f"step {i} out"] = y
        if step["flag"] and tracked and isinstance(y, Tensor):
            grads = (y * Tensor.from_numpy(step["g"], ad)).sum().backward()
            out[f"step {i} grad x"] = x.grad(grads)
        out[f"_updated {i}"] = any(
            all(new is not old for old in before[name])
            for name in before for new in getattr(bn, name)._pending.values())
        out[f"_tracked {i}"] = any(_in_graph(getattr(bn, name))
                                   for name in ("running_mean", "running_var"))
        out[f"step {i} running_mean.value()"] = bn.running_mean.value()
        out[f"step {i} running_var.value()"] = bn.running_var.value()
    out["end running_mean.value_sync()"] = bn.running_mean.value_sync()
    out["end running_var.value_sync()"] = bn.running_var.value_sync()
    return out


def _minidl(case: dict) -> dict:
    return {k: v for k, v in bn_run(lambda bn, x: bn(x), case).items()
            if not k.startswith("_")}


def _torch(case: dict) -> dict:
    """F.batch_norm on the training steps (output, grad x); the running statistics synced at
    the end, with the batch's biased variance folded in as burn does."""
    gamma, beta = (torch.from_numpy(case[k]).double() for k in ("gamma", "beta"))
    m, channels = case["momentum"], case["gamma"].shape[0]
    running_mean, running_var, out = torch.zeros(channels).double(), torch.ones(
        channels).double(), {}
    for i, step in enumerate(case["steps"], 1):
        if not (step["flag"] and step["autodiff"]):
            continue
        x = torch.from_numpy(step["x"]).double().requires_grad_()
        y = torch.nn.functional.batch_norm(x, None, None, gamma, beta, training=True,
                                           eps=1e-5)
        (y * torch.from_numpy(step["g"]).double()).sum().backward()
        out[f"step {i} out"] = y.detach().float()
        if step.get("tracked", True):  # an untracked x has no gradient to compare
            out[f"step {i} grad x"] = x.grad.float()
        xd = x.detach()
        running_mean = (1 - m) * running_mean + m * xd.mean(0)
        running_var = (1 - m) * running_var + m * xd.var(0, unbiased=False)
    out["end running_mean.value_sync()"] = running_mean.float()
    out["end running_var.value_sync()"] = running_var.float()
    return out


# ----- the slips, simulated in float64 -------------------------------------------------------
def simulate(case: dict, *, ddof_norm: int = 0, ddof_running: int = 0, keras: bool = False,
             keras_var: bool = False, momentum: float | None = None,
             skip_var: bool = False,
             update_always: bool = False, flag_alone: bool = False,
             eps_outside: bool = False,
             inference_read: str = "value", training_read: str = "value_sync",
             training_value: tuple[str, ...] = (), inference_sync: tuple[str, ...] = ()
             ) -> dict:
    """What a forward with the given slips gives on the case (no slip: minidl's BatchNorm).
    ``training_value``/``inference_sync`` name the one statistic ("mean" or "var") read
    the wrong way when the other is read right."""
    m, gamma, beta = case["momentum"], case["gamma"], case["beta"]
    channels = gamma.shape[0]
    state = {"mean": [np.zeros(channels), None], "var": [np.ones(channels), None]}

    def sync(name):
        if state[name][1] is not None:
            state[name] = [state[name][1], None]
        return state[name][0]

    def fold(x):
        mm = m if momentum is None else momentum
        for name, value in (("mean", x.mean(0)), ("var", x.var(0, ddof=ddof_running))):
            if name == "var" and skip_var:
                continue
            keras_here = keras or (keras_var and name == "var")
            old, new = (mm, 1 - mm) if keras_here else (1 - mm, mm)
            synced = training_read == "value_sync" and name not in training_value
            start = sync(name) if synced else state[name][0]
            sync(name)  # update() folds a pending value before it stores the new one
            state[name][1] = start * old + value * new

    out = {}
    for i, step in enumerate(case["steps"], 1):
        x = step["x"].astype(np.float64)
        training = step["flag"] and (step["autodiff"] or flag_alone)
        if training:
            mean, var = x.mean(0), x.var(0, ddof=ddof_norm)
            fold(x)
        else:
            def read(n):
                synced = inference_read == "value_sync" or n in inference_sync
                return sync(n) if synced else state[n][0]

            mean, var = read("mean"), read("var")
            if update_always:
                fold(x)
        scale = np.sqrt(var) + 1e-5 if eps_outside else np.sqrt(var + 1e-5)
        out[f"step {i} out"] = (x - mean) / scale * gamma + beta
        out[f"step {i} running_mean.value()"] = state["mean"][0]
        out[f"step {i} running_var.value()"] = state["var"][0]
    out["end running_mean.value_sync()"] = sync("mean")
    out["end running_var.value_sync()"] = sync("var")
    return out


_SLIPS = [
    ({"ddof_norm": 1, "ddof_running": 1},
     "You normalise with the unbiased variance (÷ n - 1, Tensor.var's default): burn and "
     "PyTorch both normalise a batch with its biased variance, the mean of the squared "
     "deviations (÷ n)."),
    ({"ddof_running": 1},
     "Your running variance is PyTorch's running_var: you fold in the unbiased variance "
     "(÷ n - 1). burn (and minidl) fold in the biased one, the variance the batch was "
     "normalised with."),
    ({"keras": True},
     "Your momentum weights the old value: momentum · running + (1 - momentum) · batch is "
     "Keras's convention (Keras's momentum 0.99 weights the old value). burn's (and "
     "PyTorch's): (1 - momentum) · running + momentum · batch, momentum 0.1."),
    ({"keras_var": True},
     "Your running_var only uses Keras's order, momentum · running + (1 - momentum) · "
     "batch: the mean's fold is right. Fold the variance the same way: (1 - momentum) · "
     "running + momentum · batch."),
    ({"momentum": 0.1},
     "Your fold uses momentum 0.1, typed in: this layer was built with another momentum. "
     "Read the layer's own, bn.momentum."),
    ({"skip_var": True},
     "Your running_var is never updated: the running mean folds each training batch in, the "
     "variance stays at its initial ones. The training path calls update() on both."),
    ({"eps_outside": True},
     "You add epsilon outside the square root, (x - mean) / (sqrt(var) + epsilon): burn and "
     "PyTorch divide by sqrt(var + epsilon). The two differ most where var is small."),
    ({"training_read": "value"},
     "Your training path reads value(): a second training forward then starts from a value "
     "one update behind, and the first update is lost. Read value_sync(), which folds this "
     "thread's pending update first."),
    ({"inference_read": "value_sync"},
     "Your inference path reads value_sync(), so it never sees stale statistics. burn's "
     "reads value() and folds nothing (the stale-statistics section): only valid() syncs."),
]
for _stat, _other in (("mean", "var"), ("var", "mean")):
    _SLIPS += [
        ({"training_value": (_stat,)},
         f"Your training path reads running_{_stat}.value() but running_{_other}"
         ".value_sync(): a second training forward starts that statistic from a value one "
         "update behind, and its first update is lost. Read value_sync() for both."),
        ({"inference_sync": (_stat,)},
         f"Your inference path reads running_{_stat}.value_sync() but running_{_other}"
         ".value(): burn's reads value() for both and folds nothing (the stale-statistics "
         "section); only valid() syncs."),
    ]


def _close(found, expected) -> bool:
    if found is None:
        return False
    found = found.to_numpy() if isinstance(found, Tensor) else np.asarray(found)
    return found.shape == np.shape(expected) and np.allclose(found, expected, 1e-4, 1e-5)


def _slips(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the slip: the update where it must not (or missing), or a known wrong formula."""
    right = simulate(case)
    for i, step in enumerate(case["steps"], 1):
        training = step["flag"] and step["autodiff"]
        updated = outputs.get(f"_updated {i}")
        if updated and not training:
            batch_out = simulate(case, flag_alone=True)[f"step {i} out"]
            if step["flag"] and _close(outputs[f"step {i} out"], batch_out):
                return (f"Step {i} ({_kind(step)}) took the training path: that is PyTorch's "
                        "rule, the flag alone. burn asks two questions: the flag, and "
                        "whether the input is on an autodiff device (x.device.is_autodiff()).")
            return (f"Step {i} ({_kind(step)}) updated the running statistics: the inference "
                    "path normalises with running_mean.value() and running_var.value() and "
                    "changes nothing.")
        if training and not updated and not step.get("tracked", True):
            return (f"Step {i} ({_kind(step)}) left the running statistics alone: its "
                    "input is on the autodiff device but not tracked (a batch of data), "
                    "and burn trains on it. Ask the device, x.device.is_autodiff(), not "
                    "whether x wants a gradient.")
        if training and not updated:
            return (f"Step {i} ({_kind(step)}) left the running statistics alone: the "
                    "training path folds the batch's mean and variance in with update().")
        if outputs.get(f"_tracked {i}"):
            return (f"After step {i} ({_kind(step)}) a running statistic is still in the "
                    "graph (its node is tracked, not None): you folded the batch's mean or "
                    "variance in without cutting it off, so the running state keeps this "
                    "batch's graph, and every later one's, alive. burn folds "
                    "mean.detach() and var.detach() (batch.rs); .inner() cuts it too.")
    for i, step in enumerate(case["steps"], 1):
        if not (step["flag"] and step["autodiff"]) or f"step {i} grad x" not in outputs:
            continue
        x = step["x"].astype(np.float64)  # the gradient if mean and var were constants:
        constant = step["g"] * case["gamma"] / np.sqrt(x.var(0) + 1e-5)
        if (_close(outputs[f"step {i} out"], right[f"step {i} out"])
                and _close(outputs[f"step {i} grad x"], constant)):
            return (f"Step {i} ({_kind(step)}): your outputs are right but x's gradient is "
                    "not. You normalised with detached statistics, so the gradient skips "
                    "the paths through the batch's mean and variance (each depends on every "
                    "x). Normalise with the tracked mean and var; detach only what you fold "
                    "into the running state.")
    if all(_close(outputs.get(k), v) for k, v in right.items()):
        return None
    for slip, text in _SLIPS:
        wrong = simulate(case, **slip)
        if all(_close(outputs.get(k), v) for k, v in wrong.items()):
            return text
    return None


# ----- the cases -----------------------------------------------------------------------------
def _steps(seed: int, channels: int, kinds: list[tuple], n: int) -> list[dict]:
    """Steps of (flag, on the autodiff device[, tracked]): tracked unless said."""
    rng = np.random.default_rng(seed)
    steps = []
    for flag, autodiff, *tracked in kinds:
        x = rng.normal(0, 1, (n, channels)) * rng.uniform(0.5, 2.0, channels) + rng.normal(
            0, 1, channels)
        steps.append({"flag": flag, "autodiff": autodiff, "x": x.astype(np.float32),
                      "g": rng.uniform(-1, 1, (n, channels)).astype(np.float32),
                      "tracked": tracked[0] if tracked else True})
    return steps


def _case(seed: int, channels: int, n: int, momentum: float,
          kinds: list[tuple[bool, bool]]) -> dict:
    rng = np.random.default_rng(seed + 1)
    return {"momentum": momentum,
            "gamma": rng.uniform(0.5, 2.0, channels).astype(np.float32),
            "beta": rng.normal(0, 1, channels).astype(np.float32),
            "steps": _steps(seed, channels, kinds, n)}


_KINDS = [(True, True), (True, True), (True, False), (False, True), (True, True, False)]


def _cases() -> st.SearchStrategy:
    kinds = st.lists(st.sampled_from(_KINDS), min_size=2, max_size=4)
    return st.tuples(st.integers(0, 2**16), st.integers(1, 3), st.integers(2, 6),
                     st.sampled_from([0.1, 0.25, 0.5]), kinds).map(lambda t: _case(*t))


def chapter_case() -> dict:
    """The chapter's batches: two training forwards, then batch 0 on the plain device and
    through a frozen copy (both read the stale statistics)."""
    case = _case(0, 3, 4, 0.1, [(True, True), (True, True), (True, False), (False, True)])
    case["gamma"], case["beta"] = np.ones(3, np.float32), np.zeros(3, np.float32)
    for step, k in zip(case["steps"], (0, 1, 0, 0), strict=True):
        step["x"] = chapter_batch(k)
    return case


def untracked_case() -> dict:
    """The chapter's batch 0 on the autodiff device but not tracked, as the chapter's own
    T(batch(0), ad) is: burn trains on it (the device decides, not require_grad)."""
    case = _case(3, 3, 4, 0.1, [(True, True, False), (True, True), (True, False)])
    case["steps"][0]["x"] = chapter_batch(0)
    return case


def small_variance_case() -> dict:
    """Two training steps and an inference one whose channel 0 spreads over 1e-3: epsilon
    (1e-5) is then as large as the variance, so where it goes shows in the output (on the
    generated cases, variances near 1, it moves the output by ~5e-6, inside the tolerance)."""
    case = _case(7, 2, 4, 0.25, [(True, True), (True, True), (False, True)])
    for step in case["steps"]:
        step["x"][:, 0] = (step["x"][:, 0] * 1e-3).astype(np.float32)
    return case


def _describe(case: dict) -> dict:
    """The case as the verdict prints it: the steps in words."""
    return {"momentum": case["momentum"], "gamma": case["gamma"], "beta": case["beta"],
            "steps": "; ".join(f"{i}: {_kind(s)}, x {list(s['x'].shape)}"
                               for i, s in enumerate(case["steps"], 1))}


#: (a phrase of the verdict that names a slip, the hint that mends it): a named slip opens
#: its own hint first, then the general one (each slip keeps its own ladder)
SLIP_HINTS = [
    ("PyTorch's rule", "Test both at the top: `if bn.training.is_enabled() and "
     "x.device.is_autodiff():` takes the training path, anything else the inference path."),
    ("not tracked", "The second question is the device: `x.device.is_autodiff()`. A batch "
     "of data on the autodiff device is untracked (no require_grad), and it trains."),
    ("updated the running statistics", "Call update() only on the training path: the "
     "inference path is one line, batch_norm(x, gamma, beta, running_mean.value(), "
     "running_var.value(), epsilon)."),
    ("left the running statistics alone", "The rule, per statistic: the new running value "
     "is (1 - momentum) parts of the synced one plus momentum parts of the batch's, "
     "detached; update() stores it."),
    ("still in the graph", "Fold mean.detach() and var.detach() (or .inner()); keep the "
     "tracked mean and var for the normalisation itself."),
    ("detached statistics", "Pass batch_norm the mean and var you computed from x, still "
     "tracked; only the copies inside update() get .detach()."),
    ("÷ n - 1, Tensor.var's default", "x.var_bias(0), or ((x - mean) ** 2).mean_dim(0): the "
     "mean of the squared deviations, not x.var(0)."),
    ("PyTorch's running_var", "Fold in the same biased var you normalise with: one variance "
     "serves both."),
    ("Keras's convention", "new = value_sync() * (1 - momentum) + statistic * momentum: the "
     "momentum weights the batch."),
    ("running_var only uses Keras", "The same fold for both: value_sync() * (1 - momentum)"
     " + statistic * momentum."),
    ("typed in", "m = bn.momentum, then value_sync() * (1 - m) + statistic.detach() * m."),
    ("never updated", "After the mean's update, fold the variance by the same rule: "
     "the momentum weights the batch's (detached) variance."),
    ("outside the square root", "Divide by (var + epsilon).sqrt(), or pass var and epsilon "
     "to batch_norm, which adds epsilon under the root."),
    ("Your training path reads value()", "On the training path read "
     "bn.running_mean.value_sync() (and the var's) before you fold."),
    (".value() but running_", "On the training path read value_sync() of both before you "
     "fold: bn.running_mean.value_sync() and bn.running_var.value_sync()."),
    (".value_sync() but running_", "On the inference path read value() of both: "
     "bn.running_mean.value() and bn.running_var.value()."),
    ("Your inference path reads value_sync()", "On the inference path read "
     "bn.running_mean.value() and bn.running_var.value(): they fold nothing."),
]


class _BatchNormExercise(BuildExercise):
    """Prints a case's steps in words (the verdict's inputs); a named slip gets its own hint
    ladder (its mending hint, then the general one for its kind)."""

    def find_failure(self, solution):  # noqa: D102
        verdict = super().find_failure(solution)
        if not hasattr(self, "_ladders"):
            self._ladders = {None: (self.hint_ladder, self.hints_opened)}
        slip = next((phrase for phrase, _ in SLIP_HINTS
                     if verdict is not None and phrase in verdict.text), None)
        if slip not in self._ladders:
            mend = dict(SLIP_HINTS)[slip]
            self._ladders[slip] = ([(None, mend)] + self._ladders[None][0], [])
        self.hint_ladder, self.hints_opened = self._ladders[slip]
        return verdict

    def verdict_for(self, solution, case):  # noqa: D102
        verdict = self._verdict_for(solution, case, "")
        if verdict is not None:
            from minidl_book.verdict import describe_inputs

            verdict.inputs = describe_inputs(_describe(case), ("steps", "momentum"))
        return verdict


_WARM = False


def exercise(max_examples: int = 10) -> BuildExercise:
    """The checker for the reader's ``batch_norm_forward(bn, x)``."""
    global _WARM
    if not _WARM:  # the kernels' first run, outside the watch (under it: 25 s, not 1)
        bn_run(batch_norm_forward, chapter_case())
        _WARM = True
    return _BatchNormExercise(
        "BatchNorm's forward: the training path and the inference path",
        cases=_cases(),
        run=bn_run,
        references=[
            Reference("minidl's BatchNorm", _minidl, rtol=1e-4, atol=1e-5),
            Reference("PyTorch (F.batch_norm; the running variance folded in biased, as "
                      "burn does)", _torch, rtol=1e-4, atol=1e-5)],
        checks=[_slips],
        rules=Rules(no_data=True, no_numpy=True, forbidden={
            r"^(BatchNorm\.(forward|forward_train|forward_inference)|Module\.__call__)$":
                "run BatchNorm's own forward (write it)",
            r"^module\.batch_norm_train$":
                "call batch_norm_train (compute the batch's mean and variance yourself)"}),
        hints={
            "value": ["Training: batch mean and biased variance (÷ n) normalise, then "
                      "(1 - momentum) · value_sync() + momentum · statistic goes to update(). "
                      "Inference: value() of both, nothing updated."],
            "check": ["Replay the steps: which take the training path (flag on AND input on "
                      "an autodiff device), and what does each read and write?"],
            "error": ["bn.gamma.val(), bn.beta.val(), bn.epsilon, bn.momentum; "
                      "x.mean_dim(0) keeps the dim: [1, C]; batch_norm wants [C] statistics."],
        },
        reference_solution=batch_norm_forward,
        examples=[chapter_case(), untracked_case(), small_variance_case()],
        max_examples=max_examples,
    )
