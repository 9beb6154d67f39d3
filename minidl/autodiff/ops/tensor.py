"""Autodiff's float tensors outside arithmetic: creation and data, device and dtype, graph
hooks, comparisons (burn-autodiff ``ops/tensor.rs``, the part that is no maths).

Creation makes untracked leaves of the inner backend; comparisons and ``argmax``/``argmin``
record nothing and return the inner backend's bool/int primitives. ``float_cast`` and
``float_to_device`` record a step (their steps are here), so a gradient flows back across
them; the graph hooks (``require_grad``, ``detach``) set a node's requirement as burn does.
"""

from __future__ import annotations

from minidl.autodiff.node import Node, Requirement
from minidl.autodiff.ops.base import AutodiffOpsBase, plain_device, prim, record
from minidl.autodiff.step import Step
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backend.dtype import DType


class Cast(Step):
    """Convert to ``dtype``: the gradient is cast back to the input's dtype."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def __init__(self, dtype: DType, source: DType):
        super().__init__()
        self.dtype = dtype
        self.source = source

    def forward(self, B, tensor):
        return B.float_cast(tensor, self.dtype)

    def backward(self, B, grad, state):
        return (B.float_cast(grad, self.source),)


class ToDevice(Step):
    """Move to ``device`` (same backend): the gradient moves back to ``source``."""

    memory_bound = False  # burn marks it .compute_bound() (ops/tensor.rs, v0.22.0-pre.2)

    def __init__(self, device, source):
        super().__init__()
        self.device = device
        self.source = source

    def forward(self, B, tensor):
        return B.float_to_device(tensor, self.device)

    def backward(self, B, grad, state):
        return (B.float_to_device(grad, self.source),)


class AutodiffTensorOps(AutodiffOpsBase):
    """Float creation, data, device and dtype, graph hooks and comparisons of ``Autodiff[B]``."""

    # ----- creation and data: untracked leaves of the inner backend ---------------------
    @classmethod
    def float_from_data(cls, data, device):
        return AutodiffTensor.untracked(cls._inner.float_from_data(data, plain_device(device)))

    @classmethod
    def float_into_data(cls, tensor):
        return cls._inner.float_into_data(prim(tensor))

    @classmethod
    def float_random(cls, shape, distribution, dtype, device):
        return AutodiffTensor.untracked(cls._inner.float_random(shape, distribution, dtype, plain_device(device)))

    @classmethod
    def seed(cls, device, seed):
        return cls._inner.seed(plain_device(device), seed)

    @classmethod
    def float_zeros(cls, shape, dtype, device):
        return AutodiffTensor.untracked(cls._inner.float_zeros(shape, dtype, plain_device(device)))

    @classmethod
    def float_ones(cls, shape, dtype, device):
        return AutodiffTensor.untracked(cls._inner.float_ones(shape, dtype, plain_device(device)))

    @classmethod
    def float_full(cls, shape, fill_value, dtype, device):
        return AutodiffTensor.untracked(cls._inner.float_full(shape, fill_value, dtype, plain_device(device)))

    @classmethod
    def float_device(cls, tensor):
        return cls._inner.float_device(prim(tensor))

    @classmethod
    def float_to_device(cls, tensor, device):
        source = cls._inner.float_device(prim(tensor))
        return record(cls, ToDevice(plain_device(device), source), tensor)

    @classmethod
    def float_cast(cls, tensor, dtype):
        source = DType.of(tensor.dtype)
        if DType.of(dtype) == source:
            return tensor
        return record(cls, Cast(DType.of(dtype), source), tensor)

    @classmethod
    def float_into_int(cls, tensor, dtype):
        return cls._inner.float_into_int(prim(tensor), dtype)

    # ----- graph hooks (burn's semantics) -----------------------------------------------
    @classmethod
    def float_detach(cls, tensor):
        """Cut ``tensor`` from its graph: a new leaf that still requires grad if ``tensor`` was
        a ``Grad`` leaf (burn keeps that setting; PyTorch's ``detach`` does not)."""
        out = AutodiffTensor.untracked(prim(tensor))
        return cls.float_require_grad(out) if cls.float_is_require_grad(tensor) else out

    @classmethod
    def float_require_grad(cls, tensor):
        """Mark a leaf as wanting its gradient (same node id). Not allowed on an intermediate."""
        tensor = tensor if isinstance(tensor, AutodiffTensor) else AutodiffTensor.untracked(tensor)
        node = tensor.node
        if node.requirement is Requirement.GRAD:
            return tensor
        if node.requirement is Requirement.GRAD_IN_BACKWARD:
            raise RuntimeError(
                "Can't convert a non leaf tensor into a tracked tensor: require_grad() on the "
                "result of an op; call detach() first to make it a leaf"
            )
        return AutodiffTensor(tensor.inner, Node.leaf_with_id(Requirement.GRAD, node.id))

    @classmethod
    def float_set_require_grad(cls, tensor, require_grad):
        if require_grad:
            return cls.float_require_grad(tensor)
        return AutodiffTensor.untracked(prim(tensor))

    @classmethod
    def float_is_require_grad(cls, tensor):
        """True for a leaf whose gradient backward keeps (requirement ``Grad``), as burn."""
        return isinstance(tensor, AutodiffTensor) and tensor.node.requirement is Requirement.GRAD

    # ----- comparisons: inner bool primitives, nothing recorded -------------------------
    @classmethod
    def float_equal(cls, lhs, rhs):
        return cls._inner.float_equal(prim(lhs), prim(rhs))

    @classmethod
    def float_not_equal(cls, lhs, rhs):
        return cls._inner.float_not_equal(prim(lhs), prim(rhs))

    @classmethod
    def float_greater(cls, lhs, rhs):
        return cls._inner.float_greater(prim(lhs), prim(rhs))

    @classmethod
    def float_greater_equal(cls, lhs, rhs):
        return cls._inner.float_greater_equal(prim(lhs), prim(rhs))

    @classmethod
    def float_lower(cls, lhs, rhs):
        return cls._inner.float_lower(prim(lhs), prim(rhs))

    @classmethod
    def float_lower_equal(cls, lhs, rhs):
        return cls._inner.float_lower_equal(prim(lhs), prim(rhs))

    @classmethod
    def float_equal_elem(cls, lhs, rhs):
        return cls._inner.float_equal_elem(prim(lhs), rhs)

    @classmethod
    def float_not_equal_elem(cls, lhs, rhs):
        return cls._inner.float_not_equal_elem(prim(lhs), rhs)

    @classmethod
    def float_greater_elem(cls, lhs, rhs):
        return cls._inner.float_greater_elem(prim(lhs), rhs)

    @classmethod
    def float_greater_equal_elem(cls, lhs, rhs):
        return cls._inner.float_greater_equal_elem(prim(lhs), rhs)

    @classmethod
    def float_lower_elem(cls, lhs, rhs):
        return cls._inner.float_lower_elem(prim(lhs), rhs)

    @classmethod
    def float_lower_equal_elem(cls, lhs, rhs):
        return cls._inner.float_lower_equal_elem(prim(lhs), rhs)

    @classmethod
    def float_argmax(cls, tensor, dim):
        return cls._inner.float_argmax(prim(tensor), dim)

    @classmethod
    def float_argmin(cls, tensor, dim):
        return cls._inner.float_argmin(prim(tensor), dim)
