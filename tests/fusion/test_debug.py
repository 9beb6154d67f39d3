"""``minidl.debug`` sees inside Fusion: the plan of the last execution (ops, blocks, fusers,
kernel sources, bytes) and the stream's events at ``debug_level`` 1 and 2."""

from __future__ import annotations

from minidl.backends.flex.fusion import FusionFlex
from minidl.debug import debug_level, fusion_history, fusion_plan

from .helpers import on, randn


def test_debug_levels_show_stream_events_and_level_two_shows_each_recorded_op():
    FusionFlex.sync()
    x = on(randn(40, 8, 8))
    with debug_level(1, capture=True) as quiet:
        ((x * 4.0 + 2.0).abs() * 0.5).to_numpy()
    with debug_level(2, capture=True) as loud:
        ((x * 4.0 + 2.0).abs() * 0.5).to_numpy()
    fusion_lines = [line for line in quiet.lines if line.startswith("fusion:")]
    assert any("sync (read of" in line for line in fusion_lines)
    assert any("plan searched" in line or "reused from the store" in line for line in fusion_lines)
    assert any(line.startswith("fusion: launch elemwise_muls_adds_abs_muls") for line in fusion_lines)
    assert not any("recorded" in line for line in fusion_lines)
    assert sum("fusion: recorded" in line for line in loud.lines) == 4
    assert any("reused from the store (no search)" in line for line in loud.lines)


def test_fusion_plan_lists_ops_blocks_kernels_and_bytes_and_history_counts_executions():
    FusionFlex.sync()
    start = FusionFlex.stream.executions
    x = on(randn(41, 16, 16))
    (x.exp() * 2.0).to_numpy()
    (x * 3.0).reshape((256,)).sum().to_numpy()  # the reshape of a pending tensor is no sync point
    plans = fusion_history(since=start)
    assert len(plans) == 2 and [p.index for p in plans] == [start, start + 1]
    plan = fusion_plan()
    text = str(plan)
    assert "block 0" in text and "bytes:" in text and len(plan.kernels) == 1
    assert plan.blocks[0].kinds == ["mul_scalar", "reshape"] and plan.blocks[1].fuser is None
    first = plans[0]
    assert first.blocks[0].fuser == "elementwise" and "def kernel_par" in first.source(0)
    assert first.bytes_fused < first.bytes_eager
