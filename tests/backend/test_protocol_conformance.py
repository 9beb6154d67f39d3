"""The backend keeps the protocol's contract: the parameter names Dispatch calls with, and a
conformance test somewhere in this suite for every required op."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from minidl.backend import Backend, defines, is_required, op_names, signature


def test_every_op_the_backend_defines_uses_the_protocols_parameter_names(B):
    # Dispatch calls backend ops by keyword, so a renamed parameter breaks routing
    wrong = []
    for op in op_names(B):
        if defines(B, op):
            own = list(inspect.signature(getattr(B, op)).parameters)
            if own != list(signature(op).parameters):
                wrong.append(f"{op}{tuple(own)} != {tuple(signature(op).parameters)}")
    assert not wrong, "\n".join(wrong)


def test_the_backend_defines_every_required_op(B):
    missing = [op for op in op_names(Backend) if is_required(Backend, op) and not defines(B, op)]
    assert not missing


REQUIRED = [op for op in op_names(Backend) if is_required(Backend, op)]


@pytest.mark.parametrize("op", REQUIRED)
def test_every_required_op_is_called_by_a_conformance_test(op):
    sources = "\n".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py") if p.name != Path(__file__).name)
    # called directly, or named in a table of ops a test runs with getattr(B, op)
    assert re.search(rf"\b(B|Dispatch)\.{op}\(|[\"']{op}[\"']", sources), f"no conformance test calls {op}"
