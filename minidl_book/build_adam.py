"""Build exercise of the training chapter: Adam's update, written by the reader.

The reader writes ``adam_step(lr, model, grads, state, beta_1, beta_2, eps)``: for each
param that has a gradient in ``grads`` (a ``GradientsParams``), the two moments, the step
count, the bias corrections and the update with eps added to √v̂ (burn-optim
``src/optim/adam.rs:154-209`` at v0.22.0-pre.2), the state kept in ``state`` under the
param's id (burn's ``ModuleOptimizerMapper`` takes ``grads.remove(id)`` and
``states.remove_entry(&id)``, ``module/module_optimizer.rs:419-428``). It returns the new
values by param id; the checker puts them back into a new model, as burn's mapper does.

The checker draws the digits CNN (dropout 0) and its PyTorch twin from the same weights
(``tr.twins``), runs ``STEPS`` steps on the run's first batches with ``conv1`` frozen at step
``FROZEN_STEP`` (no gradient: no step, and its own step count stays behind), and holds every
weight after each step against ``torch.optim.Adam(fused=False, foreach=False, eps=1e-5)``.
A step that is off is matched against the update each known slip would have made from the
same gradients, so the verdict names the slip: no bias correction, eps inside the square
root, the betas swapped, the state not kept, one step count for the whole model, a t advanced
for a frozen param, t = 0 at the first step (1 - beta**0 = 0), the state keyed by position among the gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from minidl import Device, Tensor
from minidl.module import Module, ModuleMapper, Param
from minidl.nn import CrossEntropyLossConfig
from minidl.optim import AdamConfig, GradientsParams
from minidl_book import training_run as tr
from minidl_book.harness import run_check, show_solution
from minidl_book.verdict import Verdict
from minidl_book.workloads import DigitsCnnConfig

__all__ = ["FROZEN_STEP", "PLANTED", "STEPS", "WEIGHT_ATOL", "AdamExercise", "adam_step",
           "no_bias_correction"]

#: steps checked, and the one at which conv1 is frozen (no gradient for its two params)
STEPS, FROZEN_STEP, FROZEN = 5, 3, "conv1"
#: largest |weight gap| to PyTorch's after any step (float32 rounding)
WEIGHT_ATOL = 1e-5
#: not compared: BatchNorm cancels them, so their gradients are rounding noise and Adam
#: turns each framework's noise into its own steps (the chapter's drift section)
DRIFTING = ("conv1.bias", "conv2.bias")
EPS = AdamConfig().epsilon
#: torch.optim.Adam's default eps, a slip here: the checker's twin runs with burn's EPS
TORCH_EPS = 1e-8

loss_fn = CrossEntropyLossConfig().init()


def adam_step(lr, model, grads, state, beta_1=0.9, beta_2=0.999, eps=1e-5):
    new = {}
    for param in model.parameters().values():
        g = grads.get(param.id)  # on the inner device; None: frozen
        if g is None:
            continue  # no gradient, no step: its t stays
        t, m, v = state.get(param.id, (0, 0.0, 0.0))
        t += 1  # this param's steps, this one included
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g * g
        state[param.id] = (t, m, v)
        m_hat, v_hat = m / (1 - beta_1**t), v / (1 - beta_2**t)
        w = param.val().inner()
        new[param.id] = w - lr * m_hat / (v_hat.sqrt() + eps)
    return new


# ----- planted slips -------------------------------------------------------------------------
def _slip(bias=True, eps_inside=False, swap=False, keep=True, global_t=False, t0=False,
          by_position=False, frozen_t=False, eps_value=None):
    """``adam_step`` with one thing wrong."""

    def step(lr, model, grads, state, beta_1=0.9, beta_2=0.999, eps=1e-5):
        eps = eps if eps_value is None else eps_value
        b1, b2 = (beta_2, beta_1) if swap else (beta_1, beta_2)
        params = {p.id: p for p in model.parameters().values()}
        if global_t:
            state["t"] = state.get("t", 0) + 1
        new = {}
        if frozen_t:  # a per-param t, advanced for a param without a gradient too
            for p in params:
                if p not in grads:
                    t, m, v = state.get(p, (0, 0.0, 0.0))
                    state[p] = (t + 1, m, v)
        for i, pid in enumerate(grads):
            g, key = grads.get(pid), i if by_position else pid
            t, m, v = state.get(key, (0, 0.0, 0.0)) if keep else (0, 0.0, 0.0)
            m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
            t_used = state["t"] if global_t else (t if t0 else t + 1)
            state[key] = (t + 1, m, v)
            m_hat, v_hat = ((m / (1 - b1**t_used), v / (1 - b2**t_used)) if bias
                            else (m, v))
            denom = (v_hat + eps).sqrt() if eps_inside else v_hat.sqrt() + eps
            new[pid] = params[pid].val().inner() - lr * m_hat / denom
        return new

    return step


no_bias_correction = _slip(bias=False)

#: name → (wrong step, a phrase its verdict must contain)
PLANTED = {
    "no bias correction": (no_bias_correction, "bias correction"),
    "eps inside the square root": (_slip(eps_inside=True), "inside the square root"),
    "beta_1 and beta_2 swapped": (_slip(swap=True), "swapped"),
    "the state not kept": (_slip(keep=False), "not kept"),
    "one step count for the model": (_slip(global_t=True), "whole model"),
    "t advanced for a frozen param": (_slip(frozen_t=True), "stays where it was"),
    "t = 0 at the first step": (_slip(t0=True), "t = 0"),
    "state keyed by position": (_slip(by_position=True), "keyed by position; key by param"),
    "PyTorch's default eps": (_slip(eps_value=TORCH_EPS), "eps = 1e-8"),
}


# ----- what each slip would have done, in float64, from the gradients the step was given -----
def _update(gs: list[np.ndarray], t_now: int, *, bias=True, eps_inside=False, swap=False,
            keep=True, eps=EPS) -> np.ndarray:
    """The update (before ``* lr``) after the gradients ``gs`` (oldest first), at step count
    ``t_now``, with one rule changed."""
    b1, b2 = (0.999, 0.9) if swap else (0.9, 0.999)
    m = v = 0.0
    for g in gs if keep else gs[-1:]:
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    if bias:
        m, v = m / (1 - b1**t_now), v / (1 - b2**t_now)
    return m / (np.sqrt(v + eps) if eps_inside else np.sqrt(v) + eps)


CAUSES = {
    "bias": ("matches Adam without the bias corrections: at t = 1, m = 0.1·g and "
             "√v = 0.03·|g|, a step of about 3.2·lr instead of lr.",
             "Divide m by 1 - beta_1**t and v by 1 - beta_2**t before the update."),
    "eps_inside": ("matches eps inside the square root, √(v̂ + eps): for |g| near 3e-3 or "
                   "below that shrinks the step far more than √v̂ + eps does.",
                   "burn and PyTorch add eps to √v̂, outside the root (burn-optim "
                   "adam.rs:204-208)."),
    "torch_eps": ("matches eps = 1e-8, PyTorch's default: burn's Adam and the checker's "
                  "twin use 1e-5, and for |g| near 1e-3 or below the step is larger "
                  "with 1e-8.",
                  "Keep eps=1e-5 (AdamConfig().epsilon), the default in the signature."),
    "swap": ("matches beta_1 and beta_2 swapped: step 1 is right for any betas (the bias "
             "corrections undo them), step 2 is not.",
             "m, the running mean of g, decays with beta_1 = 0.9; v, of g², with "
             "beta_2 = 0.999."),
    "keep": ("matches an update from zero moments at every step: the state is not kept "
             "from one step to the next.",
             "Write (t, m, v) back into state, under the param's id, and read it there at "
             "the next step."),
    "global_t": ("matches one step count for the whole model: conv1 was frozen at step "
                 f"{FROZEN_STEP} and took no step, so its t is one behind the others.",
                 "Keep t per param, in its state, as burn's AdaptiveMomentumState does."),
    "frozen_t": (f"matches a t advanced for {FROZEN} at step {FROZEN_STEP}, when it was "
                 "frozen: it had no gradient and took no step, so its t must be one behind "
                 "the others from then on.",
                 "A param without a gradient takes no step, and its step count stays where "
                 "it was: advance t only when grads.get(param.id) is not None."),
}


def _global_count(state: dict) -> bool:
    """Whether the reader's state holds a bare step count beside the per-param entries
    (``state["t"] = ...``): one count for the model, rather than a per-param t advanced for
    a frozen param. The two make the same numbers; only the state tells them apart."""
    return any(isinstance(v, int | np.integer) and not isinstance(v, bool)
               for v in state.values())


def _keyed_by_position(state: dict, model: Module) -> bool:
    """Whether the reader's state is filed under positions among the gradients (0, 1, ...)
    rather than under a param's id or path, as burn's ``OptimizerRecord`` files it
    (``{ParamId}``, module_optimizer.rs:204-229)."""
    names = {p.id for p in model.parameters().values()} | set(model.parameters())
    return any(isinstance(k, int | np.integer) and not isinstance(k, bool)
               for k in state) and not names & set(state)


POSITION = "your state is keyed by position; key by param id"


def _near(got: np.ndarray, want: np.ndarray, scale: float) -> bool:
    return bool(np.abs(got - want).max() <= max(0.02 * scale, WEIGHT_ATOL))


class _PutBack(ModuleMapper):
    """Each param's new value in place of the old one, a new leaf (burn's mapper)."""

    def __init__(self, values: dict[str, Tensor]):
        self.values = values

    def map_param(self, path: str, param: Param) -> Param:
        new = self.values.get(param.id)
        if new is None:
            return param
        device = param.val().device
        return param.with_value(Tensor.from_inner(new, device,
                                                  require_grad=param.require_grad))


class AdamExercise:
    """Checks ``adam_step(lr, model, grads, state) -> {param id: new value}`` over
    ``STEPS`` steps against ``torch.optim.Adam`` on the PyTorch twin."""

    title = "Adam's update, against torch.optim.Adam"

    def __init__(self, device: Device, steps: int = STEPS):
        self.device, self.steps, self.attempts = device, steps, 0
        self.cfg = DigitsCnnConfig().with_dropout(0.0)
        batches = tr.loader(tr.datasets()[0], device, tr.SEED)
        self.batches = [b for _, b in zip(range(steps), batches)]
        _, twin = tr.twins(self.cfg, Device.flex())
        adam = torch.optim.Adam(twin.parameters(), lr=tr.LR, eps=EPS, fused=False,
                                foreach=False)
        paths = list(self.cfg.init(Device.flex()).parameters())
        self.expected, self.weights = [], []
        for step, batch in enumerate(self.batches, 1):
            getattr(twin, FROZEN).requires_grad_(step != FROZEN_STEP)
            self.expected += tr.torch_epoch(twin, adam, [batch])
            self.weights.append({p: tr.twin_param(twin, p).copy() for p in paths})

    def _refuse(self, text: str, *hints: str) -> Verdict:
        return Verdict(False, "value", text, "", hints=list(hints))

    def _values(self, out: Any, model: Module, step: int, grads: GradientsParams,
                state: dict):
        """The reader's new values as ``{param id: inner tensor}``, or a refusal."""
        params = model.parameters()
        by_id = {p.id: (path, p) for path, p in params.items()}
        if isinstance(out, Module):
            out = {p.id: p.val() for p in out.parameters().values()}
        if not isinstance(out, dict):
            return self._refuse(f"step {step}: adam_step returned a "
                                f"{type(out).__name__}.", "Return a dict: "
                                "{param.id: the param's new value}.")
        values = {}
        for key, value in out.items():
            path, param = by_id.get(key) or (key, params.get(key))
            if param is None:
                return self._refuse(f"step {step}: the key {key!r} names no param of the "
                                    "model.", "Key the new values by param.id.")
            if isinstance(value, Tensor):
                value = value.inner()
            elif isinstance(value, np.ndarray):
                value = Tensor.from_numpy(value.astype(np.float32), self.device.inner())
            else:
                return self._refuse(f"step {step}: the new value of {path} is a "
                                    f"{type(value).__name__}, not a tensor.")
            if tuple(value.shape) != tuple(param.val().shape):
                return self._refuse(
                    f"step {step}: the new value of {path} has shape "
                    f"{list(value.shape)}, the param {list(param.val().shape)}: it was "
                    "computed from another param's state"
                    + (f": {POSITION}." if _keyed_by_position(state, model) else "."),
                    "A param's position among the gradients moves when another has none "
                    f"(here {FROZEN}, frozen at step {FROZEN_STEP}): keep each state "
                    "under param.id, not a position.")
            if param.id not in grads and not np.array_equal(value.to_numpy(),
                                                            param.val().to_numpy()):
                return self._refuse(f"step {step}: {path} has no gradient ({FROZEN} is "
                                    "frozen) yet it moved.", "A param without a gradient "
                                    "takes no step: skip it (grads.get(param.id) is None).")
            values[param.id] = value
        missing = [path for path, p in params.items() if p.id in grads and p.id not in values]
        if missing:
            return self._refuse(f"step {step}: no new value for {missing[0]} "
                                f"(and {len(missing) - 1} more).",
                                "Every param with a gradient takes a step.")
        return values

    def _diagnose(self, step: int, path: str, before: np.ndarray, got: np.ndarray,
                  history: list[tuple[int, np.ndarray]], gap: float,
                  state: dict | None = None) -> Verdict:
        want = self.weights[step - 1][path]
        gs, t_now = [g for _, g in history], len(history)
        scale = float(np.abs(want - before).max())
        said = f"after step {step}, {path} differs from PyTorch's by {gap:.1e}"
        if not np.isfinite(got).all():
            return self._refuse(f"{said}: it holds inf or nan. At t = 0, 1 - beta**t is 0 "
                                "and the bias correction divides by it.",
                                "t counts this param's steps including the one being "
                                "taken: 1 at the first step (burn's state starts at "
                                "time 1, adam.rs:187).")
        candidates = {"bias": _update(gs, t_now, bias=False),
                      "eps_inside": _update(gs, t_now, eps_inside=True),
                      "torch_eps": _update(gs, t_now, eps=TORCH_EPS),
                      "swap": _update(gs, t_now, swap=True),
                      "keep": _update(gs, 1, keep=False)}
        if len(history) < step:  # a frozen step: its t stayed, a slip advanced it
            t_slip = "global_t" if _global_count(state or {}) else "frozen_t"
            candidates[t_slip] = _update(gs, step)
        for cause, update in candidates.items():
            if _near(got, before - tr.LR * update, scale):
                text, hint = CAUSES[cause]
                return self._refuse(f"{said}; your step {text}", hint)
        ratio = float(np.median(np.abs(got - before)) /
                      max(float(np.median(np.abs(want - before))), 1e-30))
        where = (f" Step {FROZEN_STEP} is the first with params that get no gradient "
                 f"({FROZEN} frozen)." if step == FROZEN_STEP else "")
        return self._refuse(f"{said} (your steps are {ratio:.2f}× PyTorch's, median).{where}",
                            "m = beta_1·m + (1 - beta_1)·g, v = beta_2·v + (1 - beta_2)·g², "
                            "both divided by 1 - beta**t, then lr · m̂ / (√v̂ + eps).",
                            "Each param's (t, m, v) lives in state under its param.id.")

    def find_failure(self, solution: Any) -> Verdict | None:
        model, _ = tr.twins(self.cfg, self.device)  # the twin's initial weights
        state: dict = {}
        history: dict[str, list[tuple[int, np.ndarray]]] = {}
        for i, batch in enumerate(self.batches):
            step = i + 1
            frozen = getattr(model, FROZEN)
            setattr(model, FROZEN, frozen.set_require_grad(step != FROZEN_STEP))
            loss = loss_fn(model(batch.images), batch.targets)
            value = float(loss.into_scalar())
            if abs(value - self.expected[i]) > 1e-5 * abs(self.expected[i]):
                return self._refuse(f"step {step}'s loss is {value:.6f}, PyTorch's "
                                    f"{self.expected[i]:.6f}.")
            grads = GradientsParams.from_grads(loss.backward(), model)
            params = model.parameters()
            for path, p in params.items():
                if p.id in grads:
                    history.setdefault(path, []).append((step, grads.get(p.id).to_numpy()))
            before = {p: v.val().to_numpy() for p, v in params.items()}
            try:
                out = solution(tr.LR, model, grads, state)
            except Exception as err:  # noqa: BLE001 - the reader's code raised: a verdict
                hints = (["1 - beta**t is 0 when t = 0: t is 1 at a param's first step."]
                         if isinstance(err, ZeroDivisionError) else [])
                if step == FROZEN_STEP and _keyed_by_position(state, model):
                    return self._refuse(
                        f"step {step}: {POSITION} ({FROZEN} has no gradient here, so "
                        "every later param reads another's moments and the shapes "
                        f"clash: {type(err).__name__}).",
                        "Keep each (t, m, v) under param.id, as burn's optimizer does.")
                if step == FROZEN_STEP:
                    hints.append(f"Step {FROZEN_STEP} is the first where {FROZEN}'s params "
                                 "have no gradient: a param's position among the gradients "
                                 "moves; keep each state under param.id.")
                return self._refuse(f"step {step}: adam_step raised {type(err).__name__}: "
                                    f"{err}", *(hints or ["Return {param.id: new value}."]))
            values = self._values(out, model, step, grads, state)
            if isinstance(values, Verdict):
                return values
            model = model.map(_PutBack(values))
            for path, p in model.parameters().items():
                if path in DRIFTING:
                    continue
                got = p.val().to_numpy()
                gap = float(np.abs(got - self.weights[i][path]).max()) if np.isfinite(
                    got).all() else float("inf")
                if gap > WEIGHT_ATOL:
                    return self._diagnose(step, path, before[path], got,
                                          history.get(path, []), gap, state)
        return None

    def check(self, solution: Any = ...) -> Verdict:
        """Check the reader's ``adam_step``; print the verdict."""
        return run_check(self, solution, lambda: (
            f"✓ {self.title}: {self.steps} steps ({FROZEN} frozen at step {FROZEN_STEP}), "
            f"every weight within {WEIGHT_ATOL:.0e} of PyTorch's."))

    def solution(self, name: str | None = None):
        """Show the reference solution (renamed to ``name``) and check it."""
        return show_solution(self, adam_step, name, f"✓ The reference passes ({self.steps} steps against torch.optim.Adam).")


def first_step_ratio(step_fn, device: Device) -> float:
    """Median |step| / lr over the weights whose |g| > 100·eps, at step 1 of ``step_fn``."""
    cfg = DigitsCnnConfig().with_dropout(0.0)
    model, _ = tr.twins(cfg, device)
    batch = next(iter(tr.loader(tr.datasets()[0], device, tr.SEED)))
    loss = loss_fn(model(batch.images), batch.targets)
    grads = GradientsParams.from_grads(loss.backward(), model)
    new = step_fn(tr.LR, model, grads, {})
    ratios = []
    for p in model.parameters().values():
        g = grads.get(p.id).to_numpy()
        big = np.abs(g) > 100 * EPS
        delta = np.abs(new[p.id].to_numpy() - p.val().to_numpy())
        ratios.append(delta[big] / tr.LR)
    return float(np.median(np.concatenate(ratios)))
