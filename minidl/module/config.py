"""``@config`` and ``ConfigEnum``: burn's ``#[derive(Config)]`` for structs and enums.

A config is a small, immutable record of the choices that build a module: required fields
first (positional, burn's ``XxxConfig::new(a, b)``), then fields with defaults
(``#[config(default = ...)]``). The decorator adds what burn's derive adds:

- ``with_<field>(value)`` builders, each returning a NEW config (the old one is unchanged);
- ``save(path)`` / ``load(path)``: a JSON round trip; ``to_json`` / ``from_json`` for text;
- ``str(config)`` / ``repr(config)``: the pretty JSON, as burn's ``Display`` of a config prints.

Nested configs serialize as JSON objects; config enums (``Initializer``, ``PaddingConfig2d``,
``LinearLayout``) serialize *tagged* the way serde does: a unit variant is its name
(``"Valid"``), a struct variant is ``{"KaimingUniform": {"gain": 0.577, "fan_out_only": false}}``
and a tuple variant is ``{"Explicit": [1, 1, 1, 1]}``. Decoding is driven by the field
annotations, so ``load`` gives back the same types (tuples stay tuples, enums stay enums).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any, ClassVar, TypeVar

T = TypeVar("T")

_IS_CONFIG = "__minidl_config__"


# ----- config enums ---------------------------------------------------------------------------
class _VariantSpec:
    """What ``variant(...)``/``unit()`` leave in an enum's class body until the class is built."""

    def __init__(self, fields: list[tuple[str, Any]], tuple_like: bool, unit: bool = False):
        self.fields = fields
        self.tuple_like = tuple_like
        self.unit = unit


def variant(*positional: Any, **named: Any) -> Any:
    """Declare a variant with fields inside a :class:`ConfigEnum` body.

    ``variant(gain=float, fan_out_only=bool)`` is a struct variant (serde: an object);
    ``variant(int, int, int, int)`` is a tuple variant (serde: an array), its fields named
    ``_0``, ``_1``, ... in Python. Field values are types used to decode JSON.
    """
    if positional and named:
        raise TypeError("variant(): give either positional types (tuple variant) or named ones")
    if positional:
        return _VariantSpec([(f"_{i}", t) for i, t in enumerate(positional)], tuple_like=True)
    return _VariantSpec(list(named.items()), tuple_like=False)


def unit() -> Any:
    """Declare a unit variant (no fields) inside a :class:`ConfigEnum` body: ``Ones = unit()``."""
    return _VariantSpec([], tuple_like=False, unit=True)


class ConfigEnum:
    """Base of config enums, burn's ``#[derive(Config)] enum``.

    Subclass it and declare variants with :func:`variant` and :func:`unit`; each becomes a
    frozen dataclass subclass reachable as ``Enum.Variant``. A unit variant is a singleton
    instance (``LinearLayout.Col``; calling it, ``LinearLayout.Col()``, returns the same
    instance), a variant with fields is a class (``Initializer.Uniform(-1.0, 1.0)``).
    Methods written on the enum body are shared by every variant; ``self.variant`` names the
    variant for ``match``-like code.
    """

    _variants: ClassVar[dict[str, Any]] = {}
    _enum: ClassVar[type]
    _tuple_like: ClassVar[bool] = False
    variant: ClassVar[str] = ""

    def __init_subclass__(cls, _is_variant: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if _is_variant:
            return
        cls._enum = cls
        cls._variants = {}
        _REGISTRY.setdefault(cls.__name__, cls)
        for name, spec in list(vars(cls).items()):
            if isinstance(spec, _VariantSpec):
                built = _build_variant(cls, name, spec)
                cls._variants[name] = built
                setattr(cls, name, built)

    # serde-style tagging -------------------------------------------------------------------
    def to_json_value(self) -> Any:
        """The serde encoding: ``"Name"``, ``{"Name": [..]}`` or ``{"Name": {..}}``."""
        fields = dataclasses.fields(self) if dataclasses.is_dataclass(self) else ()
        if not fields:
            return self.variant
        if self._tuple_like:
            return {self.variant: [_encode(getattr(self, f.name)) for f in fields]}
        return {self.variant: {f.name: _encode(getattr(self, f.name)) for f in fields}}

    @classmethod
    def from_json_value(cls, value: Any) -> ConfigEnum:
        """Decode the serde encoding of one of this enum's variants."""
        enum = cls._enum
        if isinstance(value, str):
            name, payload = value, None
        elif isinstance(value, dict) and len(value) == 1:
            ((name, payload),) = value.items()
        else:
            raise ValueError(f"{enum.__name__}: cannot decode {value!r}; expected a variant name or "
                             "a one-key object {\"Variant\": ...}")
        if name not in enum._variants:
            raise ValueError(f"{enum.__name__}: unknown variant {name!r}; expected one of "
                             f"{', '.join(enum._variants)}")
        target = enum._variants[name]
        if not isinstance(target, type):  # unit variant instance
            if payload not in (None, [], {}):
                raise ValueError(f"{enum.__name__}.{name} takes no fields, found {payload!r}")
            return target
        hints = _hints(target)
        names = [f.name for f in dataclasses.fields(target)]
        if target._tuple_like:
            if not isinstance(payload, list) or len(payload) != len(names):
                raise ValueError(f"{enum.__name__}.{name}: expected {len(names)} values in a list, found {payload!r}")
            return target(*[_decode(hints[n], v, f"{enum.__name__}.{name}") for n, v in zip(names, payload)])
        if not isinstance(payload, dict):
            raise ValueError(f"{enum.__name__}.{name}: expected an object of fields, found {payload!r}")
        unknown = set(payload) - set(names)
        if unknown:
            raise ValueError(f"{enum.__name__}.{name}: unknown field(s) {sorted(unknown)}")
        return target(**{n: _decode(hints[n], v, f"{enum.__name__}.{name}.{n}") for n, v in payload.items()})

    def __repr__(self) -> str:
        fields = dataclasses.fields(self) if dataclasses.is_dataclass(self) else ()
        name = f"{self._enum.__name__}.{self.variant}"
        if not fields:
            return name
        if self._tuple_like:
            return f"{name}({', '.join(repr(getattr(self, f.name)) for f in fields)})"
        return f"{name}({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in fields)})"

    __str__ = __repr__


def _build_variant(enum: type, name: str, spec: _VariantSpec) -> Any:
    for fname, _ in spec.fields:
        # a dataclass would take an inherited attribute of that name as the field's default
        if hasattr(enum, fname) and not isinstance(getattr(enum, fname), _VariantSpec):
            raise TypeError(f"{enum.__name__}.{name}: field {fname!r} clashes with an attribute of the enum")
    namespace: dict[str, Any] = {
        "__annotations__": {fname: ftype for fname, ftype in spec.fields},
        "__qualname__": f"{enum.__qualname__}.{name}",
        "__module__": enum.__module__,
        "__doc__": f"The ``{name}`` variant of :class:`{enum.__name__}`.",
        "variant": name,
        "_tuple_like": spec.tuple_like,
        "__repr__": ConfigEnum.__repr__,
        "__str__": ConfigEnum.__repr__,
    }
    cls = types.new_class(name, (enum,), {"_is_variant": True}, lambda ns: ns.update(namespace))
    cls = dataclasses.dataclass(frozen=True, repr=False)(cls)
    if spec.tuple_like:
        cls.__getitem__ = lambda self, i: getattr(self, f"_{i}")
        cls.__iter__ = lambda self: iter(getattr(self, f"_{i}") for i in range(len(spec.fields)))
    if spec.unit:
        instance = cls()
        cls.__call__ = lambda self: self  # ``LinearLayout.Col()`` is ``LinearLayout.Col``
        return instance
    return cls


# ----- encoding and decoding ----------------------------------------------------------------
def _encode(value: Any) -> Any:
    if isinstance(value, ConfigEnum):
        return value.to_json_value()
    if is_config(value):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    return value


#: Configs and config enums by class name: the fallback namespace for annotations naming a
#: class its module's globals can't see (a config defined inside a function).
_REGISTRY: dict[str, type] = {}


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:
        pass
    try:
        return typing.get_type_hints(cls, localns=dict(_REGISTRY))
    except Exception:  # annotations naming something unavailable: decode loosely
        return {f.name: Any for f in dataclasses.fields(cls)}


def _decode(tp: Any, value: Any, where: str) -> Any:
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
                return _decode(arg, value, where)
            except (TypeError, ValueError) as err:
                errors.append(str(err))
        raise ValueError(f"{where}: cannot decode {value!r} as {tp}: {'; '.join(errors)}")
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where}: expected a list, found {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, where) for v in value)
        if args and len(args) != len(value):
            raise ValueError(f"{where}: expected {len(args)} values, found {value!r}")
        return tuple(_decode(a, v, where) for a, v in zip(args, value)) if args else tuple(value)
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        return [_decode(arg, v, where) for v in value]
    if isinstance(tp, type):
        if issubclass(tp, ConfigEnum):
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


# ----- the decorator ------------------------------------------------------------------------
def is_config(obj: Any) -> bool:
    """Whether ``obj`` is a class made by :func:`config` or an instance of one."""
    return getattr(obj, _IS_CONFIG, False) is True


def config(cls: type[T]) -> type[T]:
    """Make ``cls`` a config (burn's ``#[derive(Config)]``): a frozen dataclass with builders,
    JSON ``save``/``load`` and a JSON ``str``. Required fields must come before defaults."""
    user_post_init = cls.__dict__.get("__post_init__")

    def __post_init__(self) -> None:
        # burn writes ``Conv2dConfig::new([3, 8], [3, 3])``: accept lists for tuple fields
        for name, tp in _hints(type(self)).items():
            value = getattr(self, name, None)
            if typing.get_origin(tp) is tuple and isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        if user_post_init is not None:
            user_post_init(self)

    cls.__post_init__ = __post_init__
    cls = dataclasses.dataclass(frozen=True, repr=False)(cls)
    setattr(cls, _IS_CONFIG, True)
    _REGISTRY.setdefault(cls.__name__, cls)
    for field in dataclasses.fields(cls):
        name = f"with_{field.name}"
        if name not in cls.__dict__:
            setattr(cls, name, _builder(field.name))
    for name, fn in _CONFIG_METHODS.items():
        if name not in cls.__dict__:
            setattr(cls, name, fn)
    return cls


def _builder(field: str):
    def with_field(self, value):
        return dataclasses.replace(self, **{field: value})

    with_field.__name__ = f"with_{field}"
    with_field.__doc__ = f"A copy of this config with ``{field}`` set to ``value``."
    return with_field


def _to_dict(self) -> dict[str, Any]:
    """The config as plain JSON values (enums tagged, nested configs as objects)."""
    return {f.name: _encode(getattr(self, f.name)) for f in dataclasses.fields(self)}


@classmethod  # type: ignore[misc]
def _from_dict(cls, data: dict[str, Any]):
    """Build the config from :meth:`to_dict`'s output; missing fields take their defaults."""
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__}: expected a JSON object, found {data!r}")
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown field(s) {sorted(unknown)}")
    kwargs = {k: _decode(hints.get(k, Any), v, f"{cls.__name__}.{k}") for k, v in data.items()}
    try:
        return cls(**kwargs)
    except TypeError as err:
        raise ValueError(f"{cls.__name__}: {err}") from None


def _to_json(self) -> str:
    """Pretty JSON text (what ``str(config)`` prints)."""
    return json.dumps(self.to_dict(), indent=2)


@classmethod  # type: ignore[misc]
def _from_json(cls, text: str):
    """Parse :meth:`to_json`'s text."""
    return cls.from_dict(json.loads(text))


def _save(self, path: str | Path) -> None:
    """Write the config as JSON to ``path`` (burn's ``Config::save``)."""
    Path(path).write_text(self.to_json() + "\n", encoding="utf-8")


@classmethod  # type: ignore[misc]
def _load(cls, path: str | Path):
    """Read a config saved with :meth:`save` (burn's ``Config::load``)."""
    return cls.from_json(Path(path).read_text(encoding="utf-8"))


@classmethod  # type: ignore[misc]
def _new(cls, *args: Any, **kwargs: Any):
    """``XxxConfig.new(a, b)``: burn's constructor spelling, the same as ``XxxConfig(a, b)``."""
    return cls(*args, **kwargs)


_CONFIG_METHODS: dict[str, Any] = {
    "new": _new,
    "to_dict": _to_dict,
    "from_dict": _from_dict,
    "to_json": _to_json,
    "from_json": _from_json,
    "save": _save,
    "load": _load,
    "__str__": _to_json,
    "__repr__": _to_json,
}


# ----- validation helpers shared by the layer configs ---------------------------------------
def check_positive(owner: str, **sizes: Any) -> None:
    """Reject sizes that are not positive ints (``ValueError`` naming the field and value)."""
    for name, value in sizes.items():
        values = value if isinstance(value, tuple | list) else (value,)
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{owner}: {name} must be a positive integer, got {value!r}")
