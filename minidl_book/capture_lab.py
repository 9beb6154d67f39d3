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


def draw_timing(timed: dict[str, dict[str, float]]):
    """Eager beside replayed step time per workload: the part replay removes is the Python
    above the kernels."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 2.1))
    for row, t in enumerate(timed.values()):
        ax.barh(row + 0.2, t["replay"], 0.35, color="#4c72b0")
        ax.barh(row - 0.2, t["eager"], 0.35, color="#dd8452")
        ax.text(t["eager"], row - 0.2, f"  eager {t['eager']:.1f} ms: kernels + Tensor, "
                "Dispatch, autodiff, optimizer walk", va="center", fontsize=8)
        ax.text(t["replay"], row + 0.2, f"  replayed {t['replay']:.1f} ms: the same kernels, "
                f"{t['calls']} calls ({1 - t['replay'] / t['eager']:.0%} less)",
                va="center", fontsize=8)
    ax.set_yticks(range(len(timed)), list(timed))
    ax.set_xlim(0, 2.3 * max(t["eager"] for t in timed.values()))
    ax.set_xlabel("one step, ms of one thread's CPU time")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def draw_two_runs():
    """The timeline of a capture: warm-up, two recorded runs, replays; the arrows show how
    each array the second run reads is classified."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    fig, ax = plt.subplots(figsize=(8.2, 3.1))
    ax.set_xlim(0, 10.4)
    ax.set_ylim(-0.3, 3.3)
    ax.axis("off")
    runs = [(0.1, "warm-up\n(eager step)", "#eeeeee"), (2.25, "recorded run 1", "#dde7f3"),
            (5.0, "recorded run 2\n= the program", "#cfe3cf"), (7.8, "replay, replay, ...",
                                                              "#f3e6cf")]
    for x, label, color in runs:
        width = 1.9 if x < 1 else 2.4
        ax.add_patch(FancyBboxPatch((x, 0.2), width, 2.5, boxstyle="round,pad=0.03",
                                    fc=color, ec="#888888"))
        ax.text(x + width / 2, 2.95, label, ha="center", va="center", fontsize=9)
    for x, run in ((2.3, 1), (5.0, 2)):
        ax.text(x + 0.15, 2.2, f"t = matmul(x, w{run - 1})", fontsize=8, family="monospace")
        ax.text(x + 0.15, 1.6, "loss, g = ...(t, k)", fontsize=8, family="monospace")
        ax.text(x + 0.15, 1.0, f"w{run} = w{run - 1} - lr*g", fontsize=8, family="monospace")
    ax.text(7.95, 1.9, "in0 = the new batch\nst0 <- st0 - s0*g\n(no Python layers)",
            fontsize=8, family="monospace", va="center")

    def arrow(x0, y0, x1, y1, text, color, tx, ty):
        ax.annotate("", (x1, y1), (x0, y0),
                    arrowprops=dict(arrowstyle="->", color=color, lw=1.4,
                                    connectionstyle="arc3,rad=-0.25"))
        ax.text(tx, ty, text, color=color, fontsize=8, ha="center")

    arrow(3.9, 0.95, 6.3, 2.15, "carried state: made\nby the previous run", "#2a6e2a", 3.45,
          0.35)
    arrow(5.3, 2.15, 5.3, 1.75, "", "#555555", 0, 0)
    ax.annotate("", (7.8, 1.9), (7.45, 1.9), arrowprops=dict(arrowstyle="->", lw=1.4))
    ax.text(6.2, 0.4, "temporary (t): made\nearlier in this run", fontsize=7.5,
            color="#555555", ha="center")
    ax.text(5.35, -0.2, "x: input (the argument)   k: constant (the same array in both runs)"
            "   lr: scalar input", fontsize=8, ha="center", color="#1f4e8c")
    fig.tight_layout()
    return fig
