"""``BatchNorm``: normalize each channel (dim 1) of a rank >= 2 input (burn-nn ``norm/batch.rs``).

Two paths, chosen like Dropout's: the TRAINING path runs only when the input is on an autodiff
device AND the ``training`` flag is on. It normalizes with the batch's own mean and BIASED
variance (``batch_norm_train``) and mixes them into the running statistics::

    running_mean = (1 - momentum) * running_mean + momentum * mean
    running_var  = (1 - momentum) * running_var  + momentum * var      # biased: divides by n

PyTorch mixes the UNBIASED variance (divides by n - 1) into ``running_var`` — the difference
the train-vs-inference chapter measures. Otherwise the INFERENCE path normalizes with ``running_mean.value()`` and
``running_var.value()``: ``value()``, not ``value_sync()``, so without ``valid()`` it can read
statistics one update stale, as burn does. The running statistics live on the inner device.
"""

from __future__ import annotations

from minidl.dispatch import Device
from minidl.module import Initializer, Module, Param, RunningState, config
from minidl.module.config import check_positive, interval, positive
from minidl.tensor import Tensor, assert_shape
from minidl.tensor.module import batch_norm, batch_norm_train


@config
class BatchNormConfig:
    """Config of :class:`BatchNorm` (``epsilon`` 1e-5, ``momentum`` 0.1, as burn and PyTorch)."""

    field_rules = {"num_features": positive, "epsilon": positive, "momentum": interval(0, 1)}

    num_features: int
    epsilon: float = 1e-5
    momentum: float = 0.1

    def init(self, device: Device) -> BatchNorm:
        """A BatchNorm: gamma ones, beta zeros on ``device``; running mean zeros and running
        variance ones on ``device.inner()``; the training flag on."""
        check_positive("BatchNormConfig", num_features=self.num_features)
        if not self.epsilon > 0:
            raise ValueError(f"BatchNormConfig: epsilon must be > 0, got {self.epsilon}")
        if not 0.0 <= self.momentum <= 1.0:
            raise ValueError(f"BatchNormConfig: momentum must be in [0, 1], got {self.momentum}")
        n = self.num_features
        gamma = Initializer.Ones.init([n], device)
        beta = Initializer.Zeros.init([n], device)
        running_mean = RunningState.new(Tensor.zeros((n,), device=device.inner()))
        running_var = RunningState.new(Tensor.ones((n,), device=device.inner()))
        return BatchNorm(gamma, beta, running_mean, running_var, self.momentum, self.epsilon, Param.flag(True))


class BatchNorm(Module):
    """Batch normalization over channels at dim 1 (burn's ``BatchNorm``)."""

    def __init__(self, gamma: Param, beta: Param, running_mean: RunningState, running_var: RunningState,
                 momentum: float, epsilon: float, training: Param):
        self.gamma = gamma
        self.beta = beta
        self.running_mean = running_mean
        self.running_var = running_var
        self.momentum = momentum
        self.epsilon = epsilon
        self.training = training

    def forward(self, input: Tensor) -> Tensor:
        """``[batch, channels, ...]`` → same shape."""
        channels = self.gamma.lazy_shape()[0]
        assert_shape(input, [None, channels, ...], name="input")
        if input.device.is_autodiff() and self.training.is_enabled():
            return self.forward_train(input)
        return self.forward_inference(input)

    def forward_inference(self, input: Tensor) -> Tensor:
        """Normalize with the running statistics as they are (``value()``: maybe one stale)."""
        return batch_norm(input, self.gamma.val(), self.beta.val(), self.running_mean.value(),
                          self.running_var.value(), self.epsilon)

    def forward_train(self, input: Tensor) -> Tensor:
        """Normalize with the batch's statistics and fold them into the running ones."""
        output, mean, var = batch_norm_train(input, self.gamma.val(), self.beta.val(), self.epsilon)

        running_mean = self.running_mean.value_sync()
        running_var = self.running_var.value_sync()
        m = self.momentum
        # .inner(): the statistics join the running state on the inner device, outside the graph
        running_mean = running_mean.mul_scalar(1.0 - m).add(mean.inner().mul_scalar(m))
        running_var = running_var.mul_scalar(1.0 - m).add(var.inner().mul_scalar(m))
        self.running_mean.update(running_mean.detach())
        self.running_var.update(running_var.detach())
        return output

    def _display_attrs(self) -> dict:
        return {"num_features": self.gamma.lazy_shape()[0], "momentum": self.momentum,
                "epsilon": self.epsilon, "training": str(self.training.val())}
