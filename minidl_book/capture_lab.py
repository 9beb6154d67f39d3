"""The capture chapter's measurement: a workload's training step eager and replayed.

Both are timed as CPU time of one thread (numba on one thread for the block), in turns, best
block kept: on a shared machine wall time moved by 10x between blocks while one thread's CPU
time stayed within a few percent, and the two contenders run the same kernels, so only the
Python above them differs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from minidl import Device, Tensor

__all__ = ["captured_step", "cpu_ms_in_turns", "eager_and_replayed"]


def captured_step(workload: str, device: Device):
    """``(replay, graph)``: ``workload`` (``"mlp"`` or ``"cnn"`` of :mod:`.workloads`) captured on
    ``device``; ``replay()`` runs one replayed step and reads its loss."""
    from minidl.capture import capture
    from minidl.nn import CrossEntropyLossConfig
    from minidl.optim import GradientsParams
    from minidl_book import workloads

    build, _ = workloads.WORKLOADS[workload]
    state = build(device).state
    x, y = workloads.cnn_batch() if workload == "cnn" else workloads.mlp_batch()
    lr = workloads.CNN_LR if workload == "cnn" else workloads.MLP_LR
    images, targets = Tensor.from_numpy(x, device), Tensor.from_numpy(y, device)
    loss_fn = CrossEntropyLossConfig().init()

    def step(images, targets, lr):
        model = state["model"]
        loss = loss_fn(model(images), targets)
        grads = loss.backward()
        if workload == "cnn":
            grads = GradientsParams.from_grads(grads, model)
        state["model"] = state["optim"].step(lr, model, grads)
        return loss

    graph = capture(device, step, images, targets, lr, optimizers=[state["optim"]])
    return (lambda: float(graph.replay(images, targets, lr).to_numpy()[0])), graph


def cpu_ms_in_turns(contenders: dict[str, Callable[[], object]], rounds: int = 5,
                    steps: int = 8) -> dict[str, float]:
    """Best milliseconds of one thread's CPU time per call of each contender, timed in turns."""
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        for fn in contenders.values():
            fn()
        best = dict.fromkeys(contenders, float("inf"))
        for _ in range(rounds):
            for name, fn in contenders.items():
                t0 = time.thread_time()
                for _ in range(steps):
                    fn()
                best[name] = min(best[name], (time.thread_time() - t0) / steps * 1e3)
    finally:
        numba.set_num_threads(threads)
    return best


def eager_and_replayed(workload: str) -> dict[str, float]:
    """``workload``'s step on ``Device.flex().autodiff()``: eager and replayed milliseconds (one
    thread's CPU time) and the replayed program's backend ``calls``."""
    from minidl_book import workloads

    device = Device.flex().autodiff()
    replay, graph = captured_step(workload, device)
    eager = workloads.WORKLOADS[workload][0](device)
    ms = cpu_ms_in_turns({"eager": eager, "replay": replay})
    return {**ms, "calls": graph.calls}
