"""The GPU device against torch, forward and backward, on random shapes (issue 39's parity
harness): every case draws its shapes and values from a seeded NumPy generator, runs once on
``Device.wgpu().autodiff()`` and once in torch (CPU, float32), and compares the output and the
gradient of every float input of ``(out * w).sum()`` for a random ``w``. Int and bool outputs
are compared exactly and have no backward; an int output has the device's int dtype (int32).

float32 tolerances, stated once: ``RTOL, ATOL`` below, ``ATOL`` scaled by the largest magnitude
of the compared array when that is above 1 (``close``): both sides compute in float32 but sum in
different orders (tiled matmul and conv, chunked reductions) and use different libm (WGSL
built-ins on lavapipe are LLVM's), and a sum's rounding error grows with the size of its terms,
not of its result, so an element that cancels to near 0 among large ones keeps fewer digits.

``test_parity.py`` compares the same device against Flex on composite functions (layer_norm,
softmax, interpolate, batch_norm); this file is the one against torch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from minidl import Device, Tensor
from minidl.tensor import functional as F

from .support import needs_adapter

pytestmark = needs_adapter

RTOL, ATOL = 1e-4, 1e-5
SEEDS = range(3)


def randn(rng, *shape, low: float | None = None):
    """Standard-normal float32 values; with ``low``, their magnitude shifted to at least ``low``
    (for log, sqrt, recip, div and prod, which need values away from 0)."""
    a = rng.standard_normal(shape).astype(np.float32)
    if low is not None:
        a = (np.sign(a) + (a == 0)) * (np.abs(a) + low)
    return a.astype(np.float32)


def dims(rng, rank: int, low: int = 1, high: int = 6) -> tuple[int, ...]:
    return tuple(int(v) for v in rng.integers(low, high + 1, rank))


# name -> (inputs(rng) -> list of arrays, minidl(ts) -> Tensor, torch(ts) -> torch.Tensor)
CASES: dict = {}


def case(name, inputs, on_minidl, on_torch):
    CASES[name] = (inputs, on_minidl, on_torch)


def one(rng):
    return [randn(rng, *dims(rng, int(rng.integers(1, 5))))]


def positive(rng):
    return [np.abs(randn(rng, *dims(rng, int(rng.integers(1, 5))), low=0.1))]


def nonzero(rng):
    return [randn(rng, *dims(rng, int(rng.integers(1, 5))), low=0.3)]


# element-wise unary
for name, inputs, m, t in [
    ("exp", one, lambda x: x.exp(), torch.exp),
    ("log", positive, lambda x: x.log(), torch.log),
    ("log1p", positive, lambda x: x.log1p(), torch.log1p),
    ("sqrt", positive, lambda x: x.sqrt(), torch.sqrt),
    ("recip", nonzero, lambda x: x.recip(), torch.reciprocal),
    ("neg", one, lambda x: x.neg(), torch.neg),
    ("abs", nonzero, lambda x: x.abs(), torch.abs),
    ("tanh", one, lambda x: x.tanh(), torch.tanh),
    ("sigmoid", one, lambda x: x.sigmoid(), torch.sigmoid),
    ("sin", one, lambda x: x.sin(), torch.sin),
    ("cos", one, lambda x: x.cos(), torch.cos),
    ("erf", one, lambda x: x.erf(), torch.erf),
    ("square", one, lambda x: x.square(), torch.square),
    ("relu", nonzero, lambda x: x.relu(), torch.relu),
    ("gelu", one, lambda x: F.gelu(x), TF.gelu),
]:
    case(f"unary {name}", inputs, m, t)


def pair(rng, low=None):
    """Two inputs of one rank (burn broadcasts only sizes of 1) whose shapes broadcast: either
    side may have size 1 where the other does not."""
    shape = dims(rng, int(rng.integers(1, 5)), low=2)
    one_at = rng.integers(0, 3, len(shape))  # 0: both full, 1: lhs 1, 2: rhs 1
    lhs = tuple(1 if o == 1 else s for o, s in zip(one_at, shape))
    rhs = tuple(1 if o == 2 else s for o, s in zip(one_at, shape))
    return [randn(rng, *lhs, low=low), randn(rng, *rhs, low=low)]


# element-wise binary, broadcasting
for name, low, m, t in [
    ("add", None, lambda a, b: a + b, torch.add),
    ("sub", None, lambda a, b: a - b, torch.sub),
    ("mul", None, lambda a, b: a * b, torch.mul),
    ("div", 0.3, lambda a, b: a / b, torch.div),
    ("powf", 0.3, lambda a, b: a.abs().powf(b), lambda a, b: a.abs().pow(b)),
    ("max_pair", None, lambda a, b: a.max_pair(b), torch.maximum),
    ("min_pair", None, lambda a, b: a.min_pair(b), torch.minimum),
]:
    case(f"binary {name}", lambda rng, low=low: pair(rng, low), m, t)

# scalar
for name, inputs, m, t in [
    ("add_scalar", one, lambda x: x.add_scalar(1.5), lambda x: x + 1.5),
    ("sub_scalar", one, lambda x: x.sub_scalar(-0.25), lambda x: x + 0.25),
    ("mul_scalar", one, lambda x: x.mul_scalar(-3.0), lambda x: x * -3.0),
    ("div_scalar", one, lambda x: x.div_scalar(4.0), lambda x: x / 4.0),
    ("powf_scalar", positive, lambda x: x.powf_scalar(2.5), lambda x: x ** 2.5),
    ("clamp", nonzero, lambda x: x.clamp(-0.5, 0.7), lambda x: x.clamp(-0.5, 0.7)),
]:
    case(f"scalar {name}", inputs, m, t)


def rounded_pair(rng):
    """Values on a coarse grid, so equal and the _equal comparisons see ties."""
    return [np.round(a * 2) / 2 for a in pair(rng)]


# comparison (bool outputs; forward only)
for name in ["equal", "greater", "greater_equal", "lower", "lower_equal"]:
    torch_name = {"equal": "eq", "greater": "gt", "greater_equal": "ge", "lower": "lt", "lower_equal": "le"}[name]
    case(f"compare {name}", rounded_pair, lambda a, b, n=name: getattr(a, n)(b),
         lambda a, b, n=torch_name: getattr(a, n)(b))
    case(f"compare {name}_elem", rounded_pair, lambda a, b, n=name: getattr(a, f"{n}_elem")(0.5),
         lambda a, b, n=torch_name: getattr(a, n)(0.5))


# reductions, whole and along each dim (minidl keeps the dim with size 1; whole gives [1])
def reduce_input(rng):
    return [randn(rng, *dims(rng, int(rng.integers(1, 4)), high=7), low=0.2)]


case("reduce sum", reduce_input, lambda x: x.sum(), lambda x: x.sum().reshape(1))
case("reduce mean", reduce_input, lambda x: x.mean(), lambda x: x.mean().reshape(1))
case("reduce max", reduce_input, lambda x: x.max(), lambda x: x.max().reshape(1))
case("reduce min", reduce_input, lambda x: x.min(), lambda x: x.min().reshape(1))
case("reduce prod", reduce_input, lambda x: x.prod(), lambda x: x.prod().reshape(1))
case("reduce argmax", reduce_input, lambda x: x.argmax(), lambda x: x.argmax().reshape(1))
case("reduce argmin", reduce_input, lambda x: x.argmin(), lambda x: x.argmin().reshape(1))
for dim in range(3):
    def dim_input(rng, dim=dim):
        return [randn(rng, *dims(rng, dim + 1 + int(rng.integers(0, 2)), high=7), low=0.2)]

    case(f"reduce sum_dim {dim}", dim_input, lambda x, d=dim: x.sum_dim(d), lambda x, d=dim: x.sum(d, keepdim=True))
    case(f"reduce mean_dim {dim}", dim_input, lambda x, d=dim: x.mean_dim(d),
         lambda x, d=dim: x.mean(d, keepdim=True))
    case(f"reduce max_dim {dim}", dim_input, lambda x, d=dim: x.max_dim(d),
         lambda x, d=dim: x.amax(d, keepdim=True))
    case(f"reduce min_dim {dim}", dim_input, lambda x, d=dim: x.min_dim(d),
         lambda x, d=dim: x.amin(d, keepdim=True))
    case(f"reduce prod_dim {dim}", dim_input, lambda x, d=dim: x.prod_dim(d),
         lambda x, d=dim: x.prod(d, keepdim=True))
    case(f"reduce argmax {dim}", dim_input, lambda x, d=dim: x.argmax(d),
         lambda x, d=dim: x.argmax(d, keepdim=True))
    case(f"reduce argmin {dim}", dim_input, lambda x, d=dim: x.argmin(d),
         lambda x, d=dim: x.argmin(d, keepdim=True))


# matmul: batched, the batch broadcast on one side, sizes across a 16-wide tile edge
def matmul_inputs(rng):
    b, m, k, n = int(rng.integers(1, 4)), *(int(v) for v in rng.integers(1, 40, 3))
    lhs = (b, m, k) if rng.random() < 0.7 else (1, m, k)
    return [randn(rng, *lhs), randn(rng, b, k, n)]


case("matmul batched", matmul_inputs, lambda a, b: a.matmul(b), torch.matmul)
case("matmul 2d", lambda rng: (lambda m, k, n: [randn(rng, m, k), randn(rng, k, n)])(*dims(rng, 3, high=40)),
     lambda a, b: a.matmul(b), torch.matmul)


# conv2d forward and backward (x, weight, bias), random stride, padding, dilation, groups
def conv_inputs(rng):
    groups = int(rng.integers(1, 3))
    cin, cout = groups * int(rng.integers(1, 3)), groups * int(rng.integers(1, 3))
    kh, kw = (int(v) for v in rng.integers(1, 4, 2))
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(kh * 2, 10)), int(rng.integers(kw * 2, 10))
    return [randn(rng, n, cin, h, w), randn(rng, cout, cin // groups, kh, kw), randn(rng, cout),
            np.array([groups, int(rng.integers(1, 3)), int(rng.integers(0, 2)), int(rng.integers(1, 3))], dtype=np.int32)]


def conv_args(params):
    groups, stride, padding, dilation = (int(v) for v in params)
    return dict(stride=stride, padding=padding, dilation=dilation, groups=groups)


case("conv2d", conv_inputs, lambda x, w, b, p: F.conv2d(x, w, b, **conv_args(p.to_numpy())),
     lambda x, w, b, p: TF.conv2d(x, w, b, **conv_args(p.numpy())))


# pools and their backward
def pool_input(rng):
    return [randn(rng, int(rng.integers(1, 3)), int(rng.integers(1, 4)), *dims(rng, 2, low=4, high=9))]


case("max_pool2d", pool_input, lambda x: F.max_pool2d(x, 3, 2, 1), lambda x: TF.max_pool2d(x, 3, 2, 1))
case("max_pool2d k2", pool_input, lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2))
case("avg_pool2d", pool_input, lambda x: F.avg_pool2d(x, 3, 2, 1), lambda x: TF.avg_pool2d(x, 3, 2, 1))
case("avg_pool2d no pad count", pool_input, lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
     lambda x: TF.avg_pool2d(x, 3, 1, 1, count_include_pad=False))
case("adaptive_avg_pool2d", pool_input, lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
     lambda x: TF.adaptive_avg_pool2d(x, (3, 2)))
case("adaptive_max_pool2d", pool_input, lambda x: F.adaptive_max_pool2d(x, (2, 3)),
     lambda x: TF.adaptive_max_pool2d(x, (2, 3)))


# indexing: gather, scatter, select, select_assign, slice, slice_assign, cat, masks
def index_inputs(rng):
    """x [a, b, c], indices along dim 1 of shape [a, k, c] (repeats allowed), values like the
    indices, 1-D indices of length k, a mask broadcasting to x, y for mask_where."""
    a, b, c = dims(rng, 3)
    k = int(rng.integers(1, 2 * b + 1))
    return [randn(rng, a, b, c), rng.integers(0, b, (a, k, c)).astype(np.int32), randn(rng, a, k, c),
            rng.integers(0, b, k).astype(np.int32), rng.random((b, c)) < 0.5, randn(rng, a, b, c)]


case("gather", index_inputs, lambda x, i, v, s, m, y: x.gather(1, i), lambda x, i, v, s, m, y: x.gather(1, i.long()))
case("scatter", index_inputs, lambda x, i, v, s, m, y: x.scatter(1, i, v),
     lambda x, i, v, s, m, y: x.scatter_add(1, i.long(), v))
case("select", index_inputs, lambda x, i, v, s, m, y: x.select(1, s),
     lambda x, i, v, s, m, y: x.index_select(1, s.long()))
case("select_assign", index_inputs, lambda x, i, v, s, m, y: x.select_assign(1, s, v),
     lambda x, i, v, s, m, y: x.index_add(1, s.long(), v))
case("mask_where", index_inputs, lambda x, i, v, s, m, y: x.mask_where(m, y), lambda x, i, v, s, m, y: torch.where(m, y, x))
case("mask_fill", index_inputs, lambda x, i, v, s, m, y: x.mask_fill(m, -2.5),
     lambda x, i, v, s, m, y: x.masked_fill(m, -2.5))


def slice_inputs(rng):
    shape = dims(rng, 3, low=2, high=7)
    lo = [int(rng.integers(0, s - 1)) for s in shape]
    hi = [int(rng.integers(l + 1, s + 1)) for l, s in zip(lo, shape)]
    step = int(rng.integers(1, 3))
    region = [len(range(lo[0], hi[0], step))] + [h - l for l, h in zip(lo[1:], hi[1:])]
    return [randn(rng, *shape), randn(rng, *region), np.array(lo + hi + [step], dtype=np.int32)]


def ranges(p):
    lo, hi, step = p[:3], p[3:6], p[6]
    return [slice(int(lo[0]), int(hi[0]), int(step))] + [(int(lo[d]), int(hi[d])) for d in (1, 2)]


def torch_slice_assign(x, v, p):
    r = ranges(p.numpy())
    out = x.clone()
    out[r[0], r[1][0]:r[1][1], r[2][0]:r[2][1]] = v
    return out


case("slice", slice_inputs, lambda x, v, p: x.slice(ranges(p.to_numpy())),
     lambda x, v, p: (lambda r: x[r[0], r[1][0]:r[1][1], r[2][0]:r[2][1]])(ranges(p.numpy())))
case("slice_assign", slice_inputs, lambda x, v, p: x.slice_assign(ranges(p.to_numpy()), v), torch_slice_assign)


def cat_inputs(rng):
    shape, dim = dims(rng, 3), int(rng.integers(0, 3))
    parts = []
    for _ in range(int(rng.integers(1, 4))):
        s = list(shape)
        s[dim] = int(rng.integers(1, 5))
        parts.append(randn(rng, *s))
    return parts + [np.array([dim], dtype=np.int32)]


case("cat", cat_inputs, lambda *ts: Tensor.cat(list(ts[:-1]), int(ts[-1].to_numpy()[0])),
     lambda *ts: torch.cat(list(ts[:-1]), int(ts[-1][0])))

# cast across kinds (float -> int truncates toward 0, non-zero -> true)
case("cast float->int", one, lambda x: (x * 3.0).cast("int32"), lambda x: (x * 3.0).to(torch.int32))
case("cast float->bool", lambda rng: [np.round(one(rng)[0])], lambda x: x.cast("bool"), lambda x: x.to(torch.bool))
case("cast int->float", one, lambda x: (x * 3.0).cast("int32").cast("float32") * x,
     lambda x: (x * 3.0).to(torch.int32).to(torch.float32) * x)
case("cast bool->float", one, lambda x: x.greater_elem(0.0).cast("float32") * x,
     lambda x: (x > 0).to(torch.float32) * x)


# views through strides: permuted, transposed, broadcast and stepped inputs into the kernels
case("view permute exp", lambda rng: [randn(rng, *dims(rng, 3))],
     lambda x: x.permute((2, 0, 1)).exp(), lambda x: x.permute(2, 0, 1).exp())
case("view transposed matmul", matmul_inputs, lambda a, b: b.swap_dims(1, 2).matmul(a.swap_dims(1, 2)),
     lambda a, b: b.transpose(1, 2).matmul(a.transpose(1, 2)))
case("view permuted sum_dim", lambda rng: [randn(rng, *dims(rng, 3))],
     lambda x: x.permute((1, 2, 0)).sum_dim(1), lambda x: x.permute(1, 2, 0).sum(1, keepdim=True))
case("view expand mul", lambda rng: [randn(rng, 1, *dims(rng, 2)), randn(rng, 3, 1, 1)],
     lambda a, b: a.expand((3, *a.shape[1:])) * b, lambda a, b: a.expand(3, *a.shape[1:]) * b)
case("view stepped slice sum", lambda rng: [randn(rng, *dims(rng, 2, low=3, high=12))],
     lambda x: x.slice([slice(0, None, 2), slice(1, None, 3)]).max_dim(1),
     lambda x: x[0::2, 1::3].amax(1, keepdim=True))


# larger reductions: more elements than one workgroup, so partial results combine
def big(rng):
    return [randn(rng, int(rng.integers(1, 4)), int(rng.integers(300, 3000)))]


case("big sum", big, lambda x: x.sum(), lambda x: x.sum().reshape(1))
case("big mean_dim 1", big, lambda x: x.mean_dim(1), lambda x: x.mean(1, keepdim=True))
case("big max", big, lambda x: x.max(), lambda x: x.max().reshape(1))
case("big argmin 1", big, lambda x: x.argmin(1), lambda x: x.argmin(1, keepdim=True))
case("big sum_dim 0", lambda rng: [randn(rng, int(rng.integers(300, 1500)), int(rng.integers(1, 5)))],
     lambda x: x.sum_dim(0), lambda x: x.sum(0, keepdim=True))
case("big matmul", lambda rng: [randn(rng, 2, 65, 130), randn(rng, 2, 130, 70)], lambda a, b: a.matmul(b),
     torch.matmul)



# past lavapipe's loop cap: llvmpipe ends a shader's loops after 65535 iterations in all, so a
# kernel that folds more in one thread silently dropped the rest (sums of the first ~65533
# elements, matmuls over part of K, conv weight gradients over part of the batch, scatters of
# part of the values); these ops now split the work (ops.LOOP_BUDGET)
def long_dim(rng):
    """Positive values: a float32 sum of 10^5 terms that cancel to ~0 has no stable digits to
    compare within RTOL, ATOL (either side's order of additions decides them)."""
    return [np.abs(randn(rng, int(rng.integers(1, 3)), int(rng.integers(66000, 150000)), low=0.1))]


case("long sum", long_dim, lambda x: x.sum(), lambda x: x.sum().reshape(1))
case("long mean_dim", long_dim, lambda x: x.mean_dim(1), lambda x: x.mean(1, keepdim=True))
case("long max_dim", long_dim, lambda x: x.max_dim(1), lambda x: x.amax(1, keepdim=True))
case("long min", long_dim, lambda x: x.min(), lambda x: x.min().reshape(1))
case("long argmax argmin", long_dim, lambda x: x.argmax(1) * 3 + x.argmin(1),
     lambda x: x.argmax(1, keepdim=True) * 3 + x.argmin(1, keepdim=True))
case("long K matmul", lambda rng: (lambda k: [np.abs(randn(rng, 2, 3, k)) / k, np.abs(randn(rng, 2, k, 5))])(
                                  int(rng.integers(9000, 20000))),
     lambda a, b: a.matmul(b), torch.matmul)
def many_channels(rng, wide_in):
    """conv2d over thousands of input channels (its forward loops over them) and from thousands
    of output channels (its x gradient loops over those)."""
    ci, co = (int(rng.integers(5000, 7000)), 2) if wide_in else (2, int(rng.integers(5000, 7000)))
    return [np.abs(randn(rng, 1, ci, 4, 4)), np.abs(randn(rng, co, ci, 3, 3)) / ci, randn(rng, co)]


for wide_in in (True, False):
    case(f"conv2d many {'input' if wide_in else 'output'} channels", lambda rng, w=wide_in: many_channels(rng, w),
         lambda x, w, b: F.conv2d(x, w, b, padding=1), lambda x, w, b: TF.conv2d(x, w, b, padding=1))
case("conv2d large batch", lambda rng: [randn(rng, int(rng.integers(70, 100)), 1, 30, 30), randn(rng, 2, 1, 3, 3)],
     lambda x, w: F.conv2d(x, w, None, padding=1), lambda x, w: TF.conv2d(x, w, None, padding=1))


def long_index(rng):
    k = int(rng.integers(66000, 90000))
    return [randn(rng, 5, 2), rng.integers(0, 5, (k, 2)).astype(np.int32), np.abs(randn(rng, k, 2)),
            rng.integers(0, 5, k).astype(np.int32)]


case("long scatter", long_index, lambda x, i, v, s: x.scatter(0, i, v), lambda x, i, v, s: x.scatter_add(0, i.long(), v))
case("long select_assign", long_index, lambda x, i, v, s: x.select_assign(0, s, v),
     lambda x, i, v, s: x.index_add(0, s.long(), v))
case("adaptive_avg_pool2d large window", lambda rng: [randn(rng, 1, 2, 260, int(rng.integers(250, 300)))],
     lambda x: F.adaptive_avg_pool2d(x, (1, 2)), lambda x: TF.adaptive_avg_pool2d(x, (1, 2)))

# int32 tensors (the device's int): arithmetic, reductions, indexing; exact, no backward
def int_pair(rng):
    shape = dims(rng, 3)
    return [rng.integers(-50, 50, shape).astype(np.int32), rng.integers(1, 9, shape).astype(np.int32)]


case("int add mul", int_pair, lambda a, b: (a + b) * b - a, lambda a, b: (a + b) * b - a)
case("int div", int_pair, lambda a, b: a.abs() / b, lambda a, b: torch.div(a.abs(), b, rounding_mode="floor"))
case("int sum_dim max_dim", int_pair, lambda a, b: a.sum_dim(1) + b.max_dim(1),
     lambda a, b: a.sum(1, keepdim=True) + b.amax(1, keepdim=True))
case("int argmax", int_pair, lambda a, b: a.argmax(2), lambda a, b: a.argmax(2, keepdim=True))
case("int cat gather", int_pair, lambda a, b: Tensor.cat([a, b], 1).gather(1, (b - 1).clamp(0, 1)),
     lambda a, b: torch.cat([a, b], 1).gather(1, (b - 1).clamp(0, 1).long()))
case("int mask_fill greater", int_pair, lambda a, b: a.mask_fill(a.greater(b), 7),
     lambda a, b: a.masked_fill(a > b, 7))


def run_minidl(fn, arrays):
    device = Device.wgpu().autodiff()
    ts = []
    for a in arrays:
        t = Tensor.from_numpy(np.ascontiguousarray(a), device)
        ts.append(t.require_grad() if a.dtype == np.float32 else t)
    out = fn(*ts)
    grads = []
    if out.to_numpy().dtype.kind == "f":
        w = Tensor.from_numpy(np.random.default_rng(99).standard_normal(out.shape).astype(np.float32), device)
        g = (out * w).sum().backward()
        grads = [t.grad(g) for t, a in zip(ts, arrays) if a.dtype == np.float32]
        grads = [None if x is None else x.to_numpy() for x in grads]
    return out.to_numpy(), grads


def run_torch(fn, arrays):
    ts = [torch.tensor(np.ascontiguousarray(a)).requires_grad_(a.dtype == np.float32) for a in arrays]
    out = fn(*ts)
    grads = []
    if out.dtype.is_floating_point:
        w = torch.tensor(np.random.default_rng(99).standard_normal(tuple(out.shape)).astype(np.float32))
        (out * w).sum().backward()
        grads = [None if t.grad is None else t.grad.numpy() for t, a in zip(ts, arrays) if a.dtype == np.float32]
    return out.detach().numpy(), grads


def close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Within ``RTOL`` of each element, plus ``ATOL`` times the array's largest magnitude (at
    least 1)."""
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * scale, err_msg=what)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", list(CASES))
def test_forward_and_backward_match_torch(name, seed):
    inputs, on_minidl, on_torch = CASES[name]
    arrays = inputs(np.random.default_rng([seed, sum(map(ord, name))]))
    got, got_grads = run_minidl(on_minidl, arrays)
    want, want_grads = run_torch(on_torch, arrays)
    shapes = [a.shape for a in arrays]
    assert got.shape == want.shape, f"{name} on {shapes}: shape {got.shape} != torch {want.shape}"
    if want.dtype.kind == "f":
        assert got.dtype == np.float32
        close(got, want, f"{name} forward on {shapes}")
    else:
        assert got.dtype == {"b": np.bool_}.get(want.dtype.kind, np.int32), f"{name}: dtype {got.dtype}"
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=f"{name} forward on {shapes}")
    assert len(got_grads) == len(want_grads)
    for i, (g, w) in enumerate(zip(got_grads, want_grads)):
        if w is None:
            assert g is None or not np.any(g), f"{name}: input {i} has a gradient torch does not"
            continue
        assert g is not None, f"{name}: input {i} has no gradient on the GPU, torch has one"
        close(g, w, f"{name} grad of input {i} on {shapes}")
