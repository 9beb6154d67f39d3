"""One segment of a stream: the ops recorded since the last drain, with what running them needs.

Tensors are numbered in order of first appearance (*relative ids*): ``values[id]`` is a leaf's
array from the moment it is first read, and a result's array once its block has run. Each op's
*signature* (its protocol op, the IR of what it reads, its static arguments) is what the plan
store's tree is walked by, so two recordings of the same step have equal signatures and find the
same plan. Scalar arguments are kept apart, as Python floats (each kernel casts them to its ops'
dtype), so a new learning rate reuses the plan and its kernels.
"""

from __future__ import annotations

from sys import getrefcount
from typing import Any

import numpy as np

from minidl.fusion.ir import OperationIr, TensorIr

_new_tuple = tuple.__new__

#: references to a handle nobody else holds, as ``getrefcount(handles[j])`` counts them:
#: the segment's list and getrefcount's own argument
_HELD_BY_SEGMENT = 2


class Segment:
    """The ops of one segment, its tensors' arrays by relative id, its scalars and signatures."""

    def __init__(self):
        self.ops: list[OperationIr] = []
        self.values: list[Any] = []
        self.scalars: list[Any] = []
        self.handles: list[Any] = []
        self._leaves: dict[int, TensorIr] = {}  # handle id -> the leaf's IR

    def leaf(self, handle_id: int, value: Any) -> TensorIr:
        """The IR of a ready tensor read by this segment (numbered on its first read)."""
        ir = self._leaves.get(handle_id)
        if ir is None:
            ir = TensorIr(len(self.values), value.shape, value.dtype)
            self._leaves[handle_id] = ir
            self.values.append(value)
        return ir

    def result(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorIr:
        """The IR of a new op's result (its array is filled when its block runs)."""
        values = self.values
        ir = _new_tuple(TensorIr, (len(values), shape, dtype))  # TensorIr(...) without its Python __new__
        values.append(None)
        return ir

    def append(self, operation: OperationIr, handle: Any) -> None:
        """Add a recorded op and its result's handle (held until the drain, which asks whether
        anyone else still holds it)."""
        self.ops.append(operation)
        self.handles.append(handle)
        if operation.scalars:
            self.scalars += operation.scalars

    @property
    def signatures(self) -> list[tuple]:
        """Each op's signature: its protocol op, the full IR of its inputs, its static arguments.
        Since ids are numbered in order of first appearance, equal signatures up to an op mean
        equal segments up to it."""
        return [(op.op, op.inputs, op.static) for op in self.ops]

    def alive(self) -> tuple[bool, ...]:
        """For each op, whether someone besides this segment holds its result's handle (burn
        asks its handles' reference counts the same question)."""
        handles = self.handles
        return tuple([getrefcount(handles[j]) > _HELD_BY_SEGMENT for j in range(len(handles))])
