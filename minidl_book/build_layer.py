"""Build exercise of the modules chapter: a new layer, ``RmsNormConfig`` + ``RmsNorm``.

burn-nn has an RMS norm (``crates/burn-nn/src/modules/norm/rms.rs``): a config with
``d_model`` and ``epsilon`` (default 1e-5) whose ``init`` makes ``gamma`` with
``Initializer::Ones``, and ``Y = X / sqrt(mean(X^2) + eps) * gamma`` over the last dim.
minidl has none, so the reader writes it the way minidl's layers are written. The checker
builds it from the config on an autodiff device and checks what the framework relies on:
the module walk finds exactly one param ``gamma`` (``d_model`` numbers), the record holds
``gamma``, ``load_record`` takes new values, ``valid()`` moves it to the plain device; and
the output and both gradients agree with ``torch.nn.RMSNorm``. Each case builds the layer
with its own epsilon (``RmsNormConfig(d).with_epsilon(e)``, compared with
``torch.nn.RMSNorm(d, eps=e)``), so a forward that hard-codes ``1e-5`` is refused by name.
Each slip gets its own hint (a rank mismatch, a nan from a zero row, a bare tensor field, an
ignored epsilon, a wrong shape), and the failing case says what ``gamma`` and ``g`` are.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.module import Initializer, Module, Param, config
from minidl_book.build_check import Reference, Rules
from minidl_book.cause_hints import CauseHints
from minidl_book.harness import layer_run
from minidl_book.strategies import float32_arrays
from minidl_book.verdict import describe_value

__all__ = ["PLANTED", "RmsNorm", "RmsNormConfig", "exercise"]


@config
class RmsNormConfig:
    """Config of :class:`RmsNorm` (burn's ``RmsNormConfig``)."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> RmsNorm:
        """An RmsNorm with ``gamma`` = ones on ``device``."""
        if not self.epsilon > 0:
            raise ValueError(f"RmsNormConfig: epsilon must be > 0, got {self.epsilon}")
        return RmsNorm(Initializer.Ones.init([self.d_model], device), self.epsilon)


class RmsNorm(Module):
    """``x / sqrt(mean(x^2, last dim) + eps) * gamma`` (burn's ``RmsNorm``)."""

    def __init__(self, gamma: Param, epsilon: float):
        self.gamma = gamma
        self.epsilon = epsilon  # a constant: not part of the walk

    def forward(self, x: Tensor) -> Tensor:
        gamma = self.gamma.val()
        rms = (x.square().mean_dim(x.rank - 1) + self.epsilon).sqrt()
        return x / rms * gamma.reshape([1] * (x.rank - 1) + [gamma.shape[0]])


# ----- planted wrong solutions ---------------------------------------------------------------
@config
class SumNormConfig:
    """Divides by the root of the *sum* of squares, not of their mean."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> SumNorm:
        return SumNorm(Initializer.Ones.init([self.d_model], device), self.epsilon)


class SumNorm(RmsNorm):
    def forward(self, x: Tensor) -> Tensor:
        gamma = self.gamma.val()
        rms = (x.square().sum_dim(x.rank - 1) + self.epsilon).sqrt()
        return x / rms * gamma.reshape([1] * (x.rank - 1) + [gamma.shape[0]])


@config
class TensorFieldConfig:
    """Keeps gamma as a bare tensor, not a Param: the module walk cannot see it."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> TensorField:
        return TensorField(Tensor.ones([self.d_model], device), self.epsilon)


class TensorField(Module):
    def __init__(self, gamma: Tensor, epsilon: float):
        self.gamma_tensor = gamma
        self.epsilon = epsilon

    def forward(self, x: Tensor) -> Tensor:
        rms = (x.square().mean_dim(x.rank - 1) + self.epsilon).sqrt()
        return x / rms * self.gamma_tensor.reshape([1] * (x.rank - 1) + [self.gamma_tensor.shape[0]])


@config
class WeightNameConfig:
    """Right math, PyTorch's name: the record says ``weight`` where burn's files say ``gamma``."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> WeightName:
        return WeightName(Initializer.Ones.init([self.d_model], device), self.epsilon)


class WeightName(Module):
    def __init__(self, weight: Param, epsilon: float):
        self.weight = weight
        self.epsilon = epsilon

    def forward(self, x: Tensor) -> Tensor:
        w = self.weight.val()
        rms = (x.square().mean_dim(x.rank - 1) + self.epsilon).sqrt()
        return x / rms * w.reshape([1] * (x.rank - 1) + [w.shape[0]])


@config
class UnderscoreGammaConfig:
    """Keeps gamma as ``self._gamma``: a PyTorch habit the module walk does not see."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> UnderscoreGamma:
        return UnderscoreGamma(Initializer.Ones.init([self.d_model], device), self.epsilon)


class UnderscoreGamma(Module):
    def __init__(self, gamma: Param, epsilon: float):
        self._gamma = gamma
        self.epsilon = epsilon

    def forward(self, x: Tensor) -> Tensor:
        gamma = self._gamma.val()
        rms = (x.square().mean_dim(x.rank - 1) + self.epsilon).sqrt()
        return x / rms * gamma.reshape([1] * (x.rank - 1) + [gamma.shape[0]])


@config
class NoReshapeConfig:
    """The PyTorch habit: gamma [d_model] times x [..., d_model], ranks apart."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> NoReshape:
        return NoReshape(Initializer.Ones.init([self.d_model], device), self.epsilon)


class NoReshape(RmsNorm):
    def forward(self, x: Tensor) -> Tensor:
        rms = (x.square().mean_dim(x.rank - 1) + self.epsilon).sqrt()
        return x / rms * self.gamma.val()


@config
class EpsOutsideConfig:
    """Adds epsilon after the root: a zero row divides 0 by 0 (eps), its gradient is nan."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> EpsOutside:
        return EpsOutside(Initializer.Ones.init([self.d_model], device), self.epsilon)


class EpsOutside(RmsNorm):
    def forward(self, x: Tensor) -> Tensor:
        gamma = self.gamma.val()
        rms = x.square().mean_dim(x.rank - 1).sqrt() + self.epsilon
        return x / rms * gamma.reshape([1] * (x.rank - 1) + [gamma.shape[0]])


@config
class HardEpsConfig:
    """Keeps epsilon in the config but never hands it on: the forward adds 1e-5 whatever the
    config says."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> HardEps:
        return HardEps(Initializer.Ones.init([self.d_model], device))


class HardEps(Module):
    def __init__(self, gamma: Param):
        self.gamma = gamma

    def forward(self, x: Tensor) -> Tensor:
        gamma = self.gamma.val()
        rms = (x.square().mean_dim(x.rank - 1) + 1e-5).sqrt()
        return x / rms * gamma.reshape([1] * (x.rank - 1) + [gamma.shape[0]])


@config
class MeanAllConfig:
    """Takes the mean of every x² (``mean()``, rank 1), not over the last dim."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> MeanAll:
        return MeanAll(Initializer.Ones.init([self.d_model], device), self.epsilon)


class MeanAll(RmsNorm):
    def forward(self, x: Tensor) -> Tensor:
        gamma = self.gamma.val()
        rms = (x.square().mean() + self.epsilon).sqrt()
        return x / rms * gamma.reshape([1] * (x.rank - 1) + [gamma.shape[0]])


@config
class UnsqueezeOnceConfig:
    """Lifts gamma with ``unsqueeze(0)``: [1, d] fits a rank-2 x only, not [..., d_model]."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device: Device) -> UnsqueezeOnce:
        return UnsqueezeOnce(Initializer.Ones.init([self.d_model], device), self.epsilon)


class UnsqueezeOnce(RmsNorm):
    def forward(self, x: Tensor) -> Tensor:
        rms = (x.square().mean_dim(x.rank - 1) + self.epsilon).sqrt()
        return x / rms * self.gamma.val().unsqueeze(0)


#: name → (wrong config class, the verdict kind it must get)
PLANTED = {
    "gamma not reshaped": (NoReshapeConfig, "error"),
    "epsilon outside the root": (EpsOutsideConfig, "value"),
    "sum instead of mean": (SumNormConfig, "value"),
    "gamma not a Param": (TensorFieldConfig, "check"),
    "gamma named _gamma": (UnderscoreGammaConfig, "check"),
    "named weight": (WeightNameConfig, "check"),
    "epsilon hard-coded": (HardEpsConfig, "check"),
    "mean over every number": (MeanAllConfig, "error"),
    "gamma unsqueezed once": (UnsqueezeOnceConfig, "error"),
}

#: the epsilons a case builds its layer with: the default and three a forward cannot hide
#: (on a row of 0.01s, mean(x²) = 1e-4, so each gives a visibly different output)
EPSILONS = (1e-5, 1e-2, 0.5, 1e-3)


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(3)

    def case(lead, d):
        return st.fixed_dictionaries({"x": arrays(*lead, d), "gamma": arrays(d), "g": arrays(*lead, d),
                                      "epsilon": st.sampled_from(EPSILONS)})

    dims = st.tuples(st.lists(st.integers(1, 3), min_size=1, max_size=2), st.integers(1, 5))
    return dims.flatmap(lambda d: case(*d))


def _torch(case: dict) -> dict:
    d = case["x"].shape[-1]
    norm = torch.nn.RMSNorm(d, eps=case.get("epsilon", 1e-5))
    with torch.no_grad():
        norm.weight.copy_(torch.from_numpy(case["gamma"]))
    x = torch.from_numpy(case["x"]).requires_grad_(True)
    out = norm(x)
    (out * torch.from_numpy(case["g"])).sum().backward()
    return {"out": out.detach(), "grad x": x.grad, "grad gamma": norm.weight.grad, "valid out": out.detach()}


def _structure(solution, case, outputs, trace) -> str | None:
    d = case["x"].shape[-1]
    if outputs.get("_no_with_epsilon"):
        return ("RmsNormConfig(d_model) has no with_epsilon builder: make it a @config class "
                "with a field epsilon: float = 1e-5")
    if outputs["_record"] != ["gamma"]:
        hidden = _underscore_fields(solution, d)
        skipped = (f"; it skipped {', '.join('self.' + n for n in hidden)}: the walk leaves "
                   "out every attribute whose name starts with '_'") if hidden else ""
        return (f"The module walk found params {outputs['_record']} (fields {outputs['_fields']})"
                f"{skipped}; the layer has one param, gamma, so its record (and a burn file) "
                "says 'gamma'")
    if outputs["_num_params"] != d:
        return f"num_params() is {outputs['_num_params']}; gamma has d_model = {d} numbers"
    if outputs["_valid_autodiff"]:
        return "valid() left gamma on the autodiff device: it must move to the inner (plain) device"
    eps = case.get("epsilon", 1e-5)
    probe = outputs.get("_eps_probe")
    if probe is not None and eps != 1e-5 and np.allclose(*probe, rtol=1e-4, atol=0):
        return (f"RmsNormConfig({d}).with_epsilon({eps}) and RmsNormConfig({d}) (epsilon 1e-5) "
                f"built layers that give the same output on a row of 0.01s "
                f"({float(probe[0].ravel()[0]):.4g}), where mean(x²) = 1e-4 and torch's "
                f"RMSNorm gives {0.01 / (1e-4 + eps) ** 0.5:.4g} with eps={eps}: the layer "
                "ignores its config's epsilon")
    return None


def _underscore_fields(solution, d: int) -> list[str]:
    """The attributes of the reader's layer whose names start with ``_`` and hold a Param or a
    module: fields the walk (``named_fields()``) skips, a PyTorch habit."""
    try:
        layer = solution(d).init(Device.flex())
        found = vars(layer)
    except Exception:  # noqa: BLE001 - a layer that cannot be built says nothing here
        return []
    return [name for name, value in found.items()
            if name.startswith("_") and isinstance(value, Param | Module)]


class _LayerExercise(CauseHints):
    """Says what each input of the failing case is for."""

    def verdict_for(self, solution, case):  # noqa: D102
        verdict = self._verdict_for(solution, case, "")
        if verdict is None:
            return None
        if "ignores its config's epsilon" in verdict.text:
            verdict.inputs = _describe_probe(case)
        else:
            verdict.inputs = "\n".join(f"{k} = {v}" for k, v in _describe(case).items())
        if "different ranks" in verdict.text:
            verdict.rank_culprit = _rank_culprit(solution)
        return verdict


def _rank_culprit(solution) -> str:
    """Which tensor a rank error is about, found on a case where the sizes tell them apart: an
    x of [2, 3] (gamma [3]). ``"mean"`` when the failing op's odd operand is not gamma's [3]
    (a mean over every number, rank 1), else ``"gamma"``."""
    plain = Device.flex()
    try:
        solution(3).init(plain)(Tensor.from_numpy(np.ones((2, 3), np.float32), plain))
    except Exception as err:  # noqa: BLE001 - the reader's error, read for its shapes
        text = str(err)
        if "different ranks" in text and "[3] (1)" not in text:
            return "mean"
    return "gamma"


def _describe_probe(case: dict) -> str:
    eps = case.get("epsilon", 1e-5)
    d = case["x"].shape[-1]
    row = np.full((1, d), 0.01, np.float32)
    return "\n".join([
        f"epsilon = {eps}: the layer is RmsNormConfig({d}).with_epsilon({eps}), beside "
        f"RmsNormConfig({d}) (epsilon 1e-5)",
        f"x = {describe_value(row)}, the probe row, into both fresh layers (gamma = ones)"])


def _describe(case: dict) -> dict:
    return {"epsilon": f"{case.get('epsilon', 1e-5)}: the layer is "
                       f"RmsNormConfig(d_model).with_epsilon({case.get('epsilon', 1e-5)})",
            "x": describe_value(case["x"]),
            "gamma": f"{describe_value(case['gamma'])}, loaded into gamma by load_record "
                     "before the forward",
            "g": f"{describe_value(case['g'])}, the upstream gradient: the checker runs "
                 "(out * g).sum().backward() and compares the gradients of x and gamma "
                 "with torch's"}


_CAUSES = [
    ("mean", lambda v: getattr(v, "rank_culprit", "") == "mean", [
        "rms must keep x's rank: mean() averages every number into one (rank 1); "
        "x.square().mean_dim(x.rank - 1) averages over the last dim and keeps it with "
        "size 1, so x / rms broadcasts."]),
    ("rank", lambda v: "different ranks" in v.text, [
        "x is [..., d_model] and gamma is [d_model], and minidl, like burn, broadcasts "
        "only between tensors of the same rank: reshape gamma to [1, ..., 1, d_model] "
        "(x.rank - 1 ones) before multiplying."]),
    ("nan", lambda v: v.kind == "value" and "found nan" in v.text, [
        "A row of x can be all zeros, so mean(x²) is 0: epsilon goes inside the root, "
        "sqrt(mean(x²) + eps), so nothing divides by 0 and the root's gradient stays finite."]),
    ("epsilon", lambda v: v.kind == "check" and "ignores its config's epsilon" in v.text, [
        "init must hand self.epsilon to the module it builds (keep it as a constant field), "
        "and forward must add that field, not the number 1e-5."]),
    ("underscore", lambda v: v.kind == "check" and "starts with '_'" in v.text, [
        "Name the field gamma, not _gamma: named_fields() skips every attribute whose name "
        "starts with '_', so parameters(), records and valid() never see it."]),
    ("structure", lambda v: v.kind == "check", [
        "A layer keeps its tensors as Param fields (Initializer.Ones.init([d_model], "
        "device)): that is what the module walk, records and valid() see."]),
    ("shape", lambda v: v.kind == "shape", [
        "mean_dim(dim) keeps the reduced dim with size 1, so x / rms broadcasts back to "
        "x's shape."]),
]


#: the fixed case tried before the generated ones (what hypothesis draws differs by context):
#: rank 2 (gamma must be reshaped, rms must keep the rank), d_model 3 (a sum is not a mean),
_ROWS = {"x": np.array([[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]], np.float32),
         "gamma": np.array([0.5, -1.0, 2.0], np.float32),
         "g": np.array([[1.0, -0.5, 2.0], [0.25, 1.0, -1.0]], np.float32)}
#: a row of zeros: with burn's epsilon, one outside the root gives the values to rounding but a
#: NaN gradient (the slip named by its cause); with epsilon 0.5, a hard-coded one shows
#: a rank-3 x last: gamma lifted to [1, d] only (unsqueeze(0)) fits rank 2, not [..., d_model]
EXAMPLES = [{**_ROWS, "epsilon": 1e-5}, {**_ROWS, "epsilon": 0.5},
            {**{k: v[None] for k, v in _ROWS.items() if k != "gamma"},
             "gamma": _ROWS["gamma"], "epsilon": 1e-5}]


def exercise(max_examples: int = 12) -> CauseHints:
    """The checker for the reader's ``RmsNormConfig`` (and the ``RmsNorm`` it builds)."""
    return _LayerExercise(
        "RmsNormConfig and RmsNorm, a new layer",
        cases=_cases(),
        run=layer_run,
        references=[Reference("torch.nn.RMSNorm", _torch, rtol=1e-5, atol=1e-5)],
        rules=Rules(no_data=True, no_numpy=True),
        checks=[_structure],
        causes=_CAUSES,
        hints=["Y = x / sqrt(mean(x², last dim) + eps) * gamma: the mean over the last dim "
               "(not the sum), epsilon inside the root, gamma read with self.gamma.val()."],
        reference_solution=RmsNormConfig,
        examples=EXAMPLES,
        max_examples=max_examples,
        order=("epsilon", "x", "gamma", "g"),
    )
