"""Functional layer ops on Tensors: burn-tensor's ``tensor/module.rs``.

Each function checks its inputs (ranks, channels, kinds; a failure names the op, the
argument, what was expected and what was found), unwraps the Tensors to their primitives and
calls one ``Dispatch`` op. Modules in ``minidl.nn`` hold parameters and call these; there is no
math here either — it happens in the backend ``Dispatch`` routes to.

``linear`` and ``layer_norm`` keep burn's two levels: a *generic shell* (``linear``) that deals
with the Tensor (rank handling, checks) and a *non-generic core* (``linear_impl``) that takes
the Tensors as they are and hands their primitives to ``Dispatch.linear``. The book's backtrace shows both frames.
"""

from __future__ import annotations

from typing import Any

from minidl.backend.options import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateOptions,
)
from minidl.dispatch import Dispatch
from minidl.tensor.base import FLOAT, INT
from minidl.tensor.check import TensorCheck, check_broadcast_to, fail, fmt_shape
from minidl.tensor.module_args import (
    conv_padding,
    float_arg,
    optional_float_arg,
    pair,
    pool_options,
    spatial_output,
)
from minidl.tensor.tensor import Tensor


def _prim(t: Tensor | None):
    return None if t is None else t.primitive


# ----- linear ---------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight + bias`` with ``weight`` shaped ``[d_input, d_output]`` (the transpose of
    torch's ``nn.Linear.weight``; burn's doc calls this out under "Compatibility").

    The generic shell: a 1-D ``input`` gets a batch dim for the matmul and loses it again
    (burn inserts and removes it the same way); the rest goes to :func:`linear_impl`.
    """
    float_arg("linear", input, "input")
    float_arg("linear", weight, "weight")
    optional_float_arg("linear", bias, "bias")
    if weight.rank != 2:
        fail("linear", "Argument weight must have 2 dims [d_input, d_output].",
             f"Found shape {fmt_shape(weight.shape)}.")
    d_input, d_output = weight.shape
    if input.rank == 0 or input.shape[-1] != d_input:
        fail("linear", "The last dim of input must equal weight.shape[0] (d_input).",
             f"Expected input shape [.., {d_input}], found {fmt_shape(input.shape)} "
             f"(weight {fmt_shape(weight.shape)} is [d_input, d_output], the transpose of torch's).")
    if bias is not None and bias.shape != (d_output,):
        fail("linear", "Argument bias must have shape [d_output].",
             f"Expected [{d_output}], found {fmt_shape(bias.shape)}.")
    if input.rank == 1:
        return linear_impl(input.unsqueeze_dim(0), weight, bias).squeeze_dim(0)
    return linear_impl(input, weight, bias)


def linear_impl(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """The non-generic core of :func:`linear`: Tensors of rank 2 or more in, their primitives
    handed to ``Dispatch.linear``, its result wrapped as a Tensor.

    Why burn splits it: ``module::linear::<D>`` is generic over the rank ``D``, and Rust
    compiles one copy of a generic function per ``D`` it is used with. Moving the body into a
    function over rank-erased tensors means it is compiled once, and only the thin shell is
    stamped out per rank — less code to compile and a smaller binary. Python compiles nothing
    per rank, so here the split costs one call and buys the same layering: the shell speaks
    ``Tensor`` to the caller, the core speaks primitives to the backend, and a backtrace shows both frames as in burn.
    ``Dispatch.linear`` is not forwarded (burn's ``// TODO: linear ops``), so it runs the
    ModuleOps default on Dispatch: matmul, reshape and add, each routed on its own.
    """
    return Tensor(Dispatch.linear(input.primitive, weight.primitive, _prim(bias)), FLOAT)


# ----- convolutions ---------------------------------------------------------------------------
def _check_bias(ops: str, bias: Tensor | None, channels: int) -> None:
    if bias is not None and bias.shape != (channels,):
        fail(ops, "Argument bias must have one value per output channel.",
             f"Expected shape [{channels}], found {fmt_shape(bias.shape)}.")


def conv1d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int = 1, padding: Any = 0,
           dilation: int = 1, groups: int = 1) -> Tensor:
    """1-D convolution of ``x`` ``[batch, c_in, length]`` with ``weight`` ``[c_out, c_in/groups, k]``;
    ``padding`` is an int or ``(left, right)``. The backend default runs it as a conv2d."""
    for name, t in (("x", x), ("weight", weight)):
        float_arg("conv1d", t, name)
    optional_float_arg("conv1d", bias, "bias")
    TensorCheck.conv("conv1d", x.shape, weight.shape, groups, spatial=1).check()
    _check_bias("conv1d", bias, weight.shape[0])
    left, right = pair("conv1d", padding, "padding")
    for name, v in (("stride", stride), ("dilation", dilation)):
        if not isinstance(v, int) or v < 1:
            fail("conv1d", f"Argument {name} must be an int >= 1.", f"Found {v!r}.")
    spatial_output("conv1d", (x.shape[2],), (weight.shape[2],), (stride,), (dilation,), (left + right,))
    return Tensor(Dispatch.conv1d(x.primitive, weight.primitive, _prim(bias), stride, left, dilation,
                                  groups, right), FLOAT)


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1, *, options: ConvOptions | None = None) -> Tensor:
    """2-D convolution (NCHW) with ``weight`` ``[c_out, c_in/groups, k1, k2]`` (torch's layout).

    ``padding``: an int, ``(h, w)``, ``(top, bottom, left, right)`` for asymmetric padding, or
    ``"valid"``/``"same"`` (stride 1). Or pass a ready ``ConvOptions`` as ``options``. Checks
    first (burn's ``TensorCheck::conv``: ranks, channels vs groups), then ``Dispatch.conv2d``.
    """
    for name, t in (("x", x), ("weight", weight)):
        float_arg("conv2d", t, name)
    optional_float_arg("conv2d", bias, "bias")
    if options is None:
        kernel = weight.shape[2:] if weight.rank == 4 else (1, 1)
        options = ConvOptions(stride=stride, dilation=dilation, groups=groups,
                              **conv_padding("conv2d", padding, kernel, dilation, stride))
    TensorCheck.conv("conv2d", x.shape, weight.shape, options.groups).check()
    _check_bias("conv2d", bias, weight.shape[0])
    top, bottom, left, right = options.pads
    spatial_output("conv2d", x.shape[2:], weight.shape[2:], options.stride, options.dilation,
                   (top + bottom, left + right))
    return Tensor(Dispatch.conv2d(x.primitive, weight.primitive, _prim(bias), options), FLOAT)


def conv_transpose2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, padding_out: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """Transposed 2-D convolution with ``weight`` ``[c_in, c_out/groups, k1, k2]`` (torch's layout)."""
    for name, t in (("x", x), ("weight", weight)):
        float_arg("conv_transpose2d", t, name)
    optional_float_arg("conv_transpose2d", bias, "bias")
    check = TensorCheck("conv_transpose2d")
    if x.rank != 4 or weight.rank != 4:
        check.register("Arguments x and weight must have 4 dims.",
                       f"Found x {fmt_shape(x.shape)}, weight {fmt_shape(weight.shape)}.")
    elif x.shape[1] != weight.shape[0]:
        check.register("The input channels must equal weight.shape[0] ([c_in, c_out / groups, k1, k2]).",
                       f"Expected x.shape[1] == {weight.shape[0]}, found {x.shape[1]}.")
    elif groups < 1 or weight.shape[0] % groups:
        check.register("The input channels must be divisible by groups.",
                       f"Found {weight.shape[0]} channels and groups={groups}.")
    check.check()
    options = ConvTransposeOptions(stride=stride, padding=padding, padding_out=padding_out,
                                   dilation=dilation, groups=groups)
    for po, s, d in zip(options.padding_out, options.stride, options.dilation):
        if not 0 <= po < max(s, d):
            fail("conv_transpose2d", "Argument padding_out must be smaller than stride or dilation.",
                 f"Found padding_out={options.padding_out}, stride={options.stride}, dilation={options.dilation}.")
    _check_bias("conv_transpose2d", bias, weight.shape[1] * groups)
    return Tensor(Dispatch.conv_transpose2d(x.primitive, weight.primitive, _prim(bias), options), FLOAT)


# ----- pools ----------------------------------------------------------------------------------
def max_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False) -> Tensor:
    """Max pool over NCHW (``stride`` defaults to ``kernel_size``; padding counts as -inf;
    ``ceil_mode`` rounds the output size up, torch's and burn's flag)."""
    options = pool_options("max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode)
    return Tensor(Dispatch.max_pool2d(x.primitive, options), FLOAT)


def max_pool2d_with_indices(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``(output, indices)``; indices (Int) are flat positions ``h * W + w`` in each input plane."""
    options = pool_options("max_pool2d_with_indices", x, kernel_size, stride, padding, dilation,
                           ceil_mode=ceil_mode)
    out, indices = Dispatch.max_pool2d_with_indices(x.primitive, options)
    return Tensor(out, FLOAT), Tensor(indices, INT)


def avg_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               count_include_pad: bool = True, ceil_mode: bool = False) -> Tensor:
    """Average pool over NCHW; ``count_include_pad`` counts padded zeros in the divisor (torch's default)."""
    options = pool_options("avg_pool2d", x, kernel_size, stride, padding, 1, count_include_pad, ceil_mode)
    return Tensor(Dispatch.avg_pool2d(x.primitive, options), FLOAT)


def _adaptive_size(ops: str, x: Tensor, output_size: Any, rank: int):
    float_arg(ops, x, "x")
    if x.rank != rank:
        dims = "[batch, channels, height, width]" if rank == 4 else "[batch, channels, length]"
        fail(ops, f"Argument x must have {rank} dims {dims}.", f"Found shape {fmt_shape(x.shape)}.")
    if rank == 3:
        if not isinstance(output_size, int) or isinstance(output_size, bool) or output_size < 1:
            fail(ops, "Argument output_size must be an int >= 1.", f"Found {output_size!r}.")
        return (1, output_size)
    size = pair(ops, output_size, "output_size")
    if min(size) < 1:
        fail(ops, "Argument output_size must be >= 1.", f"Found {size}.")
    if 0 in x.shape[2:]:
        fail(ops, "Argument x must have non-empty spatial dims.", f"Found shape {fmt_shape(x.shape)}.")
    return size


def adaptive_avg_pool2d(x: Tensor, output_size: Any) -> Tensor:
    """Average pool to ``output_size`` (an int or ``(h, w)``), torch's bins."""
    size = _adaptive_size("adaptive_avg_pool2d", x, output_size, 4)
    return Tensor(Dispatch.adaptive_avg_pool2d(x.primitive, size), FLOAT)


def adaptive_max_pool2d_with_indices(x: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """``(output, indices)`` of a max pool to ``output_size`` with torch's bins (torch's
    ``adaptive_max_pool2d(return_indices=True)``; burn 0.22 has no adaptive max pool)."""
    size = _adaptive_size("adaptive_max_pool2d", x, output_size, 4)
    out, indices = Dispatch.adaptive_max_pool2d_with_indices(x.primitive, size)
    return Tensor(out, FLOAT), Tensor(indices, INT)


def adaptive_max_pool2d(x: Tensor, output_size: Any) -> Tensor:
    """Max pool to ``output_size`` (an int or ``(h, w)``), torch's bins."""
    return adaptive_max_pool2d_with_indices(x, output_size)[0]


def _as_2d(x: Tensor) -> Tensor:
    n, c, length = x.shape
    return x.reshape((n, c, 1, length))


def _as_1d(y: Tensor) -> Tensor:
    n, c, _, length = y.shape
    return y.reshape((n, c, length))


def _pool1d_x(ops: str, x: Any) -> None:
    float_arg(ops, x, "x")
    if x.rank != 3:
        fail(ops, "Argument x must have 3 dims [batch, channels, length].", f"Found shape {fmt_shape(x.shape)}.")


def _int1(ops: str, value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        fail(ops, f"Argument {name} must be an int.", f"Found {value!r}.", kind=True)
    return value


def max_pool1d(x: Tensor, kernel_size: int, stride: int | None = None, padding: int = 0,
               dilation: int = 1, ceil_mode: bool = False) -> Tensor:
    """Max pool over ``[batch, channels, length]``: the 2-D pool on a height of 1 (burn's
    ``max_pool1d`` default does the same)."""
    return max_pool1d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool1d_with_indices(x: Tensor, kernel_size: int, stride: int | None = None, padding: int = 0,
                            dilation: int = 1, ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``(output, indices)``; an index is the position along ``length``."""
    _pool1d_x("max_pool1d", x)
    k = _int1("max_pool1d", kernel_size, "kernel_size")
    s = k if stride is None else _int1("max_pool1d", stride, "stride")
    out, indices = max_pool2d_with_indices(_as_2d(x), (1, k), (1, s), (0, _int1("max_pool1d", padding, "padding")),
                                           (1, _int1("max_pool1d", dilation, "dilation")), ceil_mode)
    return _as_1d(out), _as_1d(indices)


def avg_pool1d(x: Tensor, kernel_size: int, stride: int | None = None, padding: int = 0,
               count_include_pad: bool = True, ceil_mode: bool = False) -> Tensor:
    """Average pool over ``[batch, channels, length]`` (the 2-D pool on a height of 1)."""
    _pool1d_x("avg_pool1d", x)
    k = _int1("avg_pool1d", kernel_size, "kernel_size")
    s = k if stride is None else _int1("avg_pool1d", stride, "stride")
    return _as_1d(avg_pool2d(_as_2d(x), (1, k), (1, s), (0, _int1("avg_pool1d", padding, "padding")),
                             count_include_pad, ceil_mode))


def adaptive_avg_pool1d(x: Tensor, output_size: int) -> Tensor:
    """Average pool ``[batch, channels, length]`` to ``output_size`` positions (torch's bins)."""
    size = _adaptive_size("adaptive_avg_pool1d", x, output_size, 3)
    return _as_1d(adaptive_avg_pool2d(_as_2d(x), size))


def adaptive_max_pool1d(x: Tensor, output_size: int) -> Tensor:
    """Max pool ``[batch, channels, length]`` to ``output_size`` positions (torch's bins)."""
    size = _adaptive_size("adaptive_max_pool1d", x, output_size, 3)
    return _as_1d(adaptive_max_pool2d(_as_2d(x), size))


def interpolate(x: Tensor, output_size: Any, mode: str | InterpolateOptions = "nearest",
                align_corners: bool = False) -> Tensor:
    """Resize NCHW to ``output_size`` by ``"nearest"`` or ``"bilinear"``; ``align_corners``
    (bilinear only, torch's flag) maps the corner pixels onto each other."""
    float_arg("interpolate", x, "x")
    if x.rank != 4:
        fail("interpolate", "Argument x must have 4 dims [batch, channels, height, width].",
             f"Found shape {fmt_shape(x.shape)}.")
    size = pair("interpolate", output_size, "output_size")
    if min(size) < 1:
        fail("interpolate", "Argument output_size must be >= 1.", f"Found {size}.")
    if not isinstance(align_corners, bool):
        fail("interpolate", "Argument align_corners must be a bool.", f"Found {align_corners!r}.", kind=True)
    options = mode if isinstance(mode, InterpolateOptions) else None
    if options is None:
        if mode not in ("nearest", "bilinear"):
            fail("interpolate", "Argument mode must be 'nearest' or 'bilinear'.", f"Found {mode!r}.")
        if align_corners and mode != "bilinear":
            fail("interpolate", "Argument align_corners=True only applies to mode 'bilinear'.", f"Found mode {mode!r}.")
        options = InterpolateOptions(mode, align_corners)
    return Tensor(Dispatch.interpolate(x.primitive, size, options), FLOAT)


# ----- lookups, norms, attention --------------------------------------------------------------
def embedding(weights: Tensor, indices: Tensor) -> Tensor:
    """Rows of ``weights`` ``[n, d]`` picked by Int ``indices`` of any shape → ``indices.shape + [d]``."""
    float_arg("embedding", weights, "weights")
    if weights.rank != 2:
        fail("embedding", "Argument weights must have 2 dims [n_embedding, d_model].",
             f"Found shape {fmt_shape(weights.shape)}.")
    if not isinstance(indices, Tensor) or indices.kind is not INT:
        found = indices._describe() if isinstance(indices, Tensor) else type(indices).__name__
        fail("embedding", "Argument indices must be an Int tensor.", f"Found {found}.", kind=True)
    n = weights.shape[0]
    if indices.numel() and (indices.lower_elem(0).any().into_scalar() or indices.greater_equal_elem(n).any().into_scalar()):
        fail("embedding", "Every index must name a row of weights, in [0, n_embedding) (torch refuses too).",
             f"Expected 0 <= indices < {n}, found min {indices.min().into_scalar()}, max {indices.max().into_scalar()}.")
    return Tensor(Dispatch.embedding(weights.primitive, indices.primitive), FLOAT)


def layer_norm(x: Tensor, gamma: Tensor | None, beta: Tensor | None = None, epsilon: float = 1e-5) -> Tensor:
    """Normalize over the last dim, then ``* gamma + beta`` (each ``[d]``). The generic shell:
    checks, then :func:`layer_norm_impl`."""
    float_arg("layer_norm", x, "x")
    optional_float_arg("layer_norm", gamma, "gamma")
    optional_float_arg("layer_norm", beta, "beta")
    if x.rank == 0:
        fail("layer_norm", "Argument x needs at least 1 dim.", "Found shape [].")
    d = x.shape[-1]
    for name, p in (("gamma", gamma), ("beta", beta)):
        if p is not None and p.shape != (d,):
            fail("layer_norm", f"Argument {name} must have shape [d_model] = [x.shape[-1]].",
                 f"Expected [{d}], found {fmt_shape(p.shape)}.")
    return layer_norm_impl(x, gamma, beta, float(epsilon))


def layer_norm_impl(x: Tensor, gamma: Tensor | None, beta: Tensor | None, epsilon: float) -> Tensor:
    """The non-generic core of :func:`layer_norm` (see :func:`linear_impl` for why burn splits):
    primitives to ``Dispatch.layer_norm`` — Flex's fused kernel on a plain device, the ModuleOps
    default (mean_dim, sub, mul, sqrt, div, ...) under autodiff."""
    return Tensor(Dispatch.layer_norm(x.primitive, _prim(gamma), _prim(beta), epsilon), FLOAT)


def _check_channels(ops: str, x: Tensor, **params: Tensor | None) -> None:
    if x.rank < 2:
        fail(ops, "Argument x must have at least 2 dims [batch, channels, ...].", f"Found shape {fmt_shape(x.shape)}.")
    channels = x.shape[1]
    for name, p in params.items():
        optional_float_arg(ops, p, name)
        if p is not None and p.shape != (channels,):
            fail(ops, f"Argument {name} must have one value per channel (x.shape[1]).",
                 f"Expected shape [{channels}], found {fmt_shape(p.shape)}.")


def batch_norm(x: Tensor, gamma: Tensor | None, beta: Tensor | None, mean: Tensor, var: Tensor,
               epsilon: float = 1e-5) -> Tensor:
    """Normalize with the given per-channel ``mean`` and ``var`` (channels at dim 1): the
    inference path of BatchNorm."""
    float_arg("batch_norm", x, "x")
    float_arg("batch_norm", mean, "mean")
    float_arg("batch_norm", var, "var")
    _check_channels("batch_norm", x, gamma=gamma, beta=beta, mean=mean, var=var)
    return Tensor(Dispatch.batch_norm(x.primitive, _prim(gamma), _prim(beta), mean.primitive, var.primitive,
                                      float(epsilon)), FLOAT)


def batch_norm_train(x: Tensor, gamma: Tensor | None, beta: Tensor | None,
                     epsilon: float = 1e-5) -> tuple[Tensor, Tensor, Tensor]:
    """Normalize with the batch's own statistics; returns ``(output, mean, biased variance)``,
    what burn's training path mixes into its running statistics."""
    float_arg("batch_norm_train", x, "x")
    _check_channels("batch_norm_train", x, gamma=gamma, beta=beta)
    out, mean, var = Dispatch.batch_norm_train(x.primitive, _prim(gamma), _prim(beta), float(epsilon))
    return Tensor(out, FLOAT), Tensor(mean, FLOAT), Tensor(var, FLOAT)


def attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
    """``softmax(q kᵀ / sqrt(d) + mask) v`` over ``[..., seq, d]`` tensors. ``mask`` is Bool and
    true marks the scores to *drop* (burn's convention; torch's boolean ``attn_mask`` is the
    opposite); it broadcasts to ``[..., seq_q, seq_k]``."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        float_arg("attention", t, name)
    check = TensorCheck("attention")
    if min(query.rank, key.rank, value.rank) < 2 or not query.rank == key.rank == value.rank:
        check.register("Arguments query, key and value must have the same rank, at least 2.",
                       f"Found {fmt_shape(query.shape)}, {fmt_shape(key.shape)}, {fmt_shape(value.shape)}.")
    else:
        if query.shape[-1] != key.shape[-1]:
            check.register("The last dim of query and key must match.",
                           f"Expected key [.., {query.shape[-1]}], found {fmt_shape(key.shape)}.")
        if key.shape[-2] != value.shape[-2]:
            check.register("Key and value must have the same sequence length (dim -2).",
                           f"Found key {fmt_shape(key.shape)}, value {fmt_shape(value.shape)}.")
        if not query.shape[:-2] == key.shape[:-2] == value.shape[:-2]:
            check.register("Query, key and value must have the same batch dims.",
                           f"Found {fmt_shape(query.shape)}, {fmt_shape(key.shape)}, {fmt_shape(value.shape)}.")
    check.check()
    if mask is not None:
        query._mask("attention", mask)
        scores = query.shape[:-1] + (key.shape[-2],)
        check_broadcast_to("attention", mask.shape, scores, "mask")
    return Tensor(Dispatch.attention(query.primitive, key.primitive, value.primitive, _prim(mask)), FLOAT)
