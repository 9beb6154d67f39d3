"""The ``Wgpu`` backend's tensor ops: float, int and bool, each one or a few WGSL dispatches
(burn-cubecl's ``ops/float_ops.rs``, ``int_ops.rs``, ``bool_ops.rs``).

Element-wise ops (unary, binary, comparisons, scalar forms, casts, masks, copies) all go
through :func:`run_map`, which broadcasts and strides the operands and runs one generated map
kernel (:func:`minidl.backends.wgpu.shaders.map_kernel`); the expression is the only thing an
op writes. The few checks the protocol asks for on values (an index out of range, an integer
division by zero) read one reduced value back: a sync, as burn's GPU backends avoid and the
CPU backends' contract needs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from minidl.backend import Device, Distribution, DType, TensorData
from minidl.backend.limits import check_cat, check_size
from minidl.backends.wgpu import shaders
from minidl.backends.wgpu import tensor as tensor_module
from minidl.backends.wgpu.runtime import groups_1d, runtime
from minidl.backends.wgpu.tensor import SUPPORTED, WgpuTensor, c_strides, refuse_dtype

F32, I32, BOOL = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)
MAXD = shaders.MAXD


def wtype(dtype: np.dtype) -> str:
    return shaders.WGSL_TYPE[dtype.kind]


def _check_rank(op: str, shape) -> None:
    if len(shape) > MAXD:
        raise ValueError(f"{op}: Device.wgpu() kernels take tensors of rank <= {MAXD}, found rank {len(shape)}")


def new(shape, dtype, index: int, op: str = "alloc") -> WgpuTensor:
    shape = tuple(int(s) for s in shape)
    check_size(op, shape, np.dtype(dtype))  # minidl's size limit first, then the adapter's
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    return WgpuTensor(runtime(index).empty(4 * n, op), shape, dtype, index=index)


def float_bits(value: float) -> int:
    return int(np.float32(value).view(np.int32))


def _block(t_shape, t_strides, t_offset, out_shape) -> list[int]:
    """``offset, strides[MAXD]`` of an operand broadcast to ``out_shape`` (stride 0 where it
    broadcasts)."""
    pad = len(out_shape) - len(t_shape)
    strides = [0] * pad + [0 if n == 1 and o != 1 else s
                           for n, s, o in zip(t_shape, t_strides, out_shape[pad:], strict=True)]
    return [t_offset] + strides + [0] * (MAXD - len(strides))


def run_map(op: str, expr: str, inputs: Sequence[WgpuTensor], out_dtype, scalars: Sequence = (),
            scalar_types: Sequence[str] = (), out: WgpuTensor | None = None, shape=None) -> WgpuTensor:
    """One element-wise dispatch: ``out = expr(x0, x1, ..., s0, ...)`` (inputs broadcast)."""
    out_dtype = np.dtype(out_dtype)
    if shape is None:
        try:
            shape = np.broadcast_shapes(*(t.shape for t in inputs)) if inputs else ()
        except ValueError:
            raise ValueError(f"{op}: shapes {[t.shape for t in inputs]} do not broadcast") from None
    shape = tuple(int(s) for s in shape)
    _check_rank(op, shape)
    index = (inputs[0] if inputs else out).index
    if out is None:
        check_size(op, shape, out_dtype)
        out = new(shape, out_dtype, index, op)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if n == 0:
        return out
    flat = all(t.shape == shape and t.is_contiguous() for t in (*inputs, out))
    source = shaders.map_kernel(tuple(wtype(t.dtype) for t in inputs), wtype(out.dtype), expr,
                                tuple(scalar_types), flat)
    params = [n, len(shape)] + list(shape) + [1] * (MAXD - len(shape))
    for t in inputs:
        params += _block(t.shape, t.strides, t.offset, shape)
    params += _block(out.shape, out.strides, out.offset, shape)
    for value, kind in zip(scalars, scalar_types, strict=True):
        params.append(float_bits(value) if kind == "f32" else int(value))
    runtime(index).dispatch(source, np.array(params, dtype=np.int64).astype(np.int32),
                            [t.buffer for t in inputs] + [out.buffer], groups_1d(n))
    return out


def contiguous(t: WgpuTensor) -> WgpuTensor:
    if t.is_contiguous() and t.offset == 0:
        return t
    return run_map("copy", "x0", [t], t.dtype)


def read(t: WgpuTensor, check: bool = False) -> np.ndarray:
    """The values of ``t`` on the host (a sync point); ``check``: a validation's read (see
    :meth:`Runtime.read <minidl.backends.wgpu.runtime.Runtime.read>`)."""
    c = contiguous(t)
    raw = runtime(t.index).read(c.buffer, 4 * c.size, check=check)
    host = {"f": np.float32, "i": np.int32, "b": np.uint32}[t.dtype.kind]
    array = np.frombuffer(raw, dtype=host).reshape(t.shape)
    return array.astype(np.bool_) if t.dtype.kind == "b" else array.copy()


tensor_module.READ = read  # np.asarray(WgpuTensor) reads back through here


def _device(index: int) -> Device:
    return Device("wgpu", index)


def _upload(op: str, data, kind: str, device) -> WgpuTensor:
    """Host data of ``kind`` (``f``, ``i``, ``b``) into a new buffer; a dtype the device cannot
    hold (float64, int64, float16) is refused, never narrowed: the Tensor layer gives int data
    without a dtype the device's int32 (``Device.settings``), so an int64 array here was asked
    for."""
    array = np.asarray(data)
    if array.dtype.kind not in {"f": "f", "i": "iu", "b": "b"}[kind]:
        raise TypeError(f"{op}: expected an array of kind {kind!r}, found dtype {array.dtype}")
    DType.of(array.dtype)
    if array.dtype not in SUPPORTED:
        refuse_dtype(op, array.dtype)
    _check_rank(op, array.shape)
    index = getattr(device, "index", 0)
    host = array.astype(np.uint32) if kind == "b" else array
    return WgpuTensor(runtime(index).upload(host, op), array.shape, array.dtype, index=index)


def _float_dtype(op: str, dtype: DType) -> np.dtype:
    """float32, the device's only float; any other float dtype asked for is refused."""
    if dtype is not DType.F32:
        refuse_dtype(op, dtype)
    return F32


def _int_dtype(op: str, dtype: DType) -> np.dtype:
    """int32, the device's only int (burn's wgpu ``DeviceSettings``: ``I32``); an int64
    request is refused, as burn's CubeBackend refuses a dtype its runtime lacks."""
    if dtype is not DType.I32:
        refuse_dtype(op, dtype)
    return I32


def _slice_view(t: WgpuTensor, slices: Sequence[slice]) -> WgpuTensor:
    shape, strides, offset = list(t.shape), list(t.strides), t.offset
    for d, s in enumerate(slices):
        if not isinstance(s, slice):
            s = slice(int(s), int(s) + 1)
        start, stop, step = s.indices(shape[d])
        n = len(range(start, stop, step))
        offset += start * strides[d] if n else 0
        shape[d], strides[d] = n, strides[d] * step
    return t.view(shape, strides, offset)


def _reshape(op: str, t: WgpuTensor, shape) -> WgpuTensor:
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        shape = tuple(t.size // max(known, 1) if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != t.size:
        raise ValueError(f"{op}: cannot reshape a tensor of shape {t.shape} ({t.size} elements) into {shape}")
    _check_rank(op, shape)
    c = t if t.is_contiguous() else contiguous(t)
    return c.view(shape, c_strides(shape), c.offset)


def _expand(op: str, t: WgpuTensor, shape) -> WgpuTensor:
    shape = tuple(int(s) for s in shape)
    check_size(op, shape, t.dtype)
    pad = len(shape) - t.ndim
    if pad < 0:
        raise ValueError(f"{op}: cannot expand shape {t.shape} to {shape}")
    strides = []
    for d, n in enumerate(shape):
        if d < pad:
            strides.append(0)
            continue
        m, s = t.shape[d - pad], t.strides[d - pad]
        if m == n:
            strides.append(s)
        elif m == 1:
            strides.append(0)
        else:
            raise ValueError(f"{op}: cannot expand shape {t.shape} to {shape}")
    return t.view(shape, strides, t.offset)


def _flip(t: WgpuTensor, axes) -> WgpuTensor:
    strides, offset = list(t.strides), t.offset
    for a in axes:
        a = int(a) % t.ndim
        if t.shape[a] > 0:
            offset += (t.shape[a] - 1) * strides[a]
        strides[a] = -strides[a]
    return t.view(t.shape, strides, offset)


def _permute(t: WgpuTensor, axes) -> WgpuTensor:
    axes = [int(a) % t.ndim for a in axes]
    return t.view([t.shape[a] for a in axes], [t.strides[a] for a in axes], t.offset)


def _swap(t: WgpuTensor, d1: int, d2: int) -> WgpuTensor:
    axes = list(range(t.ndim))
    axes[d1], axes[d2] = axes[d2], axes[d1]
    return _permute(t, axes)


def _slice_assign(op: str, t: WgpuTensor, slices, value: WgpuTensor) -> WgpuTensor:
    region = _slice_view(t, slices).shape
    try:
        fits = value.ndim <= len(region) and np.broadcast_shapes(value.shape, region) == region
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: a value of shape {value.shape} does not fit the region {region}")
    out = run_map(op, "x0", [t], t.dtype)
    target = _slice_view(out, slices)
    run_map(op, "x0", [value], out.dtype, out=target, shape=target.shape)
    return out


def _cat(op: str, tensors: Sequence[WgpuTensor], dim: int) -> WgpuTensor:
    check_cat(op, tensors, dim)
    first = tensors[0]
    dim = dim % first.ndim
    total = sum(t.shape[dim] for t in tensors)
    shape = first.shape[:dim] + (total,) + first.shape[dim + 1:]
    out = new(shape, first.dtype, first.index, op)
    at = 0
    for t in tensors:
        if t.shape[:dim] + t.shape[dim + 1:] != first.shape[:dim] + first.shape[dim + 1:]:
            raise ValueError(f"{op}: shapes {[u.shape for u in tensors]} differ outside dim {dim}")
        region = [slice(None)] * len(shape)
        region[dim] = slice(at, at + t.shape[dim])
        target = _slice_view(out, region)
        run_map(op, "x0", [t], out.dtype, out=target, shape=target.shape)
        at += t.shape[dim]
    return out


# ----- reductions ----------------------------------------------------------------------------------


#: lavapipe (llvmpipe) ends a shader's loops once they have run 65535 iterations in all, in one
#: invocation (gallivm's ``LP_MAX_TGSI_LOOP_ITERATIONS``), and the shader goes on with what it
#: has: a longer fold silently drops the rest. Each loop counts its iterations and its exit
#: check, so a nest costs about (outer + 1) * (inner + 2). No kernel may loop more than this: an
#: op whose loops would (a long reduced dim, a long matmul K, a long scatter dim, a conv2d over
#: many channels, its weight gradient over a large batch) runs as several dispatches over parts,
#: whose results it combines.
LOOP_BUDGET = 60000
#: Elements one thread of a reduction folds at most; a longer dim is folded in chunks, then the
#: per-chunk partials are folded (which also keeps float32 sums closer to the exact ones).
REDUCE_CHUNK = 4096
#: The part of a matmul's K one dispatch runs (about 9 loop iterations per k, see LOOP_BUDGET).
MATMUL_K_CHUNK = 4096


def _along(t: WgpuTensor, dim: int, start: int, stop: int) -> WgpuTensor:
    """The view of ``t`` at ``start:stop`` along ``dim``."""
    return _slice_view(t, [slice(None)] * dim + [slice(start, stop)])


def _add_all(op: str, parts: Sequence[WgpuTensor]) -> WgpuTensor:
    """The element-wise sum of same-shaped float32 ``parts``."""
    acc = parts[0]
    for part in parts[1:]:
        acc = run_map(op, "x0 + x1", [acc, part], F32)
    return acc


def reduce_dim(op: str, kind: str, t: WgpuTensor, dim: int, out_dtype) -> WgpuTensor:
    dim = dim % t.ndim
    if kind in ("max", "min", "argmax", "argmin") and t.shape[dim] == 0:
        raise ValueError(f"{op}: cannot reduce an empty dim {dim} of shape {t.shape}: "
                         "expected a non-zero size, found 0")
    length = t.shape[dim]
    if length <= REDUCE_CHUNK:
        return _reduce_chunks(op, kind, t, dim, out_dtype, 1)
    chunks = -(-length // REDUCE_CHUNK)
    if kind in ("argmax", "argmin"):
        # the extreme of each chunk and its index in the whole dim; the first chunk holding the
        # extreme of those (ties and NaN: the first, as within a chunk) gives the index
        values = _reduce_chunks(op, kind[3:], t, dim, t.dtype, chunks)
        at = _reduce_chunks(op, kind, t, dim, I32, chunks)
        which = reduce_dim(op, kind, values, dim, I32)
        out = new(which.shape, I32, t.index, op)
        return _index_dispatch(op, shaders.gather_kernel(wtype(I32)), out, dim, [at, which])
    partial = _reduce_chunks(op, kind, t, dim, out_dtype, chunks)
    return reduce_dim(op, kind, partial, dim, out_dtype)


def _reduce_chunks(op: str, kind: str, t: WgpuTensor, dim: int, out_dtype, chunks: int) -> WgpuTensor:
    """``t`` folded along ``dim`` into ``chunks`` partials of ``REDUCE_CHUNK`` elements (the
    whole dim when ``chunks`` is 1)."""
    shape = t.shape[:dim] + (chunks,) + t.shape[dim + 1:]
    out = new(shape, out_dtype, t.index, op)
    n = out.size
    if n == 0:
        return out
    strides = list(t.strides)
    red_stride = strides[dim]
    strides[dim] = red_stride * REDUCE_CHUNK if chunks > 1 else 0
    chunk = REDUCE_CHUNK if chunks > 1 else max(t.shape[dim], 1)
    params = ([n, len(shape)] + list(shape) + [1] * (MAXD - len(shape))
              + [t.offset] + strides + [0] * (MAXD - len(strides))
              + [t.shape[dim], red_stride, dim, chunk])
    runtime(t.index).dispatch(shaders.reduce_kernel(wtype(t.dtype), wtype(np.dtype(out_dtype)), kind),
                              np.array(params, dtype=np.int32), [t.buffer, out.buffer], groups_1d(n))
    return out


def reduce_all(op: str, kind: str, t: WgpuTensor, out_dtype) -> WgpuTensor:
    if kind in ("max", "min") and t.size == 0:
        raise ValueError(f"{op}: cannot reduce an empty the tensor of shape {t.shape}: "
                         "expected a non-zero size, found 0")
    flat = _reshape(op, t, (t.size,))
    return reduce_dim(op, kind, flat, 0, out_dtype)


def _scalar(t: WgpuTensor) -> float:
    return read(t).reshape(-1)[0]


def _index_check(op: str, indices: WgpuTensor, size: int) -> None:
    """Refuse an index outside ``[0, size)`` (reads the two bounds back: a sync)."""
    if indices.size == 0:
        return
    both = _cat(op, [reduce_all(op, "min", indices, I32), reduce_all(op, "max", indices, I32)], 0)
    low, high = (int(v) for v in read(both, check=True))  # one read-back for both bounds
    if low < 0 or high >= size:
        raise IndexError(f"{op}: index out of range [0, {size}): found {low}..{high}")


def _nonzero(op: str, rhs: WgpuTensor) -> None:
    zero = run_map(op, "x0 == 0", [rhs], BOOL)
    if rhs.size and bool(_scalar(reduce_all(op, "any", zero, BOOL))):
        raise ZeroDivisionError(f"{op}: integer division by zero (found a 0 in the divisor)")


# ----- index ops -------------------------------------------------------------------------------------


def _operand(t: WgpuTensor) -> list[int]:
    pad = MAXD - t.ndim
    return [t.offset] + list(t.strides) + [0] * pad + list(t.shape) + [1] * pad


def _index_dispatch(op: str, source: str, out: WgpuTensor, dim: int, operands: list[WgpuTensor]) -> WgpuTensor:
    n = out.size
    if n == 0:
        return out
    params = [n, out.ndim, dim] + list(out.shape) + [1] * (MAXD - out.ndim)
    for t in operands:
        params += _operand(t)
    runtime(out.index).dispatch(source, np.array(params, dtype=np.int32),
                                [t.buffer for t in operands] + [out.buffer], groups_1d(n))
    return out


def _fits(op: str, dim: int, t: WgpuTensor, indices: WgpuTensor) -> None:
    """``indices`` of ``t``'s rank and no larger than it outside ``dim`` (torch's gather and
    scatter rule; a larger one would read past the tensor)."""
    if indices.ndim != t.ndim:
        raise ValueError(f"{op}: indices of rank {indices.ndim} for a tensor of rank {t.ndim}: expected the same rank")
    for d, (n, m) in enumerate(zip(indices.shape, t.shape, strict=True)):
        if d != dim and n > m:
            raise ValueError(f"{op}: indices of shape {indices.shape} exceed the tensor's shape {t.shape} in dim {d}")


def gather(op: str, dim: int, t: WgpuTensor, indices: WgpuTensor) -> WgpuTensor:
    dim = dim % t.ndim
    _fits(op, dim, t, indices)
    _index_check(op, indices, t.shape[dim])
    out = new(indices.shape, t.dtype, t.index, op)
    return _index_dispatch(op, shaders.gather_kernel(wtype(t.dtype)), out, dim, [t, indices])


def select(op: str, t: WgpuTensor, dim: int, indices: WgpuTensor) -> WgpuTensor:
    dim = dim % t.ndim
    if indices.ndim != 1:
        raise ValueError(f"{op}: expected 1-D indices, found shape {indices.shape}")
    _index_check(op, indices, t.shape[dim])
    shape = t.shape[:dim] + (indices.size,) + t.shape[dim + 1:]
    out = new(shape, t.dtype, t.index, op)
    return _index_dispatch(op, shaders.select_kernel(wtype(t.dtype)), out, dim, [t, indices])


def scatter(op: str, mode: str, dim: int, t: WgpuTensor, indices: WgpuTensor, value: WgpuTensor) -> WgpuTensor:
    dim = dim % t.ndim
    if mode == "scatter":
        _fits(op, dim, t, indices)
        _fits(op, dim, value, indices)
    else:
        want = t.shape[:dim] + (indices.size,) + t.shape[dim + 1:]
        if indices.ndim != 1 or value.shape != want:
            raise ValueError(f"{op}: expected 1-D indices and a value of shape {want}, "
                             f"found indices {indices.shape} and value {value.shape}")
    _index_check(op, indices, t.shape[dim])
    step = LOOP_BUDGET // (t.ndim + 2)  # each output element loops over value's dim, ndim + 1 a step
    if value.shape[dim] > step:
        for at in range(0, value.shape[dim], step):
            part = _along(indices, dim if mode == "scatter" else 0, at, at + step)
            t = scatter(op, mode, dim, t, part, _along(value, dim, at, at + step))
        return t
    if value.dtype != t.dtype:
        value = run_map(op, f"{wtype(t.dtype)}(x0)", [value], t.dtype)
    out = new(t.shape, t.dtype, t.index, op)
    return _index_dispatch(op, shaders.scatter_kernel(wtype(t.dtype), mode), out, dim, [t, indices, value])


# ----- matmul ----------------------------------------------------------------------------------------


def matmul(op: str, lhs: WgpuTensor, rhs: WgpuTensor) -> WgpuTensor:
    if lhs.ndim < 2 or rhs.ndim < 2 or lhs.shape[-1] != rhs.shape[-2]:
        raise ValueError(f"{op}: cannot multiply shapes {lhs.shape} and {rhs.shape}")
    m, k, n = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    try:
        batch = np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2])
    except ValueError:
        raise ValueError(f"{op}: batch dims of {lhs.shape} and {rhs.shape} do not broadcast") from None
    shape = tuple(batch) + (m, n)
    check_size(op, shape, F32)
    out = new(shape, F32, lhs.index, op)
    nb = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if out.size == 0:
        return out
    if k == 0:
        return run_map(op, "0.0", [], F32, out=out, shape=shape)
    if k > MATMUL_K_CHUNK:  # a thread loops about 9 times per k (LOOP_BUDGET): sum products of K's parts
        return _add_all(op, [matmul(op, _along(lhs, lhs.ndim - 1, at, at + MATMUL_K_CHUNK),
                                    _along(rhs, rhs.ndim - 2, at, at + MATMUL_K_CHUNK))
                             for at in range(0, k, MATMUL_K_CHUNK)])

    def block(t):
        b = _block(t.shape[:-2], t.strides[:-2], t.offset, tuple(batch)) if batch else [t.offset] + [0] * MAXD
        return b + [t.strides[-2], t.strides[-1]]

    params = [m, n, k, len(batch)] + list(batch) + [1] * (MAXD - len(batch)) + block(lhs) + block(rhs)
    tile = shaders.TILE
    if nb > 65535:
        raise ValueError(f"{op}: Device.wgpu() multiplies at most 65535 matrices at once, found {nb}")
    runtime(lhs.index).dispatch(shaders.matmul_kernel(), np.array(params, dtype=np.int32),
                                [lhs.buffer, rhs.buffer, out.buffer], (-(-n // tile), -(-m // tile), nb))
    return out


# ----- random ----------------------------------------------------------------------------------------

_STREAMS: dict[int, list[int]] = {}


def _stream(index: int) -> list[int]:
    """``[key0, key1, counter]`` of the device's counter-based stream (OS entropy until seeded)."""
    stream = _STREAMS.get(index)
    if stream is None:
        k = int.from_bytes(os.urandom(8), "little")
        stream = _STREAMS[index] = [k & 0xFFFFFFFF, k >> 32, 0]
    return stream


def seed(index: int, value: int) -> None:
    value = int(value) & 0xFFFFFFFFFFFFFFFF
    _STREAMS[index] = [value & 0xFFFFFFFF, value >> 32, 0]


def random(op: str, dist: str, shape, index: int, a=0.0, b=0.0) -> WgpuTensor:
    shape = tuple(int(s) for s in shape)
    out_dtype = I32 if dist == "int" else F32
    check_size(op, shape, out_dtype)
    out = new(shape, out_dtype, index, op)
    n = out.size
    stream = _stream(index)
    counter = stream[2]
    stream[2] = (counter + 1) & 0xFFFFFFFF  # each call its own counter: a new stream of draws
    if n == 0:
        return out
    if dist == "int":
        extra = [int(a), int(b)]
    else:
        extra = [float_bits(a), float_bits(b)]
    params = np.array([n, stream[0], stream[1], counter] + extra, dtype=np.int64).astype(np.uint32).view(np.int32)
    runtime(index).dispatch(shaders.random_kernel(dist), params, [out.buffer], groups_1d(n),
                            symbols={3: ("counter", index)})
    return out


def distribution(op: str, shape, distribution: Distribution, index: int) -> WgpuTensor:
    name = distribution.name
    if name == "uniform":
        return random(op, "uniform", shape, index, distribution.a, distribution.b)
    if name == "normal":
        return random(op, "normal", shape, index, distribution.a, distribution.b)
    if name == "bernoulli":
        return random(op, "bernoulli", shape, index, distribution.a)
    raise ValueError(f"{op}: unknown distribution {name!r}")


def into_data(t: WgpuTensor) -> TensorData:
    return TensorData(read(t))
