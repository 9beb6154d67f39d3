"""``LayerNorm``: normalize over the last dim, then scale and shift (burn-nn ``norm/layer.rs``).

``gamma`` starts at ones and ``beta`` at zeros (burn ignores any initializer here). A float16
input is computed in float32 and cast back — burn's ``accumulation_dtype``: sums of squares
overflow in f16. (burn leaves bf16 alone because its exponent range is f32's; minidl has no
bf16 dtype, so only the f16 case exists.)
"""

from __future__ import annotations

from minidl.backend.dtype import DType
from minidl.dispatch import Device
from minidl.module import Initializer, Module, Param, config
from minidl.module.config import check_positive, positive
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import layer_norm


@config
class LayerNormConfig:
    """Config of :class:`LayerNorm` (``epsilon`` 1e-5 as in burn)."""

    field_rules = {"d_model": positive, "epsilon": positive}

    d_model: int
    epsilon: float = 1e-5
    bias: bool = True

    def init(self, device: Device) -> LayerNorm:
        """A LayerNorm with ``gamma`` = ones and ``beta`` = zeros on ``device``."""
        check_positive("LayerNormConfig", d_model=self.d_model)
        if not self.epsilon > 0:
            raise ValueError(f"LayerNormConfig: epsilon must be > 0, got {self.epsilon}")
        gamma = Initializer.Ones.init([self.d_model], device)
        beta = Initializer.Zeros.init([self.d_model], device) if self.bias else None
        return LayerNorm(gamma, beta, self.epsilon)


class LayerNorm(Module):
    """Layer normalization over the last dim (burn's ``LayerNorm``)."""

    def __init__(self, gamma: Param, beta: Param | None, epsilon: float):
        self.gamma = gamma
        self.beta = beta
        self.epsilon = epsilon

    def forward(self, input: Tensor) -> Tensor:
        """``[..., d_model]`` → same shape."""
        gamma = self.gamma.val()
        assert_shape(input, [..., gamma.shape[0]], name="input")
        beta = self.beta.val() if self.beta is not None else None
        if input.dtype == DType.F16:
            f32 = DType.F32
            out = layer_norm(input.cast(f32), gamma.cast(f32), beta.cast(f32) if beta is not None else None,
                             self.epsilon)
            return out.cast(DType.F16)
        return layer_norm(input, gamma, beta, self.epsilon)

    def _display_attrs(self) -> dict:
        return {"d_model": self.gamma.lazy_shape()[0], "epsilon": self.epsilon}
