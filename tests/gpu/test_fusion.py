"""Fusion on the GPU: ``Device.fusion_wgpu()`` is ``Fusion[Wgpu]``, every op recorded and each
element-wise block run as one generated WGSL kernel (burn's ``Fusion<CubeBackend<WgpuRuntime>>``).

Fused == eager on the GPU device (``Device.wgpu()``) for random element-wise graphs, layer_norm
and an MLP's gradients, and the dispatches are counted: a chain is one kernel, not one per op.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from minidl import Device, Tensor
from minidl.tensor import module as F
from minidl_book.fusion_sweep import chain

from .support import needs_adapter

pytestmark = needs_adapter

EAGER, FUSED = Device.wgpu(), Device.fusion_wgpu()


def rt():
    from minidl.backends.wgpu.runtime import runtime

    return runtime(0)


def fused_backend():
    from minidl.backends.wgpu.fusion import FusionWgpu

    return FusionWgpu


def pair(array: np.ndarray) -> tuple[Tensor, Tensor]:
    return Tensor.from_numpy(array, EAGER), Tensor.from_numpy(array, FUSED)


def test_the_fused_gpu_device_is_fusion_over_wgpu_and_records_every_op():
    from minidl.backends.wgpu import Wgpu

    backend = fused_backend()
    assert backend.__name__ == "Fusion[Wgpu]" and backend.inner_backend() is Wgpu
    assert backend.stream.eager_below == 0  # burn's policy on a GPU: nothing runs eagerly
    e, f = pair(np.ones((2, 3), np.float32))
    assert f.device is FUSED and (f * 2.0).primitive.backend_tensor.pending


def test_the_8_op_chain_is_one_dispatch_and_equals_eager():
    data = np.random.default_rng(0).standard_normal((64, 100)).astype(np.float32)
    e, f = pair(data)
    with rt().record_dispatches() as eager_made:
        want = chain(e).to_numpy()
    with rt().record_dispatches() as fused_made:
        got = chain(f).to_numpy()
    np.testing.assert_array_equal(got, want)
    assert len(eager_made) == 8 and len(fused_made) == 1
    kernel = fused_backend().stream.history[-1].plan.steps[0].kernel
    assert kernel.language == "wgsl" and "out0[i]" in kernel.source and "out1" not in kernel.source


@pytest.mark.parametrize(
    ("n", "offset", "form"),
    [(4096, 0, "vec4"), (4099, 0, "out0[i]"), (4096, 4, "vec4"), (4096, 1, "out0[i]")],
)
def test_the_vector_form_runs_where_every_input_is_contiguous_and_4_aligned(n, offset, form):
    """Four elements a thread (vec4 loads and stores) when the size and every input's offset
    are multiples of 4; the one-element form otherwise; equal to eager either way, a held bool
    intermediate included (a second, vec4<u32>, output)."""
    data = np.random.default_rng(3).standard_normal(n + offset).astype(np.float32)
    e, f = (t.slice([slice(offset, offset + n)]) for t in pair(data))
    me, mf = e > 0.5, f > 0.5
    with rt().record_dispatches() as made:
        got = chain(f * mf.float()).to_numpy()
        mask = mf.to_numpy()
    np.testing.assert_array_equal(got, chain(e * me.float()).to_numpy())
    np.testing.assert_array_equal(mask, me.to_numpy())
    fused = [d for d in made if "out1" in d.source]
    assert len(fused) == 1 and form in fused[0].source, [d.entry for d in made]


def test_a_held_intermediate_is_a_second_output_of_the_same_kernel():
    data = np.random.default_rng(1).standard_normal((8, 33)).astype(np.float32)
    e, f = pair(data)
    he, hf = e * 3.0 + 1.0, f * 3.0 + 1.0
    with rt().record_dispatches() as made:
        got = (hf.exp() - hf).to_numpy()
    assert len(made) == 1
    np.testing.assert_allclose(got, (he.exp() - he).to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(hf.to_numpy(), he.to_numpy(), rtol=1e-6)


def test_broadcast_and_strided_inputs_are_read_in_place():
    rng = np.random.default_rng(2)
    x, b, w = (rng.standard_normal(s).astype(np.float32) for s in ((5, 7), (1, 7), (7, 5)))
    (xe, xf), (be, bf), (we, wf) = pair(x), pair(b), pair(w)
    want = ((xe + we.swap_dims(0, 1)) * be).tanh().to_numpy()
    with rt().record_dispatches() as made:
        got = ((xf + wf.swap_dims(0, 1)) * bf).tanh().to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert len(made) == 1  # a transposed leaf is walked by its strides, not copied


OPS = [
    (2, lambda a, b: a + b),
    (2, lambda a, b: a - b),
    (2, lambda a, b: a * b),
    (2, lambda a, b: a / (b.abs() + 1.0)),
    (1, lambda a: a.relu()),
    (1, lambda a: a.tanh()),
    (1, lambda a: -a),
    (1, lambda a: a.sin()),
    (1, lambda a: a.abs().sqrt()),
    (1, lambda a: a * 0.5 + 0.25),
    (2, lambda a, b: b.mask_where(a.greater(b), a)),
    (1, lambda a: a.clamp(-0.5, 0.75)),
    (1, lambda a: a.mask_fill(a.lower_elem(0.1), 0.3)),
    (1, lambda a: a.exp().log1p()),
    (1, lambda a: a.erf()),
    (1, lambda a: a.powf_scalar(2.0)),
    (1, lambda a: a.abs().powf_scalar(0.5)),
]


@settings(deadline=None, max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=6),
    graph=st.lists(
        st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 99), st.integers(0, 99)),
        min_size=2,
        max_size=8,
    ),
    seed=st.integers(0, 2**16),
)
def test_random_element_wise_graphs_fused_equal_eager_gpu(shapes, graph, seed):
    rng = np.random.default_rng(seed)
    rank = len(shapes.result_shape)
    arrays = [
        rng.uniform(-2, 2, (1,) * (rank - len(s)) + tuple(s)).astype(np.float32)
        for s in shapes.input_shapes
    ]
    eager, fused = (
        [Tensor.from_numpy(a, EAGER) for a in arrays],
        [Tensor.from_numpy(a, FUSED) for a in arrays],
    )
    for index, i, j in graph:
        arity, fn = OPS[index]
        picks = [i % len(eager), j % len(eager)][:arity]
        eager.append(fn(*[eager[p] for p in picks]))
        fused.append(fn(*[fused[p] for p in picks]))
    want = eager[-1].to_numpy()
    got = fused[-1].to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * (1 + np.abs(want).max()))


def test_layer_norm_fused_equals_eager_in_fewer_dispatches():
    rng = np.random.default_rng(3)
    x, g, b = (rng.standard_normal(s).astype(np.float32) for s in ((16, 64), (64,), (64,)))
    (xe, xf), (ge, gf), (be, bf) = pair(x), pair(g), pair(b)
    with rt().record_dispatches() as eager_made:
        want = F.layer_norm(xe, ge, be, 1e-5).to_numpy()
    with rt().record_dispatches() as fused_made:
        got = F.layer_norm(xf, gf, bf, 1e-5).to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len(fused_made) < len(eager_made)


def mlp_grads(device: Device, arrays: dict) -> dict:
    ad = device.autodiff()
    x, y = Tensor.from_numpy(arrays["x"], ad), Tensor.from_numpy(arrays["y"], ad)
    w1, b1, w2 = (Tensor.from_numpy(arrays[k], ad).require_grad() for k in ("w1", "b1", "w2"))
    h = (x.matmul(w1) + b1).gelu()
    loss = ((h.matmul(w2) - y) ** 2.0).mean()
    grads = loss.backward()
    return {
        "loss": loss.to_numpy(),
        **{k: t.grad(grads).to_numpy() for k, t in (("w1", w1), ("b1", b1), ("w2", w2))},
    }


def test_mlp_gradients_fused_equal_eager_gpu_in_fewer_dispatches():
    rng = np.random.default_rng(4)
    arrays = {
        "x": rng.standard_normal((32, 24)),
        "y": rng.standard_normal((32, 8)),
        "w1": rng.standard_normal((24, 48)) * 0.2,
        "b1": rng.standard_normal((1, 48)) * 0.1,
        "w2": rng.standard_normal((48, 8)) * 0.2,
    }
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    with rt().record_dispatches() as eager_made:
        want = mlp_grads(EAGER, arrays)
    mlp_grads(FUSED, arrays)  # the plans' search, once
    with rt().record_dispatches() as fused_made:
        got = mlp_grads(FUSED, arrays)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=2e-5, atol=2e-6, err_msg=k)
    assert len(fused_made) < len(eager_made)


@pytest.mark.parametrize("n", [1, 1000, 70_000])
def test_sizes_past_one_workgroup_grid_row(n):
    data = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    e, f = pair(data)
    np.testing.assert_array_equal(chain(f).to_numpy(), chain(e).to_numpy())


@settings(deadline=None, max_examples=10, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    seed=st.integers(0, 2**16),
    reduce=st.sampled_from(["last", "first", "all", "max", "min"]),
    graph=st.lists(st.integers(0, len(OPS) - 1), min_size=1, max_size=4),
)
def test_reductions_with_prologue_and_epilogue_fused_equal_eager_gpu(shape, seed, reduce, graph):
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(-2, 2, shape).astype(np.float32) for _ in range(2))
    results = []
    for dev in (EAGER, FUSED):
        x, y = Tensor.from_numpy(a, dev), Tensor.from_numpy(b, dev)
        for index in graph:
            arity, fn = OPS[index]
            x = fn(x, y) if arity == 2 else fn(x)
        dim = {"last": x.rank - 1, "first": 0}.get(reduce, x.rank - 1)
        if reduce == "all":
            r = x.sum()
        elif reduce == "max":
            r = x.max_dim(dim)
        elif reduce == "min":
            r = x.min_dim(dim)
        else:
            r = x.sum_dim(dim)
        results.append(((r * 0.5 + 1.0) * x if reduce != "all" else r).to_numpy())
    np.testing.assert_allclose(
        results[1], results[0], rtol=1e-5, atol=1e-5 * (1 + np.abs(results[0]).max())
    )


def test_the_cnn_training_step_fused_equals_eager_gpu_with_3x_fewer_dispatches():
    from minidl_book.workloads import minidl_cnn_step

    steps, losses, dispatches = {}, {}, {}
    for name, dev in (("eager", EAGER), ("fused", FUSED)):
        # made just before it runs: it seeds the device's random stream (dropout), shared by both
        step = steps[name] = minidl_cnn_step(dev.autodiff())
        losses[name] = [step() for _ in range(3)]
        with rt().record_dispatches() as made:
            losses[name].append(step())
        dispatches[name] = len(made)
    np.testing.assert_allclose(losses["fused"], losses["eager"], rtol=1e-4)
    weights = {
        name: step.state["model"].conv1.weight.val().to_numpy() for name, step in steps.items()
    }
    np.testing.assert_allclose(weights["fused"], weights["eager"], rtol=1e-4, atol=1e-5)
    assert dispatches["eager"] >= 3 * dispatches["fused"], dispatches


@pytest.mark.parametrize("m,k,n", [(5, 7, 3), (33, 20, 40)])
def test_a_matmul_and_its_epilogue_are_one_dispatch_and_equal_eager(m, k, n):
    rng = np.random.default_rng(6)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (n, k), (1, n)))
    (xe, xf), (we, wf), (be, bf) = pair(x), pair(w), pair(b)
    want = (xe.matmul(we.swap_dims(0, 1)) + be).relu().to_numpy()
    with rt().record_dispatches() as made:
        got = (xf.matmul(wf.swap_dims(0, 1)) + bf).relu().to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len(made) == 1 and fused_backend().stream.history[-1].plan.blocks[0].fuser == "matmul"
    held = xf.matmul(wf.swap_dims(0, 1))  # the product kept: a second output of the same kernel
    also = (held * 2.0).exp()
    np.testing.assert_allclose(
        also.to_numpy(), (xe.matmul(we.swap_dims(0, 1)) * 2.0).exp().to_numpy(), rtol=1e-5
    )
    np.testing.assert_allclose(held.to_numpy(), xe.matmul(we.swap_dims(0, 1)).to_numpy(), rtol=1e-6)


def test_reductions_and_matmuls_longer_than_a_shader_loop_stay_right():
    """lavapipe ends a shader's loops after 65535 iterations and carries on: a fused reduce or
    matmul kernel looping over 300000 elements or K = 20000 summed part of them. Such blocks
    are left to eager Wgpu, whose ops split long loops."""
    d = Device.fusion_wgpu()
    x = np.random.default_rng(0).random((2, 300_000), dtype=np.float32)
    got = (Tensor.from_numpy(x, d) * 2.0).sum_dim(1).to_numpy()
    np.testing.assert_allclose(got, (x.astype(np.float64) * 2).sum(1, keepdims=True), rtol=1e-5)
    a = np.ones((2, 20_000), np.float32)
    b = np.ones((20_000, 3), np.float32)
    got = ((Tensor.from_numpy(a, d) @ Tensor.from_numpy(b, d)) + 1.0).to_numpy()
    np.testing.assert_array_equal(got, np.full((2, 3), 20_001, np.float32))
