"""JSON values for configs and config enums: encoding, decoding by annotation, field types.

Shared by :mod:`minidl.module.config` (``@config``) and :mod:`minidl.module.config_enum`
(``ConfigEnum``), which import this module; it imports neither and recognizes them by the
methods they have (``to_dict``/``from_dict`` on a config, ``to_json_value``/``from_json_value``
on an enum), so there is no cycle. Decoding is driven by the field annotations, so ``load``
gives back the same types: tuples stay tuples, enums stay enums, nested configs are built.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

#: The marker ``@config`` sets on a config class.
IS_CONFIG = "__minidl_config__"
#: Where ``@config`` keeps the namespace of the function it was applied in (a config defined
#: inside a function may name other local classes in its annotations).
NAMESPACE = "__minidl_config_namespace__"
_FIELD_TYPES = "__minidl_field_types__"


def is_config(obj: Any) -> bool:
    """Whether ``obj`` is a class made by ``@config`` or an instance of one."""
    return getattr(obj, IS_CONFIG, False) is True


def field_types(cls: type) -> dict[str, Any]:
    """The resolved annotation of every field of a config or variant class (cached per class).

    Names are looked up in the class's module, then in the namespace of the function that
    defined the class (saved by ``@config``). An annotation that names nothing visible is an
    error here, naming the class, rather than a field decoded without its type.
    """
    cached = cls.__dict__.get(_FIELD_TYPES)
    if cached is not None:
        return cached
    try:
        hints = typing.get_type_hints(cls, localns=getattr(cls, NAMESPACE, None))
    except NameError as err:
        raise TypeError(
            f"{cls.__qualname__}: a field annotation names something not visible from the class's "
            f"module or the function defining it ({err}); import the type at module level"
        ) from None
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set(hints)
    hints = {name: tp for name, tp in hints.items() if name in names}
    type.__setattr__(cls, _FIELD_TYPES, hints)
    return hints


def encode(value: Any) -> Any:
    """A JSON value: enums tagged (serde style), configs as objects, tuples as lists."""
    if hasattr(value, "to_json_value") and not isinstance(value, type):
        return value.to_json_value()
    if is_config(value) and not isinstance(value, type):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


def decode(tp: Any, value: Any, where: str) -> Any:
    """``value`` (parsed JSON) as the annotated type ``tp``; ``ValueError`` naming ``where``."""
    origin = typing.get_origin(tp)
    if tp is Any or tp is None:
        return value
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return decode(arg, value, where)
            except (TypeError, ValueError) as err:
                errors.append(str(err))
        raise ValueError(f"{where}: cannot decode {value!r} as {tp}: {'; '.join(errors)}")
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where}: expected a list, found {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v, where) for v in value)
        if args and len(args) != len(value):
            raise ValueError(f"{where}: expected {len(args)} values, found {value!r}")
        return tuple(decode(a, v, where) for a, v in zip(args, value)) if args else tuple(value)
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        return [decode(arg, v, where) for v in value]
    if isinstance(tp, type):
        if hasattr(tp, "from_json_value"):  # a ConfigEnum
            return tp.from_json_value(value)
        if is_config(tp):
            return tp.from_dict(value)
        if tp is float and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if tp is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if tp is bool and isinstance(value, bool):
            return value
        if tp is str and isinstance(value, str):
            return value
        if tp in (int, float, bool, str):
            raise ValueError(f"{where}: expected {tp.__name__}, found {value!r}")
    return value
