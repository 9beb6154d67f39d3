"""Backtraces that fit a page (``bt(width=...)``) and graphs whose leaves carry names.

A chapter prints lldb-style backtraces in a text column of about 88 characters: ``width``
must keep every line within it, by eliding argument lists to ``...`` the way the book the
chapters follow shortens lldb's frames, or by wrapping them with ``wrap=True``, without
losing the frame's location and name. ``debug.graph(y, names=module)`` labels the leaves
after the params they hold instead of bare node ids.
"""

from __future__ import annotations

import numpy as np

from minidl import Device, Tensor, debug
from minidl.debug.trace import Frame, split_args
from minidl.nn import LinearConfig


def _linear_trace():
    dev = Device.flex().autodiff()
    layer = LinearConfig(4, 2).init(dev)
    x = Tensor.from_numpy(np.ones((4, 4), np.float32), dev)
    return debug.trace(lambda: layer(x), breakpoints=r"^Flex\.float_matmul$", echo=False)


def test_split_args_keeps_commas_inside_brackets_together():
    args = "lhs=<f32[4,4] flex>, rhs=<f32[4,2] ad<flex>>, shape=(1, 2), opts={a: 1, b: 2}"
    assert split_args(args) == [
        "lhs=<f32[4,4] flex>", "rhs=<f32[4,2] ad<flex>>", "shape=(1, 2)", "opts={a: 1, b: 2}",
    ]
    assert split_args("") == []


def test_a_short_frame_is_printed_unchanged_at_any_width():
    frame = Frame(0, "Flex.float_matmul", "minidl/x.py", 3, "lhs=<a>, rhs=<b>", "backend")
    assert frame.text(88) == str(frame)
    assert frame.text(None) == str(frame)


def test_width_elides_whole_arguments_and_keeps_location_name_and_note():
    frame = Frame(6, "Dispatch.linear", "minidl/backend/module_ops.py", 29,
                  "x=<f32[4,4] flex ad>, weight=<f32[4,2] flex ad>, bias=<f32[2] flex ad>",
                  "dispatch", note="ModuleOps default")
    line = frame.text(115, indent="    ")
    assert len(line) <= 115
    assert line.startswith("    frame #6: minidl/backend/module_ops.py:29 Dispatch.linear(")
    assert line.endswith("...)  [ModuleOps default]")
    assert "x=<f32[4,4] flex ad>" in line  # a whole argument that fits is kept
    assert "weight=<f32[4,2]" not in line  # never a cut-off argument


def test_every_backtrace_line_fits_the_width_and_the_frames_stay_in_order():
    t = _linear_trace()
    full = t.bt_text(12)
    assert max(len(line) for line in full.splitlines()) > 88  # the case this option is for
    short = t.bt_text(12, width=88)
    assert max(len(line) for line in short.splitlines()) <= 88
    frames = [line for line in short.splitlines() if "frame #" in line]
    assert len(frames) == len([line for line in full.splitlines() if "frame #" in line])
    assert "..." in short and "Flex.float_matmul(" in frames[0]


def test_wrap_keeps_every_argument_on_indented_continuation_lines():
    t = _linear_trace()
    wrapped = t.bt_text(12, width=88, wrap=True)
    assert max(len(line) for line in wrapped.splitlines()) <= 88
    joined = " ".join(wrapped.split())
    for frame in t.first().frames[:12]:  # every argument of every frame is still there
        for arg in split_args(frame.args):
            assert " ".join(arg.split()) in joined, arg
    assert "(...)" not in joined and ", ...)" not in joined  # nothing elided


def test_graph_names_leaves_after_the_modules_params():
    dev = Device.flex().autodiff()
    layer = LinearConfig(4, 2).init(dev)
    y = layer(Tensor.from_numpy(np.ones((3, 4), np.float32), dev))
    plain_view, named = debug.graph(y), debug.graph(y, names=layer)
    assert "leaf: weight" not in str(plain_view)
    text = str(named)
    assert "leaf: weight" in text and "leaf: bias" in text
    assert sorted(named.names.values()) == ["bias", "weight"]
    matmul = next(r for r in named.steps if r.op == "Matmul")
    assert named.label(matmul.parents[0]).endswith("weight")
    assert "leaf: weight" in named._repr_html_()
    by_dict = debug.graph(y, names={"w": layer.weight, "b": layer.bias.val()})
    assert sorted(by_dict.names.values()) == ["b", "w"]
