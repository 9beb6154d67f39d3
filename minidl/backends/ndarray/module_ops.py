"""NdArray's module ops: the ones burn-ndarray writes itself (burn-ndarray's ``ops/module.rs``).

What is *not* here matters as much as what is: ``linear`` (and its three backward helpers),
``layer_norm``, ``batch_norm``, ``batch_norm_train``, ``embedding``, ``conv1d`` and
``attention`` are left to the ``ModuleOps`` defaults, so on NdArray they run as separate
matmul / reshape / add / mean ... ops — the same split the book traces through Dispatch.
"""

from __future__ import annotations

from minidl.backends.ndarray.conv import NdArrayConvOps
from minidl.backends.ndarray.interpolate import NdArrayInterpolateOps
from minidl.backends.ndarray.pool import NdArrayPoolOps


class NdArrayModuleOps(NdArrayConvOps, NdArrayPoolOps, NdArrayInterpolateOps):
    """conv2d (+ backward), conv_transpose2d, the pools (+ backward) and interpolate (+ backward)."""
