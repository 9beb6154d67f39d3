"""Build exercise of the nn-modules chapter: conv2d's backward, the step Autodiff records.

The reader writes ``conv2d_backward(B, x, weight, grad, options) -> (d_x, d_weight)`` from the
inner backend's ops: the forward's matmul ``patches @ w_mat`` seen from backward, so
``d_w_mat = patchesᵀ @ g`` (reshaped and permuted back to ``[c_out, c, k1, k2]``) and
``d_patches = g @ w_matᵀ``, scattered back onto the padded input tap by tap, adding where the
windows overlap (col2im: each forward slice becomes a slice-add), the padding cropped off.
``im2col`` (the forward's patches) is given. One group only.

:func:`plugged_in` installs it as ``Autodiff``'s conv2d step: minidl's own ``Conv2dWithBias``
and ``Conv2dNoBias`` (same forward, same kept ``x`` and ``weight``) with a backward that calls
the reader's function (a grouped conv keeps minidl's helpers). The checker runs ``F.conv2d`` on
``flex().autodiff()`` under it, backward from ``sum(out * g)``, and compares the gradients of
``x`` and ``weight`` with PyTorch's; a named check recognises each planted slip by the numbers
it gives (a NumPy model of the backward with that slip).
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device, DType, Tensor
from minidl.autodiff.ops import module as ad_module
from minidl.backend.options import ConvOptions
from minidl.tensor import module as functional
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.build_conv2d import pad

__trace_hide__ = True  # the trace shows the reader's code and what it dispatched, not this

__all__ = ["PLANTED", "conv2d_backward", "exercise", "im2col", "plugged_in", "step_classes"]


# ----- the given helper and the reference ------------------------------------------------------
def _geometry(x_shape, k, options):
    (top, left), (bottom, right) = options.padding, options.padding_end
    (s1, s2), (d1, d2) = options.stride, options.dilation
    h, w = x_shape[2], x_shape[3]
    h_out = (h + top + bottom - d1 * (k[0] - 1) - 1) // s1 + 1
    w_out = (w + left + right - d2 * (k[1] - 1) - 1) // s2 + 1
    return h_out, w_out


def im2col(B, x, k, options):
    """The forward's patch matrix of ``x`` for a ``k = (k1, k2)`` kernel, one group:
    ``[n * h_out * w_out, k1 * k2 * c]``, columns in ``(i, j, c)`` order."""
    n, c = x.shape[0], x.shape[1]
    (top, left), (bottom, right) = options.padding, options.padding_end
    (s1, s2), (d1, d2) = options.stride, options.dilation
    h_out, w_out = _geometry(x.shape, k, options)
    xp = pad(B, pad(B, x, 2, top, bottom), 3, left, right)
    taps = [B.float_slice(xp, [slice(None), slice(None),
                               slice(i * d1, i * d1 + (h_out - 1) * s1 + 1, s1),
                               slice(j * d2, j * d2 + (w_out - 1) * s2 + 1, s2)])
            for i in range(k[0]) for j in range(k[1])]
    cols = B.float_permute(B.float_cat(taps, 1), (0, 2, 3, 1))
    return B.float_reshape(cols, (n * h_out * w_out, k[0] * k[1] * c))


def conv2d_backward(B, x, weight, grad, options):
    n, c, h, w = x.shape
    c_out, _, k1, k2 = weight.shape
    h_out, w_out = grad.shape[2], grad.shape[3]
    (top, left), (bottom, right) = options.padding, options.padding_end
    (s1, s2), (d1, d2) = options.stride, options.dilation
    rows = n * h_out * w_out
    g = B.float_permute(grad, (0, 2, 3, 1))  # a row per output position
    g = B.float_reshape(g, (rows, c_out))
    xp = pad(B, pad(B, x, 2, top, bottom), 3, left, right)
    shape = (n, c, top + h + bottom, left + w + right)
    d_xp = B.float_zeros(shape, DType.F32, B.float_device(x))
    d_w = []
    for i in range(k1):
        for j in range(k2):
            # tap (i, j) read this slice in forward: its patch [rows, c]
            at = [slice(None), slice(None),
                  slice(i * d1, i * d1 + (h_out - 1) * s1 + 1, s1),
                  slice(j * d2, j * d2 + (w_out - 1) * s2 + 1, s2)]
            patch = B.float_permute(B.float_slice(xp, at), (0, 2, 3, 1))
            patch = B.float_reshape(patch, (rows, c))
            w_tap = B.float_slice(weight, [slice(None), slice(None),
                                           slice(i, i + 1), slice(j, j + 1)])
            w_tap = B.float_reshape(w_tap, (c_out, c))
            # forward added patch @ w_tapᵀ to the output rows; backward of it:
            d_w.append(B.float_matmul(B.float_transpose(g), patch))
            d_patch = B.float_matmul(g, w_tap)  # [rows, c]
            d_patch = B.float_reshape(d_patch, (n, h_out, w_out, c))
            d_patch = B.float_permute(d_patch, (0, 3, 1, 2))
            # added back onto the slice it read (windows overlap: +, not =)
            d_patch = B.float_add(B.float_slice(d_xp, at), d_patch)
            d_xp = B.float_slice_assign(d_xp, at, d_patch)
    # the taps' [c_out, c] blocks side by side: [c_out, (i, j, c)]
    d_w = B.float_reshape(B.float_cat(d_w, 1), (c_out, k1, k2, c))
    d_w = B.float_permute(d_w, (0, 3, 1, 2))
    d_x = B.float_slice(d_xp, [slice(None), slice(None),
                               slice(top, top + h), slice(left, left + w)])
    return d_x, d_w


# ----- planted slips: the reference with one thing changed -------------------------------------
def _variant(*, overwrite=False, stride=True, dilation=True, crop=True, w_side="left",
             w_permute=True, g_permute=True):
    """The reference backward with one slip: the col2im slice-assign overwriting in place of
    adding, the stride or the dilation left out of col2im's slices, the padding not cropped,
    the weight's product on the wrong side, the weight's gradient or ``grad`` reshaped
    without its permute."""

    def backward(B, x, weight, grad, options):
        n, c, h, w = x.shape
        c_out, _, k1, k2 = weight.shape
        h_out, w_out = grad.shape[2], grad.shape[3]
        (top, left), (bottom, right) = options.padding, options.padding_end
        (s1, s2), (d1, d2) = options.stride, options.dilation
        if not stride:
            s1 = s2 = 1
        if not dilation:
            d1 = d2 = 1
        if g_permute:
            g = B.float_reshape(B.float_permute(grad, (0, 2, 3, 1)),
                                (n * h_out * w_out, c_out))
        else:
            g = B.float_reshape(grad, (n * h_out * w_out, c_out))
        w_mat = B.float_reshape(B.float_permute(weight, (2, 3, 1, 0)), (k1 * k2 * c, c_out))
        patches = im2col(B, x, (k1, k2), options)
        if w_side == "left":
            d_w = B.float_matmul(B.float_transpose(patches), g)
        else:  # gᵀ @ patches: [c_out, k1 k2 c], read as [k1 k2 c, c_out]
            d_w = B.float_reshape(B.float_matmul(B.float_transpose(g), patches),
                                  (k1 * k2 * c, c_out))
        if w_permute:
            d_w = B.float_permute(B.float_reshape(d_w, (k1, k2, c, c_out)), (3, 2, 0, 1))
        else:
            d_w = B.float_reshape(d_w, (c_out, c, k1, k2))
        d_cols = B.float_matmul(g, B.float_transpose(w_mat))
        d_cols = B.float_permute(B.float_reshape(d_cols, (n, h_out, w_out, k1 * k2 * c)),
                                 (0, 3, 1, 2))
        d_xp = B.float_zeros((n, c, top + h + bottom, left + w + right), DType.F32,
                             B.float_device(x))
        for t in range(k1 * k2):
            i, j = divmod(t, k2)
            at = [slice(None), slice(None),
                  slice(i * d1, i * d1 + (h_out - 1) * s1 + 1, s1),
                  slice(j * d2, j * d2 + (w_out - 1) * s2 + 1, s2)]
            tap = B.float_slice(d_cols, [slice(None), slice(t * c, (t + 1) * c)])
            if not overwrite:
                tap = B.float_add(B.float_slice(d_xp, at), tap)
            d_xp = B.float_slice_assign(d_xp, at, tap)
        if not crop:
            return d_xp, d_w
        return B.float_slice(d_xp, [slice(None), slice(None), slice(top, top + h),
                                    slice(left, left + w)]), d_w

    return backward


#: slip → the reference's switches that make it
SLIPS = {
    "col2im overwrites": {"overwrite": True},
    "stride left out of col2im": {"stride": False},
    "dilation left out of col2im": {"dilation": False},
    "padding not cropped": {"crop": False},
    "weight product on the wrong side": {"w_side": "right"},
    "weight gradient not permuted back": {"w_permute": False},
    "grad reshaped without a permute": {"g_permute": False},
}

#: name → (wrong backward, the verdict kind it must get)
PLANTED = {name: (_variant(**switches), "check") for name, switches in SLIPS.items()}

_SAID = {
    "col2im overwrites": (
        "Your input gradient is col2im without the adding: float_slice_assign puts each "
        "tap's block in place of what earlier taps wrote there. Where windows overlap, a "
        "pixel was copied into several patches, and its gradient is the sum of all its "
        "copies' gradients: assign slice + tap, not tap: float_slice_assign(d_xp, at, "
        "float_add(float_slice(d_xp, at), tap))."),
    "stride left out of col2im": (
        "Your col2im scatters each tap's block onto adjacent rows and columns, as with "
        "stride 1: this case has stride {stride}. Tap (i, j) read rows i * dilation, "
        "i * dilation + stride, ... in forward; add its block back onto the same slice, "
        "with the stride as its step."),
    "dilation left out of col2im": (
        "Your col2im starts tap (i, j) at row i and column j, as with dilation 1: this "
        "case has dilation {dilation}. Tap (i, j) read from row i * dilation, column "
        "j * dilation in forward; add its block back there."),
    "padding not cropped": (
        "Your input gradient has the padded input's shape: col2im works on the padded "
        "input (the forward's patches read it), and x is the unpadded part. Crop rows "
        "top .. top + h - 1 and columns left .. left + w - 1 ({pads})."),
    "weight product on the wrong side": (
        "Your weight gradient is gᵀ @ patches, [c_out, k1 k2 c], read as if it were "
        "[k1 k2 c, c_out]. The forward's product is patches @ w_mat: the gradient of its "
        "right operand is patchesᵀ @ g, the shape of w_mat, [k1 k2 c, c_out]."),
    "weight gradient not permuted back": (
        "Your weight gradient is the [k1 k2 c, c_out] matrix reshaped straight to "
        "[c_out, c, k1, k2]: a reshape keeps the axes' order. Undo the forward's steps in "
        "reverse: reshape to [k1, k2, c, c_out], then permute (3, 2, 0, 1)."),
    "grad reshaped without a permute": (
        "Your g reads grad [n, c_out, h_out, w_out] reshaped straight to "
        "[n * h_out * w_out, c_out]: positions read as channels. A row per output "
        "position is permute (0, 2, 3, 1) first, then the reshape, the reverse of the "
        "forward's last two steps."),
}


# ----- installing a backward as Autodiff's conv2d step ----------------------------------------
def step_classes(backward_fn):
    """minidl's ``Conv2dWithBias`` and ``Conv2dNoBias`` with a backward that calls
    ``backward_fn(B, x, weight, grad, options) -> (d_x, d_weight)`` (one group; a grouped
    conv keeps minidl's helpers). Same names, forwards and kept arrays."""
    library = ad_module.Conv2dWithBias, ad_module.Conv2dNoBias
    library = tuple(getattr(cls, "_library", cls) for cls in library)

    def backward(self, B, grad, state):
        if self.options.groups != 1:
            return self._library.backward(self, B, grad, state)
        x, weight = state["x"], state["weight"]
        d_x, d_w = backward_fn(B, x, weight, grad, self.options)
        d_x, d_w = (d_x if self.tracked[0] else None), (d_w if self.tracked[1] else None)
        if len(self.tracked) == 2:
            return d_x, d_w
        return d_x, d_w, B.conv2d_bias_backward(grad) if self.tracked[2] else None

    return tuple(type(base.__name__, (base,), {"backward": backward, "_library": base,
                                               "_reader": backward_fn,
                                               "__module__": base.__module__})
                 for base in library)


@contextlib.contextmanager
def _installed(backward_fn):
    saved = ad_module.Conv2dWithBias, ad_module.Conv2dNoBias
    ad_module.Conv2dWithBias, ad_module.Conv2dNoBias = step_classes(backward_fn)
    try:
        yield
    finally:
        ad_module.Conv2dWithBias, ad_module.Conv2dNoBias = saved


@contextlib.contextmanager
def plugged_in(backward_fn, exercise):
    """Inside the block, every conv2d on an autodiff device records a step whose backward is
    ``backward_fn`` when it passes ``exercise``'s checker, the book's reference otherwise."""
    from minidl_book.harness import is_placeholder

    ok = not is_placeholder(backward_fn) and exercise.find_failure(backward_fn) is None
    print("✓ Your conv2d_backward is plugged in: conv2d's recorded step calls it."
          if ok else "Your conv2d_backward does not pass the checker yet: the book's "
          "(the solution's) is plugged in for now.")
    with _installed(backward_fn if ok else conv2d_backward):
        yield


# ----- the checker -----------------------------------------------------------------------------
def _case(seed, n, c, c_out, k, stride, dilation, pads, bias, size=None):
    rng = np.random.default_rng(seed)
    top, left, bottom, right = pads
    h = max(1, dilation[0] * (k[0] - 1) + 1 + stride[0] - top - bottom) + int(rng.integers(0, 3))
    w = max(1, dilation[1] * (k[1] - 1) + 1 + stride[1] - left - right) + int(rng.integers(0, 3))
    h, w = size or (h, w)
    options = ConvOptions(stride=stride, padding=(top, left), dilation=dilation, groups=1,
                          padding_end=(bottom, right))
    h_out, w_out = _geometry((n, c, h, w), k, options)
    return {"x": rng.normal(0.0, 1.0, (n, c, h, w)).astype(np.float32),
            "weight": rng.normal(0.0, 1.0, (c_out, c) + tuple(k)).astype(np.float32),
            "bias": rng.normal(0.0, 1.0, c_out).astype(np.float32) if bias else None,
            "g": rng.uniform(-1.0, 1.0, (n, c_out, h_out, w_out)).astype(np.float32),
            "options": options}


def _cases() -> st.SearchStrategy:
    small = st.integers(1, 2)
    return st.tuples(st.integers(0, 2**16), small, st.integers(1, 3), small,
                     st.tuples(st.integers(1, 3), st.integers(1, 3)),
                     st.tuples(st.integers(1, 3), st.integers(1, 3)), st.tuples(small, small),
                     st.tuples(*[st.integers(0, 2)] * 4), st.booleans()
                     ).map(lambda t: _case(*t))


#: tried first: the page's figure (overlapping windows, pad 1), then stride, dilation and
#: uneven pads each on their own, so the first failing case names one thing
EXAMPLES = [
    _case(1, 1, 2, 2, (2, 2), (1, 1), (1, 1), (1, 1, 1, 1), False),
    _case(2, 1, 2, 3, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), True),
    _case(3, 2, 1, 2, (2, 3), (1, 1), (2, 2), (0, 1, 0, 1), False),
    _case(4, 1, 2, 2, (3, 2), (2, 1), (1, 2), (2, 0, 1, 1), True),
    # corners: a 1 x 1 kernel whose stride skips pixels (their gradient is 0), and a
    # kernel as large as the padded input (one window)
    _case(5, 2, 3, 1, (1, 1), (3, 2), (1, 1), (0, 1, 2, 0), False),
    _case(6, 1, 1, 2, (3, 3), (1, 1), (1, 1), (1, 0, 0, 1), True, size=(2, 2)),
]


def _run(solution, case: dict) -> dict:
    dev = Device.flex().autodiff()
    x, weight = (Tensor.from_numpy(case[k], dev).require_grad() for k in ("x", "weight"))
    bias = None if case["bias"] is None else Tensor.from_numpy(case["bias"], dev)
    with _installed(solution):
        y = functional.conv2d(x, weight, bias, options=case["options"])
        grads = (y * Tensor.from_numpy(case["g"], dev)).sum().backward()
    return {"grad x": x.grad(grads), "grad weight": weight.grad(grads)}


def _torch(case: dict) -> dict:
    x, weight = (torch.tensor(case[k], dtype=torch.float64, requires_grad=True)
                 for k in ("x", "weight"))
    o = case["options"]
    (top, left), (bottom, right) = o.padding, o.padding_end
    xp = torch.nn.functional.pad(x, (left, right, top, bottom))
    bias = None if case["bias"] is None else torch.tensor(case["bias"], dtype=torch.float64)
    y = torch.nn.functional.conv2d(xp, weight, bias, stride=o.stride, dilation=o.dilation)
    (y * torch.tensor(case["g"], dtype=torch.float64)).sum().backward()
    return {"grad x": x.grad.float(), "grad weight": weight.grad.float()}


def _slip_outputs(case: dict, switches: dict) -> dict | None:
    from minidl.backends.flex import Flex

    prims = {k: None if case[k] is None else Flex.float_from_data(case[k], Device.flex())
             for k in ("x", "weight", "g")}
    try:
        d_x, d_w = _variant(**switches)(Flex, prims["x"], prims["weight"], prims["g"],
                                        case["options"])
    except Exception:  # noqa: BLE001 - a slip whose slices do not fit this case
        return None
    return {"grad x": np.asarray(d_x, dtype=np.float64),
            "grad weight": np.asarray(d_w, dtype=np.float64)}


def _same(found, model) -> bool:
    found = np.asarray(found, dtype=np.float64)
    return found.shape == model.shape and np.allclose(found, model, 1e-4, 1e-4)


def _named_slip(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the slip whose numbers the reader's gradients are (the gradient that differs
    from the reference's is the one compared)."""
    right = _slip_outputs(case, {})
    wrong = [k for k in ("grad x", "grad weight")
             if k in outputs and not _same(outputs[k], right[k])]
    if not wrong:
        return None
    o = case["options"]
    for name, switches in SLIPS.items():
        model = _slip_outputs(case, switches)
        if model is None or all(_same(model[k], right[k]) for k in wrong):
            continue  # this case cannot tell that slip from the right answer
        if all(_same(outputs[k], model[k]) for k in wrong):
            pads = (f"options.padding = (top, left) = {tuple(o.padding)}, "
                    f"options.padding_end = (bottom, right) = {tuple(o.padding_end)}")
            return _SAID[name].format(stride=tuple(o.stride), dilation=tuple(o.dilation),
                                      pads=pads)
    return None


def _describe(case: dict) -> str:
    def shape(a):
        return f"f32{list(np.shape(a))}"

    return "\n".join([
        f"x = {shape(case['x'])}, weight = {shape(case['weight'])}, bias = "
        + ("None" if case["bias"] is None else shape(case["bias"])),
        f"options = {case['options']}",
        f"g = {shape(case['g'])} (the loss is sum(out * g): grad is g)"])


class _BackwardExercise(BuildExercise):
    def verdict_for(self, solution, case):  # noqa: D102
        verdict = self._verdict_for(solution, case, "")
        if verdict is not None:
            verdict.inputs = _describe(case)
        return verdict


_OWN = r"^(Flex|Wgpu|Autodiff\[\w+\]|ModuleOps)\.(conv2d_\w+_backward|conv_transpose2d)$"
_CONV = re.compile(r"^(Flex|Wgpu|Autodiff\[\w+\]|ModuleOps)\.conv2d$")


def _no_swapped_conv(solution, case: dict, outputs: dict, watch) -> str | None:
    """A call of ``B.conv2d`` from the reader's code: the weight's gradient as burn's swapped
    conv (``conv2d_weight_grad_no_groups``), not from the ops the exercise lists. A check,
    not a rule: the forward's own ``conv2d`` runs in the same watched run."""
    call = next((c for c in watch.calls if _CONV.search(c.name)), None)
    if call is None:
        return None
    return ("Your code calls B.conv2d (" + call.site + "): the weight's gradient as a "
            "swapped conv is burn's route, but this exercise builds it from the forward's "
            "product, patchesᵀ @ g, with im2col and B.float_matmul (use only the listed ops).")


def exercise(max_examples: int = 8) -> BuildExercise:
    """The checker for the reader's ``conv2d_backward(B, x, weight, grad, options)``."""
    return _BackwardExercise(
        "conv2d's backward, recorded by Autodiff[Flex]",
        cases=_cases(),
        run=_run,
        references=[Reference("PyTorch", _torch, rtol=1e-4, atol=1e-4)],
        checks=[_no_swapped_conv, _named_slip],
        rules=Rules(forbidden={_OWN: "call the backend's own conv2d backward helpers or its "
                                     "transposed conv (build the gradients from B.float_* "
                                     "ops)"},
                    no_numpy=True, helpers=(im2col, pad)),
        hints=[
            (("value", "shape", "check"), "Backward of the forward's product "
             "patches @ w_mat: the right operand's gradient is patchesᵀ @ g, the left "
             "one's g @ w_matᵀ, where g is grad with a row per output position."),
            (("value", "shape", "check"), "The patches' gradient [rows, (i, j, c)] holds "
             "one block per tap: reshape and permute it to [n, (i, j, c), h_out, w_out], "
             "then add tap t's c channels onto the very slice of the padded input that "
             "tap read in forward; crop the padding last."),
            (("rule",), "Use only B's ops on the arrays backward gets "
             "(B.float_matmul, B.float_transpose, B.float_slice, B.float_slice_assign, "
             "B.float_add, B.float_zeros...) and the given im2col and pad."),
            (("error",), "Read the error's last line. A NameError: the page gives only "
             "the helpers im2col and pad, and B's ops. A shape error: the padded "
             "input's gradient is "
             "[n, c, top + h + bottom, left + w + right], the pads uneven: (top, left) "
             "= options.padding, (bottom, right) = options.padding_end. Tap (i, j)'s "
             "slice starts at (i * d1, j * d2), steps by the stride and holds h_out x "
             "w_out entries, the shape of its block of the patches' gradient."),
        ],
        reference_solution=conv2d_backward,
        examples=EXAMPLES,
        max_examples=max_examples,
    )
