"""``Device``: where a tensor lives, and whether it records a graph (burn-dispatch's ``DispatchDevice``).

It lives at the bottom layer because every backend hands devices out (``float_device``);
burn gives each backend its own device type and converts them in burn-dispatch, minidl has
one. ``minidl.dispatch`` re-exports it and installs the hook that ``seed`` calls.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from minidl.backend.dtype import DType

_KINDS = ("flex", "ndarray", "fusion", "wgpu", "fusion_wgpu")


@dataclass(frozen=True)
class DeviceSettings:
    """The dtypes a device gives a tensor created without one (burn-std's ``DeviceSettings``,
    which burn's ``DeviceOps::defaults`` returns per device), and the dtypes it can store at
    all (burn's ``Backend::supports_dtype``)."""

    float_dtype: DType
    int_dtype: DType
    supported: frozenset[DType]

    def supports(self, dtype: DType) -> bool:
        """Whether the device can hold a tensor of ``dtype``."""
        return dtype in self.supported

    def supported_names(self) -> str:
        """``"float32, int32 and bool"``: the supported dtypes for an error message."""
        names = [d.value for d in DType if d in self.supported]
        return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


_ALL = frozenset(DType)
#: Each device kind's defaults, as burn's backends declare them: NdArray ``I64``
#: (burn-ndarray's ``backend.rs``), the wgpu device ``I32`` (burn-backend's ``lib.rs``,
#: ``cube_wgpu``). minidl's wgpu holds 32-bit types only (its WGSL has no 64-bit types and never
#: asks for ``shader-f16``), where burn asks the adapter (burn-cubecl's ``supports_dtype``).
#: burn 0.22's Flex says ``I32``; minidl's Flex and Fusion[Flex] keep ``I64``, the int the
#: book's CPU chapters print.
_SETTINGS = {
    "flex": DeviceSettings(DType.F32, DType.I64, _ALL),
    "ndarray": DeviceSettings(DType.F32, DType.I64, _ALL),
    "fusion": DeviceSettings(DType.F32, DType.I64, _ALL),
    "wgpu": DeviceSettings(DType.F32, DType.I32, frozenset({DType.F32, DType.I32, DType.BOOL})),
}
_SETTINGS["fusion_wgpu"] = _SETTINGS["wgpu"]  # Fusion[Wgpu] holds what its inner device holds


class Device:
    """A device: a backend kind (``flex``, ``ndarray``, ``fusion``, ``wgpu`` or ``fusion_wgpu``), an index, and
    optionally autodiff.

    Build one with ``Device.flex()`` / ``Device.ndarray()`` / ``Device.fusion()`` and wrap it
    with ``.autodiff()``.
    Two devices compare equal when kind and index match, whatever their autodiff flag
    (burn compares the inner device) — use :meth:`is_autodiff` to tell them apart.
    """

    __slots__ = ("kind", "index", "_autodiff", "checkpointing")

    def __new__(cls, kind: str, index: int = 0, autodiff: bool = False, checkpointing: str | None = None):
        """The one ``Device`` of this identity: made on first request, handed out after.

        Every way of getting a device (``Device("flex")``, ``Device.flex()``, ``.autodiff()``,
        a backend's ``float_device``) returns the same object for the same (kind, index,
        autodiff, checkpointing), so Dispatch tells "same device" by identity, the cheapest
        test there is (a speed trick, ARCHITECTURE.md, "Where speed tricks may live")."""
        key = (kind, int(index), bool(autodiff), checkpointing)
        device = _INTERNED.get(key)
        if device is not None:
            return device
        if kind not in _KINDS:
            raise ValueError(f"Device: unknown kind {kind!r}, expected one of {_KINDS}")
        device = super().__new__(cls)
        device.kind, device.index, device._autodiff, device.checkpointing = key
        _INTERNED[key] = device
        return device

    def __reduce__(self):
        # copy, deepcopy and pickle come back to the interned object
        return (Device, (self.kind, self.index, self._autodiff, self.checkpointing))

    @staticmethod
    def flex(index: int = 0) -> Device:
        """The CPU device of the numba backend Flex (burn's ``Device::flex()``)."""
        return Device("flex", index)

    @staticmethod
    def ndarray(index: int = 0) -> Device:
        """The CPU device of the plain NumPy backend NdArray."""
        return Device("ndarray", index)

    @staticmethod
    def fusion(index: int = 0) -> Device:
        """The lazy fusion device: ``Fusion[Flex]``, ops recorded and run as fused numba kernels
        (burn's ``Fusion<CubeBackend>`` counterpart on a CPU). It shares Flex's random stream."""
        return Device("fusion", index)

    @staticmethod
    def wgpu(index: int = 0) -> Device:
        """The GPU device of the backend ``Wgpu``: WGSL compute kernels through wgpu (burn's
        ``Device::wgpu()``, CubeBackend on the wgpu runtime), on the adapter wgpu picks (a real
        GPU, or Mesa's software Vulkan driver lavapipe); ``index`` picks another adapter.
        Needs the optional ``wgpu`` package; supports float32, int32 and bool."""
        return Device("wgpu", index)

    @staticmethod
    def fusion_wgpu(index: int = 0) -> Device:
        """The lazy GPU device: ``Fusion[Wgpu]``, every op recorded and each element-wise block
        run as one generated WGSL kernel (burn's ``Fusion<CubeBackend<WgpuRuntime>>``, what
        ``Device::wgpu()`` is with burn's default ``fusion`` feature)."""
        return Device("fusion_wgpu", index)

    @staticmethod
    def default() -> Device:
        """``Device.flex()``."""
        return Device.flex()

    def settings(self) -> DeviceSettings:
        """The device's default dtypes and the dtypes it supports (burn's
        ``get_device_settings``): a tensor made from Python ints on ``Device.wgpu()`` is
        int32, on ``Device.ndarray()`` int64. The autodiff twin shares its device's."""
        return _SETTINGS[self.kind]

    def autodiff(self) -> Device:
        """The same device with autodiff: tensors on it record a graph for ``backward``."""
        if self._autodiff:
            raise RuntimeError("Only first-order autodiff is supported")
        return Device(self.kind, self.index, True)

    def gradient_checkpointing(self) -> Device:
        """An autodiff device with balanced checkpointing: memory-bound steps recompute their
        inputs during backward instead of keeping them."""
        if not self._autodiff:
            raise RuntimeError("gradient_checkpointing() needs an autodiff device: call .autodiff() first")
        return Device(self.kind, self.index, True, "balanced")

    def inner(self) -> Device:
        """The device without autodiff."""
        return Device(self.kind, self.index)

    def is_autodiff(self) -> bool:
        """Whether tensors created here record a graph."""
        return self._autodiff

    def seed(self, seed: int) -> None:
        """Restart this device's random stream (shared by the device and its autodiff twin)."""
        if _SEEDER is None:
            raise RuntimeError("Device.seed needs minidl.dispatch: import minidl first")
        _SEEDER(self, int(seed))

    @contextlib.contextmanager
    def memory_persistent_allocations(self) -> Iterator[Device]:
        """Mark allocations inside as long-lived (burn's allocator hint for parameters).

        The CPU backends have no pooled allocator, so this only records the mode, which
        :attr:`persistent_depth` exposes for the book's experiments.
        """
        _PERSISTENT[self.kind] = _PERSISTENT.get(self.kind, 0) + 1
        try:
            yield self
        finally:
            _PERSISTENT[self.kind] -= 1

    @property
    def persistent_depth(self) -> int:
        """How many ``memory_persistent_allocations`` blocks are open on this device kind."""
        return _PERSISTENT.get(self.kind, 0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (self.kind, self.index) == (other.kind, other.index)

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    def __repr__(self) -> str:
        if isinstance(getattr(Device, self.kind, None), staticmethod | type(Device.flex)):
            text = f"Device.{self.kind}({self.index or ''})"
        else:  # a kind registered at run time (minidl.dispatch.register) has no constructor
            text = f"Device({self.kind!r}{f', {self.index}' if self.index else ''})"
        if self._autodiff:
            text += ".autodiff()"
        if self.checkpointing:
            text += ".gradient_checkpointing()"
        return text


_PERSISTENT: dict[str, int] = {}
#: Every device made so far, by (kind, index, autodiff, checkpointing): see ``Device.__new__``.
_INTERNED: dict[tuple, Device] = {}

#: Set by ``minidl.dispatch`` at import: routes ``seed`` to the device's backend (an upward
#: call the bottom layer must not import).
_SEEDER: Callable[[Device, int], None] | None = None


def install_seeder(seeder) -> None:
    """Let ``Device.seed`` reach the backends (called once by ``minidl.dispatch``)."""
    global _SEEDER
    _SEEDER = seeder
