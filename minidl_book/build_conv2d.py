"""Build exercise of the nn-modules chapter: conv2d written from a backend's basic ops.

``conv2d`` is *required* in ``ModuleOps`` (every backend writes its own kernel); this build-it
has the reader write one anyway, the way a backend without a convolution kernel could: zero
padding with the four pads, then im2col (one strided, dilated window per kernel tap, stacked),
then one matmul per group, from ``cls.float_*`` ops only, in two steps: ``exercise(step=1)``
checks the figure's case only (stride 1, dilation 1, one group, the same pads at both ends;
reference :func:`conv2d_plain`), ``exercise()`` (step 2) the general one (reference
:func:`conv2d`). The checker installs it, for one run,
as the ``conv2d`` of the backend each device dispatches to (plain Flex, in place of its
kernel; ``flex().autodiff()``, where it runs with ``cls = Autodiff[Flex]`` and every op is a
recorded step, so the gradients of x, weight and bias must flow; ``Device.wgpu()``), runs
``minidl.tensor.module.conv2d`` and compares with ``torch.nn.functional.conv2d``.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device, DType, Tensor
from minidl.backend.options import ConvOptions
from minidl.dispatch.route import backend_for
from minidl.tensor import module as functional
from minidl_book.build_check import BuildExercise, Reference, Rules

__trace_hide__ = True  # the trace shows the reader's code and what it dispatched, not this

__all__ = ["DEVICES", "PLANTED", "PLANTED_STEP1", "conv2d", "conv2d_plain", "exercise"]

#: The devices the reader's conv2d is installed under, by label.
DEVICES = {"Flex": Device.flex, "Flex autodiff": lambda: Device.flex().autodiff(), "Wgpu": Device.wgpu}
_GPU: list[bool] = []  # whether a WebGPU adapter answers, asked once


def _wgpu_available() -> bool:
    if not _GPU:
        try:
            Tensor.ones((1,), Device.wgpu()).to_numpy()
            _GPU.append(True)
        except Exception:  # noqa: BLE001 - no adapter: the Wgpu case is left out, not failed
            _GPU.append(False)
    return _GPU[0]


def devices() -> dict:
    """The devices of this machine the checker runs on: Wgpu only where an adapter answers."""
    return {label: make for label, make in DEVICES.items()
            if label != "Wgpu" or _wgpu_available()}


# ----- the reference solution and planted wrong ones -------------------------------------------
def pad(cls, x, dim, before, after):
    """``x`` with ``before`` and ``after`` zero rows added along ``dim``."""
    parts = []
    for size, part in ((before, None), (0, x), (after, None)):
        if part is not None:
            parts.append(part)
        elif size > 0:
            shape = list(x.shape)
            shape[dim] = size
            parts.append(cls.float_zeros(tuple(shape), DType.F32, cls.float_device(x)))
    return cls.float_cat(parts, dim) if len(parts) > 1 else x


def conv2d_plain(cls, x, weight, bias, options):
    n, _, h, w = x.shape
    c_out, c_in, k1, k2 = weight.shape
    p1, p2 = options.padding  # step 1: the same pads at both ends
    x = pad(cls, pad(cls, x, 2, p1, p1), 3, p2, p2)
    h_out, w_out = h + 2 * p1 - k1 + 1, w + 2 * p2 - k2 + 1
    taps = [cls.float_slice(x, [slice(None), slice(None),  # tap (i, j) of every window
                                slice(i, i + h_out), slice(j, j + w_out)])
            for i in range(k1) for j in range(k2)]
    cols = cls.float_permute(cls.float_cat(taps, 1), (0, 2, 3, 1))  # im2col
    cols = cls.float_reshape(cols, (n * h_out * w_out, k1 * k2 * c_in))
    w_mat = cls.float_permute(weight, (2, 3, 1, 0))  # the patches' (i, j, c) order
    w_mat = cls.float_reshape(w_mat, (k1 * k2 * c_in, c_out))
    out = cls.float_matmul(cols, w_mat)  # one row per output position
    if bias is not None:
        out = cls.float_add(out, cls.float_reshape(bias, (1, c_out)))
    out = cls.float_reshape(out, (n, h_out, w_out, c_out))
    return cls.float_permute(out, (0, 3, 1, 2))


def conv2d(cls, x, weight, bias, options):
    n, _, h, w = x.shape
    c_out, c_group, k1, k2 = weight.shape
    (top, left), (bottom, right) = options.padding, options.padding_end
    (s1, s2), (d1, d2), groups = options.stride, options.dilation, options.groups
    x = pad(cls, pad(cls, x, 2, top, bottom), 3, left, right)  # before, after
    h_out = (h + top + bottom - d1 * (k1 - 1) - 1) // s1 + 1
    w_out = (w + left + right - d2 * (k2 - 1) - 1) // s2 + 1
    per_group, outs = c_out // groups, []
    for g in range(groups):  # a group's own input channels
        xg = cls.float_slice(x, [slice(None), slice(g * c_group, (g + 1) * c_group)])
        taps = [cls.float_slice(xg, [slice(None), slice(None),  # dilated, strided
                                     slice(i * d1, i * d1 + (h_out - 1) * s1 + 1, s1),
                                     slice(j * d2, j * d2 + (w_out - 1) * s2 + 1, s2)])
                for i in range(k1) for j in range(k2)]
        cols = cls.float_permute(cls.float_cat(taps, 1), (0, 2, 3, 1))  # im2col
        cols = cls.float_reshape(cols, (n * h_out * w_out, k1 * k2 * c_group))
        wg = cls.float_slice(weight, [slice(g * per_group, (g + 1) * per_group)])
        wg = cls.float_permute(wg, (2, 3, 1, 0))  # the patches' (i, j, c) order
        wg = cls.float_reshape(wg, (k1 * k2 * c_group, per_group))
        outs.append(cls.float_matmul(cols, wg))
    out = cls.float_cat(outs, 1) if groups > 1 else outs[0]
    if bias is not None:
        out = cls.float_add(out, cls.float_reshape(bias, (1, c_out)))
    out = cls.float_reshape(out, (n, h_out, w_out, c_out))
    return cls.float_permute(out, (0, 3, 1, 2))


def _with(options, **changes):
    fields = {"stride": options.stride, "padding": options.padding, "dilation": options.dilation,
              "groups": options.groups, "padding_end": options.padding_end}
    return ConvOptions(**{**fields, **changes})


def pads_swapped(cls, x, weight, bias, options):
    """top and bottom (and left and right) exchanged: the same on a symmetric pad only."""
    swapped = _with(options, padding=options.padding_end, padding_end=options.padding)
    return conv2d(cls, x, weight, bias, swapped)


def pads_in_burns_order(cls, x, weight, bias, options):
    """(top, bottom), (left, right) = options.padding, options.padding_end: the pairs of
    padding.pads(...) read into ConvOptions' fields, left and bottom exchanged."""
    (top, bottom), (left, right) = options.padding, options.padding_end
    return conv2d(cls, x, weight, bias,
                  _with(options, padding=(top, left), padding_end=(bottom, right)))


def groups_ignored(cls, x, weight, bias, options):
    """Every output channel reads the first c_in / groups channels."""
    return conv2d(cls, x, weight, bias, _with(options, groups=1)) if options.groups == 1 else \
        _first_group_only(cls, x, weight, bias, options)


def _first_group_only(cls, x, weight, bias, options):
    c_group = weight.shape[1]
    x0 = cls.float_slice(x, [slice(None), slice(0, c_group)])
    return conv2d(cls, x0, weight, bias, _with(options, groups=1))


def group_rows_interleaved(cls, x, weight, bias, options):
    """Group g's weight rows read as slice(g, c_out, groups) (every groups-th output
    channel) in place of the block g * per_group .. (g + 1) * per_group - 1: the same
    rows when per_group is 1."""
    c_out, groups = weight.shape[0], options.groups
    order = [o for g in range(groups) for o in range(g, c_out, groups)]
    rows = [cls.float_slice(weight, [slice(o, o + 1)]) for o in order]
    return conv2d(cls, x, cls.float_cat(rows, 0) if len(rows) > 1 else weight, bias, options)


def dilation_ignored(cls, x, weight, bias, options):
    """Adjacent taps: dilation 1 with the output size of the dilated kernel."""
    right = conv2d(cls, x, weight, bias, options)
    plain = conv2d(cls, x, weight, bias, _with(options, dilation=(1, 1)))
    h, w = right.shape[2], right.shape[3]
    return cls.float_slice(plain, [slice(None), slice(None), slice(0, h), slice(0, w)])


def dilation_ignored_everywhere(cls, x, weight, bias, options):
    """Dilation left out of the taps and of h_out, w_out: the undilated output."""
    return conv2d(cls, x, weight, bias, _with(options, dilation=(1, 1)))


def stride_dilation_swapped(cls, x, weight, bias, options):
    """The tap start read with the stride, the tap step with the dilation."""
    return conv2d(cls, x, weight, bias,
                  _with(options, stride=options.dilation, dilation=options.stride))


def _weight_matrix(cls, weight, g, per_group, axes):
    """Group ``g``'s weight as the ``[k1 * k2 * c, per_group]`` matrix, its axes permuted
    to ``axes`` before the reshape (the right one: ``(2, 3, 1, 0)``)."""
    _, c_group, k1, k2 = weight.shape
    wg = cls.float_slice(weight, [slice(g * per_group, (g + 1) * per_group)])
    return cls.float_reshape(cls.float_permute(wg, axes), (k1 * k2 * c_group, per_group))


def _conv_weight_as(axes):
    """conv2d whose weight matrix is permuted to ``axes``, its patches left (i, j, c): the
    reference run on the weight that the wrong matrix would be the right one of."""

    def conv(cls, x, weight, bias, options):
        _, c_group, k1, k2 = weight.shape
        per_group = weight.shape[0] // options.groups
        parts = []
        for g in range(options.groups):
            matrix = _weight_matrix(cls, weight, g, per_group, axes)
            as_ijc = cls.float_reshape(matrix, (k1, k2, c_group, per_group))
            parts.append(cls.float_permute(as_ijc, (3, 2, 0, 1)))
        read = cls.float_cat(parts, 0) if len(parts) > 1 else parts[0]
        return conv2d(cls, x, read, bias, options)

    return conv


#: patches (i, j, c), weight reshaped to [c_out, c * k1 * k2] and transposed: rows (c, i, j)
weight_transposed = _conv_weight_as((1, 2, 3, 0))
#: patches (i, j, c), weight [c_out, c, k1, k2] reshaped to [K, c_out] with no permute at all
weight_reshaped_only = _conv_weight_as((0, 1, 2, 3))

def output_unpermuted(cls, x, weight, bias, options):
    """The product [n * h_out * w_out, c_out] reshaped straight to [n, c_out, h_out, w_out]."""
    right = conv2d(cls, x, weight, bias, options)
    n, c_out, h_out, w_out = right.shape
    rows = cls.float_reshape(cls.float_permute(right, (0, 2, 3, 1)),
                             (n * h_out * w_out, c_out))
    return cls.float_reshape(rows, (n, c_out, h_out, w_out))


def bias_broadcast(cls, x, weight, bias, options):
    """The bias added as [c_out] to the [rows, c_out] product: a broadcast burn's
    same-rank backend ops never do."""
    out = conv2d(cls, x, weight, None, options)
    if bias is None:
        return out
    n, c_out, h_out, w_out = out.shape
    rows = cls.float_reshape(cls.float_permute(out, (0, 2, 3, 1)), (n * h_out * w_out, c_out))
    rows = cls.float_add(rows, bias)
    return cls.float_permute(cls.float_reshape(rows, (n, h_out, w_out, c_out)), (0, 3, 1, 2))


def pads_forgotten(cls, x, weight, bias, options):
    """No padding at all: the output of a valid convolution, too small."""
    return conv2d(cls, x, weight, bias, _with(options, padding=(0, 0), padding_end=(0, 0)))


#: step 1's planted slips: name → (wrong conv2d, the verdict kind it must get)
PLANTED_STEP1 = {
    "weight rows (c, i, j), patches (i, j, c)": (weight_transposed, "check"),
    "weight reshaped without a permute": (weight_reshaped_only, "check"),
    "output reshaped without a permute": (output_unpermuted, "check"),
    "pads forgotten": (pads_forgotten, "shape"),
    "bias [c_out] broadcast against [rows, c_out]": (bias_broadcast, "error"),
}

#: name → (wrong conv2d, the verdict kind it must get)
PLANTED = {
    "pads swapped top/bottom": (pads_swapped, "check"),
    "pads read as (top, bottom), (left, right)": (pads_in_burns_order, "check"),
    "groups ignored": (groups_ignored, "check"),
    "group g's weight rows slice(g, c_out, groups)": (group_rows_interleaved, "check"),
    "dilation ignored": (dilation_ignored, "check"),
    "dilation ignored, output undilated": (dilation_ignored_everywhere, "check"),
    "stride and dilation swapped": (stride_dilation_swapped, "check"),
    "weight rows (c, i, j), patches (i, j, c)": (weight_transposed, "check"),
    "weight reshaped without a permute": (weight_reshaped_only, "check"),
    "output reshaped without a permute": (output_unpermuted, "check"),
    "step 1's conv2d (stride, dilation, groups, pad ends ignored)": (conv2d_plain, "check"),
    "bias [c_out] broadcast against [rows, c_out]": (bias_broadcast, "error"),
}


# ----- the checker ---------------------------------------------------------------------------
def _arrays(seed: int, n: int, groups: int, c_group: int, per_group: int, k: tuple,
            stride: tuple, dilation: tuple, pads: tuple, bias: bool) -> dict:
    rng = np.random.default_rng(seed)
    k1, k2 = k
    top, left, bottom, right = pads
    # the smallest input with an output of at least 2 x 2 rows and columns, plus a little
    h = max(1, dilation[0] * (k1 - 1) + 1 + stride[0] - top - bottom) + int(rng.integers(0, 3))
    w = max(1, dilation[1] * (k2 - 1) + 1 + stride[1] - left - right) + int(rng.integers(0, 3))
    c_in, c_out = groups * c_group, groups * per_group
    x = rng.normal(0.0, 1.0, (n, c_in, h, w)).astype(np.float32)
    h_out = (h + top + bottom - dilation[0] * (k1 - 1) - 1) // stride[0] + 1
    w_out = (w + left + right - dilation[1] * (k2 - 1) - 1) // stride[1] + 1
    return {
        "x": x,
        "weight": rng.normal(0.0, 1.0, (c_out, c_group, k1, k2)).astype(np.float32),
        "bias": rng.normal(0.0, 1.0, c_out).astype(np.float32) if bias else None,
        "g": rng.uniform(-1.0, 1.0, (n, c_out, h_out, w_out)).astype(np.float32),
        "options": ConvOptions(stride=stride, padding=(top, left), dilation=dilation,
                               groups=groups, padding_end=(bottom, right)),
    }


def _cases() -> st.SearchStrategy:
    small = st.integers(1, 2)
    pair = st.tuples(small, small)
    return st.tuples(st.integers(0, 2**16), small, small, small, small,
                     st.tuples(st.integers(1, 3), st.integers(1, 3)), pair, pair,
                     st.tuples(*[st.integers(0, 2)] * 4), st.booleans()
                     ).map(lambda t: _arrays(*t))


def _plain_cases() -> st.SearchStrategy:
    """Step 1's cases: stride 1, dilation 1, one group, the same pads at both ends."""
    small = st.integers(1, 2)
    return st.tuples(st.integers(0, 2**16), small, small, small,
                     st.tuples(st.integers(1, 3), st.integers(1, 3)),
                     st.tuples(st.integers(0, 2), st.integers(0, 2)), st.booleans()
                     ).map(lambda t: _arrays(t[0], t[1], 1, t[2], t[3], t[4], (1, 1), (1, 1),
                                             (t[5][0], t[5][1], t[5][0], t[5][1]), t[6]))


#: the axes of a weight group [per_group, c, k1, k2] and of a patch row, by letter
_W_AXES, _NAMES = "ocij", {"c": "c", "i": "i (kernel row)", "j": "j (kernel column)"}


def _numpy_conv(case: dict, patch: str, weight: str) -> np.ndarray:
    """The im2col product with the patch columns in the order ``patch`` (a permutation of
    "cij") and the weight matrix made by permuting the group's axes to ``weight`` (of
    "ocij") and reshaping to ``[k1 * k2 * c, per_group]``, float64."""
    o = case["options"]
    (top, left), (bottom, right) = o.padding, o.padding_end
    (s1, s2), (d1, d2), groups = o.stride, o.dilation, o.groups
    x = np.pad(case["x"].astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    wt = case["weight"].astype(np.float64)
    c_out, c_group, k1, k2 = wt.shape
    n, h, w = x.shape[0], x.shape[2], x.shape[3]
    h_out, w_out = (h - d1 * (k1 - 1) - 1) // s1 + 1, (w - d2 * (k2 - 1) - 1) // s2 + 1
    per_group, outs = c_out // groups, []
    for g in range(groups):
        xg = x[:, g * c_group:(g + 1) * c_group]
        win = np.stack([np.stack([xg[:, :, i * d1:i * d1 + (h_out - 1) * s1 + 1:s1,
                                     j * d2:j * d2 + (w_out - 1) * s2 + 1:s2]
                                  for j in range(k2)], 2) for i in range(k1)], 2)
        # win: [n, c, k1, k2, h_out, w_out] → [n, h_out, w_out, (patch order)]
        cols = win.transpose(0, 4, 5, *(1 + "cij".index(a) for a in patch))
        wg = wt[g * per_group:(g + 1) * per_group].transpose(
            *(_W_AXES.index(a) for a in weight))
        outs.append(cols.reshape(n * h_out * w_out, -1) @ wg.reshape(-1, per_group))
    out = np.concatenate(outs, 1)
    if case["bias"] is not None:
        out = out + case["bias"]
    return out.reshape(n, h_out, w_out, c_out).transpose(0, 3, 1, 2)


def _orders(letters: str) -> list[str]:
    from itertools import permutations

    return ["".join(p) for p in permutations(letters)]


def _weight_order(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the weight-order slip: the output is an im2col product whose weight matrix
    lists its rows in another order than the patches list their columns."""
    found = outputs.get("out on Flex")
    if found is None:
        return None
    found = np.asarray(found, dtype=np.float64)
    right = _numpy_conv(case, "ijc", "ijco")
    if found.shape != right.shape or np.allclose(found, right, 1e-4, 1e-4):
        return None
    for patch in ["ijc"] + [p for p in _orders("cij") if p != "ijc"]:
        for weight in _orders("ocij"):
            if weight == patch + "o":
                continue
            slip = _numpy_conv(case, patch, weight)
            if np.allclose(found, slip, 1e-4, 1e-4) and not np.allclose(slip, right, 1e-4, 1e-4):
                return _weight_text(patch, weight)
    return None


#: where the weight-order hint gives the permute's axes: cut on the first such verdict
_AXES_MARK = ": the permute's axes are "


def _weight_text(patch: str, weight: str) -> str:
    axes = tuple(_W_AXES.index(a) for a in patch + "o")
    fix = (f"permute the weight [c_out, c, k1, k2] so its axes run ({', '.join(patch)}, "
           f"c_out), then reshape it to [k1 * k2 * c, c_out]{_AXES_MARK}{axes}")
    said = ", ".join(_NAMES[a] for a in patch)
    if weight.endswith("o"):
        how = (": what a reshape of the weight to [c_out, c * k1 * k2] and a transpose "
               "give" if weight == "cijo" else "")
        return (f"Your weight matrix's rows are not in your patches' column order: each "
                f"patch lists its window as ({said}), and the weight's rows run "
                f"({', '.join(weight[:3])}){how}. Put the weight's axes in the patches' "
                f"order: {fix}.")
    start = ("[c_out, c, k1, k2]" if weight == "ocij" else
             f"[c_out, c, k1, k2] permuted to ({', '.join(weight)})")
    return (f"Your weight matrix mixes the output channels into its rows: a reshape keeps "
            f"the axes' memory order, so {start} and reshaped to [k1 * k2 * c, c_out] does "
            f"not put c_out last. Your patches list each window as ({said}): {fix}.")


def _dilation(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the dilation slip: the taps read adjacent rows (columns), as with dilation 1,
    whether the output keeps the dilated kernel's size or grows to the undilated one's."""
    o = case["options"]
    found = outputs.get("out on Flex")
    if found is None or tuple(o.dilation) == (1, 1):
        return None
    found = np.asarray(found, dtype=np.float64)
    right = _numpy_conv(case, "ijc", "ijco")
    if found.shape == right.shape and np.allclose(found, right, 1e-4, 1e-4):
        return None
    adjacent = _numpy_conv({**case, "options": _with(o, dilation=(1, 1))}, "ijc", "ijco")
    cropped = adjacent[:, :, :right.shape[2], :right.shape[3]]
    for slip in (cropped, adjacent):
        if found.shape == slip.shape and np.allclose(found, slip, 1e-4, 1e-4):
            d1, d2 = o.dilation
            return (f"Your taps read adjacent rows and columns, as with dilation 1, but this "
                    f"case has dilation {tuple(o.dilation)}: tap (i, j) starts at row "
                    f"i * {d1} and column j * {d2} of the padded input (rows "
                    f"i * dilation, i * dilation + stride, ...), and h_out, w_out count the "
                    f"dilated kernel's span, dilation * (k - 1) + 1.")
    return None


def _stride_dilation(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the swap of stride and dilation: tap (i, j) starting at i * stride and stepping
    by the dilation from window to window."""
    o = case["options"]
    found = outputs.get("out on Flex")
    if found is None or tuple(o.stride) == tuple(o.dilation):
        return None
    found = np.asarray(found, dtype=np.float64)
    try:
        swapped = _numpy_conv({**case, "options": _with(o, stride=o.dilation,
                                                        dilation=o.stride)}, "ijc", "ijco")
    except (ValueError, IndexError):  # the swapped kernel's span does not fit the input
        return None
    if found.shape != swapped.shape or not np.allclose(found, swapped, 1e-4, 1e-4):
        return None
    right = _numpy_conv(case, "ijc", "ijco")
    if found.shape == right.shape and np.allclose(found, right, 1e-4, 1e-4):
        return None
    return (f"You swapped stride and dilation (here stride {tuple(o.stride)}, dilation "
            f"{tuple(o.dilation)}): the dilation spaces the taps inside one window, tap "
            "(i, j) starts at row i * dilation; the stride spaces the windows, so the tap's "
            "slice steps by the stride: rows i * dilation, i * dilation + stride, ...")


def _pad_order(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the pad-order slip ``(top, bottom), (left, right) = options.padding,
    options.padding_end`` (burn's pairs read into minidl's fields: left and bottom exchanged),
    whatever shape it gives: the shape hint would send the reader to a formula already right."""
    o = case["options"]
    found = outputs.get("out on Flex")
    (top, left), (bottom, right) = o.padding, o.padding_end
    if found is None or left == bottom:
        return None
    found = np.asarray(found, dtype=np.float64)
    right_out = _numpy_conv(case, "ijc", "ijco")
    if found.shape == right_out.shape and np.allclose(found, right_out, 1e-4, 1e-4):
        return None
    slip = _numpy_conv({**case, "options": _with(o, padding=(top, bottom),
                                                 padding_end=(left, right))}, "ijc", "ijco")
    if found.shape == slip.shape and np.allclose(found, slip, 1e-4, 1e-4):
        return (f"Your pads are read in another order: options.padding is (top, left) = "
                f"{(top, left)} and options.padding_end is (bottom, right) = "
                f"{(bottom, right)}, and your output pads {left} at the bottom and {bottom} "
                f"on the left. (top, bottom), (left, right) is the order of padding.pads(...), "
                f"not of ConvOptions (the three pad orders: Explicit's fields (top, left, "
                f"bottom, right), pads (top, bottom, left, right), ConvOptions (top, left) "
                f"then (bottom, right)). Your h_out formula is not the slip.")
    return None


def _pads_and_groups(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name two slips by the output they give: the pads swapped end for end (top with
    bottom, left with right), and every output channel reading the first group's inputs."""
    o = case["options"]
    found = outputs.get("out on Flex")
    if found is None:
        return None
    found = np.asarray(found, dtype=np.float64)
    right = _numpy_conv(case, "ijc", "ijco")
    if found.shape != right.shape or np.allclose(found, right, 1e-4, 1e-4):
        return None
    swapped = _numpy_conv({**case, "options": _with(o, padding=o.padding_end,
                                                    padding_end=o.padding)}, "ijc", "ijco")
    if found.shape == swapped.shape and np.allclose(found, swapped, 1e-4, 1e-4):
        return (f"Your pads are swapped end for end: this case pads (top, left) = "
                f"{tuple(o.padding)} and (bottom, right) = {tuple(o.padding_end)}, and your "
                f"output is the one with the two exchanged. options.padding goes before the "
                f"first row (column), options.padding_end after the last.")
    if o.groups > 1:
        c_out, per_group = case["weight"].shape[0], case["weight"].shape[0] // o.groups
        order = [r for g in range(o.groups) for r in range(g, c_out, o.groups)]
        slip = _numpy_conv({**case, "weight": case["weight"][order]}, "ijc", "ijco")
        if per_group > 1 and np.allclose(found, slip, 1e-4, 1e-4):
            return (f"Your group g takes weight rows g, g + {o.groups}, ... (slice(g, c_out, "
                    f"groups)): a group owns a block of c_out / groups "
                    f"= {per_group} adjacent output channels, weight rows "
                    f"g * {per_group} .. (g + 1) * {per_group} - 1, and its outputs are "
                    f"those same channels of the result.")
        c_group = case["weight"].shape[1]
        first = {**case, "x": case["x"][:, :c_group], "options": _with(o, groups=1)}
        slip = _numpy_conv(first, "ijc", "ijco")
        if found.shape == slip.shape and np.allclose(found, slip, 1e-4, 1e-4):
            return (f"Every output channel of yours reads input channels 0..{c_group - 1}, "
                    f"the first group's. This case has groups = {o.groups}: output channels "
                    f"g * c_out / groups onward read input channels g * {c_group} onward, "
                    f"with their own slice of the weight. Slice x and the weight per group, "
                    f"one matmul each, and concatenate the outputs along the channels.")
    return None


def _output_layout(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the layout slip: the product, one row per output position, reshaped straight to
    [n, c_out, h_out, w_out] (positions read as channels)."""
    found = outputs.get("out on Flex")
    if found is None:
        return None
    found = np.asarray(found, dtype=np.float64)
    right = _numpy_conv(case, "ijc", "ijco")
    if found.shape != right.shape or np.allclose(found, right, 1e-4, 1e-4):
        return None
    slip = right.transpose(0, 2, 3, 1).reshape(right.shape)
    if np.allclose(found, slip, 1e-4, 1e-4):
        return ("Your output holds the right numbers in the wrong places. The product is "
                "[n * h_out * w_out, c_out], one row per output position: reshape it to "
                "[n, h_out, w_out, c_out], then permute it to [n, c_out, h_out, w_out]. A "
                "reshape straight to [n, c_out, h_out, w_out] reads positions as channels.")
    return None


def _drop(case: dict, feature: str) -> dict:
    """``case`` as a conv that leaves ``feature`` out would compute it."""
    o = case["options"]
    if feature == "groups":
        c_group = case["weight"].shape[1]
        return {**case, "x": case["x"][:, :c_group], "options": _with(o, groups=1)}
    changes = {"pad ends": {"padding_end": o.padding}, "stride": {"stride": (1, 1)},
               "dilation": {"dilation": (1, 1)}}[feature]
    return {**case, "options": _with(o, **changes)}


def _left_out(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name what a step-1 conv2d leaves out of a general case (any of the uneven pad ends,
    the stride, the dilation, the groups): the output is the case's with those dropped."""
    from itertools import combinations

    o = case["options"]
    found = outputs.get("out on Flex")
    if found is None:
        return None
    found = np.asarray(found, dtype=np.float64)
    right = _numpy_conv(case, "ijc", "ijco")
    if found.shape == right.shape and np.allclose(found, right, 1e-4, 1e-4):
        return None
    (s1, s2), (d1, d2) = o.stride, o.dilation
    said = {
        "pad ends": f"options.padding_end = {tuple(o.padding_end)} is the pad after the last "
                    f"row and column (options.padding = {tuple(o.padding)} goes before)",
        "stride": f"stride {tuple(o.stride)}: a tap reads one row in {s1} and one column in "
                  f"{s2} (a slice with a step), and h_out divides by the stride",
        "dilation": f"dilation {tuple(o.dilation)}: tap (i, j) starts at row i * {d1} and "
                    f"column j * {d2}, and the kernel spans dilation * (k - 1) + 1",
        "groups": f"groups = {o.groups}: each group of c_out / groups output channels reads "
                  f"only its own c_in / groups input channels, with its own weight rows",
    }
    live = [f for f, on in (("pad ends", tuple(o.padding) != tuple(o.padding_end)),
                            ("stride", (s1, s2) != (1, 1)), ("dilation", (d1, d2) != (1, 1)),
                            ("groups", o.groups > 1)) if on]
    for size in range(1, len(live) + 1):
        for dropped in combinations(live, size):
            slip = case
            for feature in dropped:
                slip = _drop(slip, feature)
            slip = _numpy_conv(slip, "ijc", "ijco")
            if found.shape == slip.shape and np.allclose(found, slip, 1e-4, 1e-4):
                return ("Your output is this case's with " + " and ".join(dropped)
                        + " left out: " + "; ".join(said[f] for f in dropped) + ".")
    return None


def _shape(array) -> str:
    return f"f32{list(np.shape(array))}"


def _describe(case: dict) -> dict:
    """The failing case as the verdict prints it: shapes, not walls of numbers."""
    described = {"x": _shape(case["x"]), "weight": _shape(case["weight"]),
                 "bias": "None" if case["bias"] is None else _shape(case["bias"]),
                 "options": case["options"]}
    described["g"] = (f"{_shape(case['g'])}, the upstream gradient: on Flex autodiff the "
                      f"checker runs (out * g).sum().backward() and compares the gradients "
                      f"of x, weight and bias with torch's")
    return described


def _restore(backend, saved) -> None:
    if saved is not None:
        backend.conv2d = saved
    elif "conv2d" in vars(backend):
        del backend.conv2d


#: the binary ops whose operands must have the same rank, as burn's do
_SAME_RANK = ("float_add", "float_sub", "float_mul", "float_div")


def _same_rank_op(name: str, op):
    """``op`` refusing operands of different ranks (burn's ``Tensor<B, D>`` fixes D for both
    sides: its backend ops never broadcast a [c_out] against a [rows, c_out])."""

    def checked(cls, lhs, rhs):
        if len(lhs.shape) != len(rhs.shape):
            raise ValueError(
                f"{name} got shapes {list(lhs.shape)} and {list(rhs.shape)}: burn's backend "
                "ops take operands of the same rank (no broadcasting of a [c_out] against a "
                "[rows, c_out]); reshape the bias to [1, c_out] with cls.float_reshape")
        return op(lhs, rhs)

    return checked


#: one of the wrappers, for its code: the rules take it as a helper the reader may call
_WRAPPER = _same_rank_op("float_add", None)


def _installed(solution, backend):
    """The reader's conv2d as ``backend.conv2d``, with the same-rank ops for its forward
    only (backward runs the backend's ops unchecked)."""
    saved = {name: vars(backend)[name] for name in _SAME_RANK if name in vars(backend)}

    def installed(cls, x, weight, bias, options):
        for name in _SAME_RANK:
            setattr(backend, name, classmethod(_same_rank_op(name, getattr(backend, name))))
        try:
            return solution(cls, x, weight, bias, options)
        finally:
            for name in _SAME_RANK:
                if name in saved:
                    setattr(backend, name, saved[name])
                else:
                    delattr(backend, name)

    return classmethod(installed)


def seconds(solution, x: Tensor, weight: Tensor, bias, options, repeats: int = 5) -> float:
    """The best of ``repeats`` runs of ``minidl.tensor.module.conv2d`` on ``x``'s device,
    with ``solution`` installed as its backend's ``conv2d`` (``None``: the backend's own
    kernel), the result read back so the time is the whole convolution's."""
    backend = backend_for(x.device)
    saved = vars(backend).get("conv2d")
    if solution is not None:
        backend.conv2d = classmethod(solution)
    try:
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            functional.conv2d(x, weight, bias, options=options).to_numpy()
            best = min(best, time.perf_counter() - start)
        return best
    finally:
        _restore(backend, saved)


def _run(solution, case: dict) -> dict:
    out = {}
    for label, make in devices().items():
        dev = make()
        backend = backend_for(dev)
        saved = vars(backend).get("conv2d")
        backend.conv2d = _installed(solution, backend)
        try:
            x, weight, bias = (None if case[k] is None else Tensor.from_numpy(case[k], dev)
                               for k in ("x", "weight", "bias"))
            if dev.is_autodiff():
                x, weight = x.require_grad(), weight.require_grad()
                bias = bias if bias is None else bias.require_grad()
            y = functional.conv2d(x, weight, bias, options=case["options"])
            out[f"out on {label}"] = y
            if dev.is_autodiff() and tuple(y.shape) == case["g"].shape:  # else: a shape verdict
                grads = (y * Tensor.from_numpy(case["g"], dev)).sum().backward()
                for name, t in (("x", x), ("weight", weight), ("bias", bias)):
                    if t is not None:
                        out[f"grad {name} on {label}"] = t.grad(grads)
        finally:
            _restore(backend, saved)
    return out


def _torch(case: dict) -> dict:
    x, weight, bias = (None if case[k] is None else
                       torch.tensor(case[k], dtype=torch.float64, requires_grad=True)
                       for k in ("x", "weight", "bias"))
    o = case["options"]
    top, left = o.padding
    bottom, right = o.padding_end
    padded = torch.nn.functional.pad(x, (left, right, top, bottom))
    y = torch.nn.functional.conv2d(padded, weight, bias, stride=o.stride, dilation=o.dilation,
                                   groups=o.groups)
    (y * torch.from_numpy(case["g"]).double()).sum().backward()
    expected = {f"out on {label}": y.detach().float() for label in devices()}
    for name, t in (("x", x), ("weight", weight), ("bias", bias)):
        if t is not None:
            expected[f"grad {name} on Flex autodiff"] = t.grad.float()
    return expected


EXAMPLES = [
    _arrays(1, 1, 1, 2, 2, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True),
    _arrays(2, 1, 1, 1, 1, (2, 2), (1, 1), (1, 1), (0, 0, 2, 1), True),  # pads uneven
    _arrays(3, 2, 2, 2, 1, (1, 2), (2, 1), (1, 1), (0, 1, 0, 0), False),  # groups, stride
    _arrays(4, 1, 1, 1, 2, (3, 2), (1, 1), (2, 2), (0, 0, 0, 0), True),  # dilation
    _arrays(5, 1, 2, 1, 2, (2, 2), (1, 1), (1, 1), (1, 0, 0, 1), True),  # 2 outputs a group
]


#: a backend's own convolution (the checker's run reaches module.conv2d and Dispatch.conv2d,
#: then the reader's function installed in the backend's place)
_OWN_CONV = r"^(Flex|Wgpu|NdArray|Fusion\[\w+\]|Autodiff\[\w+\]|ModuleOps)\.conv\w*$"


class _Conv2dExercise(BuildExercise):
    """Says what a call of the backend's own conv2d is: a call of the op being written."""

    def verdict_for(self, solution, case):  # noqa: D102
        verdict = self._verdict_for(solution, case, "")
        if verdict is not None:
            verdict.inputs = "\n".join(f"{k} = {v}" for k, v in _describe(case).items())
        return verdict

    weight_slips = 0  # the weight-order hint gives the permute's axes from the second on
    passing = None  # the reader's last solution that ``check`` passed, else None

    def check(self, solution=...):  # noqa: D102
        verdict = super().check(solution)
        self.passing = solution if verdict.kind == "ok" else None
        return verdict

    def find_failure(self, solution):  # noqa: D102
        verdict = super().find_failure(solution)
        if verdict is not None and _AXES_MARK in verdict.text:
            self.weight_slips += 1
            if self.weight_slips == 1:  # the order only: which axes is the reader's to find
                head, _, tail = verdict.text.partition(_AXES_MARK)
                verdict.text = head + tail.split(")", 1)[1] + (
                    " (Slip again and this hint gives the permute's argument.)")
        # the reader's conv2d reached the checker's installed one (the op being written)
        if verdict is not None and verdict.kind == "rule" \
                and "the checker's installed" in verdict.text:
            site = verdict.text.split("\n", 1)[1] if "\n" in verdict.text else ""
            verdict.text = ("Rule broken: your code called cls.conv2d, and the backend's conv2d "
                            "is the op you are writing: build it from cls.float_* ops"
                            + (f"\n{site}" if site else ""))
        return verdict


#: step 1's first cases: the figure's kind (2 -> 2 channels, 2 x 2 kernel, pad 1), then others
EXAMPLES_STEP1 = [
    _arrays(1, 1, 1, 2, 2, (2, 2), (1, 1), (1, 1), (1, 1, 1, 1), True),
    _arrays(2, 2, 1, 1, 2, (3, 2), (1, 1), (1, 1), (0, 2, 0, 2), False),
]

_HINTS = {
    1: {"value": ["Pad first: options.padding = (p1, p2) at both ends of the height and the "
                  "width. Tap (i, j) of every window is one slice of the padded input, rows "
                  "i .. i + h_out - 1, columns j .. j + w_out - 1; concatenate the taps on "
                  "the channel axis so each patch runs (i, j, c)."],
        "shape": ["h_out = h + 2 * p1 - k1 + 1 (stride 1), and the output is "
                  "[n, c_out, h_out, w_out]."]},
    2: {"value": ["Pad with options.padding before and options.padding_end after; tap (i, j) "
                  "reads rows i * dilation, i * dilation + stride, ...; each group of output "
                  "channels reads only its own c_in / groups input channels."],
        "shape": ["h_out = (h + top + bottom - dilation * (k - 1) - 1) // stride + 1, "
                  "and the output is [n, c_out, h_out, w_out]."]},
}


def exercise(max_examples: int = 10, step: int = 2) -> BuildExercise:
    """The checker for the reader's ``conv2d(cls, x, weight, bias, options)``: step 1 on the
    figure's kind of case only (stride 1, dilation 1, one group, symmetric pads), step 2 on
    uneven pads, strides, dilations and groups."""
    plain = step == 1
    return _Conv2dExercise(
        ("conv2d, step 1 (stride 1, dilation 1, one group, symmetric pads)" if plain else
         "conv2d from basic ops") + " on Flex, Flex autodiff and Wgpu",
        cases=_plain_cases() if plain else _cases(),
        run=_run,
        references=[Reference("torch.nn.functional.conv2d", _torch, rtol=1e-4, atol=1e-4)],
        checks=[_weight_order, _output_layout, _stride_dilation, _dilation, _pad_order, _pads_and_groups,
                _left_out],
        rules=Rules(forbidden={_OWN_CONV: "call a backend's own convolution (build it "
                                            "from cls.float_* ops)"},
                    no_numpy=True, helpers=(pad, _WRAPPER)),
        hints=_HINTS[1 if plain else 2],
        reference_solution=conv2d_plain if plain else conv2d,
        examples=EXAMPLES_STEP1 if plain else EXAMPLES,
        max_examples=max_examples,
    )
