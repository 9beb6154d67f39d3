"""``Module``: the base class of every layer and model (burn-core ``module/base.rs`` and the
``#[derive(Module)]`` macro).

burn derives a module's traversal from its struct fields. Here the fields are the instance
attributes, in the order ``__init__`` set them, whose values are module values — ``Param``,
``RunningState``, sub-``Module``, or lists/tuples/dicts of them (see
:mod:`minidl.module.visitor`); everything else (ints, configs, padding enums, ...) is a
constant, burn's ``#[module(skip)]``. Attributes whose name starts with ``_`` are private
and never walked.

Every operation that changes something returns a NEW module and leaves the original as it was
(burn's methods take ``self`` by value); only ``RunningState`` is shared between a module and
its clones, as burn shares it through an ``Arc``.
"""

from __future__ import annotations

from typing import Any

from minidl.dispatch import Device
from minidl.module import display, modes, record
from minidl.module.param import Param
from minidl.module.running import RunningState
from minidl.module.visitor import (
    FunctionVisitor,
    ModuleMapper,
    ModuleNode,
    ModuleVisitor,
    is_module_value,
    join,
    map_value,
    visit_value,
)


class _Collector(ModuleVisitor):
    """Collects leaves by dotted path, for parameters(), flags() and running_states(); defined
    once here, not as a class built on every call (an optimizer step asks for parameters)."""

    def __init__(self) -> None:
        self.found: dict[str, Any] = {}


class _ParamCollector(_Collector):
    def visit_param(self, path: str, param: Param) -> None:
        self.found[path] = param


class _FlagCollector(_Collector):
    def visit_flag(self, path: str, param: Param) -> None:
        self.found[path] = param


class _StateCollector(_Collector):
    def visit_running_state(self, path: str, state: RunningState) -> None:
        self.found[path] = state


class Module(ModuleNode):
    """Base class of layers and models. Subclasses set their fields in ``__init__`` (or get
    them from a config's ``init``) and define ``forward``; ``module(x)`` calls ``forward``."""

    # ----- what the derive macro generates --------------------------------------------------
    def named_fields(self) -> list[tuple[str, Any]]:
        """The module fields (name, value) in definition order; constants are left out."""
        return [(name, value) for name, value in vars(self).items()
                if not name.startswith("_") and is_module_value(value)]

    def _visit_fields(self, visitor: ModuleVisitor, prefix: str) -> None:
        for name, value in self.named_fields():
            visit_value(value, join(prefix, name), visitor)

    def _map_fields(self, mapper: ModuleMapper, prefix: str) -> Module:
        # copy.copy's protocol, spelled out (an optimizer step maps every module of the model)
        cls = type(self)
        new = cls.__new__(cls)
        new.__dict__.update(self.__dict__)
        for name, value in self.named_fields():
            new.__dict__[name] = map_value(value, join(prefix, name), mapper)
        return new

    def visit(self, visitor: ModuleVisitor | Any) -> None:
        """Walk every param, flag and running state (a :class:`ModuleVisitor`, or a function
        called as ``fn(path, leaf)``)."""
        if not isinstance(visitor, ModuleVisitor):
            visitor = FunctionVisitor(visitor)
        visitor.enter_module("", self)
        self._visit_fields(visitor, "")
        visitor.exit_module("", self)

    def map(self, mapper: ModuleMapper) -> Module:
        """A new module whose params/flags/states are what ``mapper`` returns for them."""
        return self._map_fields(mapper, "")

    # ----- queries --------------------------------------------------------------------------
    def parameters(self) -> dict[str, Param]:
        """Tensor params by dotted path (``{"fc.weight": Param, ...}``); flags excluded."""
        return self._collect(_ParamCollector())

    named_parameters = parameters

    def _collect(self, collector: _Collector) -> dict[str, Any]:
        self.visit(collector)
        return collector.found

    def flags(self) -> dict[str, Param]:
        """``Param[Flag]`` values by dotted path (``{"dropout.training": ...}``)."""
        return self._collect(_FlagCollector())

    def running_states(self) -> dict[str, RunningState]:
        """Running states by dotted path (``{"norm.running_mean": ...}``)."""
        return self._collect(_StateCollector())

    def num_params(self) -> int:
        """How many numbers the tensor params hold (no lazy param is initialized to count)."""
        total = 0
        for param in self.parameters().values():
            n = 1
            for s in param.lazy_shape():
                n *= s
            total += n
        return total

    def devices(self) -> list[Device]:
        """The distinct devices of params and running states (autodiff twins count apart)."""
        seen: dict[tuple, Device] = {}

        def add(device: Device) -> None:
            seen.setdefault((device.kind, device.index, device.is_autodiff()), device)

        for param in self.parameters().values():
            add(param.lazy_device())
        for state in self.running_states().values():
            add(state.value().device)
        return list(seen.values())

    # ----- copies and moves -----------------------------------------------------------------
    def clone(self) -> Module:
        """A new module object sharing every Param (values are immutable) and every
        RunningState (burn's ``Arc``: a forward on the clone updates the original's stats)."""
        return self.map(ModuleMapper())

    def to_device(self, device: Device) -> Module:
        """The module with params on ``device`` and running states on its inner device."""
        return self.map(modes.ToDeviceMapper(device))

    def fork(self, device: Device) -> Module:
        """Like :meth:`to_device`, but every param becomes a fresh leaf (no graph carried)."""
        return self.map(modes.ToDeviceMapper(device, fork=True))

    # ----- modes (burn 0.22) ----------------------------------------------------------------
    def valid(self) -> Module:
        """A validation copy: flags off, params on the inner (non-autodiff) device, running
        states rebuilt fresh from their synced values. The original is unchanged."""
        return self.map(modes.ValidMapper())

    def train(self) -> Module:
        """The module for training: flags restored unless frozen, params lifted to autodiff
        (with grad when wanted) — also for a module built on a plain device. Running states
        are rebuilt fresh (same id, synced value, no longer shared), as burn's ``train()`` is
        ``AutodiffModule::from_inner``."""
        return self.map(modes.TrainMapper())

    def freeze(self) -> Module:
        """Flags off with the frozen mark, and no gradients (``train()`` keeps it frozen)."""
        return self.map(modes.FreezeMapper(frozen=True))

    def unfreeze(self) -> Module:
        """Clears the frozen mark: flags on, gradients wanted again."""
        return self.map(modes.FreezeMapper(frozen=False))

    def no_grad(self) -> Module:
        """No gradients for any param; flags untouched (dropout still drops)."""
        return self.map(modes.RequireGradMapper(False))

    def set_require_grad(self, require_grad: bool) -> Module:
        """Every param wants gradients (or not); flags untouched."""
        return self.map(modes.RequireGradMapper(require_grad))

    # ----- records --------------------------------------------------------------------------
    def into_record(self) -> dict[str, Any]:
        """The state as a nested dict of tensors (see :mod:`minidl.module.record`)."""
        return record.into_record(self)

    def load_record(self, rec: dict[str, Any]) -> Module:
        """A new module holding ``rec``'s values; raises naming the first bad parameter and
        leaves this module unchanged."""
        return record.load_record(self, rec)

    # ----- forward and display --------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; every layer defines it."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def _display_attrs(self) -> dict[str, Any] | None:
        """One-line display content (burn's ``custom_content``); ``None`` prints the fields."""
        return None

    def __repr__(self) -> str:
        return display.render(self)

    def _repr_html_(self) -> str:
        return display.render_html(self)
