"""``Autodiff[Fusion[Flex]]``: a pre-norm MLP block's training step records its backward into
the fusion stream too (fused blocks in the backward drains), matches Flex and PyTorch, and a
second step finds every plan in the store. Generated kernels are cached across processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from minidl.backends.flex.fusion import FusionFlex
from minidl.debug import fusion_history, trace
from minidl.dispatch import Device
from minidl.tensor import module as F

from .helpers import on, randn

ROOT = Path(__file__).resolve().parents[2]


def _params(device):
    return [on(randn(20, 16), device, True), on(randn(21, 16), device, True),
            on(randn(22, 16, 32) * 0.25, device, True), on(randn(23, 32) * 0.1, device, True),
            on(randn(24, 32, 16) * 0.25, device, True), on(randn(25, 16) * 0.1, device, True)]


def _step(x, params):
    g, b, w1, b1, w2, b2 = params
    h = F.linear(F.layer_norm(x, g, b, 1e-5), w1, b1).gelu()
    y = F.linear(h, w2, b2) + x
    loss = (y * y).mean()
    grads = loss.backward()
    return loss.into_scalar(), [p.grad(grads).to_numpy() for p in params]


def _torch_step(x, params):
    tp = [torch.tensor(p.to_numpy(), requires_grad=True) for p in params]
    g, b, w1, b1, w2, b2 = tp
    tx = torch.tensor(x)
    h = torch.nn.functional.gelu(torch.nn.functional.layer_norm(tx, (16,), g, b, 1e-5) @ w1 + b1)
    loss = ((h @ w2 + b2 + tx) ** 2).mean()
    loss.backward()
    return loss.item(), [t.grad.numpy() for t in tp]


def test_fusion_autodiff_training_step_matches_flex_and_torch_and_fuses_its_backward():
    x = randn(26, 8, 16)
    dev = Device.fusion().autodiff()
    FusionFlex.sync()
    before = FusionFlex.stream.executions
    loss, grads = _step(on(x, dev), _params(dev))
    fused_blocks = [b for plan in fusion_history(since=before) for b in plan.blocks if b.fuser]
    assert len(fused_blocks) >= 4  # forward and backward both ran as generated kernels
    flex_loss, flex_grads = _step(on(x, Device.flex().autodiff()), _params(Device.flex().autodiff()))
    torch_loss, torch_grads = _torch_step(x, _params(Device.flex()))
    assert abs(loss - torch_loss) <= 1e-5 * abs(torch_loss) and abs(loss - flex_loss) <= 1e-5 * abs(flex_loss)
    for ours, flex, theirs in zip(grads, flex_grads, torch_grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ours, flex, rtol=1e-4, atol=1e-5)


def test_a_second_training_step_performs_no_search():
    x = randn(27, 8, 16)
    dev = Device.fusion().autodiff()
    _step(on(x, dev), _params(dev))
    searches = FusionFlex.stream.processor.searches
    _step(on(x, dev), _params(dev))
    assert FusionFlex.stream.processor.searches == searches


def test_trace_backtraces_pass_through_fusion_frames():
    x, w, b = on(randn(28, 4, 8)), on(randn(29, 8, 8)), on(randn(30, 8))
    result = trace(lambda: F.linear(x, w, b).to_numpy(), breakpoints=[r"Fusion\[Flex\]\.float_matmul"])
    assert result.hits, "the breakpoint on Fusion[Flex].float_matmul never hit"
    assert any("Fusion[Flex].float_matmul" in str(frame) for frame in result.hits[0].frames)


SCRIPT = """
import json, numpy as np, minidl
from minidl.dispatch import Device
from minidl.tensor import Tensor
from minidl.debug import fusion_plan
from minidl.fusion.stream import Stream
Stream.eager_below = 0  # record every op, as the suite does (tests/conftest.py)
x = Tensor.from_data(np.linspace(-1, 1, 4096, dtype=np.float32), Device.fusion())
y = ((x * 0.37 + 0.11).abs() * 1.91 - 0.13).tanh()
y.to_numpy()
kernel = fusion_plan().record.plan.blocks[0].kernel
fn = kernel.module.kernel_seq
print(json.dumps({"name": kernel.name, "hits": sum(fn.stats.cache_hits.values()),
                  "misses": sum(fn.stats.cache_misses.values())}))
"""


def test_generated_kernels_are_source_files_cached_by_numba_across_processes(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    runs = [json.loads(subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                                      check=True, cwd=ROOT).stdout.strip().splitlines()[-1]) for _ in range(2)]
    assert runs[0]["name"] == runs[1]["name"] and "elemwise_muls_adds_abs" in runs[0]["name"]
    assert (tmp_path / "fusion_kernels" / f"{runs[0]['name']}.py").exists()
    assert runs[0]["misses"] == 1 and runs[1]["hits"] == 1 and runs[1]["misses"] == 0
