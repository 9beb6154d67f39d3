"""Autodiff's float ops: creation, graph hooks, arithmetic, unary math, comparisons, matmul.

burn-autodiff ``ops/tensor.rs``. Comparisons record nothing and return the inner backend's
bool primitives; every op that computes a float records its step.
"""

from __future__ import annotations

from minidl.autodiff.decorator import inner_device, prim
from minidl.autodiff.node import Node, Requirement
from minidl.autodiff.ops import arithmetic as ar
from minidl.autodiff.ops import math as m
from minidl.autodiff.record import record
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backend.dtype import DType


class AutodiffFloatOps:
    """Float ops of ``Autodiff[B]`` (``cls._inner`` is ``B``)."""

    # ----- creation and data: untracked leaves of the inner backend ------------------------
    @classmethod
    def float_from_data(cls, data, device):
        return AutodiffTensor.untracked(cls._inner.float_from_data(data, inner_device(device)))

    @classmethod
    def float_into_data(cls, tensor):
        return cls._inner.float_into_data(prim(tensor))

    @classmethod
    def float_random(cls, shape, distribution, dtype, device):
        return AutodiffTensor.untracked(cls._inner.float_random(shape, distribution, dtype, inner_device(device)))

    @classmethod
    def seed(cls, device, seed):
        return cls._inner.seed(inner_device(device), seed)

    @classmethod
    def float_zeros(cls, shape, dtype, device):
        return AutodiffTensor.untracked(cls._inner.float_zeros(shape, dtype, inner_device(device)))

    @classmethod
    def float_ones(cls, shape, dtype, device):
        return AutodiffTensor.untracked(cls._inner.float_ones(shape, dtype, inner_device(device)))

    @classmethod
    def float_full(cls, shape, fill_value, dtype, device):
        return AutodiffTensor.untracked(cls._inner.float_full(shape, fill_value, dtype, inner_device(device)))

    @classmethod
    def float_device(cls, tensor):
        return cls._inner.float_device(prim(tensor))

    @classmethod
    def float_to_device(cls, tensor, device):
        source = cls._inner.float_device(prim(tensor))
        return record(cls, m.ToDevice(inner_device(device), source), tensor)

    @classmethod
    def float_cast(cls, tensor, dtype):
        source = DType.of(tensor.dtype)
        if DType.of(dtype) == source:
            return tensor
        return record(cls, m.Cast(DType.of(dtype), source), tensor)

    @classmethod
    def float_into_int(cls, tensor, dtype):
        return cls._inner.float_into_int(prim(tensor), dtype)

    # ----- graph hooks (burn's semantics) ---------------------------------------------------
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
        return AutodiffTensor(tensor.primitive, Node(Requirement.GRAD, id=node.id))

    @classmethod
    def float_set_require_grad(cls, tensor, require_grad):
        if require_grad:
            return cls.float_require_grad(tensor)
        return AutodiffTensor.untracked(prim(tensor))

    @classmethod
    def float_is_require_grad(cls, tensor):
        """True for a leaf whose gradient backward keeps (requirement ``Grad``), as burn."""
        return isinstance(tensor, AutodiffTensor) and tensor.node.requirement is Requirement.GRAD

    # ----- arithmetic -------------------------------------------------------------------------
    @classmethod
    def float_add(cls, lhs, rhs):
        return record(cls, ar.Add(), lhs, rhs)

    @classmethod
    def float_sub(cls, lhs, rhs):
        return record(cls, ar.Sub(), lhs, rhs)

    @classmethod
    def float_mul(cls, lhs, rhs):
        return record(cls, ar.Mul(), lhs, rhs)

    @classmethod
    def float_div(cls, lhs, rhs):
        return record(cls, ar.Div(), lhs, rhs)

    @classmethod
    def float_powf(cls, lhs, rhs):
        return record(cls, ar.Powf(), lhs, rhs)

    @classmethod
    def float_add_scalar(cls, lhs, rhs):
        return record(cls, ar.AddScalar(rhs), lhs)

    @classmethod
    def float_sub_scalar(cls, lhs, rhs):
        return record(cls, ar.SubScalar(rhs), lhs)

    @classmethod
    def float_mul_scalar(cls, lhs, rhs):
        return record(cls, ar.MulScalar(rhs), lhs)

    @classmethod
    def float_div_scalar(cls, lhs, rhs):
        return record(cls, ar.DivScalar(rhs), lhs)

    @classmethod
    def float_powf_scalar(cls, lhs, rhs):
        return record(cls, ar.PowfScalar(rhs), lhs)

    @classmethod
    def float_remainder_scalar(cls, lhs, rhs):
        return record(cls, ar.RemainderScalar(rhs), lhs)

    @classmethod
    def float_neg(cls, tensor):
        return record(cls, ar.Neg(), tensor)

    @classmethod
    def float_recip(cls, tensor):
        return record(cls, ar.Recip(), tensor)

    @classmethod
    def float_clamp_min(cls, tensor, min):
        return record(cls, ar.Clamp(min, None), tensor)

    @classmethod
    def float_clamp_max(cls, tensor, max):
        return record(cls, ar.Clamp(None, max), tensor)

    @classmethod
    def float_clamp(cls, tensor, min, max):
        return record(cls, ar.Clamp(min, max), tensor)

    @classmethod
    def float_matmul(cls, lhs, rhs):
        return record(cls, ar.Matmul(), lhs, rhs)

    # ----- unary math -------------------------------------------------------------------------
    @classmethod
    def float_exp(cls, tensor):
        return record(cls, m.Exp(), tensor)

    @classmethod
    def float_log(cls, tensor):
        return record(cls, m.Log(), tensor)

    @classmethod
    def float_log1p(cls, tensor):
        return record(cls, m.Log1p(), tensor)

    @classmethod
    def float_sqrt(cls, tensor):
        return record(cls, m.Sqrt(), tensor)

    @classmethod
    def float_abs(cls, tensor):
        return record(cls, m.Abs(), tensor)

    @classmethod
    def float_tanh(cls, tensor):
        return record(cls, m.Tanh(), tensor)

    @classmethod
    def float_sin(cls, tensor):
        return record(cls, m.Sin(), tensor)

    @classmethod
    def float_cos(cls, tensor):
        return record(cls, m.Cos(), tensor)

    @classmethod
    def float_erf(cls, tensor):
        return record(cls, m.Erf(), tensor)

    @classmethod
    def float_floor(cls, tensor):
        return record(cls, m.Floor(), tensor)

    @classmethod
    def float_sign(cls, tensor):
        return record(cls, m.Sign(), tensor)

    # ----- comparisons: inner bool primitives, nothing recorded -------------------------------
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
