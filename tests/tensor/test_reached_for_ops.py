"""The ops a PyTorch user reaches for, at the Tensor and nn layers, forward and backward against
torch on every device (autodiff ones for the gradients), float32 and float64: silu, softplus,
prod/prod_dim, cross-entropy with class weights and label smoothing, nll_loss, bilinear
align_corners, pools with ceil_mode, 1-D pools and adaptive max pools, and their layers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minidl.nn as nn
from minidl import Device, Tensor, TensorCheckError
from minidl import functional as F
from minidl.backend.dtype import DType

from .support import T, close, randn, tt

#: Every autodiff device, the GPU one included: on Device.wgpu(), which holds float32, int32
#: and bool, the float64 runs skip naming float64 (``_check``).
AD_DEVICES = [pytest.param(Device.ndarray().autodiff, id="ndarray"), pytest.param(Device.flex().autodiff, id="flex"),
              pytest.param(Device.wgpu().autodiff, id="wgpu")]
DTYPES = [np.float32, np.float64]


def _tol(dtype, atol=1e-5):
    return dict(rtol=1e-5 if dtype == np.float32 else 1e-10, atol=atol if dtype == np.float32 else 1e-10)


def _check(make_device, dtype, minidl_fn, torch_fn, *arrays, atol=1e-5):
    """minidl_fn(*tensors) and torch_fn(*tensors) agree in value and in the gradient of a
    random weighting of the output with respect to every input."""
    device = make_device()
    settings = device.settings()
    if not settings.supports(DType.of(dtype)):
        pytest.skip(f"{device.kind} refuses {np.dtype(dtype).name} (it holds {settings.supported_names()})")
    xs = [T(a, device).require_grad() for a in arrays]
    ts = [tt(a).requires_grad_() for a in arrays]
    out, expected = minidl_fn(*xs), torch_fn(*ts)
    close(out, expected, **_tol(dtype, atol))
    weights = randn(tuple(expected.shape), 99, dtype)
    grads = (out * T(weights, device)).sum().backward()
    (expected * tt(weights)).sum().backward()
    for x, t in zip(xs, ts):
        close(x.grad(grads), t.grad, **_tol(dtype, atol))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", AD_DEVICES)
def test_silu_and_softplus_match_torch_forward_and_backward(make, dtype):
    a = randn((4, 6), 1, dtype, 6.0)
    a[0, :3] = [30.0, -30.0, 0.0]  # past the threshold, deep in the tail, the kink of relu
    _check(make, dtype, F.silu, TF.silu, a)
    _check(make, dtype, F.softplus, TF.softplus, a)
    _check(make, dtype, lambda x: F.softplus(x, 2.0, 5.0), lambda t: TF.softplus(t, 2.0, 5.0), a)
    _check(make, dtype, lambda x: F.softplus(x, -1.5), lambda t: TF.softplus(t, -1.5), a)
    _check(make, dtype, nn.Silu().forward, torch.nn.SiLU(), a)
    _check(make, dtype, nn.SoftplusConfig(beta=0.5, threshold=3.0).init().forward,
           torch.nn.Softplus(0.5, 3.0), a)


def test_softplus_of_huge_inputs_stays_finite_with_finite_gradients():
    device = Device.flex().autodiff()
    x = T(np.array([1e4, -1e4, 88.0, 89.0], np.float32), device).require_grad()
    y = F.softplus(x)
    close(y, TF.softplus(torch.tensor([1e4, -1e4, 88.0, 89.0])))
    g = x.grad(y.sum().backward()).to_numpy()
    assert np.all(np.isfinite(g)), g


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", AD_DEVICES)
def test_prod_and_prod_dim_match_torch_forward_and_backward(make, dtype):
    a = randn((3, 4), 2, dtype) + 0.5
    _check(make, dtype, lambda x: x.prod(), lambda t: t.prod().reshape(1), a)
    for dim in (0, 1, -1):
        _check(make, dtype, lambda x, d=dim: x.prod_dim(d), lambda t, d=dim: t.prod(d, keepdim=True), a)


def test_prod_of_ints_is_exact_and_of_nothing_is_one(device):
    a = np.array([[3, -2, 2**20], [1, 0, 7]], np.int64)
    close(T(a, device).prod_dim(1), tt(a).prod(1, keepdim=True))
    close(T(a, device).prod(), tt(a).prod().reshape(1))
    close(T(np.zeros((2, 0), np.float32), device).prod_dim(1), torch.ones(2, 1))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", AD_DEVICES)
def test_cross_entropy_with_weights_and_smoothing_matches_torch(make, dtype, reduction):
    logits = randn((6, 5), 3, dtype, 2.0)
    targets = np.array([0, 4, 1, 1, 3, 2])
    w = [0.5, 1.0, 2.0, 0.25, 1.5]
    for weights, smoothing in [(w, None), (None, 0.1), (w, 0.3), (None, 1.0)]:
        def mine(x, weights=weights, smoothing=smoothing):
            return F.cross_entropy(x, T(targets, x.device), reduction, weights=weights, smoothing=smoothing)

        def theirs(t, weights=weights, smoothing=smoothing):
            weight = None if weights is None else torch.tensor(weights, dtype=t.dtype)
            return TF.cross_entropy(t, tt(targets), weight, reduction=reduction,
                                    label_smoothing=smoothing or 0.0).reshape(1)

        _check(make, dtype, mine, theirs, logits)
    loss = nn.CrossEntropyLossConfig(reduction, tuple(w), 0.2).init()
    _check(make, dtype, lambda x: loss.forward(x, T(targets, x.device)),
           lambda t: torch.nn.CrossEntropyLoss(torch.tensor(w, dtype=t.dtype), reduction=reduction,
                                               label_smoothing=0.2)(t, tt(targets)).reshape(1), logits)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("make", AD_DEVICES)
def test_nll_loss_matches_torch_with_and_without_weights(make, reduction):
    log_probs = np.log(np.random.default_rng(4).dirichlet(np.ones(4), size=5)).astype(np.float32)
    targets = np.array([3, 0, 0, 2, 1])
    for weights in (None, [1.0, 0.5, 3.0, 0.0]):
        def mine(x, weights=weights):
            return F.nll_loss(x, T(targets, x.device), reduction, weights=weights)

        def theirs(t, weights=weights):
            weight = None if weights is None else torch.tensor(weights)
            return TF.nll_loss(t, tt(targets), weight, reduction=reduction).reshape(1)

        _check(make, np.float32, mine, theirs, log_probs)
    _check(make, np.float32, lambda x: nn.NllLoss(reduction).forward(x, T(targets, x.device)),
           lambda t: TF.nll_loss(t, tt(targets), reduction=reduction).reshape(1), log_probs)


def test_loss_arguments_are_checked_by_name(plain):
    logits, targets = T(randn((2, 3)), plain), T(np.array([0, 2]), plain)
    with pytest.raises(TensorCheckError, match="weights must have one weight per class"):
        F.cross_entropy(logits, targets, weights=[1.0, 2.0])
    with pytest.raises(TensorCheckError, match="finite and >= 0"):
        F.cross_entropy(logits, targets, weights=[1.0, -2.0, 1.0])
    with pytest.raises(TensorCheckError, match=r"smoothing must be a number in \[0, 1\]"):
        F.cross_entropy(logits, targets, smoothing=1.5)
    with pytest.raises(TensorCheckError, match="log_probs must have 2 dims"):
        F.nll_loss(T(randn((3,)), plain), targets)
    with pytest.raises(ValueError, match=r"CrossEntropyLossConfig\.smoothing: expected .* in \[0, 1\], found -0.1"):
        nn.CrossEntropyLossConfig(smoothing=-0.1).init()
    with pytest.raises(ValueError, match=r"CrossEntropyLossConfig\.weights: expected a tuple of a finite float"):
        nn.CrossEntropyLossConfig(weights=(1.0, float("nan"))).init()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", AD_DEVICES)
def test_bilinear_align_corners_matches_torch_forward_and_backward(make, dtype):
    a = randn((2, 3, 4, 5), 5, dtype)
    for size in [(7, 9), (3, 2), (1, 1)]:
        _check(make, dtype, lambda x, s=size: F.interpolate(x, s, "bilinear", align_corners=True),
               lambda t, s=size: TF.interpolate(t, size=s, mode="bilinear", align_corners=True), a)
    with pytest.raises(TensorCheckError, match="align_corners=True only applies to mode 'bilinear'"):
        F.interpolate(T(a, make()), (3, 3), "nearest", align_corners=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", AD_DEVICES)
def test_pools_with_ceil_mode_match_torch_forward_and_backward(make, dtype):
    a = randn((2, 3, 7, 6), 6, dtype)
    for k, s, p in [(2, 2, 0), (3, 2, 1), (3, 3, 0), (2, 3, 1)]:
        _check(make, dtype, lambda x, k=k, s=s, p=p: F.max_pool2d(x, k, s, p, ceil_mode=True),
               lambda t, k=k, s=s, p=p: TF.max_pool2d(t, k, s, p, ceil_mode=True), a)
        for inc in (True, False):
            _check(make, dtype, lambda x, k=k, s=s, p=p, inc=inc: F.avg_pool2d(x, k, s, p, inc, ceil_mode=True),
                   lambda t, k=k, s=s, p=p, inc=inc: TF.avg_pool2d(t, k, s, p, ceil_mode=True, count_include_pad=inc),
                   a)
    pool = nn.MaxPool2dConfig((3, 3), (2, 2), ceil_mode=True).init()
    _check(make, dtype, pool.forward, lambda t: TF.max_pool2d(t, 3, 2, ceil_mode=True), a)
    pool = nn.AvgPool2dConfig((2, 2), (2, 2), ceil_mode=True).init()
    _check(make, dtype, pool.forward, lambda t: TF.avg_pool2d(t, 2, 2, ceil_mode=True), a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", AD_DEVICES)
def test_1d_pools_and_adaptive_max_pools_match_torch_forward_and_backward(make, dtype):
    a = randn((2, 3, 11), 7, dtype)
    _check(make, dtype, lambda x: F.max_pool1d(x, 3, 2, 1, 1, True), lambda t: TF.max_pool1d(t, 3, 2, 1, 1, True), a)
    _check(make, dtype, lambda x: F.max_pool1d(x, 2, dilation=2), lambda t: TF.max_pool1d(t, 2, dilation=2), a)
    _check(make, dtype, lambda x: F.avg_pool1d(x, 3, 2, 1, False, True),
           lambda t: TF.avg_pool1d(t, 3, 2, 1, True, False), a)
    _check(make, dtype, lambda x: F.adaptive_avg_pool1d(x, 4), lambda t: TF.adaptive_avg_pool1d(t, 4), a)
    _check(make, dtype, lambda x: F.adaptive_max_pool1d(x, 4), lambda t: TF.adaptive_max_pool1d(t, 4), a)
    _check(make, dtype, nn.MaxPool1dConfig(3, 2, 1, ceil_mode=True).init().forward,
           lambda t: TF.max_pool1d(t, 3, 2, 1, ceil_mode=True), a)
    _check(make, dtype, nn.AvgPool1dConfig(2, 2).init().forward, lambda t: TF.avg_pool1d(t, 2, 2), a)
    _check(make, dtype, nn.AdaptiveAvgPool1dConfig(5).init().forward, lambda t: TF.adaptive_avg_pool1d(t, 5), a)
    _check(make, dtype, nn.AdaptiveMaxPool1dConfig(5).init().forward, lambda t: TF.adaptive_max_pool1d(t, 5), a)
    b = randn((2, 3, 5, 7), 8, dtype)
    for size in [(2, 3), (5, 7), (8, 9), 1]:
        _check(make, dtype, lambda x, s=size: F.adaptive_max_pool2d(x, s), lambda t, s=size: TF.adaptive_max_pool2d(t, s), b)
    _check(make, dtype, nn.AdaptiveMaxPool2dConfig((3, 2)).init().forward,
           lambda t: TF.adaptive_max_pool2d(t, (3, 2)), b)
    values, indices = F.adaptive_max_pool2d_with_indices(T(b, make()), (2, 3))
    close(indices, TF.adaptive_max_pool2d(tt(b), (2, 3), return_indices=True)[1])


def test_pool_arguments_are_checked_by_name(plain):
    x = T(randn((1, 2, 6)), plain)
    with pytest.raises(TensorCheckError, match="x must have 3 dims"):
        F.max_pool1d(T(randn((2, 6)), plain), 2)
    with pytest.raises(TensorCheckError, match="ceil_mode must be a bool"):
        F.max_pool2d(T(randn((1, 1, 4, 4)), plain), 2, ceil_mode="yes")
    with pytest.raises(TensorCheckError, match="output_size must be an int >= 1"):
        F.adaptive_max_pool1d(x, 0)
    with pytest.raises(TypeError, match=r"MaxPool1dConfig\.ceil_mode: expected a bool \(True or False\), found 1 \(int\)"):
        nn.MaxPool1dConfig(2, ceil_mode=1).init()
    assert isinstance(F.adaptive_max_pool2d(T(randn((1, 1, 3, 3)), plain), 2), Tensor)


@pytest.mark.parametrize("make", AD_DEVICES)
def test_prod_gradient_with_zeros_is_the_product_of_the_others_like_torch(make):
    a = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]], np.float32)
    _check(make, np.float32, lambda x: x.prod(), lambda t: t.prod().reshape(1), a)
    for dim in (0, 1):
        _check(make, np.float32, lambda x, d=dim: x.prod_dim(d), lambda t, d=dim: t.prod(d, keepdim=True), a)
    _check(make, np.float32, lambda x: x.prod_dim(1), lambda t: t.prod(1, keepdim=True), a[:, :1].copy())


@pytest.mark.parametrize("bad", [-1, 5])
def test_embedding_layer_refuses_an_id_outside_the_vocabulary_naming_it(device, bad):
    layer = nn.EmbeddingConfig(5, 3).init(device)
    with pytest.raises(TensorCheckError, match=rf"(?s)'embedding'.*0 <= indices < 5, found min {min(bad, 0)}, max {max(bad, 1)}"):
        layer.forward(T(np.array([[0, bad, 1]]), device))
    with pytest.raises(IndexError):
        torch.nn.Embedding(5, 3)(torch.tensor([[0, bad, 1]]))
