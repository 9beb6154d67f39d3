"""Autodiff's module ops: convolutions, pools, interpolate, embedding, linear (burn-autodiff
``ops/module.rs``).

Each override records one dedicated step, declared here beside it. All are compute-bound
(balanced checkpointing keeps their inputs); their backward uses the inner backend's
dedicated helpers (``conv2d_x_backward``, ``linear_weight_backward``, ...), which is why a
backend that fuses those helpers speeds up training. Deliberately NOT overridden, as in burn:
``layer_norm``, ``batch_norm``, ``batch_norm_train``, ``attention`` — they run the protocol
defaults with ``B = Autodiff[B]``, so each op they are made of is recorded as its own step.
"""

from __future__ import annotations

from minidl.autodiff.ops.base import AutodiffOpsBase, finish, lift, prim, record
from minidl.autodiff.step import Step
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backend.options import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateOptions,
    PoolOptions,
)


class Conv2dWithBias(Step):
    """conv2d with a bias. Keeps ``x`` and ``weight``; the bias gradient sums over N, H, W."""

    memory_bound = False
    saves = ("x", "weight")

    def __init__(self, options: ConvOptions):
        super().__init__()
        self.options = options

    def forward(self, B, x, weight, bias):
        return B.conv2d(x, weight, bias, self.options)

    def backward(self, B, grad, state):
        x, weight = state["x"], state["weight"]
        d_x = B.conv2d_x_backward(x, weight, grad, self.options) if self.tracked[0] else None
        d_w = B.conv2d_weight_backward(x, weight, grad, self.options) if self.tracked[1] else None
        if len(self.tracked) == 2:
            return d_x, d_w
        return d_x, d_w, B.conv2d_bias_backward(grad) if self.tracked[2] else None


class Conv2dNoBias(Conv2dWithBias):
    """conv2d without a bias. Keeps ``x`` and ``weight``."""

    def forward(self, B, x, weight):
        return B.conv2d(x, weight, None, self.options)


class Conv1dWithBias(Step):
    """conv1d with a bias (burn's ``Conv1DWithBias``); backward views it as a conv2d of height 1."""

    memory_bound = False
    saves = ("x", "weight")

    def __init__(self, stride: int, padding: int, dilation: int, groups: int, padding_end: int | None):
        super().__init__()
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.groups, self.padding_end = groups, padding_end

    def forward(self, B, x, weight, bias):
        return B.conv1d(x, weight, bias, self.stride, self.padding, self.dilation, self.groups, self.padding_end)

    def backward(self, B, grad, state):
        x, weight = state["x"], state["weight"]
        n, c, length = x.shape
        out_c, c_per_group, k = weight.shape
        x4 = B.float_reshape(x, (n, c, 1, length))
        w4 = B.float_reshape(weight, (out_c, c_per_group, 1, k))
        g4 = B.float_reshape(grad, (n, out_c, 1, grad.shape[-1]))
        end = self.padding if self.padding_end is None else self.padding_end
        options = ConvOptions(stride=(1, self.stride), padding=(0, self.padding), dilation=(1, self.dilation),
                              groups=self.groups, padding_end=(0, end))
        d_x = d_w = None
        if self.tracked[0]:
            d_x = B.float_reshape(B.conv2d_x_backward(x4, w4, g4, options), x.shape)
        if self.tracked[1]:
            d_w = B.float_reshape(B.conv2d_weight_backward(x4, w4, g4, options), weight.shape)
        if len(self.tracked) == 2:
            return d_x, d_w
        return d_x, d_w, B.conv2d_bias_backward(g4) if self.tracked[2] else None


class Conv1dNoBias(Conv1dWithBias):
    """conv1d without a bias."""

    def forward(self, B, x, weight):
        return B.conv1d(x, weight, None, self.stride, self.padding, self.dilation, self.groups, self.padding_end)


class ConvTranspose2dWithBias(Step):
    """Transposed conv2d with a bias. It is the adjoint of a conv2d with the same weight, so
    the input gradient is that conv2d of ``grad`` and the weight gradient is that conv2d's
    weight gradient with the roles of input and output swapped. Keeps ``x`` and ``weight``."""

    memory_bound = False
    saves = ("x", "weight")

    def __init__(self, options: ConvTransposeOptions):
        super().__init__()
        self.options = options

    def forward(self, B, x, weight, bias):
        return B.conv_transpose2d(x, weight, bias, self.options)

    def _conv(self) -> ConvOptions:
        o = self.options
        return ConvOptions(stride=o.stride, padding=o.padding, dilation=o.dilation, groups=o.groups)

    def backward(self, B, grad, state):
        x, weight = state["x"], state["weight"]
        conv = self._conv()
        d_x = B.conv2d(grad, weight, None, conv) if self.tracked[0] else None
        d_w = B.conv2d_weight_backward(grad, weight, x, conv) if self.tracked[1] else None
        if len(self.tracked) == 2:
            return d_x, d_w
        return d_x, d_w, B.conv2d_bias_backward(grad) if self.tracked[2] else None


class ConvTranspose2dNoBias(ConvTranspose2dWithBias):
    """Transposed conv2d without a bias."""

    def forward(self, B, x, weight):
        return B.conv_transpose2d(x, weight, None, self.options)


class MaxPool2d(Step):
    """Max pool: the gradient goes back to each window's arg-max. Keeps ``x`` and the indices."""

    memory_bound = False
    saves = ("x",)

    def __init__(self, options: PoolOptions, indices):
        super().__init__(indices=indices)
        self.options = options

    def forward(self, B, x):
        return B.max_pool2d(x, self.options)

    def backward(self, B, grad, state):
        return (B.max_pool2d_with_indices_backward(state["x"], self.options, grad, state["indices"]),)


class AvgPool2d(Step):
    """Average pool: each output gradient is spread over its window. Keeps ``x``."""

    memory_bound = False
    saves = ("x",)

    def __init__(self, options: PoolOptions):
        super().__init__()
        self.options = options

    def forward(self, B, x):
        return B.avg_pool2d(x, self.options)

    def backward(self, B, grad, state):
        return (B.avg_pool2d_backward(state["x"], self.options, grad),)


class AdaptiveAvgPool2d(Step):
    """Adaptive average pool to ``output_size``. Keeps ``x``."""

    memory_bound = False
    saves = ("x",)

    def __init__(self, output_size: tuple[int, int]):
        super().__init__()
        self.output_size = tuple(output_size)

    def forward(self, B, x):
        return B.adaptive_avg_pool2d(x, self.output_size)

    def backward(self, B, grad, state):
        return (B.adaptive_avg_pool2d_backward(state["x"], grad),)


class AdaptiveMaxPool2d(Step):
    """Adaptive max pool: the gradient goes back to each bin's arg-max. Keeps ``x`` and the
    indices (torch's ``adaptive_max_pool2d``; burn has none)."""

    memory_bound = False
    saves = ("x",)

    def __init__(self, output_size: tuple[int, int], indices):
        super().__init__(indices=indices)
        self.output_size = tuple(output_size)

    def forward(self, B, x):
        return B.adaptive_max_pool2d(x, self.output_size)

    def backward(self, B, grad, state):
        return (B.adaptive_max_pool2d_with_indices_backward(state["x"], grad, state["indices"]),)


class Interpolate(Step):
    """Resize to ``output_size`` (nearest or bilinear). Keeps ``x``."""

    memory_bound = False
    saves = ("x",)

    def __init__(self, output_size: tuple[int, int], options: InterpolateOptions):
        super().__init__()
        self.output_size = tuple(output_size)
        self.options = options

    def forward(self, B, x):
        return B.interpolate(x, self.output_size, self.options)

    def backward(self, B, grad, state):
        return (B.interpolate_backward(state["x"], grad, self.output_size, self.options),)


class Embedding(Step):
    """Rows of ``weights`` picked by ``indices``: the gradient is added into the picked rows.
    Keeps ``weights`` and the indices (burn's ``Embedding`` state)."""

    memory_bound = False
    saves = ("weights",)

    def __init__(self, indices):
        super().__init__(indices=indices)

    def forward(self, B, weights):
        return B.embedding(weights, self.saved["indices"])

    def backward(self, B, grad, state):
        return (B.embedding_backward(state["weights"], grad, state["indices"]),)


class LinearWithBias(Step):
    """``x @ weight + bias`` as ONE step (burn's ``LinearWithBias``). It keeps ``x`` only when
    the weight is tracked and the weight only when ``x`` is — a frozen layer keeps nothing of
    its input. Backward: the inner backend's ``linear_{x,weight,bias}_backward``."""

    memory_bound = False

    def forward(self, B, x, weight, bias):
        return B.linear(x, weight, bias)

    def keeps(self, tracked):
        return tuple(name for name, other in (("x", tracked[1]), ("weight", tracked[0])) if other)

    def backward(self, B, grad, state):
        d_x = B.linear_x_backward(state["weight"], grad) if self.tracked[0] else None
        d_w = B.linear_weight_backward(state["x"], grad) if self.tracked[1] else None
        if len(self.tracked) == 2:
            return d_x, d_w
        return d_x, d_w, B.linear_bias_backward(grad) if self.tracked[2] else None


class LinearNoBias(LinearWithBias):
    """``x @ weight`` as one step (burn's ``LinearNoBias``); keeps like ``LinearWithBias``."""

    def forward(self, B, x, weight):
        return B.linear(x, weight, None)


class AutodiffModuleOps(AutodiffOpsBase):
    """Module ops of ``Autodiff[B]``."""

    # ----- linear: one step (only reached when called on Autodiff[B] directly) ----------
    @classmethod
    def linear(cls, x, weight, bias=None):
        """One ``LinearWithBias``/``LinearNoBias`` step. Dispatch never calls this (it runs the
        ModuleOps default on itself), so on an autodiff device a Linear layer records separate
        matmul / reshape / add steps instead — the lesson of the nn-modules chapter."""
        if bias is None:
            return record(cls, LinearNoBias(), x, weight)
        return record(cls, LinearWithBias(), x, weight, bias)

    # ----- convolutions -----------------------------------------------------------------
    @classmethod
    def conv2d(cls, x, weight, bias, options):
        if bias is None:
            return record(cls, Conv2dNoBias(options), x, weight)
        return record(cls, Conv2dWithBias(options), x, weight, bias)

    @classmethod
    def conv1d(cls, x, weight, bias, stride=1, padding=0, dilation=1, groups=1, padding_end=None):
        if bias is None:
            return record(cls, Conv1dNoBias(stride, padding, dilation, groups, padding_end), x, weight)
        return record(cls, Conv1dWithBias(stride, padding, dilation, groups, padding_end), x, weight, bias)

    @classmethod
    def conv_transpose2d(cls, x, weight, bias, options):
        if bias is None:
            return record(cls, ConvTranspose2dNoBias(options), x, weight)
        return record(cls, ConvTranspose2dWithBias(options), x, weight, bias)

    # ----- pools and resizing -----------------------------------------------------------
    @classmethod
    def max_pool2d(cls, x, options):
        return cls.max_pool2d_with_indices(x, options)[0]

    @classmethod
    def max_pool2d_with_indices(cls, x, options):
        x = lift(x)
        out, indices = cls._inner.max_pool2d_with_indices(x.inner, options)
        return finish(cls, MaxPool2d(options, indices), [x], out), indices

    @classmethod
    def avg_pool2d(cls, x, options):
        return record(cls, AvgPool2d(options), x)

    @classmethod
    def adaptive_avg_pool2d(cls, x, output_size):
        return record(cls, AdaptiveAvgPool2d(output_size), x)

    @classmethod
    def adaptive_max_pool2d(cls, x, output_size):
        return cls.adaptive_max_pool2d_with_indices(x, output_size)[0]

    @classmethod
    def adaptive_max_pool2d_with_indices(cls, x, output_size):
        x = lift(x)
        out, indices = cls._inner.adaptive_max_pool2d_with_indices(x.inner, output_size)
        return finish(cls, AdaptiveMaxPool2d(output_size, indices), [x], out), indices

    @classmethod
    def interpolate(cls, x, output_size, options):
        return record(cls, Interpolate(output_size, options), x)

    @classmethod
    def embedding(cls, weights, indices):
        return record(cls, Embedding(prim(indices)), weights)

    # ----- backward helpers: only first order -------------------------------------------
    @classmethod
    def conv2d_x_backward(cls, x, weight, output_grad, options):
        return cls._first_order("conv2d_x_backward", x=x, weight=weight, output_grad=output_grad, options=options)

    @classmethod
    def conv2d_weight_backward(cls, x, weight, output_grad, options):
        return cls._first_order("conv2d_weight_backward", x=x, weight=weight, output_grad=output_grad,
                                options=options)

    @classmethod
    def max_pool2d_with_indices_backward(cls, x, options, output_grad, indices):
        return cls._first_order("max_pool2d_with_indices_backward", x=x, options=options,
                                output_grad=output_grad, indices=indices)

    @classmethod
    def avg_pool2d_backward(cls, x, options, output_grad):
        return cls._first_order("avg_pool2d_backward", x=x, options=options, output_grad=output_grad)

    @classmethod
    def adaptive_avg_pool2d_backward(cls, x, output_grad):
        return cls._first_order("adaptive_avg_pool2d_backward", x=x, output_grad=output_grad)

    @classmethod
    def adaptive_max_pool2d_with_indices_backward(cls, x, output_grad, indices):
        return cls._first_order("adaptive_max_pool2d_with_indices_backward", x=x,
                                output_grad=output_grad, indices=indices)

    @classmethod
    def interpolate_backward(cls, x, output_grad, output_size, options):
        return cls._first_order("interpolate_backward", x=x, output_grad=output_grad,
                                output_size=output_size, options=options)

    @classmethod
    def _first_order(cls, op: str, **args):
        """Run a backward helper on the inner backend for untracked inputs; refuse tracked ones
        (differentiating a backward would be second-order autodiff, which burn does not do)."""
        for name, value in args.items():
            if isinstance(value, AutodiffTensor) and value.node.tracked:
                raise RuntimeError(
                    f"Only first-order autodiff is supported: {cls.__name__}.{op} got a tracked "
                    f"tensor as {name!r}; detach() it first"
                )
        out = getattr(cls._inner, op)(**{k: prim(v) for k, v in args.items()})
        return AutodiffTensor.untracked(out)
