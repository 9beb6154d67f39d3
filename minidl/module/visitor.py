"""Walking a module tree: ``ModuleVisitor`` and ``ModuleMapper`` (burn-core's visitor/mapper traits).

burn's ``#[derive(Module)]`` generates ``visit`` and ``map`` that walk every field that is a
module value. Here the walk is written once, over the *field values* a module holds:

- a ``Param`` (tensor or ``Flag``), a ``RunningState``, or a sub-module;
- a list, tuple or dict whose items are (recursively) any of these — burn's ``Vec``, arrays,
  tuples and maps of modules; the path of an item is ``name.index`` / ``name.key``;
- ``None`` (an absent optional, burn's ``Option::None``): nothing to walk.

Anything else is a constant (burn's ``#[module(skip)]`` / non-module fields) and is skipped.
Visitors see dotted paths (``fc.weight``, ``layers.0.bias``).
"""

from __future__ import annotations

from typing import Any

from minidl.module.param import Param
from minidl.module.running import RunningState


class ModuleNode:
    """Marker base of :class:`~minidl.module.Module`, so the walkers can recognise sub-modules
    without importing the Module class (which imports them)."""

    __slots__ = ()

    def _map_fields(self, mapper: ModuleMapper, prefix: str) -> ModuleNode:  # pragma: no cover
        raise NotImplementedError

    def _visit_fields(self, visitor: ModuleVisitor, prefix: str) -> None:  # pragma: no cover
        raise NotImplementedError


class ModuleVisitor:
    """Read-only walk over a module tree. Override what you need; the defaults do nothing."""

    def enter_module(self, path: str, module: Any) -> None:
        """Called before a module's fields are visited (``path`` is ``""`` for the root)."""

    def exit_module(self, path: str, module: Any) -> None:
        """Called after a module's fields were visited."""

    def visit_param(self, path: str, param: Param) -> None:
        """A tensor parameter."""

    def visit_flag(self, path: str, param: Param) -> None:
        """A ``Param[Flag]``."""

    def visit_running_state(self, path: str, state: RunningState) -> None:
        """A running state (BatchNorm's statistics)."""


class ModuleMapper:
    """A walk that rebuilds the tree: each hook returns the new value (default: the same one).

    ``Module.map`` never mutates the module it is called on: the modules along the walk are
    shallow copies with their fields replaced by what the hooks return.
    """

    def map_param(self, path: str, param: Param) -> Param:
        """A tensor parameter → its replacement."""
        return param

    def map_flag(self, path: str, param: Param) -> Param:
        """A ``Param[Flag]`` → its replacement."""
        return param

    def map_running_state(self, path: str, state: RunningState) -> RunningState:
        """A running state → its replacement (the same object means: still shared)."""
        return state


class FunctionVisitor(ModuleVisitor):
    """Adapts a plain function ``fn(path, leaf)`` to a visitor: it is called for every param,
    flag and running state."""

    def __init__(self, fn):
        self.fn = fn

    def visit_param(self, path: str, param: Param) -> None:
        self.fn(path, param)

    def visit_flag(self, path: str, param: Param) -> None:
        self.fn(path, param)

    def visit_running_state(self, path: str, state: RunningState) -> None:
        self.fn(path, state)


def join(prefix: str, name: Any) -> str:
    """``prefix.name`` (or ``name`` at the root)."""
    return f"{prefix}.{name}" if prefix else str(name)


#: the types of constants a layer keeps (a Conv2d's stride (1, 1), BatchNorm's momentum):
#: answered first, since most fields a walk meets are these and every step walks the model
#: (``GradientsParams.from_grads``, the optimizer's ``map``)
_CONSTANTS = frozenset({int, float, bool, str, type(None)})


def is_module_value(value: Any) -> bool:
    """Whether a field value takes part in the walk (see the module docstring)."""
    if type(value) in _CONSTANTS:
        return False
    if isinstance(value, (Param, RunningState, ModuleNode)):
        return True
    if isinstance(value, (list, tuple)):
        for item in value:
            if type(item) not in _CONSTANTS and is_module_value(item):
                return True
        return False
    if isinstance(value, dict):
        return any(is_module_value(v) for v in value.values())
    return False


def is_param_flag(param: Param) -> bool:
    """Whether a param holds a ``Flag`` (flags are always initialized)."""
    return param.is_flag()


def visit_value(value: Any, path: str, visitor: ModuleVisitor) -> None:
    """Visit one field value (recursing into containers and sub-modules)."""
    if isinstance(value, Param):
        if is_param_flag(value):
            visitor.visit_flag(path, value)
        else:
            visitor.visit_param(path, value)
    elif isinstance(value, RunningState):
        visitor.visit_running_state(path, value)
    elif isinstance(value, ModuleNode):
        visitor.enter_module(path, value)
        value._visit_fields(visitor, path)
        visitor.exit_module(path, value)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            visit_value(item, join(path, i), visitor)
    elif isinstance(value, dict):
        for key, item in value.items():
            visit_value(item, join(path, key), visitor)


def map_value(value: Any, path: str, mapper: ModuleMapper) -> Any:
    """Map one field value; containers are rebuilt with the same type."""
    if isinstance(value, Param):
        if is_param_flag(value):
            return mapper.map_flag(path, value)
        return mapper.map_param(path, value)
    if isinstance(value, RunningState):
        return mapper.map_running_state(path, value)
    if isinstance(value, ModuleNode):
        return value._map_fields(mapper, path)
    if isinstance(value, list):
        return [map_value(item, join(path, i), mapper) for i, item in enumerate(value)]
    if isinstance(value, tuple):
        items = [map_value(item, join(path, i), mapper) for i, item in enumerate(value)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, dict):
        return type(value)((key, map_value(item, join(path, key), mapper)) for key, item in value.items())
    return value
