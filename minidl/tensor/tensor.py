"""``Tensor``: burn-tensor's ``Tensor<B, D, K>``, assembled from one mixin per family of ops.

Every method checks its arguments, then calls the ``Dispatch`` op of its kind, named at the
call site (``Dispatch.float_add``) — so a debugger's backtrace reads Tensor → Dispatch →
(Autodiff →) Flex/NdArray, the path the book traces.

The mixins are layered: each inherits :class:`~minidl.tensor.base.TensorBase` and the mixins
whose methods it calls (``MathOps`` uses masks and comparisons, so it inherits ``IndexingOps``
and ``ComparisonOps``), so no mixin calls a method its own class does not have. From the
bottom: ``TensorBase`` → ``CreationOps``, ``ShapeOps``, ``ConversionOps``, ``AutodiffOps`` →
``ComparisonOps`` (conversion), ``IndexingOps`` (shape, creation, conversion),
``ArithmeticOps`` (shape, creation) → ``ReductionOps`` (arithmetic, conversion), ``MathOps``
(indexing, comparison, arithmetic).
"""

from __future__ import annotations

from minidl.tensor.arithmetic import ArithmeticOps
from minidl.tensor.autodiff_ops import AutodiffOps
from minidl.tensor.base import TensorBase
from minidl.tensor.comparison import ComparisonOps
from minidl.tensor.conversion import ConversionOps
from minidl.tensor.creation import CreationOps
from minidl.tensor.indexing import IndexingOps
from minidl.tensor.math_ops import MathOps
from minidl.tensor.reduction import ReductionOps
from minidl.tensor.shape_ops import ShapeOps


class Tensor(
    MathOps,
    ReductionOps,
    IndexingOps,
    ComparisonOps,
    ArithmeticOps,
    ShapeOps,
    CreationOps,
    ConversionOps,
    AutodiffOps,
    TensorBase,
):
    """A tensor: a :class:`~minidl.dispatch.DispatchTensor` (``.primitive``) and a kind
    (``.kind``: Float, Int or Bool).

    Build one with ``Tensor.from_data(data, device)``, ``Tensor.zeros(shape, device)``,
    ``Tensor.random(shape, distribution, device)``, ... Tensors are immutable: every op returns
    a new tensor (``slice_assign`` included), as burn's ops take ``self`` by value.
    """

    __slots__ = ()
