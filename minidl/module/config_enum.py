"""``ConfigEnum``: burn's ``#[derive(Config)] enum``, with explicit variant classes.

An enum is a class deriving ``ConfigEnum``; each variant is a class deriving the enum, written
out with its fields as annotations (it becomes a frozen dataclass)::

    class PaddingConfig2d(ConfigEnum):
        def pads(self, ...): ...              # methods shared by every variant

    class Same(PaddingConfig2d):              # a unit variant: no fields
        '''Pad so that a stride-1 layer keeps the input size.'''

    class Explicit(PaddingConfig2d, tuple_like=True):
        top: int
        left: int
        bottom: int
        right: int

Defining a variant class registers it on its enum: ``PaddingConfig2d.Explicit(1, 1, 2, 2)``
builds one, and a unit variant is one value, ``PaddingConfig2d.Same`` (calling it,
``PaddingConfig2d.Same()``, gives the same value back, as burn writes it). ``variant=`` names a
variant differently from its class (two enums in one module may both have a ``Same``).

JSON follows serde's tagging: a unit variant is its name (``"Valid"``), a struct variant
``{"KaimingUniform": {"gain": 0.577, "fan_out_only": false}}``, a ``tuple_like`` variant an
array of its fields in order, ``{"Explicit": [1, 1, 2, 2]}`` (it also indexes: ``pad[0]``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, ClassVar

from minidl.module.codec import decode, encode, field_types


class ConfigEnum:
    """Base of config enums. Subclass it for an enum; subclass the enum for each variant.

    ``self.variant`` is the variant's name, for ``match``-like code in the enum's methods.
    """

    _variants: ClassVar[dict[str, Any]] = {}
    _enum: ClassVar[type]
    _tuple_like: ClassVar[bool] = False
    variant: ClassVar[str] = ""

    def __init_subclass__(cls, variant: str | None = None, tuple_like: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if ConfigEnum in cls.__bases__:  # an enum
            cls._enum = cls
            cls._variants = {}
            return
        _register_variant(cls, variant or cls.__name__, tuple_like)

    # ----- serde-style tagging ----------------------------------------------------------------
    def to_json_value(self) -> Any:
        """The serde encoding: ``"Name"``, ``{"Name": [..]}`` or ``{"Name": {..}}``."""
        fields = dataclasses.fields(self)
        if not fields:
            return self.variant
        if self._tuple_like:
            return {self.variant: [encode(getattr(self, f.name)) for f in fields]}
        return {self.variant: {f.name: encode(getattr(self, f.name)) for f in fields}}

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
        hints = field_types(target)
        names = [f.name for f in dataclasses.fields(target)]
        if target._tuple_like:
            if not isinstance(payload, list) or len(payload) != len(names):
                raise ValueError(f"{enum.__name__}.{name}: expected {len(names)} values in a list, found {payload!r}")
            return target(*[decode(hints[n], v, f"{enum.__name__}.{name}") for n, v in zip(names, payload)])
        if not isinstance(payload, dict):
            raise ValueError(f"{enum.__name__}.{name}: expected an object of fields, found {payload!r}")
        unknown = set(payload) - set(names)
        if unknown:
            raise ValueError(f"{enum.__name__}.{name}: unknown field(s) {sorted(unknown)}")
        return target(**{n: decode(hints[n], v, f"{enum.__name__}.{name}.{n}") for n, v in payload.items()})

    # ----- tuple-like access ------------------------------------------------------------------------
    def __getitem__(self, index: int) -> Any:
        """The ``index``-th field of a ``tuple_like`` variant (``Explicit(1, 2)[0]`` is 1)."""
        if not self._tuple_like:
            raise TypeError(f"{self!r} is not a tuple variant: read its fields by name")
        return getattr(self, dataclasses.fields(self)[index].name)

    def __iter__(self) -> Iterator[Any]:
        if not self._tuple_like:
            raise TypeError(f"{self!r} is not a tuple variant: read its fields by name")
        return iter(getattr(self, f.name) for f in dataclasses.fields(self))

    def __repr__(self) -> str:
        fields = dataclasses.fields(self) if dataclasses.is_dataclass(self) else ()
        name = f"{self._enum.__name__}.{self.variant}"
        if not fields:
            return name
        if self._tuple_like:
            return f"{name}({', '.join(repr(getattr(self, f.name)) for f in fields)})"
        return f"{name}({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in fields)})"

    __str__ = __repr__


def unit_call(self: ConfigEnum) -> ConfigEnum:
    """A unit variant called returns itself: ``LinearLayout.Col()`` is ``LinearLayout.Col``
    (burn's spelling). It is the ``__call__`` of unit variant classes only, so a variant with
    fields is not callable."""
    return self


def _register_variant(cls: type, name: str, tuple_like: bool) -> None:
    """Make the variant class ``cls`` a frozen dataclass and put it on its enum as ``name``."""
    enum = next((base for base in cls.__mro__[1:] if ConfigEnum in base.__bases__), None)
    if enum is None or ConfigEnum in cls.__bases__:
        raise TypeError(f"{cls.__name__}: a variant derives from one config enum, not from ConfigEnum")
    if name in enum._variants:
        raise TypeError(f"{enum.__name__} already has a variant named {name!r}")
    for field in cls.__dict__.get("__annotations__", {}):
        # a dataclass would take an inherited attribute of that name as the field's default
        if hasattr(enum, field):
            raise TypeError(f"{enum.__name__}.{name}: field {field!r} clashes with an attribute of the enum")
    cls.variant = name
    cls._tuple_like = tuple_like
    cls.__qualname__ = f"{enum.__qualname__}.{name}"
    dataclasses.dataclass(frozen=True, repr=False)(cls)
    # the dataclass machinery writes __eq__ and __hash__ but keeps the enum's __repr__
    value = cls
    if not dataclasses.fields(cls):
        cls.__call__ = unit_call
        value = cls()
    enum._variants[name] = value
    setattr(enum, name, value)
