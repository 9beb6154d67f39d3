"""The conv-backward chapter's experiment: conv2d left to autodiff, op by op.

``from_basic_ops(device)`` installs the nn-modules chapter's conv2d from basic ops
(:func:`minidl_book.build_conv2d.conv2d`: pad by cat, one slice per tap, cat, permute,
reshape, matmul) as the ``conv2d`` of the backend ``device`` dispatches to, for the block
only. On ``Device.flex().autodiff()`` that backend is ``Autodiff[Flex]``, so each of those ops
is recorded as its own step and autodiff differentiates the convolution by itself, the way
a framework without a dedicated conv step would. :func:`backward_calls` counts the inner
backend's calls one backward makes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from minidl.backends.flex.backend import Flex
from minidl.debug.op_timer import BackendOpTimer
from minidl.dispatch.route import backend_for
from minidl_book import build_conv2d

__all__ = ["backward_calls", "from_basic_ops"]


@contextlib.contextmanager
def from_basic_ops(device) -> Iterator[None]:
    """Inside the block, ``conv2d`` on ``device`` runs as basic ops (each one recorded as a
    step on an autodiff device) instead of the backend's own conv2d."""
    backend = backend_for(device)
    saved = vars(backend).get("conv2d")
    backend.conv2d = classmethod(build_conv2d.conv2d)
    try:
        yield
    finally:
        if saved is not None:
            backend.conv2d = saved
        else:
            del backend.conv2d


def backward_calls(out) -> tuple[dict, int]:
    """``(grads, calls)``: the gradients of ``out.sum()`` and the number of outermost Flex
    calls its backward made for the steps behind ``out`` (a ``conv2d_x_backward`` that runs a
    transposed conv inside counts once); the calls of the sum's own backward, counted on a
    detached copy of ``out``, are left out."""
    copy, loss = out.detach().require_grad().sum(), out.sum()
    with BackendOpTimer(Flex) as alone:
        copy.backward()
    with BackendOpTimer(Flex) as timer:
        grads = loss.backward()
    return grads, sum(timer.calls.values()) - sum(alone.calls.values())
