"""``Fusion[B]``: the lazy backend decorator (burn-fusion's ``Fusion<B>``).

``fusion_backend(Flex)`` builds, once, a class named ``Fusion[Flex]`` (it prints as
``fusion<flex>``) whose primitive is a :class:`FusionTensor`. It subclasses the protocol
``Backend``, not ``B``: an op it does not define runs the protocol's default with
``cls = Fusion[B]``, so ``linear`` and ``layer_norm`` (which burn's Fusion does not override)
split into primitive ops the fusers can see. Element-wise ops, reductions along a dim and
matmul are recorded (:mod:`.record`); every other required op runs eagerly on ``B``
(:mod:`.eager`), including ``conv2d``, which burn's Fusion overrides only to record it and
hand it to the inner backend.
"""

from __future__ import annotations

from typing import Any, ClassVar

from minidl.backend import Backend, ModuleOps, TensorData, is_required, op_names, protocol_of
from minidl.backend.device import Device
from minidl.backend.options import ConvOptions
from minidl.fusion.eager import (
    NOT_READY,
    eager_adam_step,
    eager_op,
    eager_or_default,
    inner_device,
    run_eager,
    run_ready,
)
from minidl.fusion.kernel import FusionRuntime
from minidl.fusion.record import FusionRecordedOps
from minidl.fusion.stream import Stream
from minidl.fusion.tensor import FusionTensor


class Fusion(FusionRecordedOps, Backend):
    """The fusion decorator; ``Fusion[Flex]`` is the concrete backend for an inner backend.

    Besides the protocol it has :meth:`sync` (drain the stream) and :attr:`stream` (the
    recorded ops, the plan store, the history of executions ``minidl.debug`` shows).
    """

    abstract = True
    name = "fusion"
    _inner: ClassVar[type]
    stream: ClassVar[Stream]

    def __class_getitem__(cls, item: Any) -> type:
        return fusion_backend(item)

    @classmethod
    def inner_backend(cls) -> type:
        """The decorated backend ``B``."""
        return cls._inner

    @classmethod
    def sync(cls) -> None:
        """Run everything recorded so far (burn's ``B::sync``)."""
        cls.stream.drain(reason="sync")

    # ----- host data and devices (sync points and plain moves) ---------------------------
    @classmethod
    def _ready(cls, value) -> FusionTensor:
        return cls.stream.ready(value)

    @classmethod
    def _check_device(cls, device, op: str) -> None:
        if getattr(device, "kind", None) != cls.stream.runtime.device_kind:
            raise ValueError(f"{op}: {cls.__name__} cannot place a tensor on {device!r}")

    @classmethod
    def float_from_data(cls, data, device):
        return cls._ready(cls._inner.float_from_data(data, inner_device(cls._inner, device)))

    @classmethod
    def int_from_data(cls, data, device):
        return cls._ready(cls._inner.int_from_data(data, inner_device(cls._inner, device)))

    @classmethod
    def bool_from_data(cls, data, device):
        return cls._ready(cls._inner.bool_from_data(data, inner_device(cls._inner, device)))

    @classmethod
    def float_into_data(cls, tensor) -> TensorData:
        """Read back: a sync point."""
        return cls._inner.float_into_data(cls.stream.as_handle(tensor).value)

    @classmethod
    def int_into_data(cls, tensor) -> TensorData:
        return cls._inner.int_into_data(cls.stream.as_handle(tensor).value)

    @classmethod
    def bool_into_data(cls, tensor) -> TensorData:
        return cls._inner.bool_into_data(cls.stream.as_handle(tensor).value)

    @classmethod
    def _device(cls) -> Device:
        return Device(cls.stream.runtime.device_kind)

    @classmethod
    def float_device(cls, tensor):
        return cls._device()

    @classmethod
    def int_device(cls, tensor):
        return cls._device()

    @classmethod
    def bool_device(cls, tensor):
        return cls._device()

    @classmethod
    def float_to_device(cls, tensor, device):
        cls._check_device(device, "float_to_device")
        return tensor

    @classmethod
    def int_to_device(cls, tensor, device):
        cls._check_device(device, "int_to_device")
        return tensor

    @classmethod
    def bool_to_device(cls, tensor, device):
        cls._check_device(device, "bool_to_device")
        return tensor

    @classmethod
    def seed(cls, device, seed: int) -> None:
        cls._inner.seed(inner_device(cls._inner, device), seed)

    # ----- module ops burn's Fusion overrides -------------------------------------------
    @classmethod
    def conv2d(cls, x, weight, bias, options: ConvOptions):
        """Recorded and run on ``B`` (burn-fusion's ``conv2d`` records a ``ModuleOperationIr``
        that no fuser takes, so its inner backend runs it): it closes the block before it."""
        result = run_ready(cls, "conv2d", (x, weight, bias, options))
        if result is not NOT_READY:
            return result
        return run_eager(cls, "conv2d", {"x": x, "weight": weight, "bias": bias, "options": options})


_CACHE: dict[type, type] = {}
#: each inner backend's FusionRuntime, registered by its fusion module
_RUNTIMES: dict[type, FusionRuntime] = {}


def register_runtime(inner: type, runtime: FusionRuntime) -> None:
    """Declare what ``inner`` supplies to ``Fusion[inner]`` (burn's ``impl FusionBackend for B``,
    written on the backend's side): its kernel generator, its primitive type, its device kind
    and its recording policy. Flex's is registered by ``minidl.backends.flex.fusion``, Wgpu's by
    ``minidl.backends.wgpu.fusion``."""
    _RUNTIMES[inner] = runtime


def fusion_backend(inner: type) -> type:
    """The ``Fusion[inner]`` class, made on first use and cached (one per inner backend), over
    the :class:`~.kernel.FusionRuntime` registered for ``inner`` (:func:`register_runtime`)."""
    if getattr(inner, "ad_enabled", lambda: False)():
        raise TypeError("Fusion[B] decorates a plain backend: put Autodiff outside, Autodiff[Fusion[B]]")
    cls = _CACHE.get(inner)
    if cls is None:
        runtime = _RUNTIMES.get(inner)
        if runtime is None:
            raise TypeError(f"Fusion[{inner.__name__}]: no fusion runtime (code generator) is registered for "
                            f"{inner.__name__}; its fusion module registers one (register_runtime)")
        inner_name = getattr(inner, "name", inner.__name__.lower())
        body: dict[str, Any] = {
            "__module__": __name__,
            "__doc__": f"Fusion decorating {inner.__name__}: ops are recorded and run as fused kernels.",
            "_inner": inner,
            "name": f"fusion<{inner_name}>",
        }
        for op in op_names(Backend):
            if any(op in k.__dict__ for k in Fusion.__mro__[:-1] if k not in _protocols()):
                continue  # recorded (record.py) or Fusion's own
            if is_required(Backend, op):
                body[op] = eager_op(op)
            elif _implements(inner, op) and protocol_of(op) is not ModuleOps:
                # module ops stay the protocol's defaults, as burn's Fusion leaves them: their
                # primitive ops take the small path one by one
                body[op] = eager_or_default(op)
        if callable(getattr(inner, "adam_step", None)):  # a speed trick outside the protocol (eager.py)
            body["adam_step"] = eager_adam_step(inner)
        cls = type(f"Fusion[{inner.__name__}]", (Fusion,), body)
        cls.__qualname__ = cls.__name__
        cls.stream = Stream(inner, runtime)
        _CACHE[inner] = cls
    return cls


def _implements(inner: type, op: str) -> bool:
    """Whether ``inner`` has its own ``op`` (not the protocol's default)."""
    protocols = _protocols()
    return any(op in k.__dict__ for k in inner.__mro__ if k not in protocols)


def _protocols() -> tuple[type, ...]:
    from minidl.backend import ops_protocols

    return (*ops_protocols(), Backend, object)
