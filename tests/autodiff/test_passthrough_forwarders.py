"""Autodiff's int and bool ops are generated source (like Dispatch's forwarders): the files
are current, every protocol op is in them, and a traceback through one names the op."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

from minidl.autodiff import Autodiff
from minidl.backend import BoolTensorOps, IntTensorOps, op_names
from minidl.backends.ndarray import NdArray
from minidl.dispatch import Device, write_forwarders


@pytest.mark.parametrize("module", sorted(write_forwarders.AUTODIFF_FAMILIES))
def test_autodiff_passthrough_files_are_what_write_forwarders_writes(module):
    assert write_forwarders.autodiff_target(module).read_text() == write_forwarders.render_autodiff(module), (
        "autodiff/ops is stale: run `PYTHONPATH=. python minidl/dispatch/write_forwarders.py`"
    )


@pytest.mark.parametrize("proto", [IntTensorOps, BoolTensorOps])
def test_every_int_and_bool_op_has_its_own_body_in_the_generated_file(proto):
    module = "int_tensor" if proto is IntTensorOps else "bool_tensor"
    path = str(write_forwarders.autodiff_target(module))
    for name in op_names(proto):
        code = getattr(Autodiff[NdArray], name).__func__.__code__
        assert code.co_filename == path and code.co_name == name, name


def test_a_traceback_through_a_passthrough_op_names_it_with_its_file_and_line(monkeypatch):
    def failing(cls, lhs, rhs):
        raise RuntimeError("inner int_add failed")

    monkeypatch.setattr(NdArray, "int_add", classmethod(failing))
    lhs = NdArray.int_from_data(np.arange(3), Device.ndarray())
    with pytest.raises(RuntimeError, match="inner int_add failed") as info:
        Autodiff[NdArray].int_add(lhs, lhs)
    frames = traceback.extract_tb(info.value.__traceback__)
    path = write_forwarders.autodiff_target("int_tensor")
    source = path.read_text().splitlines()
    frame = next(f for f in frames if f.filename == str(path))
    assert frame.name == "int_add"
    assert source[frame.lineno - 1].strip() == "return cls._inner.int_add(lhs, rhs)"
