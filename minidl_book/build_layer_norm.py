"""Build exercise of the nn-modules chapter: layer_norm's ModuleOps default, from basic ops.

The reader writes ``layer_norm(cls, x, gamma, beta, epsilon)`` the way burn's ``ModuleOps``
default is written: with other ops of the same backend (``cls.float_mean_dim``,
``cls.float_sub``, ``cls.float_mul``, ``cls.float_add_scalar``, ``cls.float_sqrt``,
``cls.float_div``, ``cls.float_reshape``, ``cls.float_add``), no NumPy. The checker installs
it, for one run, as the ``layer_norm`` of the backend each of three devices dispatches to
(plain Flex, whose fused kernel it replaces; ``flex().autodiff()``, where it runs with
``cls = Autodiff[Flex]`` and every op is a recorded step; ``Device.wgpu()``), runs
``minidl.module.layer_norm`` on each and compares with ``torch.nn.functional.layer_norm``,
the output on all three and, on the autodiff device, the gradients of ``sum(out * g)`` with
respect to x, gamma and beta.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.dispatch.route import backend_for
from minidl.tensor import module as functional
from minidl_book.build_check import BuildExercise, Reference, Rules

__trace_hide__ = True  # the trace shows the reader's code and what it dispatched, not this

__all__ = ["DEVICES", "PLANTED", "exercise", "layer_norm"]

#: The devices the reader's default is installed under, by label.
DEVICES = {"Flex": Device.flex, "Flex autodiff": lambda: Device.flex().autodiff(), "Wgpu": Device.wgpu}


# ----- the reference solution and planted wrong ones -------------------------------------------
def _param_shape(x) -> tuple[int, ...]:
    return (1,) * (len(x.shape) - 1) + (x.shape[-1],)


def _affine(cls, out, gamma, beta, x):
    out = cls.float_mul(out, cls.float_reshape(gamma, _param_shape(x)))
    return out if beta is None else cls.float_add(out, cls.float_reshape(beta, _param_shape(x)))


def layer_norm(cls, x, gamma, beta, epsilon):
    dim = len(x.shape) - 1
    shape = (1,) * dim + (x.shape[-1],)  # gamma and beta, [d], broadcast over the rows
    centred = cls.float_sub(x, cls.float_mean_dim(x, dim))
    var = cls.float_mean_dim(cls.float_mul(centred, centred), dim)  # biased: / n
    out = cls.float_div(centred, cls.float_sqrt(cls.float_add_scalar(var, epsilon)))
    out = cls.float_mul(out, cls.float_reshape(gamma, shape))
    if beta is None:  # a LayerNorm made with bias=False (burn's Option)
        return out
    return cls.float_add(out, cls.float_reshape(beta, shape))


def unbiased(cls, x, gamma, beta, epsilon):
    """torch.var's default: divides the squares' sum by n - 1."""
    dim, n = len(x.shape) - 1, x.shape[-1]
    centred = cls.float_sub(x, cls.float_mean_dim(x, dim))
    var = cls.float_mul_scalar(cls.float_mean_dim(cls.float_mul(centred, centred), dim), n / max(n - 1, 1))
    out = cls.float_div(centred, cls.float_sqrt(cls.float_add_scalar(var, epsilon)))
    return _affine(cls, out, gamma, beta, x)


def eps_outside(cls, x, gamma, beta, epsilon):
    """sqrt(var) + eps: the same far from 0 variance, not on a near-constant row."""
    dim = len(x.shape) - 1
    centred = cls.float_sub(x, cls.float_mean_dim(x, dim))
    var = cls.float_mean_dim(cls.float_mul(centred, centred), dim)
    out = cls.float_div(centred, cls.float_add_scalar(cls.float_sqrt(var), epsilon))
    return _affine(cls, out, gamma, beta, x)


def no_reshape(cls, x, gamma, beta, epsilon):
    """gamma and beta left [d]: NumPy-style broadcasting burn's same-rank ops do not have."""
    dim = len(x.shape) - 1
    centred = cls.float_sub(x, cls.float_mean_dim(x, dim))
    var = cls.float_mean_dim(cls.float_mul(centred, centred), dim)
    out = cls.float_div(centred, cls.float_sqrt(cls.float_add_scalar(var, epsilon)))
    out = cls.float_mul(out, gamma)
    return out if beta is None else cls.float_add(out, beta)


def textbook(cls, x, gamma, beta, epsilon):
    """var = E[x^2] - E[x]^2: right on paper, cancels in float32 when the mean dwarfs the spread."""
    dim = len(x.shape) - 1
    mean = cls.float_mean_dim(x, dim)
    var = cls.float_sub(cls.float_mean_dim(cls.float_mul(x, x), dim), cls.float_mul(mean, mean))
    out = cls.float_div(cls.float_sub(x, mean), cls.float_sqrt(cls.float_add_scalar(var, epsilon)))
    return _affine(cls, out, gamma, beta, x)


def _x_hat(cls, x, epsilon):
    dim = len(x.shape) - 1
    centred = cls.float_sub(x, cls.float_mean_dim(x, dim))
    var = cls.float_mean_dim(cls.float_mul(centred, centred), dim)
    return cls.float_div(centred, cls.float_sqrt(cls.float_add_scalar(var, epsilon)))


def beta_required(cls, x, gamma, beta, epsilon):
    """beta always added: crashes on a LayerNorm without bias (beta None)."""
    out = cls.float_mul(_x_hat(cls, x, epsilon), cls.float_reshape(gamma, _param_shape(x)))
    return cls.float_add(out, cls.float_reshape(beta, _param_shape(x)))


def beta_none_drops_gamma(cls, x, gamma, beta, epsilon):
    """No beta taken for no affine at all: x_hat returned unscaled."""
    out = _x_hat(cls, x, epsilon)
    return out if beta is None else _affine(cls, out, gamma, beta, x)


def beta_truthy(cls, x, gamma, beta, epsilon):
    """`if beta:` asks a primitive of many values for one truth value."""
    out = cls.float_mul(_x_hat(cls, x, epsilon), cls.float_reshape(gamma, _param_shape(x)))
    return cls.float_add(out, cls.float_reshape(beta, _param_shape(x))) if beta else out


#: name → (wrong default, the verdict kind it must get)
PLANTED = {
    "unbiased variance": (unbiased, "check"),
    "eps outside the sqrt": (eps_outside, "check"),
    "gamma not reshaped": (no_reshape, "error"),
    "E[x^2] - mean^2": (textbook, "check"),
    "beta None not handled": (beta_required, "check"),
    "beta None drops gamma": (beta_none_drops_gamma, "check"),
    "if beta:": (beta_truthy, "check"),
}

#: the binary ops whose operands must have the same rank, as burn's do
_SAME_RANK = ("float_add", "float_sub", "float_mul", "float_div")


# ----- the checker ---------------------------------------------------------------------------
def _arrays(seed: int, rows: int, d: int, spread: float, lead: tuple = (),
            bias: bool = True) -> dict:
    """x of shape [*lead, rows, d] (rank 2 or 3); beta None when ``bias`` is off."""
    rng = np.random.default_rng(seed)
    shape = (*lead, rows, d)
    x = rng.normal(0.0, 1.0, shape) * spread + rng.normal(0.0, 2.0, (*lead, rows, 1))
    arrays = {k: v.astype(np.float32) for k, v in {
        "x": x, "gamma": rng.uniform(0.5, 2.0, d), "beta": rng.normal(0.0, 1.0, d),
        "g": rng.uniform(-1.0, 1.0, shape)}.items()}
    if not bias:
        arrays["beta"] = None  # LayerNormConfig(d).with_bias(False): burn's Option
    return arrays


def _cases() -> st.SearchStrategy:
    return st.tuples(st.integers(0, 2**16), st.integers(1, 4), st.integers(2, 8),
                     st.sampled_from([1.0, 0.01]), st.sampled_from([(), (2,)]),
                     st.booleans()).map(lambda t: _arrays(*t))


def _same_rank_op(name: str, op, seen: dict):
    """``op`` refusing operands of different ranks (burn's ``Tensor<B, D>`` fixes D for both
    sides, so its backend ops never broadcast a [d] against a [rows, d]); it also notes a
    square of the input itself (``E[x^2]``) in ``seen``."""

    def checked(cls, lhs, rhs):
        if len(lhs.shape) != len(rhs.shape):
            raise ValueError(
                f"{name} got shapes {list(lhs.shape)} and {list(rhs.shape)}: burn's backend "
                "ops take operands of the same rank (no broadcasting of a [d] against a "
                "[rows, d]); reshape gamma and beta to [1, ..., d] with cls.float_reshape")
        if name == "float_mul" and lhs is rhs and lhs is seen.get("x"):
            seen["squared_x"] = True
        return op(lhs, rhs)

    return checked


#: One of the wrappers, for its code: the reader's ``cls.float_add(...)`` reaches the
#: checker's wrapper, which stands for the backend's op, so the rules take it as a helper the
#: reader may call (not as "the checker's objects"), and what it calls as the library's.
_WRAPPER = _same_rank_op("float_add", None, {})


def _same_rank(backend, name: str, seen: dict):
    """``backend.<name>`` with the same-rank check, as a classmethod to install."""
    return classmethod(_same_rank_op(name, getattr(backend, name), seen))


def _restore(backend, saved: dict, names) -> None:
    for name in names:
        if name in saved:
            setattr(backend, name, saved[name])
        elif name in vars(backend):
            delattr(backend, name)


def _installed(solution, backend, saved: dict, seen: dict):
    """The reader's default as ``backend.layer_norm``: the same-rank ops for its forward only
    (backward runs the ops unchecked)."""

    def installed(cls, x, gamma, beta, epsilon):
        seen["x"] = x
        try:
            return solution(cls, x, gamma, beta, epsilon)
        except Exception as err:
            if beta is None:  # the verdict can say which case: the one without a shift
                err._beta_none = True
            raise
        finally:
            seen.pop("x", None)
            _restore(backend, saved, _SAME_RANK)

    return classmethod(installed)


def _run(solution, case: dict) -> dict:
    out = {}
    seen: dict = {}
    for label, make in DEVICES.items():
        dev = make()
        backend = backend_for(dev)
        patched = ("layer_norm", *_SAME_RANK)
        saved = {name: vars(backend)[name] for name in patched if name in vars(backend)}
        for name in _SAME_RANK:
            setattr(backend, name, _same_rank(backend, name, seen))

        backend.layer_norm = _installed(solution, backend, saved, seen)
        try:
            x, gamma, beta = (None if case[k] is None else Tensor.from_numpy(case[k], dev)
                              for k in ("x", "gamma", "beta"))
            if dev.is_autodiff():
                x, gamma = x.require_grad(), gamma.require_grad()
                beta = beta if beta is None else beta.require_grad()
            y = functional.layer_norm(x, gamma, beta, 1e-5)
            out[f"out on {label}"] = y
            if dev.is_autodiff():
                grads = (y * Tensor.from_numpy(case["g"], dev)).sum().backward()
                for name, t in (("x", x), ("gamma", gamma), ("beta", beta)):
                    if t is not None:
                        out[f"grad {name} on {label}"] = t.grad(grads)
        finally:
            _restore(backend, saved, patched)
    out["_squared_x"] = seen.get("squared_x", False)
    return out


def _numpy_out(case: dict, ddof: int = 0, eps_inside: bool = True) -> np.ndarray:
    x = case["x"].astype(np.float64)
    centred = x - x.mean(-1, keepdims=True)
    var = (centred**2).sum(-1, keepdims=True) / max(x.shape[-1] - ddof, 1)
    std = np.sqrt(var + 1e-5) if eps_inside else np.sqrt(var) + 1e-5
    out = centred / std * case["gamma"]
    return out if case["beta"] is None else out + case["beta"]


def _slips(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the slip when the plain-Flex output matches a known wrong formula."""
    found = outputs.get("out on Flex")
    if found is None:
        return None
    found = np.asarray(found, dtype=np.float64)
    if found.shape != case["x"].shape or np.allclose(found, _numpy_out(case), 1e-4, 1e-4):
        return None
    if case["x"].shape[-1] > 1 and np.allclose(found, _numpy_out(case, ddof=1), 1e-4, 1e-4):
        return ("Your variance divides by n - 1 (torch.var's default); LayerNorm's is "
                "biased: the mean of the squared deviations, divided by n.")
    if np.allclose(found, _numpy_out(case, eps_inside=False), 1e-4, 1e-4):
        return ("Your output matches x_hat = (x - mean) / (sqrt(var) + eps): epsilon goes "
                "under the square root, sqrt(var + eps), which only shows on a near-constant "
                "row.")
    if case["beta"] is None and np.allclose(found, _numpy_out({**case, "gamma": 1.0}),
                                            1e-4, 1e-4):
        return ("beta is None here (a LayerNorm made with with_bias(False)) and your output "
                "is x_hat alone: no beta means no shift, but gamma still scales. Multiply by "
                "gamma first, then add beta only when it is not None.")
    if outputs.get("_squared_x"):
        return ("You square x itself: E[x^2] - mean^2 is right on paper, but in float32 two "
                "large, nearly equal numbers cancel when a row's mean is large against its "
                "spread, and the variance loses its digits. Square the centred x instead.")
    return None


def _torch(case: dict) -> dict:
    x, gamma, beta = (None if case[k] is None else
                      torch.tensor(case[k], dtype=torch.float64, requires_grad=True)
                      for k in ("x", "gamma", "beta"))
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, 1e-5)
    (y * torch.from_numpy(case["g"]).double()).sum().backward()
    expected = {f"out on {label}": y.detach().float() for label in DEVICES}
    for name, t in (("x", x), ("gamma", gamma), ("beta", beta)):
        if t is not None:
            expected[f"grad {name} on Flex autodiff"] = t.grad.float()
    return expected


def _torch_out(case: dict) -> dict:
    return {k: v for k, v in _torch(case).items() if k.startswith("out ")}


def _torch_grads(case: dict) -> dict:
    return {k: v for k, v in _torch(case).items() if k.startswith("grad ")}


#: float32 noise, measured: a row with mean ~4 and spread 0.01 (EXAMPLES[1]) loses ~1e-6 in
#: its float32 mean (mean_dim, or sum_dim times 1 / n alike), and x_hat divides that by the
#: spread: 1e-4 off, the gradient of x up to 2e-3 off (~100 in size). rtol 1e-4 refused a
#: right sum-times-1/n mean, and the reference itself on some draws; every planted slip is
#: off by 1e-2 or more.
RTOL, ATOL_OUT, ATOL_GRAD = 1e-3, 1e-4, 1e-2


EXAMPLES = [
    {**_arrays(1, 2, 4, 1.0)},
    {**_arrays(2, 1, 3, 0.01)},
    {**_arrays(3, 3, 4, 1.0, (2,))},  # rank 3: the last dim is not always dim 1
    {**_arrays(4, 2, 5, 1.0, (), False)},  # beta None: LayerNorm with bias=False
]


#: what a verdict says after the values of ``g``
G_LABEL = ("  (the upstream gradient: on Flex autodiff the checker runs "
           "(out * g).sum().backward() and compares the gradients of x, gamma and beta with "
           "torch's)")


class _LayerNormExercise(BuildExercise):
    """Says what a call of the backend's own layer_norm is: a call of the op being written
    (the checker installed the reader's function there, so the watch would name its wrapper)."""

    def verdict_for(self, solution, case):  # noqa: D102
        verdict = super().verdict_for(solution, case)
        if verdict is not None and verdict.inputs:
            verdict.inputs = "\n".join(line + G_LABEL if line.startswith("g = ") else line
                                        for line in verdict.inputs.splitlines())
        return verdict

    def _raised(self, err, files, inputs, message=""):
        """A crash on beta's account gets beta's own verdict, not the gamma-reshape hint."""
        verdict = super()._raised(err, files, inputs, message)
        if getattr(err, "_beta_none", False) and "None" in str(err):
            verdict.kind = "check"
            verdict.text += ("\n  beta is None in this case: a LayerNorm made with "
                             "with_bias(False) has no shift (burn's Option<Tensor>). Multiply "
                             "by gamma, and reshape and add beta only when `beta is not None`.")
        elif "truth value" in str(err) and "beta" in (verdict.call or ""):
            verdict.kind = "check"
            verdict.text += ("\n  `if beta:` asks a tensor of many values for one truth "
                             "value. What you mean is whether there is a beta at all: "
                             "`if beta is not None:`.")
        return verdict

    def find_failure(self, solution):  # noqa: D102
        verdict = super().find_failure(solution)
        if verdict is not None and verdict.kind == "rule" and \
                "called the checker's installed" in verdict.text:
            site = verdict.text.split("\n", 1)[1] if "\n" in verdict.text else ""
            verdict.text = ("Rule broken: your code called cls.layer_norm, and the backend's "
                            "layer_norm is the op you are writing: compose it from cls.float_* "
                            "ops" + (f"\n{site}" if site else ""))
        return verdict


def exercise(max_examples: int = 10) -> BuildExercise:
    """The checker for the reader's ``layer_norm(cls, x, gamma, beta, epsilon)``."""
    return _LayerNormExercise(
        "layer_norm's ModuleOps default on Flex, Flex autodiff and Wgpu",
        cases=_cases(),
        run=_run,
        references=[Reference("torch.nn.functional.layer_norm", _torch_out, rtol=RTOL,
                              atol=ATOL_OUT),
                    Reference("torch.nn.functional.layer_norm, backward", _torch_grads,
                              rtol=RTOL, atol=ATOL_GRAD)],
        checks=[_slips],
        rules=Rules(forbidden={r"^(ModuleOps|Backend)\.layer_norm$|^norm\.layer_norm$": "call a backend's own layer_norm (compose it from cls ops)"},
                    no_numpy=True, helpers=(_WRAPPER,)),
        hints={
            "value": ["Along the last dim: the mean, the centred x, the mean of its squares, "
                      "then divide by the square root of that variance plus epsilon."],
            "error": ["gamma and beta are [d] and x is [..., rows, d]: burn's ops want the same "
                      "rank on both sides, so cls.float_reshape(gamma, (1,) * (rank - 1) + (d,))."],
        },
        reference_solution=layer_norm,
        examples=EXAMPLES,
        max_examples=max_examples,
    )
