"""The nn-modules chapter's lldb experiments (burn's), as traces: which path Linear, Conv2d and LayerNorm take.

Each test runs a real forward pass on a real device and reads the recorded backtraces; the
expected paths are the routing rules of ARCHITECTURE.md's "How one call travels" (Dispatch does not forward linear;
Autodiff overrides conv2d but not layer_norm; Flex fuses layer_norm).
"""

from __future__ import annotations

import inspect
import re
import sys

import pytest

from minidl.debug import trace

from .support import backend_name, device, is_subsequence, need, tensor


def _linear_layer(dev):
    LinearConfig = need("minidl.nn", "LinearConfig")
    return LinearConfig(4, 2).init(dev)


def test_linear_on_autodiff_reaches_inner_matmul_through_the_dispatch_default(kind):
    dev = device(kind, autodiff=True)
    inner = backend_name(kind)
    layer, x = _linear_layer(dev), tensor((4, 4), dev)
    t = trace(lambda: layer.forward(x), breakpoints=[rf"{inner}\.float_matmul", r"Autodiff.*\.linear$"], echo=False)

    assert t.chain() == [
        "Linear.forward", "module.linear", "module.linear_impl", "Dispatch.linear",
        "linear.linear[Dispatch]", "Dispatch.float_matmul", f"Autodiff[{inner}].float_matmul",
        f"{inner}.float_matmul",
    ]
    first = t.first(1)
    assert first.name == f"{inner}.float_matmul"
    dispatch_linear = next(f for f in first.frames if f.name == "Dispatch.linear")
    assert dispatch_linear.note == "ModuleOps default"
    assert dispatch_linear.path == "minidl/backend/module_ops.py"


def test_autodiff_linear_resolves_but_never_hits(kind):
    dev = device(kind, autodiff=True)
    inner = backend_name(kind)
    layer, x = _linear_layer(dev), tensor((4, 4), dev)
    t = trace(lambda: layer.forward(x), breakpoints=[rf"{inner}\.float_matmul", r"Autodiff.*\.linear$"], echo=False)

    bp = t.breakpoints[1]
    assert f"Autodiff[{inner}].linear" in bp.locations
    assert bp.hits == 0 and t.hits_of(2) == []
    assert bp.outcome().startswith("Breakpoint 2: resolved, never hit")
    assert t.breakpoints[0].hits == 1


def test_backtrace_prints_like_lldb_with_shortened_arguments():
    dev = device("flex")
    Flex = need("minidl.backends.flex", "Flex")
    layer, x = _linear_layer(dev), tensor((4, 4), dev)
    t = trace(lambda: layer.forward(x), breakpoints=[r"^Flex\.float_matmul$"], echo=False)

    func = inspect.unwrap(Flex.float_matmul.__func__)
    path = inspect.getsourcefile(func)
    rel = path[path.index("minidl/"):]
    lines, start = inspect.getsourcelines(func)
    def_line = start + next(i for i, s in enumerate(lines) if s.lstrip().startswith("def "))
    text = t.bt_text()
    assert text.splitlines()[0] == "* thread #1, stop reason = breakpoint 1.1"
    assert f"  * frame #0: {rel}:{def_line} Flex.float_matmul(lhs=<f32[4,4] flex>, rhs=<f32[4,2] flex>)" in text
    assert re.search(r"frame #\d+: minidl/nn/linear\.py:\d+ Linear\.forward\(self=<Linear>, input=<Tensor f32\[4,4\] flex>\)", text)
    assert "dispatch/route.py" not in text  # route is plumbing, marked __trace_hide__


def test_numba_kernel_appears_below_the_flex_op():
    dev = device("flex", autodiff=True)
    layer, x = _linear_layer(dev), tensor((4, 4), dev)
    t = trace(lambda: layer.forward(x), breakpoints=[r"^Flex\.float_matmul$", r"^kernel .* \[numba\]$"], echo=False)

    matmul = t.first(1)
    assert matmul.kernels, "Flex.float_matmul called no numba kernel"
    assert all(re.fullmatch(r"kernel \w+ \[numba\]", k) for k in matmul.kernels)
    chain = matmul.chain(kernels=True)
    assert chain[chain.index("Flex.float_matmul") + 1:] == matmul.kernels

    kernel_hit = next(h for h in t.hits_of(2) if "Flex.float_matmul" in h.chain())
    assert kernel_hit.frames[0].layer == "kernel"
    assert kernel_hit.chain()[-2:] == ["Flex.float_matmul", kernel_hit.name]
    assert kernel_hit.chain()[0] == "Linear.forward"  # recorded beyond the 12 frames bt prints
    index = t.hits.index(kernel_hit)
    printed = [ln for ln in t.bt_text(hit=index).splitlines() if "frame #" in ln]
    assert len(printed) == min(12, len(kernel_hit.frames))


def test_conv2d_on_autodiff_passes_through_autodiffs_own_conv2d(kind):
    dev = device(kind, autodiff=True)
    inner = backend_name(kind)
    Conv2dConfig = need("minidl.nn", "Conv2dConfig")
    conv = Conv2dConfig([2, 3], [3, 3]).init(dev)
    x = tensor((1, 2, 5, 5), dev)
    t = trace(lambda: conv.forward(x), breakpoints=[rf"^{inner}\.conv2d$"], echo=False)

    chain = t.chain()
    assert chain[-3:] == ["Dispatch.conv2d", f"Autodiff[{inner}].conv2d", f"{inner}.conv2d"]
    assert is_subsequence(["Conv2d.forward", "module.conv2d", "Dispatch.conv2d"], chain)
    assert not t.first().frames[0].note  # Flex's own body, not a default


def test_layer_norm_on_plain_device_hits_the_backends_fused_kernel():
    dev = device("flex")
    LayerNormConfig = need("minidl.nn", "LayerNormConfig")
    norm = LayerNormConfig(8).init(dev)
    x = tensor((3, 8), dev)
    t = trace(lambda: norm.forward(x), breakpoints=[r"^Flex\.layer_norm$", r"^Flex\.float_mean_dim$"], echo=False)

    assert t.breakpoints[0].hits == 1 and t.breakpoints[1].hits == 0
    assert t.chain()[-2:] == ["Dispatch.layer_norm", "Flex.layer_norm"]
    assert not t.first().frames[0].note


def test_layer_norm_on_autodiff_decomposes_through_the_modules_default(kind):
    dev = device(kind, autodiff=True)
    inner = backend_name(kind)
    LayerNormConfig = need("minidl.nn", "LayerNormConfig")
    norm = LayerNormConfig(8).init(dev)
    x = tensor((3, 8), dev)
    t = trace(lambda: norm.forward(x), breakpoints=[rf"^{inner}\.layer_norm$", rf"^{inner}\.float_mean_dim$"], echo=False)

    assert t.breakpoints[0].hits == 0
    assert t.breakpoints[1].hits >= 2  # mean, then the variance's mean
    chain = t.chain()
    ad = f"Autodiff[{inner}]"
    assert chain[-5:] == ["Dispatch.layer_norm", f"{ad}.layer_norm", f"norm.layer_norm[{ad}]",
                          f"{ad}.float_mean_dim", f"{inner}.float_mean_dim"]
    frame = next(f for f in t.first().frames if f.name == f"{ad}.layer_norm")
    assert frame.note == "ModuleOps default" and frame.layer == "autodiff"


def test_linear_on_plain_device_has_no_autodiff_frame(kind):
    dev = device(kind)
    inner = backend_name(kind)
    layer, x = _linear_layer(dev), tensor((4, 4), dev)
    t = trace(lambda: layer.forward(x), breakpoints=[rf"{inner}\.float_matmul"], echo=False)
    chain = t.chain()
    assert chain[-3:] == ["linear.linear[Dispatch]", "Dispatch.float_matmul", f"{inner}.float_matmul"]
    assert not any(n.startswith("Autodiff") for n in chain)


def test_resolution_and_outcome_lines_are_printed_like_an_lldb_session(capsys):
    dev = device("ndarray")
    layer, x = _linear_layer(dev), tensor((4, 4), dev)
    trace(lambda: layer.forward(x), breakpoints=[r"NdArray\.float_(matmul|add)$", r"NoSuchBackend\.op"])
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [
        "Breakpoint 1: 2 locations.",
        "Breakpoint 2: no locations (pending).",
        "WARNING:  Unable to resolve breakpoint to any actual locations.",
    ]
    assert out[3] == "Breakpoint 1: hit 2 times at NdArray.float_matmul, NdArray.float_add."
    assert out[4] == "Breakpoint 2: no locations (pending), never hit."


def test_tracing_leaves_no_profile_hook_behind_even_when_fn_raises():
    before = sys.getprofile()

    def boom():
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        trace(boom, breakpoints=["boom"], echo=False)
    assert sys.getprofile() is before
    t = trace(lambda: 41 + 1, breakpoints=["x"], echo=False)
    assert t.result == 42 and sys.getprofile() is before


def test_user_functions_are_named_by_module_and_qualified_name():
    def helper(a, b=3):
        return a + b

    t = trace(lambda: helper(1), breakpoints=[r"helper$"], echo=False)
    hit = t.first()
    assert hit.name.endswith("helper") and "<locals>" in hit.name
    assert hit.frames[0].args == "a=1, b=3"
    assert t.chain(library_only=False)[-1] == hit.name


def test_a_breakpoint_hit_more_often_than_kept_says_how_many_backtraces_were_kept():
    from minidl.debug.trace import MAX_HITS

    dev = device("ndarray")
    x = tensor((2, 2), dev)

    def many_adds():
        y = x
        for _ in range(MAX_HITS + 5):
            y = y + x
        return y

    t = trace(many_adds, breakpoints=[r"NdArray\.float_add$"], echo=False)
    bp = t.breakpoints[0]
    assert bp.hits == MAX_HITS + 5
    assert len(t.hits_of(1)) == MAX_HITS
    assert f"backtraces kept for the first {MAX_HITS} only" in bp.outcome()
