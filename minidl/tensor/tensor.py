"""``Tensor``: burn-tensor's ``Tensor<B, D, K>``, assembled from one mixin per family of ops.

Every method checks its arguments, then calls ``Dispatch.<kind>_<op>`` — so a debugger's
backtrace reads Tensor → Dispatch → (Autodiff →) Flex/NdArray, the path the book traces.
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
    CreationOps,
    ArithmeticOps,
    ComparisonOps,
    MathOps,
    ReductionOps,
    ShapeOps,
    IndexingOps,
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
