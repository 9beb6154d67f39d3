"""``@config``: burn's ``#[derive(Config)]`` for a struct (enums: :mod:`minidl.module.config_enum`).

A config is a small, immutable record of the choices that build a module: required fields
first (positional, burn's ``XxxConfig::new(a, b)``), then fields with defaults
(``#[config(default = ...)]``). ``@config`` makes the class a frozen dataclass and gives it the
methods of :class:`Config`, which are what burn's derive adds:

- ``with_<field>(value)`` builders, each returning a NEW config (the old one is unchanged):
  one method, :meth:`Config.__getattr__`, serves every field;
- ``save(path)`` / ``load(path)``: a JSON round trip; ``to_json`` / ``from_json`` for text;
- ``str(config)`` / ``repr(config)``: the pretty JSON, as burn's ``Display`` of a config prints.

Every field of every config passes through :func:`init_fields` when the config is built
(lists become tuples), and through :func:`check_config` when ``init`` is called: the one
place every field is checked, once, against its annotation (a ``float`` field takes a finite
int or float, never a bool; a ``bool`` field only ``True``/``False``; ``X | None``, tuples,
config enums and nested configs likewise) and against the class's ``field_rules`` (``{"epsilon":
positive, "beta_1": interval(0, 1, hi_open=True)}``). A failure is a :class:`ConfigError`
naming the config, the field, what was expected and what was found, before any work. Nested configs serialize as JSON objects, config
enums tagged the way serde does (see :mod:`minidl.module.config_enum`).
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import json
import math
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from minidl.module.codec import IS_CONFIG, NAMESPACE, decode, encode, field_types, is_config
from minidl.module.config_enum import ConfigEnum

T = TypeVar("T")

__all__ = ["Config", "ConfigEnum", "ConfigError", "Rule", "check_config", "check_field", "check_positive",
           "config", "init_fields", "interval", "is_config", "non_negative", "one_of", "positive"]


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


class ConfigError(ValueError, TypeError):
    """A config field (or an argument checked the same way, e.g. ``step``'s ``lr``) holds a value
    of the wrong type or out of range. A ``ValueError`` and a ``TypeError``, so code catching
    either kind of bad argument sees it."""


@dataclasses.dataclass(frozen=True)
class Rule:
    """A constraint on a field's value beyond its type: ``expected`` says it in words."""

    expected: str
    test: Callable[[Any], bool]
    #: when set, the whole expectation for an int field (``positive``: "a positive integer")
    int_expected: str | None = None
    #: when set, the error message for any bad value, ``{value!r}`` filled in (a message burn
    #: words itself, e.g. Dropout's)
    message: str | None = None

    def __call__(self, value: Any) -> bool:
        return bool(self.test(value))


positive = Rule("> 0", lambda v: v > 0, int_expected="a positive integer")
non_negative = Rule(">= 0", lambda v: v >= 0)


def interval(lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False) -> Rule:
    """``lo <= v <= hi``, either end open."""
    text = f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
    return Rule(f"in {text}", lambda v: (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi))


def one_of(*values: Any) -> Rule:
    """One of ``values``."""
    return Rule(f"one of {', '.join(repr(v) for v in values)}", lambda v: v in values)


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _type_ok(value: Any, tp: Any) -> tuple[bool, str]:
    """Whether ``value`` fits the annotation ``tp``, and ``tp`` in words."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        results = [_type_ok(value, arg) for arg in typing.get_args(tp)]
        return any(ok for ok, _ in results), " or ".join(text for _, text in results)
    if tp is type(None):
        return value is None, "None"
    if tp is bool:
        return isinstance(value, bool), "a bool (True or False)"
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool), "an int"
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        return ok, "a finite float"
    if tp is str:
        return isinstance(value, str), "a str"
    if origin is tuple:
        args = typing.get_args(tp)
        if args and args[-1] is Ellipsis:
            ok = isinstance(value, tuple) and all(_type_ok(v, args[0])[0] for v in value)
            return ok, f"a tuple of {_type_ok(None, args[0])[1]}"
        ok = isinstance(value, tuple) and len(value) == len(args) and all(
            _type_ok(v, a)[0] for v, a in zip(value, args))
        return ok, f"a tuple of {len(args)} ({', '.join(_type_ok(None, a)[1] for a in args)})"
    if isinstance(tp, type):
        return isinstance(value, tp), f"a {tp.__name__}"
    return True, str(tp)  # an annotation this checker does not know (Any, a TypeVar): no check


def check_field(owner: str, name: str, value: Any, tp: Any, rule: Rule | None = None) -> None:
    """Check one value against its type ``tp`` and ``rule``; a :class:`ConfigError` names
    ``owner.name``, the expectation and the value found."""
    ok, expected = _type_ok(value, tp)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    wrong_type = not ok and not (number and tp is float)  # NaN and inf are values, out of range
    if ok and rule is not None and value is not None:
        values = value if isinstance(value, tuple) else (value,)
        ok = all(rule(v) for v in values)
        ints = tp is int or (typing.get_origin(tp) is tuple and int in typing.get_args(tp))
        expected = rule.int_expected if ints and rule.int_expected else f"{expected} {rule.expected}"
    if not ok:
        if rule is not None and rule.message is not None and not wrong_type:
            raise ConfigError(f"{owner}.{name}: " + rule.message.format(value=value))
        raise ConfigError(f"{owner}.{name}: expected {expected}, found {_describe(value)}")


def check_config(cfg: Any, owner: str | None = None) -> None:
    """Check every field of the config ``cfg`` (and of the configs nested in it) against its
    annotation and ``field_rules``: what ``init`` runs first."""
    cls = type(cfg)
    owner = owner or cls.__name__
    rules = getattr(cls, "field_rules", {})
    for name, tp in field_types(cls).items():
        value = getattr(cfg, name)
        check_field(owner, name, value, tp, rules.get(name))
        if is_config(value):
            check_config(value, f"{owner}.{name}")
        elif isinstance(value, ConfigEnum) and dataclasses.is_dataclass(value):
            # a variant with fields (Initializer.Normal(mean, std), PaddingConfig2d.Explicit(...))
            for inner, inner_tp in field_types(type(value)).items():
                check_field(f"{owner}.{name}.{value.variant}", inner, getattr(value, inner), inner_tp)


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
    own_init = cls.__dict__.get("init")
    if isinstance(own_init, types.FunctionType) and "init" not in cls.__dict__.get("__annotations__", {}):
        @functools.wraps(own_init)
        def init(self, *args: Any, **kwargs: Any):
            check_config(self)  # every field, once, before the config builds anything
            return own_init(self, *args, **kwargs)

        cls.init = init
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
    """Reject sizes that are not positive ints (a :class:`ConfigError` naming the field and
    value, worded as :func:`check_field` words it)."""
    for name, value in sizes.items():
        values = value if isinstance(value, tuple | list) else (value,)
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ConfigError(f"{owner}.{name}: expected a positive integer, found {_describe(value)}")
