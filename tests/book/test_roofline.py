"""``minidl_book.roofline``: the counts of each workload, the measured roofs, and placing a
point under them."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backends.flex import Flex
from minidl.debug.op_timer import BackendOpTimer
from minidl.dispatch import Device
from minidl.nn import Conv2dConfig, LinearConfig
from minidl.tensor import Tensor
from minidl_book import roofline as rl


def test_gemm_counts_two_flops_per_term_and_each_operand_once():
    c = rl.gemm_counts(2, 3, 5, itemsize=4)
    assert c.flops == 2 * 2 * 3 * 5
    assert c.bytes == (2 * 3 + 3 * 5 + 2 * 5) * 4
    assert rl.gemm_counts(2, 3, 5, itemsize=8).bytes == 2 * c.bytes


def test_conv2d_counts_follow_the_output_size():
    # 1 image, 2 -> 4 channels, 5x5, 3x3 kernel, no padding: a 3x3 output per channel
    c = rl.conv2d_counts(1, 2, 5, 5, 4, 3, 3)
    assert c.flops == 2 * (4 * 3 * 3) * (2 * 3 * 3)
    assert c.bytes == (2 * 5 * 5 + 4 * 2 * 3 * 3 + 4 * 3 * 3) * 4
    padded = rl.conv2d_counts(1, 2, 5, 5, 4, 3, 3, padding=1)  # "same": a 5x5 output
    assert padded.flops == 2 * (4 * 5 * 5) * (2 * 3 * 3)
    strided = rl.conv2d_counts(1, 2, 5, 5, 4, 3, 3, stride=2)  # a 2x2 output
    assert strided.flops == 2 * (4 * 2 * 2) * (2 * 3 * 3)


def test_layer_norm_counts_read_x_write_y_once():
    c = rl.layer_norm_counts(4, 10)
    assert c.flops == rl.LAYER_NORM_FLOPS_PER_ELEMENT * 40
    assert c.bytes == (2 * 40 + 2 * 10) * 4


def test_an_elementwise_chain_fused_moves_only_its_input_and_output():
    arities = (1, 1, 2, 1)
    eager = rl.elementwise_counts(100, arities, fused=False)
    fused = rl.elementwise_counts(100, arities, fused=True)
    assert eager.flops == fused.flops == 4 * 100
    assert eager.bytes == (2 + 2 + 3 + 2) * 100 * 4
    assert fused.bytes == 2 * 100 * 4
    assert fused.intensity == pytest.approx(eager.intensity * eager.bytes / fused.bytes)


def test_place_computes_intensity_and_rate_from_the_counts():
    counts = rl.Counts(flops=6e9, bytes=2e9)
    point = rl.place("x", counts, seconds=0.5)
    assert point.intensity == 3.0 == counts.flops / counts.bytes
    assert point.gflops == pytest.approx(12.0)
    with pytest.raises(ValueError):
        rl.place("x", counts, seconds=0.0)


def test_the_roofs_bound_each_side_of_the_ridge():
    roof = rl.Roofline(peak=100.0, bandwidths={"L2": 50.0, "DRAM": 10.0})
    assert roof.ridge("DRAM") == 10.0 and roof.ridge("L2") == 2.0
    assert roof.attainable(1.0) == 10.0  # on the slope: intensity x bandwidth
    assert roof.attainable(50.0) == 100.0  # past the ridge: the peak
    assert roof.bound(5.0) == "memory" and roof.bound(5.0, "L2") == "compute"
    point = rl.place("p", rl.Counts(4e9, 1e9), 1.0)  # 4 GFLOP/s at intensity 4
    assert roof.fraction(point) == pytest.approx(4.0 / 40.0)
    # the least time is the slower of computing and moving
    assert roof.predicted_seconds(rl.Counts(1e9, 1e9)) == pytest.approx(0.1)
    assert roof.predicted_seconds(rl.Counts(1e12, 1e9)) == pytest.approx(10.0)


def test_op_counts_of_products_and_of_elementwise_ops():
    a, b = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
    mm = rl.op_counts("float_matmul", (a, b), {}, a @ b)
    assert mm.flops == 2 * 3 * 4 * 5 and mm.bytes == (12 + 20 + 15) * 4
    add = rl.op_counts("float_add", (a, a), {}, a + a)
    assert add.flops == 12 and add.bytes == 3 * 12 * 4
    total = rl.op_counts("float_sum", (a,), {}, (a.sum(keepdims=True),))
    assert total.flops == 12 and total.bytes == (12 + 1) * 4


def test_count_record_matches_the_counts_of_a_linear_step():
    device = Device.flex().autodiff()
    layer = LinearConfig(8, 6).init(device)
    x = Tensor.from_numpy(np.ones((5, 8), np.float32), device)
    record: list = []
    with BackendOpTimer(Flex, record=record):
        layer(x).sum().backward()
    counts, calls = rl.count_record(record)
    assert calls == len(record) > 0
    products = [fn.__name__ for fn, _, _ in record if fn.__name__ in rl.PRODUCT_FLOPS]
    assert products  # the forward product and the weight gradient's
    # at least the forward product and the weight gradient: 2 * 5 * 8 * 6 each
    assert counts.flops >= 2 * (2 * 5 * 8 * 6)
    assert counts.bytes > 0


def test_conv_backward_ops_count_their_products():
    device = Device.flex().autodiff()
    conv = Conv2dConfig((2, 3), (3, 3)).init(device)
    x = Tensor.from_numpy(np.ones((1, 2, 6, 6), np.float32), device).require_grad()
    record: list = []
    with BackendOpTimer(Flex, record=record):
        conv(x).sum().backward()
    names = {fn.__name__ for fn, _, _ in record}
    assert {"conv2d", "conv2d_x_backward", "conv2d_weight_backward"} <= names
    forward = rl.conv2d_counts(1, 2, 6, 6, 3, 3, 3).flops
    counts = {fn.__name__: rl.op_counts(fn.__name__, a, k, fn(*a, **k)) for fn, a, k in record}
    for name in ("conv2d", "conv2d_x_backward", "conv2d_weight_backward"):
        assert counts[name].flops == forward  # the same multiply-adds, arranged three ways


def test_cache_sizes_read_sysfs_and_fall_back(tmp_path):
    for i, (level, kind, size) in enumerate([("1", "Data", "48K"), ("1", "Instruction", "32K"),
                                             ("2", "Unified", "2048K"), ("3", "Unified", "64M")]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        (d / "level").write_text(level + "\n")
        (d / "type").write_text(kind + "\n")
        (d / "size").write_text(size + "\n")
    assert rl.cache_sizes(tmp_path) == {"L1d": 48 << 10, "L2": 2 << 20, "L3": 64 << 20}
    assert rl.cache_sizes(tmp_path / "missing") == rl.DEFAULT_CACHES
    real = rl.cache_sizes()
    assert real["L1d"] < real["L2"] < real["L3"]
    foot = rl.level_footprints(real)
    assert foot["L2"] < real["L2"] < foot["L3"] < real["L3"] < foot["DRAM"]


def test_the_stream_kernels_compute_and_the_probe_is_positive():
    a, b, c = np.zeros(1000, np.float32), np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
    rl.stream_triad(a, b, c, np.float32(2.0))
    np.testing.assert_array_equal(a, b + 2.0)
    rl.stream_copy(b, c)
    np.testing.assert_array_equal(c, b)
    for kernel in ("copy", "triad"):
        gbs = rl.stream_bandwidth(1 << 20, kernel, repeats=2, min_seconds=0.002)
        assert 0.1 < gbs < 10_000  # a real bandwidth, not a clock artefact


def test_median_seconds_times_each_contender():
    res = rl.median_seconds({"sum": lambda: sum(range(2000)), "nothing": lambda: None},
                            budget=0.05, rounds=3, pause=0.0)
    assert set(res) == {"sum", "nothing"}
    assert 0 < res["sum"]["best"] <= res["sum"]["median"]
    assert res["nothing"]["median"] < res["sum"]["median"]


def test_draw_puts_every_point_on_log_axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    roof = rl.Roofline(100.0, {"L2": 50.0, "DRAM": 10.0})
    pts = [rl.place("a", rl.Counts(1e9, 1e9), 1.0), rl.place("b", rl.Counts(1e11, 1e8), 2.0)]
    fig, ax = plt.subplots()
    rl.draw(ax, roof, pts)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert {t.get_text() for t in ax.texts} == {"a", "b"}
    plt.close(fig)


def test_each_workload_is_judged_against_the_level_its_working_set_lives_in():
    caches = {"L1d": 32 << 10, "L2": 1 << 20, "L3": 32 << 20}
    assert rl.level_of(512 << 10, caches) == "L2"
    assert rl.level_of(32 << 20, caches) == "L3"  # a working set the size of L3: partly in it
    assert rl.level_of(rl.SPILL * (32 << 20) + 1, caches) == "DRAM"
    roof = rl.Roofline(100.0, {"L2": 80.0, "L3": 40.0, "DRAM": 10.0}, caches)
    point = rl.place("chain", rl.Counts(8e6, 8e6), 1e-3, working_set=16 << 20)
    assert roof.level_of(point) == "L3" and roof.own_roof(point) == 40.0
    assert roof.own_fraction(point) == pytest.approx(8.0 / 40.0)
    assert rl.level_gaps({"L2": 80.0, "L3": 40.0, "DRAM": 10.0}) == {"L2/L3": 2.0, "L3/DRAM": 4.0}


def test_with_a_curve_each_point_is_judged_at_its_own_footprint():
    curve = {1 << 20: 80.0, 16 << 20: 80.0, 64 << 20: 20.0, 256 << 20: 20.0}
    assert rl.bandwidth_at(curve, 16 << 20) == pytest.approx(80.0)
    assert rl.bandwidth_at(curve, 32 << 20) == pytest.approx(40.0)  # log-log halfway
    assert rl.bandwidth_at(curve, 100) == pytest.approx(80.0)  # clamped at the ends
    assert rl.bandwidth_at(curve, 1 << 30) == pytest.approx(20.0)
    roof = rl.Roofline(100.0, {"L2": 80.0, "L3": 80.0, "DRAM": 20.0}, curve=curve)
    point = rl.place("chain", rl.Counts(8e6, 8e6), 1e-3, working_set=32 << 20)
    assert roof.own_bandwidth(point) == pytest.approx(40.0)
    assert roof.own_fraction(point) == pytest.approx(8.0 / 40.0)


def test_a_parallel_crossover_is_a_median_win_by_a_margin_at_every_larger_size():
    from minidl_book import perf_lab

    rounds = {1024: [0.2, 0.3, 0.2], 4096: [1.5, 1.6, 0.01], 16384: [1.1, 1.15, 1.3],
              65536: [1.5, 1.4, 0.02], 262144: [2.0, 1.9, 2.1]}
    # 4096's one preempted round does not count (median 1.5); 16384 wins by less than 20 %
    assert perf_lab.crossover(rounds, margin=1.2) == 65536
    assert perf_lab.crossover(rounds, margin=1.05) == 4096
    assert perf_lab.crossover({1024: [0.5], 2048: [0.9]}) is None


def test_the_roofline_chart_grows_and_keeps_every_point():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from minidl_book import perf_lab

    shown = []
    real_show, plt.show = plt.show, lambda *a, **k: shown.append(
        sum(ln.get_marker() == "o" for ln in plt.gcf().axes[0].lines))
    try:
        chart = perf_lab.RooflineChart(rl.Roofline(100.0, {"L2": 50.0, "L3": 30.0, "DRAM": 10.0}))
        chart.add([rl.place("a", rl.Counts(1e9, 1e9), 1.0), rl.place("b", rl.Counts(1e9, 1e8), 1.0)],
                  arrows=[("a", "b")])
        chart.show()
        chart.add([rl.place("c", rl.Counts(16, 192), 2e-6)])
        chart.show()
    finally:
        plt.show = real_show
    assert [p.name for p in chart.points] == ["a", "b", "c"] and chart["c"].seconds == 2e-6
    assert shown[1] == shown[0] + 1  # the second figure has one point more
    # each point's drawn roof is its own; none lies above it, no label overlaps
    assert all(chart.drawn_roofs[p.name] == chart.roof.own_roof(p) for p in chart.points)
    assert all(p.gflops <= chart.drawn_roofs[p.name] for p in chart.points)
    assert chart.overlaps == 0


def test_a_point_above_its_roof_leaves_the_measured_curve_as_it_was():
    """No roof is measured again to make room for a point: a point above its roof stays
    above it, for the chapter's check (:data:`roofline.ROOF_TOLERANCE`) to catch."""
    from minidl_book.perf_lab import RooflineChart

    footprint = 1 << 20
    curve = {footprint // 2: 0.001, footprint * 2: 0.001}  # a roof held down by a neighbour
    roof = rl.Roofline(100.0, {"L2": 1.0, "L3": 1.0, "DRAM": 1.0}, curve=curve)
    point = rl.place("add", rl.elementwise_counts(footprint // 12, [2], fused=True), 1e-4,
                     footprint)
    RooflineChart(roof).add([point])
    assert curve == {footprint // 2: 0.001, footprint * 2: 0.001}
    assert point.gflops > rl.ROOF_TOLERANCE * roof.own_roof(point)


def test_the_dram_footprint_is_capped_but_still_past_a_reported_host_l3():
    """A VM may report its host's whole L3 (504 MiB on one CI machine): the DRAM footprint
    stays at 2 GiB, still more than SPILL times that L3, so the level it names is DRAM."""
    vm = {"L1d": 48 << 10, "L2": 2 << 20, "L3": 504 << 20}
    foot = rl.level_footprints(vm)
    assert foot["DRAM"] == 2 << 30
    assert rl.level_of(foot["DRAM"], vm) == "DRAM"
    assert rl.level_footprints({"L1d": 32 << 10, "L2": 1 << 20, "L3": 32 << 20})["DRAM"] == 256 << 20


def test_the_l3_footprint_stays_inside_a_vms_share_of_a_reported_host_l3():
    """The VM above streams its L3 share only up to some tens of MiB: L3 is measured at
    16 MiB, not at a quarter of the 504 MiB it reports; a real 32 MiB L3 keeps its 8 MiB."""
    vm = {"L1d": 48 << 10, "L2": 2 << 20, "L3": 504 << 20}
    assert rl.level_footprints(vm)["L3"] == rl.L3_FOOTPRINT_MAX == 16 << 20
    desk = {"L1d": 32 << 10, "L2": 1 << 20, "L3": 32 << 20}
    assert rl.level_footprints(desk)["L3"] == 8 << 20
    big_l2 = {"L1d": 48 << 10, "L2": 8 << 20, "L3": 504 << 20}
    assert rl.level_footprints(big_l2)["L3"] == 32 << 20  # four times L2 still wins


def _chart_of(points):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from minidl_book import perf_lab

    real_show, plt.show = plt.show, lambda *a, **k: None
    try:
        chart = perf_lab.RooflineChart(rl.Roofline(100.0, {"L2": 50.0, "L3": 30.0, "DRAM": 10.0}))
        chart.add(points)
        chart.show()
    finally:
        plt.show = real_show
    return chart


def test_labels_of_points_at_one_spot_never_overlap():
    """Two points at the same spot, and three within a hair: every label is placed clear
    of the others (or moved to the legend), so the chapter's overlaps == 0 cannot fail."""
    same = [rl.place(n, rl.Counts(1e9, 1e8), 0.02) for n in ("i-k-j", "blocked")]
    chart = _chart_of(same)
    assert chart.overlaps == 0
    assert len(chart.tagged) <= 1
    close = [rl.place(f"kernel {k}", rl.Counts(1e9, 1e8 * (1 + k / 200)), 0.02 * (1 + k / 300))
             for k in range(3)]
    chart = _chart_of(close)
    assert chart.overlaps == 0
    crowd = [rl.place(f"a long kernel name {k}", rl.Counts(1e9, 1e8), 0.02) for k in range(40)]
    chart = _chart_of(crowd)  # far more than the rings hold: the rest go to the legend
    assert chart.overlaps == 0 and chart.tagged
