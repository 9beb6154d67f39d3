"""``Param``: an identified, lazily initialized module value (burn-core ``module/param``).

A ``Param`` has an id (a unique string, burn's ``ParamId``) and a value: a float ``Tensor`` or
a :class:`Flag`. Built with :meth:`Param.uninitialized`, it holds only a recipe — an init
closure, the device, the shape, whether it wants gradients — and the FIRST :meth:`Param.val`
runs it; later calls hand out the same tensor. :meth:`lazy_shape` and :meth:`lazy_device`
answer without initializing.

Three mappers travel with a param (``LinearLayout.Col`` uses all three): ``init_mapper`` runs
once on the freshly initialized value, ``save_mapper`` on the value written to a record,
``load_mapper`` on a value read from one. The pitfall the nn-modules chapter teaches is kept on purpose:
``lazy_shape`` of an *uninitialized* param is the shape the init closure makes (before the
init_mapper), of an initialized one the shape of the value (after it).

``require_grad`` is what the param *wants* (burn's ``is_require_grad`` of the lazy state):
the tensor itself only tracks gradients on an autodiff device, and ``Module.train`` lifts a
param that wants them onto one.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from minidl.backend.dtype import DEFAULT_FLOAT, DType

if TYPE_CHECKING:
    from minidl.dispatch import Device
    from minidl.tensor import Tensor

T = TypeVar("T")


def new_param_id() -> str:
    """A fresh parameter id: 16 random hex digits (burn's ``ParamId::new()`` is a random u64)."""
    return os.urandom(8).hex()


@dataclasses.dataclass(frozen=True)
class Flag:
    """A boolean module value (burn 0.22's ``Flag``), held as ``Param[Flag]`` by Dropout and
    BatchNorm in their ``training`` field.

    ``enabled`` is what the layer reads now; ``trainable`` is what the caller asked for, which
    outlives a ``valid()`` round trip: ``valid()`` clears ``enabled`` only, ``freeze()`` clears
    both (the frozen mark), ``train()`` restores ``enabled`` from ``trainable``.
    """

    enabled: bool = True
    trainable: bool = True

    def is_enabled(self) -> bool:
        """Whether the flag is on."""
        return self.enabled

    def is_frozen(self) -> bool:
        """Whether ``freeze()`` marked it (``train()`` will not turn it back on)."""
        return not self.trainable

    def __str__(self) -> str:
        text = "enabled" if self.enabled else "disabled"
        return text + (" (frozen)" if not self.trainable else "")


class _Lazy:
    """The recipe of an uninitialized param, shared by params derived from it lazily (burn's
    ``Arc<LazyInitState>``): however many of them call ``val()``, the closure runs once."""

    __slots__ = ("init", "device", "shape", "dtype", "init_mappers", "value", "lock")

    def __init__(self, init: Callable, device: Device, shape: tuple[int, ...], dtype: DType):
        self.init = init
        self.device = device
        self.shape = shape
        self.dtype = dtype
        self.init_mappers: list[Callable] = []
        self.value: Any = None
        self.lock = threading.RLock()

    def base(self) -> Any:
        with self.lock:
            if self.value is None:
                value = self.init(self.device, False)
                for mapper in self.init_mappers:
                    value = mapper(value)
                self.value = value
                self.init = None  # the closure may hold large captures: drop it
            return self.value


class Param(Generic[T]):
    """A module parameter: an id plus a (possibly lazy) value. Mirrors burn's ``Param<T>``.

    Values are immutable: operations that change a value (``map``, the module modes, an
    optimizer step) return a new ``Param`` with the same id.
    """

    __slots__ = ("id", "require_grad", "_value", "_lazy", "_save", "_load")

    def __init__(self, id: str, value: T | None = None, *, require_grad: bool = False,
                 lazy: _Lazy | None = None, save: Callable | None = None, load: Callable | None = None):
        if not isinstance(id, (str, int)):  # Param(tensor), as nn.Parameter(tensor) reads
            raise TypeError(
                f"Param(id, value): the first argument is the param's id (a str), got a "
                f"{type(id).__name__}. To give an old param a new value and keep its id: "
                f"param.with_value(tensor); a new param with a fresh id: "
                f"Param.from_tensor(tensor)")
        self.id = str(id)
        self.require_grad = bool(require_grad)
        self._value = value
        self._lazy = lazy
        self._save = save
        self._load = load

    # ----- construction -------------------------------------------------------------------
    @staticmethod
    def uninitialized(id: str, init_fn: Callable[[Device, bool], Tensor], device: Device,
                      require_grad: bool, shape: tuple[int, ...] | list[int],
                      dtype: DType = DEFAULT_FLOAT) -> Param:
        """A lazy param: ``init_fn(device, require_grad)`` runs at the first :meth:`val`.

        Param calls ``init_fn`` with ``require_grad=False`` and applies the init mappers and
        then ``require_grad`` itself, so the value is a leaf even when a mapper transposes it.
        """
        lazy = _Lazy(init_fn, device, tuple(int(s) for s in shape), DType.of(dtype))
        return Param(id, None, require_grad=require_grad, lazy=lazy)

    @staticmethod
    def initialized(id: str, value: T, require_grad: bool | None = None) -> Param[T]:
        """A param holding ``value`` already. ``require_grad`` defaults to the tensor's state."""
        if require_grad is None:
            require_grad = _tensor_requires_grad(value)
        return Param(id, value, require_grad=require_grad)

    @staticmethod
    def from_tensor(tensor: Tensor) -> Param:
        """A fresh param (new id) wanting gradients, like burn's ``Param::from_tensor``."""
        if tensor.device.is_autodiff() and not tensor.is_require_grad():
            tensor = tensor.require_grad()
        return Param(new_param_id(), tensor, require_grad=True)

    @staticmethod
    def flag(enabled: bool = True) -> Param[Flag]:
        """A fresh ``Param[Flag]`` (burn's ``Param::<Flag>::from_bool``)."""
        return Param(new_param_id(), Flag(bool(enabled), bool(enabled)))

    # ----- the value ----------------------------------------------------------------------
    def val(self) -> T:
        """The value; the first call on a lazy param runs its initializer (once)."""
        if self._value is None:
            if self._lazy is None:
                raise RuntimeError(f"Param {self.id} has neither a value nor an initializer")
            with self._lazy.lock:  # two threads racing to the first val() get one tensor
                if self._value is None:
                    value = self._lazy.base()
                    if self.require_grad and self._lazy.device.is_autodiff() and not value.is_require_grad():
                        value = value.require_grad()
                    self._value = value
        return self._value

    def is_initialized(self) -> bool:
        """Whether the value exists (a lazy param turns initialized at its first ``val()``)."""
        return self._value is not None or (self._lazy is not None and self._lazy.value is not None)

    def is_lazy(self) -> bool:
        """Whether this param was built uninitialized (whatever happened since)."""
        return self._lazy is not None

    def is_flag(self) -> bool:
        """Whether the value is a :class:`Flag` (no tensor)."""
        return isinstance(self._value, Flag)

    def lazy_shape(self) -> tuple[int, ...]:
        """The shape without initializing: the recipe's shape while uninitialized (BEFORE any
        init_mapper — the ``LinearLayout.Col`` pitfall), the value's shape afterwards."""
        if self.is_initialized():
            return tuple(self.val().shape)
        return self._lazy.shape

    def lazy_device(self) -> Device:
        """The device the value is on, or will be initialized on, without initializing."""
        if self._value is not None:
            return self._value.device
        return self._lazy.device

    def lazy_dtype(self) -> DType:
        """The element type, without initializing."""
        if self.is_initialized():
            return self.val().dtype
        return self._lazy.dtype

    def is_require_grad(self) -> bool:
        """Whether the value tracks gradients (or will, on its lazy device)."""
        if self._value is not None:
            return _tensor_requires_grad(self._value)
        return self.require_grad and self._lazy.device.is_autodiff()

    @property
    def shape(self) -> tuple[int, ...]:
        """The value's shape (initializes, as burn's ``Deref`` to the tensor does)."""
        return tuple(self.val().shape)

    def dims(self) -> list[int]:
        """The value's shape as a list (initializes)."""
        return list(self.val().shape)

    def is_enabled(self) -> bool:
        """For a ``Param[Flag]``: whether the flag is on."""
        value = self.val()
        if not isinstance(value, Flag):
            raise TypeError(f"Param {self.id}: is_enabled() is for Param[Flag], this one holds a tensor")
        return value.is_enabled()

    # ----- mappers (builders: they set the mapper on this fresh param and return it) ------
    def init_mapper(self, fn: Callable[[T], T]) -> Param[T]:
        """Run ``fn`` on the value right after initialization (or now, if already initialized)."""
        if self._lazy is not None and self._lazy.value is None:
            self._lazy.init_mappers.append(fn)
            return self
        return self.map(fn)

    def save_mapper(self, fn: Callable[[T], T]) -> Param[T]:
        """Run ``fn`` on the value written to a record."""
        self._save = fn
        return self

    def load_mapper(self, fn: Callable[[T], T]) -> Param[T]:
        """Run ``fn`` on a value read from a record."""
        self._load = fn
        return self

    def transform_for_save(self) -> T:
        """The value as a record stores it (save_mapper applied)."""
        value = self.val()
        return self._save(value) if self._save is not None else value

    def apply_load_mapper(self, value: T) -> T:
        """``value`` with the load_mapper applied (what a record's tensor becomes)."""
        return self._load(value) if self._load is not None else value

    # ----- new params from this one -------------------------------------------------------
    def map(self, fn: Callable[[T], T]) -> Param[T]:
        """A new param with the same id, mappers and ``require_grad`` holding ``fn(val())``."""
        return self.with_value(fn(self.val()))

    def with_value(self, value: T, require_grad: bool | None = None) -> Param[T]:
        """A new initialized param with the same id and mappers holding ``value``."""
        wants = self.require_grad if require_grad is None else bool(require_grad)
        return Param(self.id, value, require_grad=wants, save=self._save, load=self._load)

    def with_require_grad(self, require_grad: bool) -> Param[T]:
        """A new param wanting (or not) gradients. Lazy stays lazy (sharing one recipe); an
        initialized float tensor gets ``set_require_grad``."""
        if self._value is None and self._lazy is not None:
            return Param(self.id, None, require_grad=require_grad, lazy=self._lazy,
                         save=self._save, load=self._load)
        value = self.val()
        if isinstance(value, Flag):
            return self
        if value.device.is_autodiff() and _tensor_requires_grad(value) != bool(require_grad):
            value = value.set_require_grad(bool(require_grad))
        return self.with_value(value, require_grad)

    def __repr__(self) -> str:
        if self._value is not None and isinstance(self._value, Flag):
            return f"Param[Flag]({self._value}, id={self.id})"
        state = "initialized" if self.is_initialized() else "lazy"
        return f"Param(id={self.id}, shape={list(self.lazy_shape())}, {state})"


def _tensor_requires_grad(value: Any) -> bool:
    if isinstance(value, Flag) or value is None:
        return False
    return bool(value.is_require_grad())
