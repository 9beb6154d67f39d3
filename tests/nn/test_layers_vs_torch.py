"""Every layer against its torch.nn twin with copied weights: forward, input gradient and
parameter gradients (float32, ~1e-5), on each device kind under autodiff."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minidl.dispatch import Device
from minidl.nn import (
    AdaptiveAvgPool2dConfig,
    AvgPool2dConfig,
    BatchNormConfig,
    Conv1dConfig,
    Conv2dConfig,
    ConvTranspose2dConfig,
    CrossEntropyLossConfig,
    EmbeddingConfig,
    Gelu,
    Initializer,
    LayerNormConfig,
    LeakyReluConfig,
    LinearConfig,
    LinearLayout,
    MaxPool2dConfig,
    MseLoss,
    PaddingConfig1d,
    PaddingConfig2d,
    Relu,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)
from minidl.tensor import Tensor, TensorCheckError

from .support import (
    RandomizeParams,
    T,
    arr,
    check_against_torch,
    close,
    copy_into_torch,
    identity,
    randn,
    transpose,
)

torch.manual_seed(0)


@pytest.mark.parametrize("layout", ["Row", "Col"])
def test_linear_matches_torch_with_the_weight_transposed(ad, layout):
    layer = LinearConfig(5, 3).with_layout(getattr(LinearLayout, layout)).init(ad)
    assert layer.weight.val().shape == (5, 3)  # [d_input, d_output] whatever the layout
    twin = torch.nn.Linear(5, 3)
    check_against_torch(layer, twin, randn((2, 4, 5)), ad,
                        {"weight": ("weight", transpose), "bias": ("bias", identity)})


def test_linear_without_bias_and_1d_input(ad):
    layer = LinearConfig(4, 2).with_bias(False).init(ad)
    twin = torch.nn.Linear(4, 2, bias=False)
    check_against_torch(layer, twin, randn((4,)), ad, {"weight": ("weight", transpose)})


def test_linear_rejects_a_wrong_last_dim_with_assert_shape(plain):
    layer = LinearConfig(4, 2).init(plain)
    with pytest.raises(TensorCheckError, match=r'assert_shape!: tensor "input" has shape \[2, 5\], expected \[\.\., 4\]'):
        layer(T(np.ones((2, 5)), plain))


def test_conv1d_matches_torch(ad):
    layer = Conv1dConfig(4, 6, 3, stride=2, dilation=1, groups=2, padding=PaddingConfig1d.Explicit(1, 1)).init(ad)
    twin = torch.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)
    check_against_torch(layer, twin, randn((2, 4, 11)), ad,
                        {"weight": ("weight", identity), "bias": ("bias", identity)})


def test_conv2d_matches_torch(ad):
    layer = (Conv2dConfig((4, 6), (3, 2)).with_stride((2, 1)).with_dilation((1, 2)).with_groups(2)
             .with_padding(PaddingConfig2d.Explicit(1, 2, 1, 2)).init(ad))
    twin = torch.nn.Conv2d(4, 6, (3, 2), stride=(2, 1), dilation=(1, 2), groups=2, padding=(1, 2))
    check_against_torch(layer, twin, randn((2, 4, 7, 6)), ad,
                        {"weight": ("weight", identity), "bias": ("bias", identity)})


@pytest.mark.parametrize("kernel, size", [((3, 3), (6, 7)), ((4, 2), (5, 6)), ((2, 5), (8, 8))])
def test_conv2d_same_padding_puts_the_odd_remainder_at_the_end(ad, kernel, size):
    layer = Conv2dConfig((2, 3), kernel).with_padding(PaddingConfig2d.Same).init(ad)
    kh, kw = kernel
    th, tw = kh - 1, kw - 1  # total padding for stride 1
    pads = (tw // 2, tw - tw // 2, th // 2, th - th // 2)  # F.pad order: left, right, top, bottom

    class Twin(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 3, kernel)

        def forward(self, x):
            return self.conv(F.pad(x, pads))

    twin = Twin()
    out = check_against_torch(layer, twin, randn((1, 2, *size)), ad,
                              {"weight": ("conv.weight", identity), "bias": ("conv.bias", identity)})
    assert out.shape[2:] == size


def test_conv_transpose2d_matches_torch(ad):
    layer = ConvTranspose2dConfig((4, 6), (3, 3), stride=(2, 2), padding=(1, 1), padding_out=(1, 1), groups=2).init(ad)
    assert layer.weight.val().shape == (4, 3, 3, 3)
    twin = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    check_against_torch(layer, twin, randn((2, 4, 5, 4)), ad,
                        {"weight": ("weight", identity), "bias": ("bias", identity)})


def test_max_pool2d_matches_torch(ad):
    layer = MaxPool2dConfig((3, 3), strides=(2, 2), padding=PaddingConfig2d.Explicit(1, 1, 1, 1)).init()
    check_against_torch(layer, torch.nn.MaxPool2d(3, 2, 1), randn((2, 3, 7, 8)), ad, {})


def test_max_pool2d_default_strides_are_the_kernel_size_like_burn(ad):
    # burn-nn pool/max_pool2d.rs: ``#[config(default = "kernel_size")] strides`` (since 0.18)
    config = MaxPool2dConfig((2, 2))
    assert config.strides == (2, 2) and config.init().strides == (2, 2)
    assert MaxPool2dConfig((3, 2)).strides == (3, 2)
    assert config.with_strides((1, 1)).init().strides == (1, 1)
    out = check_against_torch(config.init(), torch.nn.MaxPool2d(2), randn((2, 3, 6, 7)), ad, {})
    assert out.shape == (2, 3, 3, 3)


def test_other_pools_default_their_stride_to_the_kernel_size_like_burn(ad):
    # burn-nn pool/avg_pool2d.rs, max_pool1d.rs, avg_pool1d.rs: the same
    # ``#[config(default = "kernel_size")]`` as MaxPool2d (PR #3338, since 0.18)
    from minidl.nn import AvgPool1dConfig, MaxPool1dConfig

    assert AvgPool2dConfig((3, 2)).strides == (3, 2) and AvgPool2dConfig((2, 2)).init().strides == (2, 2)
    assert MaxPool1dConfig(3).stride == 3 and AvgPool1dConfig(3).init().stride == 3
    assert MaxPool1dConfig(3, stride=1).stride == 1
    out = check_against_torch(AvgPool2dConfig((2, 2)).init(), torch.nn.AvgPool2d(2), randn((2, 3, 6, 7)), ad, {})
    assert out.shape == (2, 3, 3, 3)
    for config, twin in ((MaxPool1dConfig(3), torch.nn.MaxPool1d(3)), (AvgPool1dConfig(3), torch.nn.AvgPool1d(3))):
        out = check_against_torch(config.init(), twin, randn((2, 3, 10)), ad, {})
        assert out.shape == (2, 3, 3)


@pytest.mark.parametrize("include", [True, False])
def test_avg_pool2d_matches_torch(ad, include):
    layer = AvgPool2dConfig((3, 3), strides=(2, 2), padding=PaddingConfig2d.Explicit(1, 1, 1, 1),
                            count_include_pad=include).init()
    twin = torch.nn.AvgPool2d(3, 2, 1, count_include_pad=include)
    check_against_torch(layer, twin, randn((2, 3, 7, 8)), ad, {})


def test_pools_refuse_asymmetric_padding(plain):
    pool = MaxPool2dConfig((2, 2), strides=(1, 1), padding=PaddingConfig2d.Same).init()
    with pytest.raises(ValueError, match="asymmetric padding"):
        pool(T(randn((1, 1, 4, 4)), plain))


def test_adaptive_avg_pool2d_matches_torch(ad):
    layer = AdaptiveAvgPool2dConfig((3, 2)).init()
    check_against_torch(layer, torch.nn.AdaptiveAvgPool2d((3, 2)), randn((2, 3, 7, 5)), ad, {})


def test_layer_norm_matches_torch(ad):
    layer = LayerNormConfig(6).init(ad)
    layer = layer.map(RandomizeParams(seed=3))
    twin = torch.nn.LayerNorm(6, eps=1e-5)
    check_against_torch(layer, twin, randn((2, 3, 6), scale=3.0), ad,
                        {"gamma": ("weight", identity), "beta": ("bias", identity)})


def test_layer_norm_computes_float16_in_float32_and_casts_back(plain):
    if plain.kind == "wgpu":
        pytest.skip("Device.wgpu() refuses float16 (tests/gpu checks the refusal)")
    layer = LayerNormConfig(8).init(plain)
    x = randn((3, 8), scale=200.0)  # sums of squares overflow float16
    out = layer(Tensor.from_numpy(x.astype(np.float16), device=plain))
    assert out.dtype.value == "float16"
    expected = F.layer_norm(torch.from_numpy(x.astype(np.float16).astype(np.float32)), (8,), eps=1e-5)
    assert np.all(np.isfinite(arr(out)))
    close(arr(out).astype(np.float32), expected, "float16 layer norm", rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5)])
def test_batch_norm_training_path_matches_torch_train_mode(ad, shape):
    layer = BatchNormConfig(3).init(ad).map(RandomizeParams(seed=4))
    twin = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d}[len(shape)](3)
    check_against_torch(layer, twin, randn(shape, scale=2.0), ad,
                        {"gamma": ("weight", identity), "beta": ("bias", identity)}, rtol=1e-5, atol=1e-5)


def test_batch_norm_inference_path_matches_torch_eval_mode(ad):
    layer = BatchNormConfig(3).init(ad).map(RandomizeParams(seed=5))
    for k in range(2):
        layer(T(randn((6, 3), seed=10 + k), ad))
    valid = layer.valid()
    twin = torch.nn.BatchNorm1d(3).eval()
    with torch.no_grad():
        twin.weight.copy_(torch.from_numpy(arr(valid.gamma.val())))
        twin.bias.copy_(torch.from_numpy(arr(valid.beta.val())))
        twin.running_mean.copy_(torch.from_numpy(arr(valid.running_mean.value())))
        twin.running_var.copy_(torch.from_numpy(arr(valid.running_var.value())))
    x = randn((5, 3), seed=20)
    close(valid(T(x, ad.inner())), twin(torch.from_numpy(x)), "inference output")


def test_embedding_matches_torch(ad):
    layer = EmbeddingConfig(10, 4).init(ad)
    twin = torch.nn.Embedding(10, 4)
    copy_into_torch(layer, twin, {"weight": ("weight", identity)})
    idx = np.array([[1, 3, 3], [9, 0, 1]], dtype=np.int64)
    out = layer(Tensor.from_numpy(idx, device=ad))
    expected = twin(torch.from_numpy(idx))
    close(out, expected, "forward")
    upstream = randn(out.shape, seed=2)
    grads = (out * T(upstream, ad)).sum().backward()
    (expected * torch.from_numpy(upstream)).sum().backward()
    close(layer.weight.val().grad(grads), twin.weight.grad, "weight gradient")


def test_embedding_starts_standard_normal():
    layer = EmbeddingConfig(200, 100).init(Device.ndarray())
    assert layer.weight.val().shape == (200, 100)
    values = arr(layer.weight.val())
    assert abs(values.mean()) < 0.02 and abs(values.std() - 1.0) < 0.02
    assert EmbeddingConfig(2, 2).initializer == Initializer.Normal(mean=0.0, std=1.0)


@pytest.mark.parametrize("ours, theirs", [
    (Relu(), torch.nn.ReLU()), (Gelu(), torch.nn.GELU()), (Sigmoid(), torch.nn.Sigmoid()),
    (Tanh(), torch.nn.Tanh()), (LeakyReluConfig(0.2).init(), torch.nn.LeakyReLU(0.2)),
    (Softmax(1), torch.nn.Softmax(1)),
], ids=["relu", "gelu", "sigmoid", "tanh", "leaky_relu", "softmax"])
def test_activations_match_torch(ad, ours, theirs):
    check_against_torch(ours, theirs, randn((3, 5), scale=2.0), ad, {})


def test_cross_entropy_loss_matches_torch(ad):
    logits = randn((6, 4), scale=2.0)
    targets = np.array([0, 3, 1, 1, 2, 3], dtype=np.int64)
    x = T(logits, ad).require_grad()
    loss = CrossEntropyLossConfig().init()(x, Tensor.from_numpy(targets, device=ad))
    xt = torch.from_numpy(logits.copy()).requires_grad_(True)
    expected = torch.nn.CrossEntropyLoss()(xt, torch.from_numpy(targets))
    close(loss, expected.reshape(1), "loss")
    grads = loss.backward()
    expected.backward()
    close(x.grad(grads), xt.grad, "logits gradient")


def test_mse_loss_matches_torch(ad):
    a, b = randn((4, 3), seed=1), randn((4, 3), seed=2)
    x = T(a, ad).require_grad()
    loss = MseLoss()(x, T(b, ad))
    xt = torch.from_numpy(a.copy()).requires_grad_(True)
    expected = torch.nn.MSELoss()(xt, torch.from_numpy(b))
    close(loss, expected.reshape(1), "loss")
    grads = loss.backward()
    expected.backward()
    close(x.grad(grads), xt.grad, "gradient")


def test_sequential_matches_torch_sequential(ad):
    ours = Sequential(LinearConfig(4, 8).init(ad), Relu(), LinearConfig(8, 2).init(ad))
    twin = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    check_against_torch(ours, twin, randn((5, 4)), ad, {
        "layers.0.weight": ("0.weight", transpose), "layers.0.bias": ("0.bias", identity),
        "layers.2.weight": ("2.weight", transpose), "layers.2.bias": ("2.bias", identity)})


def test_conv2d_same_padding_counts_dilation_like_torch_not_burn(ad):
    """minidl's Same pads dilation * (kernel - 1) in total, as PyTorch's padding="same";
    burn's calculate_same_padding (burn-nn padding.rs, v0.22.0-pre.2 and main) ignores the
    dilation, so burn pads (1, 1) here and a 3 x 3, dilation-2 layer turns 8 x 8 into 6 x 6."""
    assert PaddingConfig2d.Same.pads(8, 8, (3, 3), (1, 1), (2, 2)) == (2, 2, 2, 2)
    layer = (Conv2dConfig((2, 3), (3, 3)).with_dilation((2, 2))
             .with_padding(PaddingConfig2d.Same).init(ad))
    twin = torch.nn.Conv2d(2, 3, (3, 3), dilation=2, padding="same")
    out = check_against_torch(layer, twin, randn((1, 2, 8, 8)), ad,
                              {"weight": ("weight", identity), "bias": ("bias", identity)})
    assert out.shape[2:] == (8, 8)
