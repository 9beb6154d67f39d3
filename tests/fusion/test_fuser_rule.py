"""The element-wise fuser's rule is one replaceable method, ``ElementwiseFuser.fits``: the
default keeps a block to one shape, and ``fuse`` asks a subclass's rule instead."""

from __future__ import annotations

import numpy as np

from minidl.fusion import ElementwiseFuser
from minidl.fusion.ir import OperationIr, TensorIr

F32 = np.dtype(np.float32)


def _op(kind: str, out: tuple[int, ...], *ins: tuple[int, ...]) -> OperationIr:
    return OperationIr(kind, f"float_{kind}", tuple(TensorIr(i, s, F32) for i, s in enumerate(ins)),
                       TensorIr(99, out, F32))


def test_default_rule_takes_element_wise_ops_of_the_block_shape_only():
    assert ElementwiseFuser.fits(_op("exp", (1, 3), (1, 3)), None)
    assert ElementwiseFuser.fits(_op("add", (2, 3), (2, 3), (1, 3)), (2, 3))
    assert not ElementwiseFuser.fits(_op("mul", (2, 3), (2, 3), (1, 3)), (1, 3))
    assert not ElementwiseFuser.fits(_op("matmul", (2, 2), (2, 3), (3, 2)), None)


def test_fuse_asks_a_subclass_rule_and_the_first_op_fixes_the_shape():
    class UnaryOnly(ElementwiseFuser):
        @staticmethod
        def fits(op, shape):
            return ElementwiseFuser.fits(op, shape) and len(op.inputs) == 1

    fuser = UnaryOnly()
    fuser.reset()
    assert fuser.fuse(_op("exp", (2, 3), (2, 3)))
    assert not fuser.fuse(_op("add", (2, 3), (2, 3), (2, 3)))
    assert fuser.fuse(_op("tanh", (2, 3), (2, 3)))
    assert fuser.shape == (2, 3) and [op.kind for op in fuser.ops] == ["exp", "tanh"]
