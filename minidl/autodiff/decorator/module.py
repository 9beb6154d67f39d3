"""Autodiff's module ops and activations (burn-autodiff ``ops/module.rs``, ``ops/activation.rs``).

Overridden with one dedicated step each: conv1d, conv2d, conv_transpose2d, the pools,
interpolate, embedding, linear; relu, gelu, sigmoid. Deliberately NOT overridden, as in burn:
``layer_norm``, ``batch_norm``, ``batch_norm_train``, ``attention``, ``softmax``,
``log_softmax``, ``leaky_relu`` — they run the protocol defaults with ``B = Autodiff[B]``,
so each op they are made of is recorded as its own step.
"""

from __future__ import annotations

from minidl.autodiff.decorator import prim
from minidl.autodiff.ops import activation as act
from minidl.autodiff.ops import module as mod
from minidl.autodiff.record import finish, lift, record
from minidl.autodiff.tensor import AutodiffTensor


class AutodiffModuleOps:
    """Module ops and activations of ``Autodiff[B]``."""

    # ----- activations with a dedicated backward ----------------------------------------------
    @classmethod
    def relu(cls, tensor):
        return record(cls, act.Relu(), tensor)

    @classmethod
    def gelu(cls, tensor):
        return record(cls, act.Gelu(), tensor)

    @classmethod
    def sigmoid(cls, tensor):
        return record(cls, act.Sigmoid(), tensor)

    # ----- linear: one step (only reached when called on Autodiff[B] directly) --------------
    @classmethod
    def linear(cls, x, weight, bias=None):
        """One ``LinearWithBias``/``LinearNoBias`` step. Dispatch never calls this (it runs the
        ModuleOps default on itself), so on an autodiff device a Linear layer records separate
        matmul / reshape / add steps instead — the lesson of seed 000."""
        if bias is None:
            return record(cls, mod.LinearNoBias(), x, weight)
        return record(cls, mod.LinearWithBias(), x, weight, bias)

    # ----- convolutions -----------------------------------------------------------------------
    @classmethod
    def conv2d(cls, x, weight, bias, options):
        if bias is None:
            return record(cls, mod.Conv2dNoBias(options), x, weight)
        return record(cls, mod.Conv2dWithBias(options), x, weight, bias)

    @classmethod
    def conv1d(cls, x, weight, bias, stride=1, padding=0, dilation=1, groups=1, padding_end=None):
        if bias is None:
            return record(cls, mod.Conv1dNoBias(stride, padding, dilation, groups, padding_end), x, weight)
        return record(cls, mod.Conv1dWithBias(stride, padding, dilation, groups, padding_end), x, weight, bias)

    @classmethod
    def conv_transpose2d(cls, x, weight, bias, options):
        if bias is None:
            return record(cls, mod.ConvTranspose2dNoBias(options), x, weight)
        return record(cls, mod.ConvTranspose2dWithBias(options), x, weight, bias)

    # ----- pools and resizing -----------------------------------------------------------------
    @classmethod
    def max_pool2d(cls, x, options):
        return cls.max_pool2d_with_indices(x, options)[0]

    @classmethod
    def max_pool2d_with_indices(cls, x, options):
        x = lift(x)
        out, indices = cls._inner.max_pool2d_with_indices(x.primitive, options)
        return finish(cls, mod.MaxPool2d(options, indices), [x], out), indices

    @classmethod
    def avg_pool2d(cls, x, options):
        return record(cls, mod.AvgPool2d(options), x)

    @classmethod
    def adaptive_avg_pool2d(cls, x, output_size):
        return record(cls, mod.AdaptiveAvgPool2d(output_size), x)

    @classmethod
    def adaptive_max_pool2d(cls, x, output_size):
        return cls.adaptive_max_pool2d_with_indices(x, output_size)[0]

    @classmethod
    def adaptive_max_pool2d_with_indices(cls, x, output_size):
        x = lift(x)
        out, indices = cls._inner.adaptive_max_pool2d_with_indices(x.primitive, output_size)
        return finish(cls, mod.AdaptiveMaxPool2d(output_size, indices), [x], out), indices

    @classmethod
    def interpolate(cls, x, output_size, options):
        return record(cls, mod.Interpolate(output_size, options), x)

    @classmethod
    def embedding(cls, weights, indices):
        return record(cls, mod.Embedding(prim(indices)), weights)

    # ----- backward helpers: only first order ---------------------------------------------------
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
