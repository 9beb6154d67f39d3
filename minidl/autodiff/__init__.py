"""burn-autodiff: ``Autodiff[B]``, a backend decorator that records a graph for backward.

Usage at the primitive level (the Tensor layer does the same through Dispatch)::

    AD = Autodiff[NdArray]                       # or autodiff_backend(NdArray, None)
    x = AD.float_require_grad(AD.from_inner(array))
    grads = AD.backward(AD.float_sum(AD.float_exp(x)))
    AD.grad(x, grads)                            # an NdArray primitive
    print(graph(y))                              # the recorded steps behind y

Importing this package registers :class:`AutodiffTensor` in
``minidl.backend.PRIMITIVE_TYPES``, so Dispatch wraps it like any backend primitive.
"""

from __future__ import annotations

from minidl.autodiff.backend import Autodiff, autodiff_backend
from minidl.autodiff.grad_mode import is_grad_enabled, no_grad
from minidl.autodiff.gradients import Gradients
from minidl.autodiff.graph import Graph, graph, graph_memory
from minidl.autodiff.node import Node, Requirement
from minidl.autodiff.step import Recompute, Step
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backend import PRIMITIVE_TYPES

if AutodiffTensor not in PRIMITIVE_TYPES:
    PRIMITIVE_TYPES.append(AutodiffTensor)

__all__ = [
    "Autodiff",
    "AutodiffTensor",
    "Gradients",
    "Graph",
    "Node",
    "Recompute",
    "Requirement",
    "Step",
    "autodiff_backend",
    "graph",
    "graph_memory",
    "is_grad_enabled",
    "no_grad",
]
