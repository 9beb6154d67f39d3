"""``@config``: burn's ``#[derive(Config)]`` for a struct (enums: :mod:`minidl.module.config_enum`).

A config is a small, immutable record of the choices that build a module: required fields
first (positional, burn's ``XxxConfig::new(a, b)``), then fields with defaults
(``#[config(default = ...)]``). ``@config`` makes the class a frozen dataclass and gives it the
methods of :class:`Config`, which are what burn's derive adds:

- ``with_<field>(value)`` builders, each returning a NEW config (the old one is unchanged):
  one method, :meth:`Config.__getattr__`, serves every field;
- ``save(path)`` / ``load(path)``: a JSON round trip; ``to_json`` / ``from_json`` for text;
- ``str(config)`` / ``repr(config)``: the pretty JSON, as burn's ``Display`` of a config prints.

Every field of every config passes through :func:`init_fields` when the config is built: the
one place for checks that apply to all fields. Nested configs serialize as JSON objects, config
enums tagged the way serde does (see :mod:`minidl.module.config_enum`).
"""

from __future__ import annotations

import abc
import dataclasses
import json
import sys
import typing
from pathlib import Path
from typing import Any, TypeVar

from minidl.module.codec import IS_CONFIG, NAMESPACE, decode, encode, field_types, is_config
from minidl.module.config_enum import ConfigEnum

T = TypeVar("T")

__all__ = ["Config", "ConfigEnum", "check_positive", "config", "init_fields", "is_config"]


class Config(abc.ABC):  # noqa: B024 - an ABC for register(), with no abstract method
    """The methods every ``@config`` class has (``@config`` copies them onto the class, which
    also registers it, so ``isinstance(cfg, Config)`` holds). A class may define any of them
    itself; its own version wins."""

    @classmethod
    def new(cls, *args: Any, **kwargs: Any):
        """``XxxConfig.new(a, b)``: burn's constructor spelling, the same as ``XxxConfig(a, b)``."""
        return cls(*args, **kwargs)

    def __getattr__(self, name: str):
        """``with_<field>(value)``: a copy of this config with ``field`` set to ``value`` (burn's
        builders, ``LinearConfig::new(4, 2).with_bias(false)``).

        Python calls ``__getattr__`` only for names the class does not have, so a config that
        writes its own ``with_x`` method keeps it. Any other unknown name is an ``AttributeError``
        that lists the fields.
        """
        fields = type(self).__dataclass_fields__
        if name.startswith("with_") and name[5:] in fields:
            field = name[5:]

            def with_field(value: Any):
                return dataclasses.replace(self, **{field: value})

            with_field.__name__ = with_field.__qualname__ = name
            with_field.__doc__ = f"A copy of this config with ``{field}`` set to ``value``."
            return with_field
        hint = f"; its fields are {', '.join(fields)}" if name.startswith("with_") else ""
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}{hint}")

    def __dir__(self) -> list[str]:
        return sorted(set(object.__dir__(self)) | {f"with_{f}" for f in type(self).__dataclass_fields__})

    def to_dict(self) -> dict[str, Any]:
        """The config as plain JSON values (enums tagged, nested configs as objects)."""
        return {f.name: encode(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """Build the config from :meth:`to_dict`'s output; missing fields take their defaults."""
        if not isinstance(data, dict):
            raise ValueError(f"{cls.__name__}: expected a JSON object, found {data!r}")
        hints = field_types(cls)
        unknown = set(data) - set(hints)
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown field(s) {sorted(unknown)}")
        kwargs = {k: decode(hints[k], v, f"{cls.__name__}.{k}") for k, v in data.items()}
        try:
            return cls(**kwargs)
        except TypeError as err:
            raise ValueError(f"{cls.__name__}: {err}") from None

    def to_json(self) -> str:
        """Pretty JSON text (what ``str(config)`` prints)."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str):
        """Parse :meth:`to_json`'s text."""
        return cls.from_dict(json.loads(text))

    def save(self, path: str | Path) -> None:
        """Write the config as JSON to ``path`` (burn's ``Config::save``)."""
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path):
        """Read a config saved with :meth:`save` (burn's ``Config::load``)."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def __str__(self) -> str:
        return self.to_json()

    __repr__ = __str__


#: What ``@config`` copies from :class:`Config` onto a config class that lacks it.
CONFIG_METHODS = ("new", "__getattr__", "__dir__", "to_dict", "from_dict", "to_json", "from_json",
                  "save", "load", "__str__", "__repr__")


def init_fields(config: Any) -> None:
    """What every field of every config goes through when the config is built (before the
    class's own ``__post_init__``): the one place for checks that apply to all fields.

    Today: a list given for a tuple field becomes a tuple (burn writes
    ``Conv2dConfig::new([3, 8], [3, 3])``).
    """
    for name, tp in field_types(type(config)).items():
        value = getattr(config, name)
        if typing.get_origin(tp) is tuple and isinstance(value, list):
            object.__setattr__(config, name, tuple(value))


def config(cls: type[T]) -> type[T]:
    """Make ``cls`` a config (burn's ``#[derive(Config)]``): a frozen dataclass with the methods
    of :class:`Config` (``with_<field>``, JSON ``save``/``load``, a JSON ``str``). Required fields
    must come before defaults. A config defined inside a function may name the function's
    earlier local classes in its annotations."""
    own_post_init = cls.__dict__.get("__post_init__")

    def __post_init__(self) -> None:
        init_fields(self)
        if own_post_init is not None:
            own_post_init(self)

    cls.__post_init__ = __post_init__
    for name in CONFIG_METHODS:
        if name not in cls.__dict__:
            setattr(cls, name, Config.__dict__[name])
    cls = dataclasses.dataclass(frozen=True, repr=False)(cls)
    setattr(cls, IS_CONFIG, True)
    caller = sys._getframe(1)
    if caller.f_code.co_name != "<module>":  # defined in a function: keep its names for the annotations
        setattr(cls, NAMESPACE, dict(caller.f_locals))
    Config.register(cls)
    return cls


# ----- validation helpers shared by the layer configs ---------------------------------------
def check_positive(owner: str, **sizes: Any) -> None:
    """Reject sizes that are not positive ints (``ValueError`` naming the field and value)."""
    for name, value in sizes.items():
        values = value if isinstance(value, tuple | list) else (value,)
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{owner}: {name} must be a positive integer, got {value!r}")
