"""Default ``layer_norm`` and ``batch_norm``: separate ops of ``B`` (burn's ModuleOps defaults).

On a plain Flex device ``layer_norm`` never comes here (Flex overrides it with one fused
kernel); on an autodiff device it does, and every op below becomes a recorded step.
"""

from __future__ import annotations


def _channel_shape(rank: int, channels: int, dim: int) -> tuple[int, ...]:
    shape = [1] * rank
    shape[dim] = channels
    return tuple(shape)


def layer_norm(B, x, gamma, beta, epsilon: float):
    """Normalize over the last dim: mean_dim, centre, biased var = mean(c*c), c/sqrt(var+eps),
    * gamma, + beta — each a separate op."""
    dim = len(x.shape) - 1
    mean = B.float_mean_dim(x, dim)
    centered = B.float_sub(x, mean)
    var = B.float_mean_dim(B.float_mul(centered, centered), dim)
    std = B.float_sqrt(B.float_add_scalar(var, epsilon))
    out = B.float_div(centered, std)
    d = x.shape[-1]
    if gamma is not None:
        out = B.float_mul(out, B.float_reshape(gamma, _channel_shape(len(x.shape), d, dim)))
    if beta is not None:
        out = B.float_add(out, B.float_reshape(beta, _channel_shape(len(x.shape), d, dim)))
    return out


def _mean_except_channels(B, x):
    """Mean over every dim but 1 (channels), kept as size-1 dims."""
    out = x
    for dim in range(len(x.shape) - 1, -1, -1):
        if dim != 1:
            out = B.float_mean_dim(out, dim)
    return out


def batch_norm(B, x, gamma, beta, mean, var, epsilon: float):
    """Normalize with given per-channel statistics (channels at dim 1): the inference path."""
    rank, channels = len(x.shape), x.shape[1]
    shape = _channel_shape(rank, channels, 1)
    out = B.float_div(
        B.float_sub(x, B.float_reshape(mean, shape)),
        B.float_sqrt(B.float_add_scalar(B.float_reshape(var, shape), epsilon)),
    )
    if gamma is not None:
        out = B.float_mul(out, B.float_reshape(gamma, shape))
    if beta is not None:
        out = B.float_add(out, B.float_reshape(beta, shape))
    return out


def batch_norm_train(B, x, gamma, beta, epsilon: float):
    """Normalize with the batch's own statistics; returns ``(output, mean, biased variance)`` —
    "what a training path feeds its running statistics" (burn 0.22's doc)."""
    rank, channels = len(x.shape), x.shape[1]
    mean = _mean_except_channels(B, x)
    centered = B.float_sub(x, mean)
    var = _mean_except_channels(B, B.float_mul(centered, centered))
    out = B.float_div(centered, B.float_sqrt(B.float_add_scalar(var, epsilon)))
    shape = _channel_shape(rank, channels, 1)
    if gamma is not None:
        out = B.float_mul(out, B.float_reshape(gamma, shape))
    if beta is not None:
        out = B.float_add(out, B.float_reshape(beta, shape))
    return out, B.float_reshape(mean, (channels,)), B.float_reshape(var, (channels,))
