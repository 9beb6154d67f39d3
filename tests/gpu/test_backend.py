"""The GPU backend's own contract, beyond the conformance suite it also runs
(tests/backend, id ``wgpu``): the device and its routing, buffers staying on the device,
views, dtypes, the runtime's cache, batching, limits, timeout and missing-adapter error, the
counter-based random stream, and autodiff through Tensor. Float32 tolerances: rtol 1e-5,
atol 1e-6 element-wise; sums and products as the conformance suite's ``sum_atol``."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.backend import Distribution
from minidl.backends.wgpu import Wgpu, ops, shaders
from minidl.backends.wgpu import runtime as rt_module
from minidl.backends.wgpu.tensor import WgpuTensor
from minidl.dispatch import backend_for
from minidl.tensor.functional import softmax

from .support import needs_adapter

pytestmark = needs_adapter


def rt():
    return rt_module.runtime(0)


def T(array, device=None):
    return Tensor.from_data(np.asarray(array), device or Device.wgpu())


def test_the_device_routes_to_wgpu_and_prints_as_burn_names_it():
    device = Device.wgpu()
    assert device is Device("wgpu") and repr(device) == "Device.wgpu()"
    assert backend_for(device) is Wgpu
    assert repr(device.autodiff()) == "Device.wgpu().autodiff()"
    assert backend_for(device.autodiff()).__name__.startswith("Autodiff")
    assert "llvmpipe" in Wgpu.adapter_name(device) or Wgpu.adapter_name(device)


def test_results_stay_on_the_device_until_read():
    x = T(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = (x * 2.0 + 1.0).exp().sum_dim(1)
    assert isinstance(y.primitive.backend_tensor, WgpuTensor)
    np.testing.assert_allclose(y.to_numpy(), np.exp(np.arange(6).reshape(2, 3) * 2.0 + 1).sum(1, keepdims=True),
                               rtol=1e-5)


def test_layout_ops_are_views_of_the_same_buffer():
    x = ops._upload("t", np.arange(24, dtype=np.float32).reshape(2, 3, 4), "f", Device.wgpu())
    views = [Wgpu.float_reshape(x, (6, 4)), Wgpu.float_permute(x, (2, 0, 1)), Wgpu.float_flip(x, (1,)),
             Wgpu.float_slice(x, [slice(None), slice(1, 3), slice(None, None, 2)]),
             Wgpu.float_expand(Wgpu.float_slice(x, [slice(0, 1)]), (5, 3, 4)), Wgpu.float_swap_dims(x, 0, 2)]
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    expected = [host.reshape(6, 4), host.transpose(2, 0, 1), host[:, ::-1], host[:, 1:3, ::2],
                np.broadcast_to(host[:1], (5, 3, 4)), host.swapaxes(0, 2)]
    for view, want in zip(views, expected, strict=True):
        assert view.buffer is x.buffer
        np.testing.assert_array_equal(ops.read(view), want)
    # a reshape of a non-contiguous view copies, as NumPy's does
    assert Wgpu.float_reshape(views[1], (24,)).buffer is not x.buffer


def test_64_bit_dtypes_are_refused_naming_what_the_device_supports():
    with pytest.raises(TypeError, match=r"float64 .*float32, int32 and bool"):
        Tensor.from_data(np.zeros(3, np.float64), Device.wgpu(), "float64")
    # float64 data given without a dtype takes the device's float32, as burn's defaults do
    assert T(np.full(3, 0.1, np.float64)).to_numpy().tolist() == np.full(3, 0.1, np.float32).tolist()
    with pytest.raises(TypeError, match=r"float64 .*float32, int32 and bool"):
        T(np.zeros(3, np.float32)).cast("float64")
    # an explicit int64 is refused wherever it is asked for, never narrowed silently
    ints = T(np.array([1, -2, 3], np.int32))
    device = Device.wgpu()
    asks = [lambda: ints.cast("int64"), lambda: T(np.zeros(3, np.float32)).int("int64"),
            lambda: Tensor.from_data([1, 2], device, "int64"), lambda: Tensor.zeros([2], device, "int64"),
            lambda: Tensor.full([2], 3, device, "int64"), lambda: Tensor.arange(4, device=device, dtype="int64"),
            lambda: Tensor.from_data([True], device).int("int64"),
            lambda: Tensor.random([2], Distribution.uniform(0, 4), device, "int64"),
            lambda: Tensor.full([2], 1.0, device.autodiff(), "float64")]
    for ask in asks:
        with pytest.raises(TypeError, match=r"(int|float)64 is not supported on Device.wgpu\(\).*float32, int32 and bool"):
            ask()


def test_int_data_without_a_dtype_takes_the_devices_int32():
    """burn's per-device default: Wgpu's int is i32, NdArray's i64 (``DeviceSettings``)."""
    device = Device.wgpu()
    assert device.settings().int_dtype.value == "int32" and Device.ndarray().settings().int_dtype.value == "int64"
    made = [T(np.array([1, -2, 3], np.int64)), Tensor.from_data([1, -2, 3], device),
            Tensor.from_data(np.array([1, 254, 3], np.uint8), device), Tensor.arange(3, device=device),
            Tensor.zeros([3], device, "int32"), T(np.ones(3, np.float32)).int(),
            T(np.ones((2, 3), np.float32)).argmax(1), T(np.ones((2, 3), np.float32)).argmin(0),
            Tensor.from_data([[1, 2]], device.autodiff()), Tensor.from_data([True], device).int()]
    for tensor in made:
        assert tensor.dtype.value == "int32" and tensor.to_numpy().dtype == np.int32, tensor
    assert made[0].to_numpy().tolist() == [1, -2, 3] and made[2].to_numpy().tolist() == [1, 254, 3]
    # the same data on the CPU device keeps int64, as before
    assert Tensor.from_data([1, 2], Device.ndarray()).dtype.value == "int64"
    # values that int32 cannot hold are refused, naming its range
    for data in ([2**40], np.array([-(2**31) - 1], np.int64), np.array([2**63], np.uint64)):
        with pytest.raises(ValueError, match=r"int32.*\[-2147483648, 2147483647\]"):
            Tensor.from_data(data, device)
    # and int32's extremes fit
    edge = Tensor.from_data(np.array([-(2**31), 2**31 - 1], np.int64), device)
    assert edge.to_numpy().tolist() == [-(2**31), 2**31 - 1]


def test_pipelines_are_cached_by_shader_text():
    x = T(np.ones(4, np.float32))
    (x + x).to_numpy()
    before = len(rt()._pipelines)
    for _ in range(3):
        (x + x).to_numpy()
    assert len(rt()._pipelines) == before
    source = shaders.map_kernel(("f32", "f32"), "f32", "x0 + x1", (), True)  # the contiguous form
    assert source in rt()._pipelines and "out[oo] = x0 + x1;" in source


def test_dispatches_are_batched_into_one_submit_until_a_read_back():
    x = T(np.ones((8, 8), np.float32))
    x.to_numpy()
    submits, dispatches = rt().submits, rt().dispatches
    y = x
    for _ in range(10):
        y = (y * 1.5).relu() + 1.0
    assert rt().dispatches - dispatches >= 30 and rt().submits == submits  # recorded, not run
    y.to_numpy()
    assert rt().submits == submits + 1


def test_a_buffer_over_the_adapters_limit_is_refused_naming_it():
    limit = rt().max_binding
    with pytest.raises(MemoryError, match=r"max-storage-buffer-binding-size = \d+"):
        rt().empty(limit + 4, "float_zeros")
    with pytest.raises(MemoryError, match="float_full"):  # zeros is full(0) on the device
        Tensor.zeros((limit // 4 + 1,), Device.wgpu())


def test_a_read_back_that_hangs_raises_after_the_timeout(monkeypatch):
    class Stuck:  # a mapping the device never completes
        _thread_event = threading.Event()

        def sync_wait(self):
            time.sleep(2)

    runtime = rt()
    x = T(np.ones(3, np.float32))
    runtime.flush()
    monkeypatch.setattr(rt_module, "READ_TIMEOUT", 0.2)
    monkeypatch.setattr(rt_module, "STAGING_BYTES", 0)  # a buffer of its own, patched below
    made = []

    def mappable(size):
        buffer = runtime.device.create_buffer(size=size, usage=runtime.flags.MAP_READ | runtime.flags.COPY_DST)
        made.append(buffer)
        monkeypatch.setattr(buffer, "map_async", lambda *args: Stuck())
        return buffer

    monkeypatch.setattr(runtime, "_mappable", mappable)
    start = time.perf_counter()
    with pytest.raises(TimeoutError, match="did not complete within 0.2 s"):
        runtime.read(x.primitive.backend_tensor.buffer, 12)
    assert time.perf_counter() - start < 1.5 and made
    monkeypatch.undo()  # and the next read works
    assert np.frombuffer(runtime.read(x.primitive.backend_tensor.buffer, 12), np.float32).tolist() == [1, 1, 1]


def test_no_adapter_says_how_to_get_one(monkeypatch):
    import wgpu

    monkeypatch.setattr(wgpu.gpu, "request_adapter_sync", lambda **kwargs: None)
    with pytest.raises(RuntimeError, match="mesa-vulkan-drivers") as err:
        rt_module.Runtime(0)
    assert "GPU driver" in str(err.value)


def test_random_is_counter_based_seeded_by_the_device():
    device = Device.wgpu()
    device.seed(7)
    first = Tensor.random((4096,), Distribution.uniform(-1.0, 3.0), device).to_numpy()
    second = Tensor.random((4096,), Distribution.uniform(-1.0, 3.0), device).to_numpy()
    device.autodiff().seed(7)  # the autodiff twin shares the stream
    again = Tensor.random((4096,), Distribution.uniform(-1.0, 3.0), device).to_numpy()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, second)
    assert first.min() >= -1.0 and first.max() < 3.0 and abs(first.mean() - 1.0) < 0.1
    normal = Tensor.random((20000,), Distribution.normal(2.0, 0.5), device).to_numpy()
    assert abs(normal.mean() - 2.0) < 0.02 and abs(normal.std() - 0.5) < 0.02
    keep = Tensor.random((20000,), Distribution.bernoulli(0.3), device).to_numpy()
    assert set(np.unique(keep)) <= {0.0, 1.0} and abs(keep.mean() - 0.3) < 0.02


def test_autodiff_through_tensor_matches_flex():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((5, 7)).astype(np.float32), rng.standard_normal((7, 3)).astype(np.float32)
    grads = {}
    for device in (Device.flex().autodiff(), Device.wgpu().autodiff()):
        tx, tw = T(x, device).require_grad(), T(w, device).require_grad()
        loss = softmax(tx.matmul(tw).tanh() * 2.0, 1).log().mean()
        g = loss.backward()
        grads[device.kind] = (loss.to_numpy(), tx.grad(g).to_numpy(), tw.grad(g).to_numpy())
    for flex, gpu in zip(grads["flex"], grads["wgpu"], strict=True):
        np.testing.assert_allclose(gpu, flex, rtol=1e-5, atol=1e-6)


def test_bad_index_shapes_are_refused_before_a_kernel_reads_past_a_buffer():
    t = ops._upload("t", np.zeros((3, 4), np.float32), "f", Device.wgpu())
    idx = ops._upload("i", np.zeros((5, 2), np.int32), "i", Device.wgpu())
    with pytest.raises(ValueError, match="float_gather: indices of shape"):
        Wgpu.float_gather(1, t, idx)
    with pytest.raises(ValueError, match="1-D indices"):
        Wgpu.float_select(t, 1, idx)
    with pytest.raises(ValueError, match="does not fit"):
        Wgpu.float_slice_assign(t, [slice(0, 2)], t)
    with pytest.raises(IndexError, match=r"index out of range \[0, 4\)"):
        Wgpu.float_select(t, 1, ops._upload("i", np.array([0, 4], np.int32), "i", Device.wgpu()))


def test_the_module_ops_table_has_the_gpu_column_computed_from_the_class():
    from minidl.debug.implementations import module_ops_table

    table = module_ops_table(("conv2d", "layer_norm"), gpu=True)
    assert table.headers[-1] == "Wgpu overrides?"
    # like burn's CubeBackend: conv2d has its own kernel, layer_norm runs the default
    assert [row[-1] for row in table.rows] == ["yes", "no"]


def test_the_dispatches_of_a_linear_forward_can_be_recorded_with_their_shaders():
    from minidl.nn import LinearConfig

    device = Device.wgpu()
    layer = LinearConfig(6, 3).init(device)
    x = T(np.ones((4, 6), np.float32), device)
    layer(x)  # the first call draws the lazy params' initial values (two random kernels)
    with rt().record_dispatches() as made:
        layer(x)
    # the ModuleOps default: a matmul and a broadcast bias add (Dispatch does not forward linear)
    assert len(made) == 2
    assert "acc[r] = acc[r] + a0" in made[0].source and made[0].groups == (1, 1, 1)
    assert "x0 + x1" in made[1].source


def test_a_buffer_freed_in_a_reference_cycle_is_pooled_alive_and_reusable():
    # the cyclic gc runs every finalizer of a dead cycle in no set order: wgpu's GPUBuffer.__del__
    # (handle released) could run before the Block's, which then pooled a dead buffer; the next
    # allocation of its size bound it and wgpu-native aborted the process in create_bind_group
    import gc

    size = 4 * 4099  # a size no other test allocates: this test's buffers alone in its pool list
    rt().flush()
    rt()._free.pop(size, None)
    for _ in range(8):
        cycle: list = [ops.new((4099,), np.float32, 0)]
        cycle.append(cycle)  # a Block reachable only from a cycle, as a caught exception's frames
        del cycle
        gc.collect()
    pooled = rt()._free.get(size, [])
    assert pooled, "the freed buffers were not pooled"
    assert all(raw._internal is not None for raw in pooled), "a buffer finalized by gc was pooled"
    out = ops.run_map("float_add", "x0 + 1.0", [ops.new((4099,), np.float32, 0)], np.float32)
    assert ops.read(out).shape == (4099,)  # the reused buffers bind and run
