"""One segment of a stream: the ops recorded since the last drain, with what running them needs.

Tensors are numbered in order of first appearance (*relative ids*): ``values[id]`` is a leaf's
array from the moment it is first read, and a result's array once its block has run. Each op's
*signature* (its protocol op, the relative ids it reads, a leaf's shape and dtype, its static
arguments) is what the plan store's tree is walked by, so two recordings of the same step have
equal signatures and find the same plan. Scalar arguments are kept apart, already in the dtype
the kernels take them in, so a new learning rate reuses the plan and its kernels.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from minidl.backends.fusion.ir import OperationIr, TensorIr


class Segment:
    """The ops of one segment, its tensors' arrays by relative id, its scalars and signatures."""

    def __init__(self):
        self.ops: list[OperationIr] = []
        self.values: list[Any] = []
        self.scalars: list[Any] = []
        self.signatures: list[tuple] = []
        self.handles: list[weakref.ref] = []
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
        ir = TensorIr(len(self.values), shape, dtype)
        self.values.append(None)
        return ir

    def append(self, operation: OperationIr, handle: weakref.ref) -> tuple:
        """Add a recorded op (``handle`` refers to its result's handle); returns its signature."""
        self.ops.append(operation)
        self.handles.append(handle)
        if operation.scalars:
            kind = operation.inputs[0].dtype if operation.inputs[0].dtype.kind == "f" else operation.out.dtype
            self.scalars.extend(kind.type(s) for s in operation.scalars)
        values = self.values
        reads = tuple(t if values[t.id] is not None else t.id for t in operation.inputs)
        signature = (operation.op, reads, operation.static)
        self.signatures.append(signature)
        return signature

    def alive(self) -> tuple[bool, ...]:
        """For each op, whether someone still holds its result's handle."""
        return tuple(ref() is not None for ref in self.handles)

    def alive_handles(self) -> list[tuple[int, Any]]:
        """``(op index, handle)`` of every result whose handle is still held."""
        out = []
        for j, ref in enumerate(self.handles):
            handle = ref()
            if handle is not None:
                out.append((j, handle))
        return out
