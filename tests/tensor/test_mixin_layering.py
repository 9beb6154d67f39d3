"""minidl/tensor/'s op mixins inherit what they use: a method a mixin calls on ``self`` (or
``cls``, ``type(self)``) is found on the mixin class itself, not only on the assembled Tensor.
So a reader who opens ``ArithmeticOps`` can follow every call through its bases."""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from minidl.tensor import Tensor
from minidl.tensor.base import TensorBase

MIXINS = [klass for klass in Tensor.__mro__[1:] if klass not in (TensorBase, object)]


def used_names(klass: type) -> set[str]:
    """Attributes read on ``self``, ``cls`` or ``type(self)`` in the class body; ``self[...]``
    counts as ``__getitem__``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            value = node.value
            if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                names.add(node.attr)
            elif (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "type"
                  and value.args and isinstance(value.args[0], ast.Name) and value.args[0].id == "self"):
                names.add(node.attr)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add("__getitem__")
    return names


def test_every_mixin_derives_from_tensor_base():
    assert MIXINS, "Tensor has no op mixins?"
    for klass in MIXINS:
        assert issubclass(klass, TensorBase), klass.__name__


@pytest.mark.parametrize("klass", MIXINS, ids=lambda k: k.__name__)
def test_a_mixin_inherits_every_method_it_calls(klass):
    missing = sorted(name for name in used_names(klass) if not hasattr(klass, name))
    assert not missing, f"{klass.__name__} uses {missing} without inheriting them"


def test_the_check_sees_a_missing_method():
    class Broken(TensorBase):
        def f(self):
            return self.reshape(2)

    assert "reshape" in used_names(Broken) and not hasattr(Broken, "reshape")
