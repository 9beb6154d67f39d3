"""The dispatch chapter's ``forwarding_your_linear``: the reader's generated ``linear`` is used
only when it works when called; a generator that compiles but fails when run (the op's name
unquoted), gives a wrong value (the bias left out), or is the page's ``...`` stub falls back
to the reference's text, says so (BOOKS, not YOURS), and leaves ``Dispatch`` as
it was."""

from __future__ import annotations

import pytest

from minidl import Device, Tensor, debug
from minidl.dispatch import Dispatch
from minidl.nn import LinearConfig
from minidl_book import build_forwarder
from minidl_book.dispatch_linear import BOOKS, YOURS, forwarding_your_linear


def stub(op, signature):
    ...


def forward_ops(write_forwarder):
    device = Device.flex().autodiff()
    layer, x = LinearConfig(4, 2).init(device), Tensor.ones((3, 4), device=device)
    with forwarding_your_linear(write_forwarder) as whose:
        ops = debug.graph(layer(x)).ops
    assert "linear" not in vars(Dispatch)
    return whose, ops


def test_a_right_generator_is_used_and_called_yours():
    assert forward_ops(build_forwarder.write_forwarder) == (YOURS, ["LinearWithBias"])


@pytest.mark.parametrize("wrong", [
    stub,
    build_forwarder.op_name_unquoted,  # compiles; raises TypeError when called
    build_forwarder.defaulted_args_left_out,  # runs; drops the caller's bias
    build_forwarder.defaults_dropped,  # bias has no default: linear(x, w) raises
    build_forwarder.no_cls,
])
def test_a_generator_that_fails_when_run_falls_back_to_the_reference(wrong):
    assert forward_ops(wrong) == (BOOKS, ["LinearWithBias"])
