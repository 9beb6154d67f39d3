"""BatchNorm (the train-vs-inference chapter): biased running variance, the n/(n-1) gap to PyTorch, shared running
state on clone, fresh on valid(), one-update-stale inference, which cases update the stats,
and freeze + set_require_grad(True)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.module import Module
from minidl.nn import BatchNormConfig, LinearConfig

from .support import T, arr, close

MOMENTUM, EPS = 0.1, 1e-5


def batch(k: int) -> np.ndarray:
    """Batch k of burn's BatchNorm experiment (the train-vs-inference chapter): 4 samples, 3 features."""
    return (np.random.default_rng(100 + k).standard_normal((4, 3)) * [1.0, 1.5, 0.8] + [0.1, 1.0, 2.0]).astype(np.float32)


def numpy_running(batches, unbiased: bool = False):
    mean, var = np.zeros(3), np.ones(3)
    for x in batches:
        mean = (1 - MOMENTUM) * mean + MOMENTUM * x.mean(0)
        var = (1 - MOMENTUM) * var + MOMENTUM * x.var(0, ddof=1 if unbiased else 0)
    return mean, var


def test_running_stats_after_three_batches_use_the_biased_variance(ad):
    bn = BatchNormConfig(3).init(ad)
    for k in range(3):
        bn(T(batch(k), ad))
    mean, var = numpy_running([batch(k) for k in range(3)])
    close(bn.running_mean.value_sync(), mean, "running_mean")
    close(bn.running_var.value_sync(), var, "running_var")
    assert not bn.running_mean.value_sync().device.is_autodiff()  # stats live on the inner device


def test_running_stats_match_torch_only_when_torch_uses_the_biased_estimate(ad):
    bn = BatchNormConfig(3).init(ad)
    twin = torch.nn.BatchNorm1d(3)  # momentum 0.1, eps 1e-5: the same defaults
    train_out = bn(T(batch(0), ad))
    close(train_out, twin(torch.from_numpy(batch(0))), "train_out")
    close(bn.running_mean.value_sync(), twin.running_mean, "running_mean_1")
    ours_var = arr(bn.running_var.value_sync())
    theirs_var = twin.running_var.numpy()
    assert np.all(np.abs(ours_var - theirs_var) > 1e-3)  # the MISMATCH burn's experiment prints
    n = batch(0).shape[0]
    np.testing.assert_allclose((theirs_var - 0.9) / (ours_var - 0.9), n / (n - 1), rtol=1e-4)
    for k in (1, 2):
        bn(T(batch(k), ad))
        twin(torch.from_numpy(batch(k)))
    # PyTorch's side recomputed by hand with var(unbiased=False): everything agrees
    mean_b, var_b = numpy_running([batch(k) for k in range(3)], unbiased=False)
    mean_u, var_u = numpy_running([batch(k) for k in range(3)], unbiased=True)
    close(twin.running_var, var_u, "torch stores the unbiased estimate", rtol=1e-4)
    close(bn.running_mean.value_sync(), mean_b, "running_mean_3")
    close(bn.running_var.value_sync(), var_b, "running_var_3")
    x0 = batch(0)
    eval_out = bn.valid()(T(x0, ad.inner()))
    close(eval_out, (x0 - mean_b) / np.sqrt(var_b + EPS), "eval_out with biased stats", rtol=1e-4)
    twin.eval()
    assert np.abs(arr(eval_out) - twin(torch.from_numpy(x0)).detach().numpy()).max() > 1e-3


def test_forward_on_a_clone_updates_the_original_running_mean(ad):
    bn = BatchNormConfig(3).init(ad)
    copy = bn.clone()
    copy(T(batch(0), ad))
    close(bn.running_mean.value_sync(), 0.1 * batch(0).mean(0), "original after clone forward")


def test_valid_builds_fresh_running_state_not_shared(ad):
    bn = BatchNormConfig(3).init(ad)
    bn(T(batch(0), ad))
    valid = bn.valid()
    assert valid.running_mean is not bn.running_mean
    before = arr(valid.running_mean.value()).copy()
    bn(T(batch(1), ad))
    bn.running_mean.value_sync()
    np.testing.assert_array_equal(arr(valid.running_mean.value()), before)


def test_inference_without_valid_reads_stats_one_update_stale(ad):
    """burn's ``bnstale`` experiment (the train-vs-inference chapter): the five printed lines."""
    plain = ad.inner()
    bn = BatchNormConfig(3).init(ad)
    x = batch(0)
    bn(T(x, ad))  # one training step
    mean, var = x.mean(0), x.var(0)
    fresh_mean, fresh_var = 0.1 * mean, 0.9 + 0.1 * var
    np.testing.assert_array_equal(arr(bn.running_mean.value()), np.zeros(3))  # 1: still the initial
    stale = bn(T(x, plain))  # 2: uses mean 0 and var 1
    close(stale, x / np.sqrt(1 + EPS), "plain input, no valid()")
    close(bn.running_mean.value_sync(), fresh_mean, "running_mean.value_sync()")  # 3
    half = bn(T(x, plain))  # 4: the mean is fresh now, the variance not
    close(half, (x - fresh_mean) / np.sqrt(1 + EPS), "plain input, after sync")
    full = bn.valid()(T(x, plain))  # 5: valid() synced both
    close(full, (x - fresh_mean) / np.sqrt(fresh_var + EPS), "valid(), plain input")


CASES = [
    ("autodiff init, autodiff input", True, lambda bn: bn, True, True),
    ("autodiff init, plain input", True, lambda bn: bn, False, False),
    ("plain init, plain input", False, lambda bn: bn, False, False),
    ("no_grad(), autodiff input", True, lambda bn: bn.no_grad(), True, True),
    ("freeze(), autodiff input", True, lambda bn: bn.freeze(), True, False),
]


@pytest.mark.parametrize("label, ad_init, prepare, ad_input, updates", CASES, ids=[c[0] for c in CASES])
def test_which_cases_update_running_stats(ad, label, ad_init, prepare, ad_input, updates):
    plain = ad.inner()
    bn = prepare(BatchNormConfig(3).init(ad if ad_init else plain))
    bn(T(batch(0), ad if ad_input else plain))
    expected = 0.1 * batch(0).mean(0) if updates else np.zeros(3)
    close(bn.running_mean.value_sync(), expected, label)


def test_torch_train_mode_under_no_grad_still_updates():
    twin = torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        twin(torch.from_numpy(batch(0)))
    close(twin.running_mean, 0.1 * batch(0).mean(0), "torch train() + no_grad")


class Net(Module):
    def __init__(self, device):
        self.linear = LinearConfig(4, 3).init(device)
        self.norm = BatchNormConfig(3).init(device)

    def forward(self, x):
        return self.norm(self.linear(x))


@pytest.mark.parametrize("how, gamma_has_grad", [("freeze", False), ("freeze+grad", True)])
def test_freeze_plus_set_require_grad_is_torch_bn_eval(ad, how, gamma_has_grad):
    net = Net(ad)
    net.norm = net.norm.freeze() if how == "freeze" else net.norm.freeze().set_require_grad(True)
    x = T(np.arange(32, dtype=np.float32).reshape(8, 4) / 10, ad)
    y = net(x)
    grads = (y * y).sum().backward()
    assert (net.norm.gamma.val().grad(grads) is not None) == gamma_has_grad
    np.testing.assert_array_equal(arr(net.norm.running_mean.value_sync()), np.zeros(3))
    assert not net.norm.training.is_enabled()
    assert not net.valid().train().norm.training.is_enabled()  # frozen survives train()


def test_torch_submodule_eval_keeps_grad_but_train_flips_it_back():
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    net.train()
    net[1].eval()
    x = torch.arange(32.0).reshape(8, 4) / 10
    net(x).pow(2).sum().backward()
    assert net[1].weight.grad is not None and net[1].running_mean.tolist() == [0.0, 0.0, 0.0]
    net.train()
    assert net[1].training  # PyTorch's train() undoes the submodule's eval()


def test_batch_norm_rejects_wrong_channels(ad):
    from minidl.tensor import TensorCheckError

    with pytest.raises(TensorCheckError, match="assert_shape"):
        BatchNormConfig(3).init(ad)(T(np.ones((2, 4)), ad))
