"""``SymbolicScalar``: a host number that remembers how it was computed from declared inputs.

A replay runs no Python, so a number the step computes on the host (a scheduled learning rate,
Adam's bias correction ``1 - beta_1 ** t``) must be recomputed from the replay's own inputs,
or it is frozen at its capture value: burn's issue #5779, where a CUDA graph kept the
learning rate and Adam's step count of the capture step. During the recorded runs the
declared scalar inputs are passed as ``SymbolicScalar``s: a ``float`` (so every check and
kernel takes it) whose arithmetic returns another one holding the expression. A backend call
that receives one records the expression, and replay evaluates it with the new inputs.
Comparisons are Python branches on an input: each is kept as a *guard* that replay re-checks.

burn has no counterpart (its capture freezes host scalars); JAX's tracers and Dynamo's
``SymFloat`` are the same idea.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

Env = dict[str, float]


class SymbolicScalar(float):
    """A float carrying ``expr``, a function of the declared scalar inputs (an ``Env``)."""

    __slots__ = ("expr", "text", "_guards")
    #: what Tensor and Optimizer look for to keep the number as it is instead of float()-ing it
    symbolic = True

    def __new__(cls, value: float, expr: Callable[[Env], float], text: str, guards: list) -> SymbolicScalar:
        self = super().__new__(cls, value)
        self.expr, self.text, self._guards = expr, text, guards
        return self

    @classmethod
    def input(cls, name: str, value: float, guards: list) -> SymbolicScalar:
        """The declared input ``name`` (its value at capture is ``value``)."""
        return cls(float(value), lambda env: env[name], name, guards)

    def __repr__(self) -> str:
        return f"{self.text}(={float(self)!r})"

    def __int__(self) -> int:
        raise TypeError(f"int() of the declared scalar {self.text}: an integer computed from a "
                        f"scalar input would be frozen into the capture")

    __index__ = __int__

    def __hash__(self) -> int:
        return float.__hash__(self)


def evaluate(value: Any, env: Env) -> Any:
    """``value`` at the inputs ``env`` (a plain value is returned as it is)."""
    return value.expr(env) if isinstance(value, SymbolicScalar) else value


def _lift(a: Any) -> tuple[Callable[[Env], float], str]:
    if isinstance(a, SymbolicScalar):
        return a.expr, a.text
    c = float(a)
    return (lambda env: c), repr(c)


def _binary(op: Callable, symbol: str, reflected: bool = False) -> Callable:
    def method(self: SymbolicScalar, other: Any) -> Any:
        if not isinstance(other, int | float) or isinstance(other, bool):
            return NotImplemented
        lhs, rhs = (other, self) if reflected else (self, other)
        (fa, ta), (fb, tb) = _lift(lhs), _lift(rhs)
        value = op(float(lhs), float(rhs))
        return SymbolicScalar(value, lambda env: op(fa(env), fb(env)), f"({ta} {symbol} {tb})", self._guards)
    return method


def _compare(op: Callable, symbol: str) -> Callable:
    def method(self: SymbolicScalar, other: Any) -> Any:
        if not isinstance(other, int | float):
            return NotImplemented
        (fa, ta), (fb, tb) = _lift(self), _lift(other)
        result = op(float(self), float(other))
        self._guards.append(Guard(lambda env: op(fa(env), fb(env)), f"{ta} {symbol} {tb}", result))
        return result
    return method


for _name, _op, _sym in (("add", operator.add, "+"), ("sub", operator.sub, "-"), ("mul", operator.mul, "*"),
                         ("truediv", operator.truediv, "/"), ("pow", operator.pow, "**")):
    setattr(SymbolicScalar, f"__{_name}__", _binary(_op, _sym))
    setattr(SymbolicScalar, f"__r{_name}__", _binary(_op, _sym, reflected=True))
for _name, _op, _sym in (("lt", operator.lt, "<"), ("le", operator.le, "<="), ("gt", operator.gt, ">"),
                         ("ge", operator.ge, ">="), ("eq", operator.eq, "=="), ("ne", operator.ne, "!=")):
    setattr(SymbolicScalar, f"__{_name}__", _compare(_op, _sym))
SymbolicScalar.__neg__ = lambda self: SymbolicScalar(-float(self), (lambda f: lambda env: -f(env))(self.expr),
                                                      f"-{self.text}", self._guards)


class Guard:
    """A Python branch the step took on a declared scalar: ``test(env)`` was ``result``."""

    __slots__ = ("test", "text", "result")

    def __init__(self, test: Callable[[Env], bool], text: str, result: bool):
        self.test, self.text, self.result = test, text, result

    def holds(self, env: Env) -> bool:
        """Whether the branch goes the same way at ``env``."""
        return bool(self.test(env)) == self.result


def is_finite_number(value: Any) -> bool:
    """A real number (not a bool) a replay may take as a scalar input."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
