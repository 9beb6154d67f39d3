"""The training chapter's instrumentation: the digits CNN trained in minidl and PyTorch side by
side: the pieces the chapter's ``fit`` calls (``twins``, ``loader``, ``torch_epoch``; its
record is :mod:`minidl_book.twin_record`), and the experiments the chapter measures on the
trained model (careless evaluation, Adam's moments, resuming). The
chapter shows its loops; this module keeps the bookkeeping and the figures off the page.

The model classes are :mod:`minidl_book.workloads`'s (``DigitsCnnConfig``, ``DigitsCnn``,
``torch_cnn``), so the speed chapters measure the model this chapter trains.
"""

from __future__ import annotations

import functools
import itertools
import re
from pathlib import Path

import numpy as np
import safetensors.torch
import torch

from minidl import Device
from minidl.data import DataLoaderBuilder, DigitsBatcher, DigitsDataset
from minidl.nn import CrossEntropyLossConfig
from minidl.optim import AdamConfig, GradientsParams
from minidl.store import MinidlToPyTorchAdapter, PytorchStore, SafetensorsStore, load_model
from minidl.train import (
    AccuracyInput,
    AccuracyMetric,
    checkpoint_paths,
    restore_checkpoint,
)
from minidl_book.workloads import DigitsCnn, DigitsCnnConfig, torch_cnn

SEED, BATCH, LR = 0, 32, 3e-3
TRUNK = ("conv1", "bn1", "conv2", "bn2")


@functools.cache
def datasets(seed: int = SEED) -> tuple[DigitsDataset, DigitsDataset, DigitsDataset]:
    """The train, valid and test splits of scikit-learn's digits (one seeded permutation)."""
    return tuple(DigitsDataset(split, seed=seed) for split in ("train", "valid", "test"))


def loader(dataset, device: Device, seed: int | None = None, batch_size: int = BATCH):
    """burn's data loader: the digits batcher, a batch size, a shuffle seed (or none)."""
    builder = DataLoaderBuilder(DigitsBatcher()).batch_size(batch_size)
    if seed is not None:
        builder = builder.shuffle(seed)
    return builder.set_device(device).build(dataset)


def accuracy(model: DigitsCnn, dataset, device: Device | None = None) -> float:
    """Accuracy in % of ``model`` used as it is (pass ``model.valid()`` to evaluate properly),
    batch by batch with burn-train's ``AccuracyMetric``, batches on ``device`` (default: the
    plain flex device, where ``valid()`` puts the params)."""
    metric = AccuracyMetric()
    for batch in loader(dataset, device or Device.flex(), batch_size=BATCH):
        metric.update(AccuracyInput(model(batch.images), batch.targets))
    return metric.value()


def torch_accuracy(twin: torch.nn.Module, dataset) -> float:
    """The twin's accuracy in % in ``eval()`` mode."""
    twin.eval()
    with torch.no_grad():
        predicted = twin(torch.from_numpy(dataset.images[:, None])).argmax(1).numpy()
    twin.train()
    return 100.0 * float(np.mean(predicted == dataset.labels))


def epoch_seed(epoch: int) -> int:
    """The seed of the device's random stream (the dropout masks) at the start of ``epoch``:
    the chapter's loop calls ``device.seed(epoch)``."""
    return epoch


def twins(cfg: DigitsCnnConfig, device: Device, seed: int = SEED):
    """A PyTorch twin drawn with ``torch.manual_seed(seed)`` and a minidl model on ``device``
    loaded from its ``state_dict`` through ``PytorchStore`` (the adapter does the mapping)."""
    torch.manual_seed(seed)
    twin = torch_cnn(cfg)
    model = PytorchStore.from_state_dict(twin.state_dict()).load_into(cfg.init(device))
    return model, twin


def twin_param(twin: torch.nn.Module, path: str) -> np.ndarray:
    """The twin's tensor for minidl's param ``path``, in minidl's layout."""
    layer, name = path.split(".")
    value = getattr(getattr(twin, layer), {"gamma": "weight", "beta": "bias"}.get(name, name))
    value = value.detach().numpy()
    return value.T if layer.startswith("fc") and name == "weight" else value


def to_torch(model: DigitsCnn, cfg: DigitsCnnConfig) -> torch.nn.Module:
    """The way back: a SafetensorsStore with the minidl → PyTorch adapter, a strict load."""
    store = SafetensorsStore.from_bytes().with_to_adapter(MinidlToPyTorchAdapter())
    store.collect_from(model)
    net = torch_cnn(cfg)
    keys = net.load_state_dict(safetensors.torch.load(store.data))
    assert not keys.missing_keys and not keys.unexpected_keys
    return net


def torch_epoch(twin: torch.nn.Module, torch_adam, batches) -> list[float]:
    """One epoch of the twin on minidl's batches: the loop every PyTorch user writes."""
    twin.train()
    losses = []
    for batch in batches:
        x = torch.from_numpy(batch.images.to_numpy())
        y = torch.from_numpy(batch.targets.to_numpy())
        torch_adam.zero_grad()
        loss = torch.nn.functional.cross_entropy(twin(x), y)
        loss.backward()
        torch_adam.step()
        losses.append(loss.item())
    return losses


def relative_gap(run: dict) -> np.ndarray:
    """|minidl loss − PyTorch loss| / |PyTorch loss|, step by step."""
    return np.abs(run["loss"] - run["torch_loss"]) / np.abs(run["torch_loss"])


def plot_runs(runs: dict[str, dict], tolerance: float, accuracy_of: str):
    """Left: the relative loss gap per step of each run (a colour per run); right: the
    validation accuracy per epoch of run ``accuracy_of``, minidl against PyTorch, each line
    labelled at its end."""
    import matplotlib.pyplot as plt

    fig, (ax, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.0),
                                     gridspec_kw={"width_ratios": (3, 2)})
    for (name, run), colour in zip(runs.items(), ("tab:blue", "tab:green")):
        steps = np.arange(1, len(run["loss"]) + 1) / run["steps_per_epoch"]
        ax.semilogy(steps, np.maximum(relative_gap(run), 1e-9), color=colour, lw=0.8,
                    label=name)
    ax.axhline(tolerance, ls="--", color="tab:red", lw=1, label=f"tolerance {tolerance:g}")
    ax.set_xlabel("epoch (a point per step)")
    ax.set_ylabel("relative |loss difference|")
    ax.set_title("minidl vs PyTorch, step by step", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3,
              frameon=False)
    run = runs[accuracy_of]
    epochs = np.arange(1, len(run["valid"]) + 1)
    ends = {"minidl": run["valid"][-1], "PyTorch": run["torch_valid"][-1]}
    above = max(ends, key=ends.get)
    for key, name, colour in (("valid", "minidl", "tab:blue"),
                              ("torch_valid", "PyTorch", "tab:orange")):
        ax_acc.plot(epochs, run[key], "-o", color=colour, ms=4)
        ax_acc.annotate(name, (epochs[-1], run[key][-1]), xytext=(6, 5 if name == above else -9),
                        textcoords="offset points", color=colour, fontsize=9)
    ax_acc.set_xlim(0.7, len(epochs) + 1.2)
    ax_acc.set_xticks(epochs)  # no tick on the room kept for the labels
    ax_acc.margins(y=0.15)
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("validation accuracy (%)")
    ax_acc.set_title(f"validation accuracy, {accuracy_of}", fontsize=10)
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def plot_loss_curve(run: dict):
    """The training loss per step of minidl and of the PyTorch twin (thin), each with its
    mean over the last epoch's worth of steps (thick), against the epoch (a step is 1/n of
    one), as in :func:`plot_runs`; epoch ends marked."""
    import matplotlib.pyplot as plt

    n = run["steps_per_epoch"]
    fig, ax = plt.subplots(figsize=(10, 2.8))
    steps = np.arange(1, len(run["loss"]) + 1) / n  # in epochs, as plot_runs's x-axis
    for key, colour, label in (("loss", "tab:blue", "minidl"),
                               ("torch_loss", "tab:orange", "PyTorch twin")):
        losses = run[key]
        ax.plot(steps, losses, color=colour, lw=0.5, alpha=0.35)
        mean = np.convolve(losses, np.ones(n) / n, mode="valid")
        ax.plot(steps[n - 1:], mean, color=colour, lw=2,
                label=f"{label} (mean of the last {n} steps)")
    for epoch in range(1, len(run["valid"])):
        ax.axvline(epoch, color="lightgray", lw=0.8, zorder=0)
    ax.set_yscale("log")
    ax.set_xlabel(f"epoch ({n} steps each; a point per step)")
    ax.set_ylabel("training loss")
    ax.set_title("Training loss, dropout 0.2: minidl and its twin, same batches", fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def plot_resume_timeline(checkpoint_epoch: int, epochs: int, blank: bool = False):
    """What the uninterrupted run carries from epoch to epoch, and what a resume from the
    checkpoint of ``checkpoint_epoch`` must rebuild: one lane per piece, grey before the
    checkpoint, the resumed epochs in colour. ``blank``: the scaffold asked before the
    exercise, the resumed epochs left as "?" for the reader to fill, the order and seed
    lanes unlabelled before them too."""
    import matplotlib.pyplot as plt

    lanes = (("weights", "restored"), ("Adam's state", "restored"),
             ("data order\n(the loader's generator)", "order {e}"),
             ("dropout masks\n(the device's stream)", "seed({e})"))
    fig, ax = plt.subplots(figsize=(10, 2.9))
    for row, (lane, label) in enumerate(lanes):
        ax.text(-0.1, -row, lane, ha="right", va="center", fontsize=10)
        for epoch in range(1, epochs + 1):
            done = epoch <= checkpoint_epoch
            ax.add_patch(plt.Rectangle((epoch - 0.95, -row - 0.32), 0.9, 0.64,
                                       color="#d9d9d9" if done or blank else "tab:blue"))
            text = label.format(e=epoch) if "{e}" in label else (
                label if epoch == checkpoint_epoch + 1 else "")
            if blank and not done:
                text = "?"
            elif blank and "{e}" in label:
                text = ""  # which order, which seed: the exercise's two hard parts
            elif blank and "{e}" not in label:
                text = "updated"
            ax.text(epoch - 0.5, -row + 0.08 * (row == 2 and done and not blank), text,
                    ha="center", va="center", fontsize=9,
                    color="black" if done or blank else "white")
            if row == 2 and done and not blank:
                ax.text(epoch - 0.5, -row - 0.22, "drawn, skipped", ha="center",
                        va="center", fontsize=8, color="dimgray")
    for epoch in range(1, epochs + 1):
        ax.text(epoch - 0.5, 0.45, f"epoch {epoch}", ha="center", fontsize=9)
    ax.axvline(checkpoint_epoch, ymin=0.0, ymax=0.86, color="tab:red", lw=1.5)
    ax.text(checkpoint_epoch, 0.85, f"checkpoint of epoch {checkpoint_epoch}: "
            + ("a fresh process resumes here" if blank else "the resume starts here"),
            ha="center", color="tab:red", fontsize=10)
    ax.set_xlim(-2.3, epochs + 0.1)
    ax.set_ylim(-len(lanes) + 0.5, 1.25)
    ax.axis("off")
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def running_stats(model: DigitsCnn) -> dict[str, np.ndarray]:
    """Every running state by path, as NumPy arrays."""
    return {path: s.value_sync().to_numpy() for path, s in model.running_states().items()}


LAYERS = ("conv1", "bn1", "conv2", "bn2", "fc1", "fc2")


def plot_step_size(grads: dict[str, float], epsilons: tuple[float, ...]):
    """Adam's first step over lr, |g| / (|g| + eps), against |g|, one curve per eps; the
    median |gradient| of ``conv1.bias`` and ``conv1.weight`` marked on each."""
    import matplotlib.pyplot as plt

    g_axis = np.logspace(-10, -1, 200)
    colours = ("tab:blue", "tab:orange")
    fig, ax = plt.subplots(figsize=(9.8, 2.8))
    for eps, colour in zip(epsilons, colours):
        ax.semilogx(g_axis, g_axis / (g_axis + eps), color=colour, label=f"eps = {eps:g}")
    for name, marker in (("conv1.bias", "o"), ("conv1.weight", "s")):
        g = grads[name]
        ax.axvline(g, color="gray", lw=0.6, ls=":")
        for eps, colour in zip(epsilons, colours):
            ax.plot(g, g / (g + eps), marker, color=colour, mfc="white")
        ax.text(g, 1.07, f"{name}\n|g| = {g:.1e}", ha="center", fontsize=7)
    ax.set_ylim(0, 1.22)
    ax.set_xlabel("|g| (median |gradient| of a parameter)")
    ax.set_ylabel("step size / lr")
    ax.legend(fontsize=8, frameon=False, loc="center right")
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def eps_experiment(torch_eps: float, steps: int, device: Device) -> np.ndarray:
    """Relative loss difference per step over ``steps`` dropout-free steps, with the twin's
    Adam given ``torch_eps`` (minidl keeps burn's 1e-5)."""
    cfg = DigitsCnnConfig().with_dropout(0.0)
    model, net = twins(cfg, device)
    adam, loss_fn = AdamConfig().init(), CrossEntropyLossConfig().init()
    torch_adam = torch.optim.Adam(net.parameters(), lr=LR, eps=torch_eps)
    batches = list(_endless(loader(datasets()[0], device, SEED), steps))
    ours, theirs = [], []
    for batch in batches:
        loss = loss_fn(model(batch.images), batch.targets)
        ours.append(float(loss.into_scalar()))
        model = adam.step(LR, model, GradientsParams.from_grads(loss.backward(), model))
    theirs = torch_epoch(net, torch_adam, batches)
    return np.abs(np.array(ours) - theirs) / np.abs(np.array(theirs))


def torch_eps_pair(eps: float, other_eps: float, steps: int) -> np.ndarray:
    """The same experiment with PyTorch on both sides: two twins from the same weights,
    Adam with ``eps`` and with ``other_eps``; the relative loss difference per step."""
    cfg = DigitsCnnConfig().with_dropout(0.0)
    batches = list(_endless(loader(datasets()[0], Device.flex(), SEED), steps))
    losses = []
    for e in (eps, other_eps):
        torch.manual_seed(SEED)
        net = torch_cnn(cfg)
        losses.append(np.array(torch_epoch(net, torch.optim.Adam(net.parameters(), lr=LR,
                                                                  eps=e), batches)))
    return np.abs(losses[0] - losses[1]) / np.abs(losses[1])


def moment_trace(device: Device, path: str = "fc1.weight", steps: int = 50) -> dict:
    """Adam's moments for one weight of ``path`` over the first ``steps`` steps of the
    dropout-free run from the twin's weights (read in ``Adam``'s own state after each step),
    with the bias-corrected ones; the weight, among those whose |g| at step 1 is far above
    eps, is the one whose gradient keeps its sign best (largest mean |m̂| / √v̂)."""
    model, _ = twins(DigitsCnnConfig().with_dropout(0.0), device)
    adam, loss_fn = AdamConfig().init(), CrossEntropyLossConfig().init()
    pid, m, v = model.parameters()[path].id, [], []
    for batch in _endless(loader(datasets()[0], device, SEED), steps):
        loss = loss_fn(model(batch.images), batch.targets)
        model = adam.step(LR, model, GradientsParams.from_grads(loss.backward(), model))
        state = adam.states[pid]
        m.append(state.moment_1.to_numpy().ravel())
        v.append(state.moment_2.to_numpy().ravel())
    m, v, t = np.array(m, np.float64), np.array(v, np.float64), np.arange(1, steps + 1)
    m_hat, v_hat = m / (1 - 0.9**t)[:, None], v / (1 - 0.999**t)[:, None]
    steady = np.abs(m_hat) / np.sqrt(np.maximum(v_hat, 1e-30))
    big = np.sqrt(v_hat[0]) > 100 * AdamConfig().epsilon  # |g| far above eps at step 1
    k = int(np.argmax(np.where(big, steady.mean(axis=0), -1.0)))
    sign = np.sign(m_hat[-1, k])
    return {"t": t, "m": sign * m[:, k], "sqrt_v": np.sqrt(v[:, k]),
            "m_hat": sign * m_hat[:, k], "sqrt_v_hat": np.sqrt(v_hat[:, k]),
            "index": np.unravel_index(k, model.parameters()[path].val().shape),
            "path": path, "time": state.time}


def plot_moments(trace: dict):
    """Left: m, √v and the corrected m̂, √v̂ of one weight against the step; right: the step
    over lr with the corrections and without."""
    import matplotlib.pyplot as plt

    t = trace["t"]
    fig, (ax, ax_r) = plt.subplots(1, 2, figsize=(9.8, 3.0),
                                   gridspec_kw={"width_ratios": (3, 2)})
    for key, label, colour, style in (("m_hat", "m̂", "tab:blue", "-"),
                                      ("m", "m", "tab:blue", ":"),
                                      ("sqrt_v_hat", "√v̂", "tab:orange", "-"),
                                      ("sqrt_v", "√v", "tab:orange", ":")):
        ax.plot(t, trace[key], style, color=colour, lw=2, label=label)
    ax.set_xlabel("step t")
    ax.set_ylabel("value (in g's sign)", fontsize=10)
    ax.set_title(f"Adam's moments, one weight of {trace['path']}", fontsize=10)
    ax.legend(fontsize=10, frameon=False, ncol=2)
    ax_r.plot(t, trace["m_hat"] / (trace["sqrt_v_hat"] + 1e-5), color="tab:green", lw=2,
              label="m̂ / (√v̂ + eps): burn's")
    ax_r.plot(t, trace["m"] / (trace["sqrt_v"] + 1e-5), ":", color="tab:red", lw=2,
              label="m / (√v + eps): uncorrected")
    ax_r.set_xlabel("step t")
    ax_r.set_ylabel("step / lr")
    ax_r.set_title("the step it takes", fontsize=10)
    ax_r.set_ylim(0, 1.6 * float(np.max(trace["m"] / (trace["sqrt_v"] + 1e-5))))
    ax_r.legend(fontsize=9, frameon=False, loc="upper right")
    for a in (ax, ax_r):
        a.tick_params(labelsize=9)
    fig.tight_layout()
    plt.show()
    plt.close(fig)


def _endless(data_loader, steps: int):
    return itertools.islice((b for _ in itertools.count() for b in data_loader), steps)


def median_grads(twin: torch.nn.Module, batch) -> dict[str, float]:
    """Median |gradient| of each of the twin's parameters on one batch (train mode)."""
    twin.train()
    twin.zero_grad()
    x = torch.from_numpy(batch.images.to_numpy())
    y = torch.from_numpy(batch.targets.to_numpy())
    torch.nn.functional.cross_entropy(twin(x), y).backward()
    out = {name: float(p.grad.abs().median()) for name, p in twin.named_parameters()}
    twin.zero_grad()
    return out


def blame(checkpoint: Path, dataset, device: Device) -> dict[str, float]:
    """Test accuracy of the checkpoint's model on ``device`` (no ``valid()``) with only the
    dropout in training behaviour, and with only the two BatchNorms on batch statistics."""
    bn_only = load_model(DigitsCnnConfig, checkpoint, device)
    bn_only.dropout = bn_only.dropout.freeze()
    dropout_only = load_model(DigitsCnnConfig, checkpoint, device)
    dropout_only.bn1 = dropout_only.bn1.freeze()
    dropout_only.bn2 = dropout_only.bn2.freeze()
    device.seed(SEED)
    return {"dropout": accuracy(dropout_only, dataset, device),
            "batchnorm": accuracy(bn_only, dataset, device)}


_KINDS = {"dropout": re.compile(r"drop[\s_-]?outs?\b"),
          "batchnorm": re.compile(r"batch[\s_-]?norm(?:s|ali[sz]ations?|\dd)?\b|\bbns?\b")}
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|without)\b|n't")
_LESS = re.compile(r"\b(?:less|fewer|cheaper|lower|smaller|least)\b")


def layer_named(prediction) -> str | None:
    """The kind of layer a sentence answers "which costs more?" with: ``"dropout"``,
    ``"dropouts"``, ``"Dropout costs more than BatchNorm"``, ``"dropout, not batchnorm"``,
    ``"batchnorm costs less than dropout"``, ``"BatchNorm is cheaper"`` → ``"dropout"``; a
    sentence it cannot read (a lone negation, no layer named) → None."""
    if not isinstance(prediction, str):
        return None
    text = prediction.casefold()
    found = sorted((m.start(), kind) for kind, rx in _KINDS.items() for m in rx.finditer(text))
    kinds = list(dict.fromkeys(kind for _, kind in found))
    if not kinds or len(kinds) > 2:
        return None
    first = kinds[0]
    other = next(k for k in _KINDS if k != first)
    negated = _NEGATION.search(text[:found[0][0]])  # "not dropout but ...": before the first
    less = _LESS.search(text)
    if len(kinds) == 1:
        return None if negated or _NEGATION.search(text) else (other if less else first)
    return other if bool(negated) != bool(less) else first


def layer_answer(prediction, truth: str) -> bool:
    """The careless-evaluation exercise's comparison: the layer the sentence names is the
    truth's."""
    return layer_named(prediction) == truth


def small_grad_share(threshold: float) -> float:
    """% of the dropout-free twin's weights whose |gradient| at step 1 is below
    ``threshold`` (the twin as drawn, the first batch of the run)."""
    torch.manual_seed(SEED)
    net = torch_cnn(DigitsCnnConfig().with_dropout(0.0))
    batch = next(iter(loader(datasets()[0], Device.flex(), SEED)))
    x = torch.from_numpy(batch.images.to_numpy())
    y = torch.from_numpy(batch.targets.to_numpy())
    torch.nn.functional.cross_entropy(net(x), y).backward()
    g = torch.cat([p.grad.abs().flatten() for p in net.parameters()])
    return 100.0 * float((g < threshold).float().mean())


def resumed_losses(ckpt_dir: Path, device: Device, epoch: int = 3, steps: int = 10,
                   adam_state: bool = True, order: bool = True,
                   masks: bool = True) -> np.ndarray:
    """The first ``steps`` losses of epoch ``epoch + 1`` resumed from the checkpoint of
    ``epoch``, with Adam's state, the data order and the device's seeding each restored or
    left out (a fresh Adam, a loader at epoch 1, the stream where the process left it)."""
    adam = AdamConfig().init()  # zero moments, step count 0
    if adam_state:
        model = restore_checkpoint(ckpt_dir, epoch, DigitsCnnConfig, device, adam)
    else:  # the weights only
        model = load_model(DigitsCnnConfig, checkpoint_paths(ckpt_dir, epoch)["model"], device)
    train_loader = loader(datasets()[0], device, SEED)
    for _ in range(epoch if order else 0):
        train_loader.iter()  # draws one epoch's order: skip the epochs trained
    if masks:
        device.seed(epoch_seed(epoch + 1))  # as the loop seeds the next epoch
    loss_fn, losses = CrossEntropyLossConfig().init(), []
    for batch in itertools.islice(train_loader, steps):  # the chapter's loop body
        loss = loss_fn(model(batch.images), batch.targets)
        losses.append(float(loss.into_scalar()))
        model = adam.step(LR, model, GradientsParams.from_grads(loss.backward(), model))
    return np.array(losses)


LEFT_OUT = {"nothing (all four restored)": {}, "Adam's state": {"adam_state": False},
            "the data order": {"order": False}, "the device's seed": {"masks": False},
            "order and seed (burn's Learner)": {"order": False, "masks": False}}


def ablation_losses(ckpt_dir: Path, run: dict, device: Device, epoch: int = 3,
                    steps: int = 10) -> dict[str, np.ndarray]:
    """The uninterrupted run's first ``steps`` losses of epoch ``epoch + 1`` (key
    ``"uninterrupted"``), then each resume's with one piece left out (:data:`LEFT_OUT`)."""
    offset = epoch * run["steps_per_epoch"]
    out = {"uninterrupted": np.asarray(run["loss"][offset:offset + steps])}
    for name, kwargs in LEFT_OUT.items():
        device.seed(987_654_321)  # wherever a fresh process would leave the stream
        out[name] = resumed_losses(ckpt_dir, device, epoch, steps, **kwargs)
    return out


def plot_ablation(losses: dict[str, np.ndarray], epoch: int = 4):
    """One panel per piece left out: the uninterrupted run's losses (grey line) against the
    resumed run's (coloured dots), step by step; the first step whose loss is off marked."""
    import matplotlib.pyplot as plt

    main, resumes = losses["uninterrupted"], {k: v for k, v in losses.items()
                                               if k != "uninterrupted"}
    steps = np.arange(1, len(main) + 1)
    fig, axes = plt.subplots(2, 3, figsize=(9.6, 4.6), sharex=True, sharey=True)
    for ax, (name, resumed), color in zip(axes.flat, resumes.items(),
                                          ("tab:green", "tab:orange", "tab:red",
                                           "tab:purple", "tab:brown")):
        ax.plot(steps, main, "-", color="0.6", lw=3, label="uninterrupted")
        ax.plot(steps, resumed, "o", color=color, ms=5, label="resumed")
        off = np.flatnonzero(resumed != main)
        said = f"first off: step {off[0] + 1}" if len(off) else "bit for bit"
        ax.set_title(f"left out: {name}\n{said}", fontsize=10)
        if len(off):
            ax.axvline(off[0] + 1, color=color, lw=0.8, ls=":")
        ax.set_xticks(steps)
        ax.tick_params(labelsize=9)
    last = axes.flat[-1]
    last.axis("off")
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color="0.6", lw=3),
               Line2D([], [], color="0.2", marker="o", ls="none", ms=5)]
    last.legend(handles, ["uninterrupted", "resumed (one colour per panel)"],
                loc="center", fontsize=10, frameon=False)
    for ax in axes[:, 0]:
        ax.set_ylabel("loss", fontsize=10)
    for ax in axes[1]:
        ax.set_xlabel(f"step of epoch {epoch}", fontsize=10)
    fig.tight_layout()
    plt.show()
    plt.close(fig)
