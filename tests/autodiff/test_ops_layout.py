"""The layout of minidl/autodiff/ops/: each family's steps beside the overrides that record them,
and the int/bool forwarders written out so that none falls back to a protocol default."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

from minidl.autodiff import Autodiff
from minidl.autodiff.ops.bool_tensor import AutodiffBoolOps
from minidl.autodiff.ops.int_tensor import AutodiffIntOps
from minidl.autodiff.step import Step
from minidl.backend import BoolTensorOps, IntTensorOps, defining_class, op_names
from minidl.backends.ndarray import NdArray

FAMILIES = ("tensor", "arithmetic", "math", "reduce", "layout", "activation", "module")


@pytest.mark.parametrize(("proto", "mixin"), [(IntTensorOps, AutodiffIntOps), (BoolTensorOps, AutodiffBoolOps)])
def test_every_int_and_bool_op_is_written_out_with_the_protocol_signature(proto, mixin):
    for name in op_names(proto):
        assert name in mixin.__dict__, f"{mixin.__name__} does not define {name}: Autodiff would run a default"
        ours = list(inspect.signature(mixin.__dict__[name].__func__).parameters)
        theirs = list(inspect.signature(proto.__dict__[name].__func__).parameters)
        assert ours == theirs, name
        assert defining_class(Autodiff[NdArray], name) is mixin


def test_int_and_bool_forwarders_call_the_inner_backend_and_wrap_only_floats():
    AD = Autodiff[NdArray]
    ints = AD.int_from_data(np.array([1, -2, 3]), AD.float_device(AD.from_inner(np.zeros(1, np.float32))))
    assert isinstance(ints, np.ndarray)  # an inner primitive, not an AutodiffTensor
    mask = AD.int_lower_elem(ints, 0)
    assert isinstance(mask, np.ndarray) and mask.tolist() == [False, True, False]
    as_float = AD.bool_into_float(mask)
    assert type(as_float).__name__ == "AutodiffTensor" and not as_float.node.tracked


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_records_steps_declared_in_its_own_file(family):
    """Every step class a family's file declares is used by an override in that same file."""
    module = importlib.import_module(f"minidl.autodiff.ops.{family}")
    steps = [obj for obj in vars(module).values()
             if isinstance(obj, type) and issubclass(obj, Step) and obj.__module__ == module.__name__]
    assert steps, family
    source = inspect.getsource(module)
    mixin_source = source[source.index("class Autodiff"):]
    for step in steps:
        used = f"{step.__name__}(" in mixin_source
        subclassed = any(s is not step and issubclass(s, step) for s in steps)
        assert used or subclassed, f"{step.__name__} in ops/{family}.py is recorded by no override there"
