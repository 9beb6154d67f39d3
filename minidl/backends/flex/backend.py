"""``Flex``: the CPU backend whose every compute op is a numba kernel (burn's ``burn-flex``).

Flex is assembled the way burn-flex splits its ``impl ...Ops for Flex`` blocks, each class one
file a reader can open (``cpu_*`` files are in ``minidl/backends/``):

=====================  ==========================================  =============================
class                  file: what                                  burn-flex
=====================  ==========================================  =============================
``Flex``               ``flex/backend.py``: seed, random streams,  ``backend.rs`` (``seed``),
                       ``float_random``                            ``ops/float.rs``
``FlexFloatOps``       ``flex/float_ops.py``: float ops            ``ops/float.rs``
``FlexActivationOps``  ``flex/activation_ops.py``                  ``ops/activation.rs``
``FlexModuleOps``      ``flex/module_ops.py``                      ``ops/module.rs``
``CpuHostOps``         ``cpu_common.py``: data, devices            ``backend.rs``, ``tensor.rs``
``CpuViewOps``         ``cpu_views.py``: views of every kind       ``layout.rs``
``CpuIntOps``          ``cpu_common.py``                           ``ops/int.rs``
``CpuBoolOps``         ``cpu_common.py``                           ``ops/bool.rs``
=====================  ==========================================  =============================

The ``Cpu*`` classes are shared with NdArray (int and bool tensors are indices and masks, not
what the book teaches). Flex's own classes come first, so where both have an op Flex's wins:
``float_reshape`` (Flex copies with its numba kernel when a view cannot be reshaped) and
``float_expand`` (the same view, its strides written out instead of ``np.broadcast_to``).
"""

from __future__ import annotations

import math
import secrets
import threading
from typing import ClassVar

import numpy as np

from minidl.backend import Backend, Distribution, DType
from minidl.backend.limits import check_size
from minidl.backends.cpu_common import CpuBoolOps, CpuHostOps, CpuIntOps
from minidl.backends.cpu_views import CpuViewOps
from minidl.backends.flex.activation_ops import FlexActivationOps
from minidl.backends.flex.float_ops import FlexFloatOps
from minidl.backends.flex.kernels.broadcast import binary
from minidl.backends.flex.kernels.rng import RngState
from minidl.backends.flex.module_ops import FlexModuleOps

Shape = tuple[int, ...]
_STREAMS_LOCK = threading.Lock()


class Flex(FlexFloatOps, FlexActivationOps, FlexModuleOps, CpuHostOps, CpuViewOps, CpuIntOps,
           CpuBoolOps, Backend):
    """Every required op of the protocol on numba kernels (``@njit(cache=True)``, compiled on
    first call, never at import), plus the defaults worth fusing (``layer_norm``, ``softmax``,
    scalar forms, ``_elem`` comparisons).

    Primitives are ``np.ndarray`` (float16 is stored as float16 and computed in float32); the
    device is ``Device.flex()``. The random streams are Flex's own counter-based generator
    (``int_random`` is the shared NumPy one of ``CpuHostOps``). No op calls BLAS: two thread
    pools on two cores fight (ARCHITECTURE.md, "Performance facts").
    """

    name = "flex"
    _streams: ClassVar[dict[tuple[str, int], RngState]] = {}

    @classmethod
    def seed(cls, device, seed: int) -> None:
        """Restart both random streams of ``device``: Flex's counter-based one (``float_random``)
        and the NumPy one ``int_random`` draws from (``CpuHostOps.seed``)."""
        with _STREAMS_LOCK:
            Flex._streams[(cls.name, getattr(device, "index", 0))] = RngState(int(seed))
        super().seed(device, seed)

    @classmethod
    def rng_state(cls, device) -> RngState:
        """The counter-based stream of ``device``, from OS entropy until ``seed`` restarts it.

        The value at position ``i`` is a hash of ``(key, i)``: a kernel can fill any slice of
        the output on any thread and the numbers do not depend on how the work was split. The
        autodiff twin of a device shares its stream (the key ignores autodiff).
        """
        key = (cls.name, getattr(device, "index", 0))
        stream = Flex._streams.get(key)
        if stream is None:
            with _STREAMS_LOCK:  # two threads' first draws must not make two streams
                stream = Flex._streams.setdefault(key, RngState(secrets.randbits(63)))
        return stream

    @classmethod
    def float_random(cls, shape: Shape, distribution: Distribution, dtype: DType, device):
        """Samples from the device's counter-based stream (kernels: :mod:`.kernels.rng`)."""
        check_size("float_random", shape, dtype.numpy)
        rng, shape, dt = cls.rng_state(device), tuple(shape), dtype.numpy
        if distribution.name == "uniform":
            low, high = distribution.a, distribution.b
            sample = rng.uniform(shape, low, high, dt)
            # rounding to a narrower dtype can land on `high`: keep the interval half-open
            below = float(np.nextafter(dt.type(high), dt.type(low)))
            return binary("minimum", sample, below) if math.isfinite(below) else sample
        if distribution.name == "normal":
            return rng.normal(shape, distribution.a, distribution.b, dt)
        if distribution.name == "bernoulli":
            return rng.bernoulli(shape, distribution.a, dt)
        raise ValueError(f"float_random: unknown distribution {distribution.name!r}")
