"""The differentiable ops under test: how to build inputs, run them on Autodiff[B] and in torch.

Each :class:`Case` makes float inputs (and non-differentiable extras: dims, masks, indices)
from a NumPy generator and a base shape, so the same table drives the torch comparison
(float32) and the finite-difference check (float64).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable  # (rng, shape) -> (list of float arrays, dict of extras)
    ours: Callable  # (AD, tensors, extra) -> AutodiffTensor
    theirs: Callable  # (torch tensors, extra) -> torch.Tensor
    min_rank: int = 1
    finite_differences: bool = True


def normal(rng, shape):
    return rng.standard_normal(shape)


def positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def broadcast_shape(rng, shape):
    """A shape that broadcasts to ``shape``: some leading dims dropped, some dims set to 1."""
    drop = int(rng.integers(0, len(shape)))
    return tuple(1 if rng.random() < 0.4 else s for s in shape[drop:])


def one(gen=normal):
    return lambda rng, shape: ([gen(rng, shape)], {})


def with_dim(gen=normal):
    return lambda rng, shape: ([gen(rng, shape)], {"dim": int(rng.integers(len(shape)))})


def pair(lhs=normal, rhs=normal):
    """Two broadcasting operands; which side is the smaller one is random."""
    def make(rng, shape):
        small = broadcast_shape(rng, shape)
        a, b = (shape, small) if rng.random() < 0.5 else (small, shape)
        return [lhs(rng, a), rhs(rng, b)], {}
    return make


def keep(out):
    """torch's full reductions give a scalar; ours give shape [1]."""
    return out.reshape(1)


def t(array):
    return torch.from_numpy(np.ascontiguousarray(array))


# ----- op-specific inputs -----------------------------------------------------------------
def make_matmul(rng, shape):
    m, k = shape[-2:]
    n = int(rng.integers(1, 5))
    batch = shape[:-2]
    rhs_batch = broadcast_shape(rng, batch) if batch else ()
    if rng.random() < 0.5:
        return [normal(rng, shape), normal(rng, (*rhs_batch, k, n))], {}
    return [normal(rng, (*rhs_batch, m, k)), normal(rng, (*batch, k, n))], {}


def make_swap(rng, shape):
    d1, d2 = rng.choice(len(shape), 2, replace=False)
    return [normal(rng, shape)], {"dim1": int(d1), "dim2": int(d2)}


def make_permute(rng, shape):
    return [normal(rng, shape)], {"axes": tuple(int(a) for a in rng.permutation(len(shape)))}


def make_flip(rng, shape):
    axes = tuple(int(a) for a in np.flatnonzero(rng.random(len(shape)) < 0.6)) or (0,)
    return [normal(rng, shape)], {"axes": axes}


def make_expand(rng, shape):
    small = tuple(1 if rng.random() < 0.5 else s for s in shape)
    return [normal(rng, small)], {"shape": (2, *shape)}


def random_slices(rng, shape):
    slices = []
    for size in shape[: int(rng.integers(1, len(shape) + 1))]:
        start = int(rng.integers(0, size))
        stop = int(rng.integers(start + 1, size + 1))
        slices.append(slice(start, stop, int(rng.integers(1, 3))))
    return slices


def make_slice(rng, shape):
    return [normal(rng, shape)], {"slices": random_slices(rng, shape)}


def make_slice_assign(rng, shape):
    slices = random_slices(rng, shape)
    region = np.empty(shape)[tuple(slices)].shape
    return [normal(rng, shape), normal(rng, region)], {"slices": slices}


def make_cat(rng, shape):
    dim = int(rng.integers(len(shape)))
    parts = []
    for _ in range(int(rng.integers(2, 4))):
        part = list(shape)
        part[dim] = int(rng.integers(1, 4))
        parts.append(normal(rng, tuple(part)))
    return parts, {"dim": dim}


def make_repeat(rng, shape):
    return [normal(rng, shape)], {"dim": int(rng.integers(len(shape))), "times": int(rng.integers(1, 4))}


def make_gather(rng, shape):
    dim = int(rng.integers(len(shape)))
    index_shape = list(shape)
    index_shape[dim] = int(rng.integers(1, 5))
    indices = rng.integers(0, shape[dim], index_shape).astype(np.int64)
    return [normal(rng, shape)], {"dim": dim, "indices": indices}


def make_scatter(rng, shape):
    inputs, extra = make_gather(rng, shape)
    return [inputs[0], normal(rng, extra["indices"].shape)], extra


def make_select(rng, shape):
    dim = int(rng.integers(len(shape)))
    indices = rng.integers(0, shape[dim], int(rng.integers(1, 6))).astype(np.int64)
    return [normal(rng, shape)], {"dim": dim, "indices": indices}


def make_select_assign(rng, shape):
    inputs, extra = make_select(rng, shape)
    value_shape = list(shape)
    value_shape[extra["dim"]] = len(extra["indices"])
    return [inputs[0], normal(rng, tuple(value_shape))], extra


def make_mask_where(rng, shape):
    mask = rng.random(broadcast_shape(rng, shape)) < 0.5
    return [normal(rng, shape), normal(rng, broadcast_shape(rng, shape))], {"mask": mask}


def make_mask_fill(rng, shape):
    return [normal(rng, shape)], {"mask": rng.random(broadcast_shape(rng, shape)) < 0.5}


def make_reshape(rng, shape):
    return [normal(rng, shape)], {"shape": tuple(reversed(shape)) if rng.random() < 0.5 else (int(np.prod(shape)),)}


# ----- the table ----------------------------------------------------------------------------
def unary(name, ours, theirs, gen=normal, min_rank=1):
    return Case(name, one(gen), lambda AD, ts, e: ours(AD, ts[0]), lambda ts, e: theirs(ts[0]), min_rank)


def along_dim(name, ours, theirs, gen=normal):
    return Case(name, with_dim(gen), lambda AD, ts, e: ours(AD, ts[0], e["dim"]),
                lambda ts, e: theirs(ts[0], e["dim"]))


def binary(name, ours, theirs, lhs=normal, rhs=normal):
    return Case(name, pair(lhs, rhs), lambda AD, ts, e: ours(AD, *ts), lambda ts, e: theirs(*ts))


CASES = [
    binary("add", lambda AD, a, b: AD.float_add(a, b), torch.add),
    binary("sub", lambda AD, a, b: AD.float_sub(a, b), torch.sub),
    binary("mul", lambda AD, a, b: AD.float_mul(a, b), torch.mul),
    binary("div", lambda AD, a, b: AD.float_div(a, b), torch.div, rhs=positive),
    binary("powf", lambda AD, a, b: AD.float_powf(a, b), torch.pow, lhs=positive),
    binary("max_pair", lambda AD, a, b: AD.float_max_pair(a, b), torch.maximum),
    binary("min_pair", lambda AD, a, b: AD.float_min_pair(a, b), torch.minimum),
    Case("matmul", make_matmul, lambda AD, ts, e: AD.float_matmul(*ts), lambda ts, e: ts[0] @ ts[1], min_rank=2),
    unary("add_scalar", lambda AD, x: AD.float_add_scalar(x, 1.5), lambda x: x + 1.5),
    unary("sub_scalar", lambda AD, x: AD.float_sub_scalar(x, 0.7), lambda x: x - 0.7),
    unary("mul_scalar", lambda AD, x: AD.float_mul_scalar(x, -2.5), lambda x: x * -2.5),
    unary("div_scalar", lambda AD, x: AD.float_div_scalar(x, 3.0), lambda x: x / 3.0),
    unary("powf_scalar", lambda AD, x: AD.float_powf_scalar(x, 2.5), lambda x: x**2.5, positive),
    unary("remainder_scalar", lambda AD, x: AD.float_remainder_scalar(x, 0.7), lambda x: torch.remainder(x, 0.7)),
    unary("neg", lambda AD, x: AD.float_neg(x), torch.neg),
    unary("recip", lambda AD, x: AD.float_recip(x), torch.reciprocal, positive),
    unary("clamp_min", lambda AD, x: AD.float_clamp_min(x, -0.3), lambda x: torch.clamp(x, min=-0.3)),
    unary("clamp_max", lambda AD, x: AD.float_clamp_max(x, 0.4), lambda x: torch.clamp(x, max=0.4)),
    unary("clamp", lambda AD, x: AD.float_clamp(x, -0.5, 0.5), lambda x: torch.clamp(x, -0.5, 0.5)),
    unary("exp", lambda AD, x: AD.float_exp(x), torch.exp),
    unary("log", lambda AD, x: AD.float_log(x), torch.log, positive),
    unary("log1p", lambda AD, x: AD.float_log1p(x), torch.log1p, positive),
    unary("sqrt", lambda AD, x: AD.float_sqrt(x), torch.sqrt, positive),
    unary("abs", lambda AD, x: AD.float_abs(x), torch.abs),
    unary("tanh", lambda AD, x: AD.float_tanh(x), torch.tanh),
    unary("sin", lambda AD, x: AD.float_sin(x), torch.sin),
    unary("cos", lambda AD, x: AD.float_cos(x), torch.cos),
    unary("erf", lambda AD, x: AD.float_erf(x), torch.erf),
    unary("floor", lambda AD, x: AD.float_floor(x), torch.floor),
    unary("sign", lambda AD, x: AD.float_sign(x), torch.sign),
    unary("relu", lambda AD, x: AD.relu(x), torch.relu),
    unary("gelu", lambda AD, x: AD.gelu(x), F.gelu),
    unary("sigmoid", lambda AD, x: AD.sigmoid(x), torch.sigmoid),
    unary("leaky_relu", lambda AD, x: AD.leaky_relu(x, 0.1), lambda x: F.leaky_relu(x, 0.1)),
    unary("sum", lambda AD, x: AD.float_sum(x), lambda x: keep(x.sum())),
    unary("mean", lambda AD, x: AD.float_mean(x), lambda x: keep(x.mean())),
    unary("max", lambda AD, x: AD.float_max(x), lambda x: keep(x.max())),
    unary("min", lambda AD, x: AD.float_min(x), lambda x: keep(x.min())),
    along_dim("sum_dim", lambda AD, x, d: AD.float_sum_dim(x, d), lambda x, d: x.sum(d, keepdim=True)),
    along_dim("mean_dim", lambda AD, x, d: AD.float_mean_dim(x, d), lambda x, d: x.mean(d, keepdim=True)),
    along_dim("prod_dim", lambda AD, x, d: AD.float_prod_dim(x, d), lambda x, d: x.prod(d, keepdim=True), positive),
    along_dim("max_dim", lambda AD, x, d: AD.float_max_dim(x, d), lambda x, d: x.max(d, keepdim=True).values),
    along_dim("min_dim", lambda AD, x, d: AD.float_min_dim(x, d), lambda x, d: x.min(d, keepdim=True).values),
    along_dim("max_dim_with_indices", lambda AD, x, d: AD.float_max_dim_with_indices(x, d)[0],
              lambda x, d: x.max(d, keepdim=True).values),
    along_dim("softmax", lambda AD, x, d: AD.softmax(x, d), lambda x, d: torch.softmax(x, d)),
    along_dim("log_softmax", lambda AD, x, d: AD.log_softmax(x, d), lambda x, d: torch.log_softmax(x, d)),
    Case("reshape", make_reshape, lambda AD, ts, e: AD.float_reshape(ts[0], e["shape"]),
         lambda ts, e: ts[0].reshape(e["shape"])),
    Case("swap_dims", make_swap, lambda AD, ts, e: AD.float_swap_dims(ts[0], e["dim1"], e["dim2"]),
         lambda ts, e: ts[0].transpose(e["dim1"], e["dim2"]), min_rank=2),
    unary("transpose", lambda AD, x: AD.float_transpose(x), lambda x: x.transpose(-2, -1), min_rank=2),
    Case("permute", make_permute, lambda AD, ts, e: AD.float_permute(ts[0], e["axes"]),
         lambda ts, e: ts[0].permute(e["axes"])),
    Case("flip", make_flip, lambda AD, ts, e: AD.float_flip(ts[0], e["axes"]), lambda ts, e: ts[0].flip(e["axes"])),
    Case("expand", make_expand, lambda AD, ts, e: AD.float_expand(ts[0], e["shape"]),
         lambda ts, e: ts[0].expand(e["shape"])),
    Case("slice", make_slice, lambda AD, ts, e: AD.float_slice(ts[0], e["slices"]),
         lambda ts, e: ts[0][tuple(e["slices"])]),
    Case("slice_assign", make_slice_assign, lambda AD, ts, e: AD.float_slice_assign(ts[0], e["slices"], ts[1]),
         lambda ts, e: _torch_slice_assign(ts[0], e["slices"], ts[1])),
    Case("cat", make_cat, lambda AD, ts, e: AD.float_cat(ts, e["dim"]), lambda ts, e: torch.cat(ts, e["dim"])),
    Case("repeat_dim", make_repeat, lambda AD, ts, e: AD.float_repeat_dim(ts[0], e["dim"], e["times"]),
         lambda ts, e: ts[0].repeat(*[e["times"] if d == e["dim"] else 1 for d in range(ts[0].dim())])),
    Case("gather", make_gather, lambda AD, ts, e: AD.float_gather(e["dim"], ts[0], e["indices"]),
         lambda ts, e: torch.gather(ts[0], e["dim"], t(e["indices"]))),
    Case("scatter", make_scatter, lambda AD, ts, e: AD.float_scatter(e["dim"], ts[0], e["indices"], ts[1]),
         lambda ts, e: torch.scatter_add(ts[0], e["dim"], t(e["indices"]), ts[1])),
    Case("select", make_select, lambda AD, ts, e: AD.float_select(ts[0], e["dim"], e["indices"]),
         lambda ts, e: torch.index_select(ts[0], e["dim"], t(e["indices"]))),
    Case("select_assign", make_select_assign,
         lambda AD, ts, e: AD.float_select_assign(ts[0], e["dim"], e["indices"], ts[1]),
         lambda ts, e: torch.index_add(ts[0], e["dim"], t(e["indices"]), ts[1])),
    Case("mask_where", make_mask_where, lambda AD, ts, e: AD.float_mask_where(ts[0], e["mask"], ts[1]),
         lambda ts, e: torch.where(t(e["mask"]), ts[1], ts[0])),
    Case("mask_fill", make_mask_fill, lambda AD, ts, e: AD.float_mask_fill(ts[0], e["mask"], 0.25),
         lambda ts, e: ts[0].masked_fill(t(e["mask"]), 0.25)),
    Case("cast", one(), lambda AD, ts, e: AD.float_cast(ts[0], _other_float(ts[0])),
         lambda ts, e: ts[0].to(torch.float64 if ts[0].dtype == torch.float32 else torch.float32),
         finite_differences=False),
]


def _other_float(tensor):
    from minidl.backend import DType

    return DType.F64 if DType.of(tensor.dtype) == DType.F32 else DType.F32


def _torch_slice_assign(tensor, slices, value):
    out = tensor.clone()
    out[tuple(slices)] = value
    return out


CASE_IDS = [c.name for c in CASES]
