"""The GPU device (``Device.wgpu()``, WGSL kernels through wgpu) beside Flex and torch
(issue 39), in one process: an element-wise chain, gemm, and the training chapter's CNN step.

Run: ``.venv/bin/python bench/gpu.py`` (``--quick`` for fewer repeats).

Each GPU timing ends with the device synced (``Runtime.sync``: submit, wait, no read-back),
except the CNN step, which reads its loss back as the chapter's loop does. The adapter is
printed with the table: on a machine without a GPU it is lavapipe, Mesa's software Vulkan
driver, which runs each workgroup as LLVM-compiled CPU code on a few threads: there the GPU
device is a correctness platform, slower than Flex (its kernels are plain one-thread-per-
element WGSL, and every dispatch pays wgpu's validation and a bind group, ~50-200 us), not a
fast one. On a real GPU the same kernels run on thousands of lanes.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402


def best_of(fn, repeats: int, inner: int = 1) -> float:
    fn()  # warm: compile, caches, pipelines
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return min(times)  # the best sample: the machine is shared, interference only adds


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7

    import torch

    from minidl import Device, Tensor
    from minidl.backends.wgpu.runtime import runtime
    from minidl_book.peers import format_peer_report
    from minidl_book.workloads import minidl_cnn_step, torch_cnn_step

    rt = runtime(0)
    rows = []
    rng = np.random.default_rng(0)

    # element-wise: relu(x * a + b).exp() over 1M floats (4 ops)
    x = rng.standard_normal(1 << 20).astype(np.float32)
    tx = torch.from_numpy(x)
    flex_x, gpu_x = Tensor.from_numpy(x, Device.flex()), Tensor.from_numpy(x, Device.wgpu())

    def chain(t):
        return ((t * 0.5 + 0.25).relu() * -1.0).exp()

    def gpu_chain():
        chain(gpu_x)
        rt.sync()

    rows.append(("element-wise chain, 4 ops on 1M f32",
                 best_of(gpu_chain, repeats), best_of(lambda: chain(flex_x), repeats),
                 best_of(lambda: torch.exp(-torch.relu(tx * 0.5 + 0.25)), repeats)))

    # gemm: the MLP's 128x784 @ 784x256 and a square 512
    for m, k, n in ((128, 784, 256), (512, 512, 512)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        ga, gb = Tensor.from_numpy(a, Device.wgpu()), Tensor.from_numpy(b, Device.wgpu())
        fa, fb = Tensor.from_numpy(a, Device.flex()), Tensor.from_numpy(b, Device.flex())
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)

        def gpu_gemm(ga=ga, gb=gb):
            ga.matmul(gb)
            rt.sync()

        rows.append((f"gemm {m}x{k} @ {k}x{n}", best_of(gpu_gemm, repeats),
                     best_of(lambda fa=fa, fb=fb: fa.matmul(fb), repeats),
                     best_of(lambda ta=ta, tb=tb: ta @ tb, repeats)))

    # the training chapter's CNN step (batch 32, Adam, loss read back)
    gpu_step = minidl_cnn_step(Device.wgpu().autodiff())
    flex_step = minidl_cnn_step(Device.flex().autodiff())
    torch_step = torch_cnn_step(False)
    dispatches = rt.dispatches
    gpu_time = best_of(gpu_step, repeats, 3)
    per_step = (rt.dispatches - dispatches) / ((repeats + 1) * 3 - 2)
    rows.append(("CNN training step (digits, b32, Adam)", gpu_time,
                 best_of(flex_step, repeats, 3), best_of(torch_step, repeats, 3)))

    print(f"adapter: {rt.adapter_name}")
    print(f"CPU: {cpu_name()}, {os.cpu_count()} threads, load {os.getloadavg()[0]:.1f}")
    print(f"{'workload':42s} {'wgpu ms':>9s} {'flex ms':>9s} {'torch ms':>9s} {'wgpu/flex':>10s} {'wgpu/torch':>11s}")
    for name, g, f, t in rows:
        print(f"{name:42s} {g * 1e3:9.2f} {f * 1e3:9.2f} {t * 1e3:9.2f} {g / f:9.1f}x {g / t:10.1f}x")
    print(f"(ratios are time ratios: above 1x the GPU device is slower; the CNN step made "
          f"~{per_step:.0f} dispatches)")
    print(format_peer_report())


if __name__ == "__main__":
    main()
