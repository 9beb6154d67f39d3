"""The capture chapter's measurement: a workload's training step eager and replayed.

Both are timed as CPU time of one thread (numba on one thread for the block), in turns, best
block kept: on a shared machine wall time moved by 10x between blocks while one thread's CPU
time stayed within a few percent, and the two contenders run the same kernels, so only the
Python above them differs.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from minidl import Device, Tensor
from minidl_book.in_turns import best_in_turns

__all__ = ["RecordedRuns", "captured_step", "cpu_ms_in_turns", "eager_and_replayed",
           "gpu_per_step", "recorded_runs", "unchecked_replay", "yours_or_reference"]


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
    best = best_in_turns(contenders, rounds=rounds, steps=steps, clock=time.thread_time)
    return {name: seconds * 1e3 for name, seconds in best.items()}


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


W1_X = 6.85  # where run 2's "w1" sits, the carried-state arrow's head


def draw_two_runs():
    """The timeline of a capture: warm-up, two recorded runs, replays; the arrows show how
    each array the second run reads is classified."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    fig, ax = plt.subplots(figsize=(7.5, 3.2))
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
        ax.text(x + width / 2, 2.95, label, ha="center", va="center", fontsize=10)
    for x, run in ((2.3, 1), (5.0, 2)):
        ax.text(x + 0.1, 2.2, f"t = matmul(x, w{run - 1})", fontsize=9, family="monospace")
        ax.text(x + 0.1, 1.6, "loss, g = f(t, k)", fontsize=9, family="monospace")
        ax.text(x + 0.1, 1.0, f"w{run} = w{run - 1} - lr*g", fontsize=9, family="monospace")
    ax.text(1.05, 1.45, "makes the\noptimizer's\nstate (Adam's\nmoments and\ncount t)",
            fontsize=9, ha="center", va="center")
    ax.text(7.88, 1.9, "in0 = new batch\nfloat_sub(st0,\n  s0*g, out=st0)\n(no Python\n layers)",
            fontsize=9, family="monospace", va="center")

    def arrow(x0, y0, x1, y1, text, color, tx, ty):
        ax.annotate("", (x1, y1), (x0, y0),
                    arrowprops=dict(arrowstyle="->", color=color, lw=1.4,
                                    connectionstyle="arc3,rad=-0.25"))
        ax.text(tx, ty, text, color=color, fontsize=9, ha="center")

    arrow(3.9, 0.95, W1_X, 2.15, "carried state: made\nby the previous run", "#2a6e2a", 3.45,
          0.35)
    arrow(5.3, 2.15, 5.3, 1.75, "", "#555555", 0, 0)
    ax.annotate("", (7.8, 1.9), (7.45, 1.9), arrowprops=dict(arrowstyle="->", lw=1.4))
    ax.text(6.35, 0.35, "temporary (t): made\nearlier in this run", fontsize=8.5,
            color="#555555", ha="center")
    ax.text(5.2, -0.25, "x: input (the argument)   k: constant (the same array, or equal "
            "values, in both runs)   lr: scalar input", fontsize=9, ha="center",
            color="#1f4e8c")
    fig.tight_layout()
    return fig


def draw_buffers():
    """Who holds which arrays: after capture (or ``graph.step_eagerly``) the model and the
    program's STATE hold the same buffers, which replays update in place; after the reader's
    own eager ``step()`` the model holds new arrays the program never touches."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.7))

    def box(ax, x, y, w, text, color):
        ax.add_patch(FancyBboxPatch((x, y), w, 0.55, boxstyle="round,pad=0.04", fc=color,
                                    ec="#888888"))
        ax.text(x + w / 2, y + 0.27, text, ha="center", va="center", fontsize=9)

    def link(ax, x0, y0, x1, y1, color="#333333", style="->"):
        ax.annotate("", (x1, y1), (x0, y0),
                    arrowprops=dict(arrowstyle=style, color=color, lw=1.4))

    titles = ("after capture, or graph.step_eagerly", "after your own step(x4, y4, lr)")
    for ax, title, own in zip(axes, titles, (False, True)):
        ax.set_xlim(0, 5)
        ax.set_ylim(0, 3.3)
        ax.axis("off")
        ax.set_title(title, fontsize=10)
        box(ax, 0.1, 2.4, 1.7, 'state["model"]', "#dde7f3")
        box(ax, 0.1, 0.3, 1.7, "program STATE", "#cfe3cf")
        box(ax, 2.6, 1.35, 1.9, "weight buffers", "#eeeeee")
        link(ax, 1.8, 0.6, 2.6, 1.55)
        ax.text(3.55, 0.65, "replay writes\nout=st...", fontsize=8.5, color="#2a6e2a",
                ha="center", va="center")
        link(ax, 3.55, 0.95, 3.55, 1.35, "#2a6e2a")
        if own:
            box(ax, 2.6, 2.55, 1.9, "new arrays (frozen)", "#f6d5d5")
            link(ax, 1.8, 2.7, 2.6, 2.8)
        else:
            link(ax, 1.8, 2.6, 2.6, 1.75)
            ax.text(0.95, 1.6, "loss: a new\narray per replay", fontsize=8.5, ha="center",
                    va="center", color="#555555")
    fig.tight_layout()
    return fig


_LINE = re.compile(r"^\s+t(\d+) = c\d+\((.*)\)\s+#\s*(\w+)")


def program_reads(program_text: str, namespace: dict | None = None) -> list[dict]:
    """Per backend call of a captured program: its number ``k`` (its result ``tk``), its
    op, the kinds of array it reads
    (``in``, ``s``, ``st``, ``c``, ``t``) and the state buffer it writes in place, if any.
    With the program's ``namespace``, a ``c`` argument counts as a constant only when it
    holds an array (a dtype or a device passed to ``float_ones`` is not one)."""
    def is_array(tok: str) -> bool:
        value = (namespace or {}).get(tok)
        return namespace is None or (hasattr(value, "shape") and hasattr(value, "dtype"))

    calls = []
    for line in program_text.splitlines():
        found = _LINE.match(line)
        if not found:
            continue
        args, op = found.group(2), found.group(3)
        out = re.search(r"out=(st\d+)", args)
        args = re.sub(r"out=st\d+", "", args)
        kinds = {re.match(r"[a-z]+", tok).group() for tok in
                 re.findall(r"\b(?:in|st|s|c|t)\d+\b", args)
                 if not tok.startswith("c") or is_array(tok)}
        calls.append({"k": int(found.group(1)), "op": op, "reads": kinds,
                      "writes": out.group(1) if out else None})
    return calls


_CALL = re.compile(r"^(\s+)t(\d+) = (c\d+)\((.*?)\)\s+#\s*(\w+)(.*)$")


def listing(graph) -> str:
    """``graph.program_text`` made readable, nothing else changed: each kernel slot ``c…``
    shown by its kernel's name, a held value by what it is for (``ones_dtype``: the dtype
    ``float_ones`` is given). Results keep the program's numbers: ``tk`` is call ``k`` of
    the recorded run, the number capture's and verify's messages give (``call 46``); a
    query (``float_device``) makes no array, so its number has no line."""
    import numpy as np

    namespace = graph.program.namespace
    lines = graph.program_text.splitlines()

    def value_name(token: str, op: str) -> str:
        value = namespace.get(token)
        if isinstance(value, np.ndarray) or callable(value):
            return token
        kind = "dtype" if "DType" in type(value).__name__ else type(value).__name__.lower()
        return f"{op.removeprefix('float_').removeprefix('int_')}_{kind}"

    out = []
    for line in lines:
        found = _CALL.match(line)
        if not found:
            out.append(line)
            continue
        pad, t, slot, args, op, rest = found.groups()
        fn = namespace[slot]
        name = f"np.{fn.__name__}" if isinstance(fn, np.ufunc) else op
        args = re.sub(r"\bc\d+\b", lambda m, op=op: value_name(m.group(), op), args)
        note = f"  # {op}, in place" if "in place" in rest else ""
        out.append(f"{pad}t{t} = {name}({args}){note}")
    return "\n".join(out)


def unchecked_replay(graph, *args):
    """``graph.replay(*args)`` without its argument checks (shape, dtype, device, guards):
    the program run as it is on whatever arrays it gets. Only to show what the checks
    prevent; a real replay must go through ``graph.replay``."""
    env = dict(graph.counters.values)
    for spec, value in zip(graph.specs, args):
        if spec.role == "scalar":
            env[spec.name] = float(value)
    return graph._run(args, env)


class _CountingDevice:
    """The wgpu device of a runtime, counting the compute passes its encoders begin."""

    def __init__(self, device):
        self._device, self.passes = device, 0

    def __getattr__(self, name):
        return getattr(self._device, name)

    def create_command_encoder(self, *args, **kwargs):
        encoder, counter = self._device.create_command_encoder(*args, **kwargs), self

        class Counting:
            def __getattr__(self, name):
                return getattr(encoder, name)

            def begin_compute_pass(self, *a, **k):
                counter.passes += 1
                return encoder.begin_compute_pass(*a, **k)

        return Counting()


def gpu_per_step(contenders: dict[str, Callable[[], object]], rounds: int = 3,
                 steps: int = 4) -> dict[str, dict[str, float]]:
    """Each contender (a training step on a Wgpu device, returning its loss) per step: the
    ``dispatches`` and compute ``passes`` the runtime made (one step, its loss read), and the
    best block's ``wall`` ms (the loss of its last step read) and ``host`` ms (the calling
    thread's CPU time: the Python and the wgpu calls, not lavapipe's worker threads).
    Printed as a table without the wall time (on lavapipe mostly the kernels', and it moves
    with the machine's load), and returned."""
    from minidl.backends.wgpu.runtime import runtime

    rt = runtime(0)
    counting = rt.device = _CountingDevice(rt.device)
    try:
        out = {}
        for name, fn in contenders.items():
            fn().to_numpy()  # warm: pipelines compiled, the stream's plans found
            d, p = rt.dispatches, counting.passes
            fn().to_numpy()
            out[name] = {"dispatches": rt.dispatches - d, "passes": counting.passes - p,
                         "wall": float("inf"), "host": float("inf")}
    finally:
        rt.device = counting._device
    for _ in range(rounds):
        for name, fn in contenders.items():
            t0, c0 = time.perf_counter(), time.thread_time()
            for _ in range(steps):
                loss = fn()
            loss.to_numpy()
            row = out[name]
            row["wall"] = min(row["wall"], (time.perf_counter() - t0) / steps * 1e3)
            row["host"] = min(row["host"], (time.thread_time() - c0) / steps * 1e3)
    print(f"{'per step':12}{'dispatches':>11}{'compute passes':>16}{'host CPU':>10}")
    for name, r in out.items():  # wall time: lavapipe's kernels, moved by the machine's load
        print(f"{name:12}{r['dispatches']:11d}{r['passes']:16d}{r['host']:7.1f} ms")
    return out


def draw_run_timeline(adam_time: list[int], decay_done: list[int], rates: list[float]):
    """The runs of a capture and five replays, and what each run advances: Adam's ``time``
    (tracked with ``optimizers=``), a host counter inside the step (``done[0]`` of the step
    decay), a schedule read inside the step (``next(rates)``, refused at capture)."""
    import matplotlib.pyplot as plt

    runs = ["warm-up", "recorded\nrun 1", "recorded\nrun 2"] + [f"replay\n{k}" for k in
                                                                  range(1, 6)]
    rows = [("Adam's time\n(optimizers=)", adam_time), ("done[0] in\ndecayed()", decay_done),
            ("next(rates)\nin the step", rates)]
    fig, ax = plt.subplots(figsize=(7.5, 2.4))
    ax.set_xlim(-2.1, len(runs) - 0.4)
    ax.set_ylim(-1.0, len(rows) + 0.3)
    ax.axis("off")
    ax.axvspan(-0.45, 2.45, ymin=0.12, ymax=0.97, color="#dde7f3", zorder=0)
    for k, name in enumerate(runs):
        ax.text(k, len(rows) - 0.05, name, ha="center", va="center", fontsize=8.5)
    for r, (label, values) in enumerate(rows):
        y = len(rows) - 1 - r - 0.2
        ax.text(-0.6, y, label, ha="right", va="center", fontsize=8.5)
        for k, v in enumerate(values):
            moved = k == 0 or v != values[k - 1]
            text = f"{v:g}" if isinstance(v, float) and v < 1 else str(v)
            ax.text(k, y, text, ha="center", va="center", fontsize=9, family="monospace",
                    color="#222222" if moved else "#b03030")
        if len(values) < len(runs):
            ax.text(len(values) + 1.5, y, "refused at capture: runs 1 and 2 differ",
                    ha="center", va="center", fontsize=8.5, color="#b03030")
    ax.text(1, -0.8, "capture's three runs: real training steps", ha="center", fontsize=8,
            color="#4c72b0")
    ax.text(5.3, -0.8, "red: a value the replays no longer advance (frozen)", ha="center",
            fontsize=8, color="#b03030")
    fig.tight_layout()
    return fig


class RecordedRuns:
    """The two recorded runs of a capture, in the shape of the chapter's build-it.

    ``run1``, ``run2``: one dict per outermost backend call, ``{"op", "reads", "makes",
    "number"}``; arrays are named ``#1``, ``#2``... by first appearance (the same array, the
    same name in both runs); ``number`` is the call's host values (a declared float as its
    name, ``"lr"``): ``None``, the value, or a tuple when there are several; ``makes``
    lists the arrays it returned (none for a query such as a tensor's device). ``inputs``: the names
    of the declared input arrays; ``equal(a, b)``: same shape, dtype and values.
    ``program(kinds)`` emits the replay function from a classification of run 2's arrays.
    """

    def __init__(self, calls1: list, calls2: list, inputs: dict[str, object],
                 outputs: list, scalar_names: dict[str, str]):
        import numpy as np

        from minidl.capture.program import _paths
        from minidl.capture.scalar import SymbolicScalar

        self.calls, self.arrays, self._ids = calls2, {}, {}
        self._scalar_names = scalar_names
        self._outputs = outputs

        def name(arr) -> str:
            if id(arr) not in self._ids:
                self._ids[id(arr)] = f"#{len(self._ids) + 1}"
                self.arrays[self._ids[id(arr)]] = arr
            return self._ids[id(arr)]

        def leaves(value, arrays, hosts):
            if isinstance(value, np.ndarray):
                arrays.append(name(value))
            elif isinstance(value, tuple | list):
                for item in value:
                    leaves(item, arrays, hosts)
            elif isinstance(value, SymbolicScalar):
                hosts.append(self._scalar_names.get(value.text, value.text))
            else:
                hosts.append(value)

        self._input_names = {name(a): n for n, a in inputs.items()}
        self.inputs = set(self._input_names)
        runs = []
        for calls in (calls1, calls2):
            run = []
            for call in calls:
                reads, hosts = [], []
                leaves([*call.args, *call.kwargs.values()], reads, hosts)
                made = [name(a) for _, a in _paths(call.out, "")]
                number = None if not hosts else hosts[0] if len(hosts) == 1 else tuple(hosts)
                run.append({"op": call.name.removeprefix("float_"), "reads": reads,
                            "makes": made, "number": number})
            runs.append(run)
        self.run1, self.run2 = runs
        #: the declared inputs in the replay's order (in0, in1…) and the step's outputs
        self.input_order = sorted(self._input_names, key=lambda n: self._input_names[n])
        self.outputs = [name(a) for a in outputs]
        self._made_by_run1 = {name(a): (j, p) for j, c in enumerate(calls1)
                              for p, a in _paths(c.out, "")}

    def equal(self, a: str, b: str) -> bool:
        """Whether arrays ``a`` and ``b`` have the same shape, dtype and values."""
        import numpy as np

        x, y = self.arrays[a], self.arrays[b]
        return x.shape == y.shape and x.dtype == y.dtype and bool(np.array_equal(x, y))

    def program(self, kinds: dict[str, str]):
        """The replay function written from ``kinds`` (``{array: kind}`` for what run 2
        reads): temporaries ``t…``, inputs ``in…``, state ``st…`` (the buffers the model
        holds, each given its new value after the calls), constants ``c…``. Its ``source``
        is the text; calling it with the step's arguments runs one replayed step."""
        import numpy as np

        from minidl.capture.program import _paths
        from minidl.capture.scalar import SymbolicScalar

        names = {id(a): n for n, a in self.arrays.items()}
        namespace, made, state, scalars, lines = {"np": np}, {}, {}, [], []

        def hold(value) -> str:
            key = f"c{len(namespace) - 1}"
            namespace[key] = value
            return key

        def arg(value) -> str:
            if isinstance(value, np.ndarray):
                n = names[id(value)]
                kind = kinds[n]
                if kind == "temporary":
                    return made[n]
                if kind == "input":
                    return self._input_names[n]
                if kind == "state":
                    return state.setdefault(n, f"st{len(state)}")
                return hold(value)
            if isinstance(value, SymbolicScalar):
                scalars.append(value)
                return f"s{len(scalars) - 1}"
            if isinstance(value, tuple | list):
                return "(" + "".join(f"{arg(v)}, " for v in value) + ")"
            if isinstance(value, int | float | str | type(None)):
                return repr(value)
            return hold(value)

        for i, call in enumerate(self.calls):
            outs = _paths(call.out, "")
            if not outs:
                continue
            args = [arg(v) for v in call.args]
            args += [f"{k}={arg(v)}" for k, v in call.kwargs.items()]
            lines.append(f"t{i} = {hold(call.fn)}({', '.join(args)})")
            for path, a in outs:
                made[names[id(a)]] = f"t{i}{path}"
        buffers = []
        for n, slot in state.items():  # the new value: what run 2 made where run 1 made n
            j, path = self._made_by_run1[n]
            new = dict(_paths(self.calls[j].out, ""))[path]
            buffers.append(new)
            lines.append(f"np.copyto({slot}, t{j}{path})")
        outputs = [made[names[id(a)]] for a in self._outputs]
        params = sorted(set(self._input_names.values())) + [f"s{k}" for k in range(len(scalars))]
        head = [f"def replay({', '.join(params)}):"]
        if state:
            head.append(f"    {', '.join(state.values())}, = STATE")
        namespace["STATE"] = tuple(buffers)
        source = "\n".join(head + [f"    {line}" for line in lines]
                           + [f"    return ({', '.join(outputs)},)"])
        exec(compile(source, "<your program>", "exec"), namespace)  # noqa: S102
        fn = namespace["replay"]
        scalar_names = self._scalar_names

        def replay(*args):
            from minidl.capture.tensors import array_of

            arrays = [array_of(a) for a in args if isinstance(a, Tensor)]
            env = {n: float(a) for (n, _), a in zip(scalar_names.items(),
                                                    [a for a in args if isinstance(a, float)])}
            return fn(*arrays, *[s.expr(env) for s in scalars])

        replay.source = source
        return replay


    def kernel(self, i: int):
        """``K[i]`` of the chapter's binding: run 2's call ``i`` made again on new
        arrays (its reads, then its number; ``out=`` copies the result into that buffer),
        as a replay calls the backend's kernel (burn's ``Graph`` relaunches it)."""
        import numpy as np

        from minidl.capture.program import _paths

        call = self.calls[i]
        n_hosts = len(_hosts_of([*call.args, *call.kwargs.values()]))

        def k(*args, out=None):
            *arrays, number = args
            arrays, hosts = iter(arrays), iter(number if n_hosts > 1 else [number])

            def put(v):
                if isinstance(v, np.ndarray):
                    return next(arrays)
                if isinstance(v, tuple | list):
                    return type(v)(put(x) for x in v)
                return next(hosts)

            made = [a for _, a in _paths(call.fn(*[put(v) for v in call.args],
                                                 **{n: put(v) for n, v in
                                                    call.kwargs.items()}), "")]
            if out is not None:
                np.copyto(out, made[0])
                return out
            return made[0] if len(made) == 1 else tuple(made)
        return k

    def left_in_model(self, a: str):
        """``ST[a]`` of the chapter's binding: for state ``a`` (an array run 1 made and
        run 2 read), the array run 2 made at that call and result, the one the model
        holds after capture, which every replay writes in place."""
        from minidl.capture.program import _paths

        j, path = self._made_by_run1[a]
        return dict(_paths(self.calls[j].out, ""))[path]

    def name_of(self, array) -> str:
        """The ``#k`` name of an array of the two runs."""
        return self._ids[id(array)]

    def emitted(self, source: str):
        """The replay function ``source`` defines (the chapter's ``emit``), run on the real
        kernels: ``K[i]`` is :meth:`kernel`, ``N[i]`` call ``i``'s recorded number,
        ``C[a]`` the constant ``a``, ``ST[a]`` :meth:`left_in_model`. Called with the
        step's arguments, it runs one replayed step."""
        import numpy as np

        from minidl.capture.scalar import SymbolicScalar

        def held(call, number):
            hosts = [float(h) if isinstance(h, SymbolicScalar) else h
                     for h in _hosts_of([*call.args, *call.kwargs.values()])]
            return None if number is None else hosts[0] if len(hosts) == 1 else tuple(hosts)

        kinds = {}
        for c in self.run2:
            kinds.update(dict.fromkeys(c["reads"]))
        state = {n: self.left_in_model(n) for n in self._made_by_run1}
        namespace = {"np": np, "K": [self.kernel(i) for i in range(len(self.calls))],
                     "N": [held(c, r["number"]) for c, r in zip(self.calls, self.run2)],
                     "C": {n: self.arrays[n] for n in kinds}, "ST": state}
        exec(compile(source, "<your program>", "exec"), namespace)  # noqa: S102
        fn = namespace["replay"]
        symbols = [h for c in self.calls for h in _hosts_of([*c.args, *c.kwargs.values()])
                   if isinstance(h, SymbolicScalar)]
        scalar_names = self._scalar_names

        def replay(*args):
            from minidl.capture.tensors import array_of

            arrays = [array_of(a) for a in args if isinstance(a, Tensor)]
            env = {n: float(a) for n, a in zip(scalar_names,
                                               [a for a in args if isinstance(a, float)])}
            scalars = [s.expr(env) for s in symbols]  # a replay without s… froze them
            return fn(*arrays, *scalars[:n_params - len(arrays)])

        import inspect

        n_params = len(inspect.signature(fn).parameters)
        replay.source = source
        return replay


def _hosts_of(value) -> list:
    """The host values (not arrays) in a call's arguments, in order."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return []
    if isinstance(value, tuple | list):
        return [h for v in value for h in _hosts_of(v)]
    return [value]


def recorded_runs(device: Device, step, *args, warmup: int = 1,
                  names: tuple[str, ...] = ("lr",)) -> RecordedRuns:
    """``step(*args)`` run as ``capture`` runs it (``warmup`` plain runs, then two recorded
    ones; every run is a training step), its two recorded runs returned as
    :class:`RecordedRuns` instead of a program. ``names``: the declared floats' names."""
    from minidl.capture.declared import recorded_runs as record
    from minidl.capture.graph import _HostCounters, _Spec
    from minidl.capture.launches import recorder_for
    from minidl.capture.recorder import root
    from minidl.capture.tensors import array_of, flat_tensors
    from minidl.dispatch.route import backend_for

    backend = backend_for(device.inner())
    specs = [_Spec(i, a) for i, a in enumerate(args)]
    for _ in range(warmup):
        step(*args)
    tensors = [a for a, s in zip(args, specs) if s.role == "tensor"]
    readable = {id(root(array_of(a))) for a in tensors}
    recorders, result = record(step, args, specs, _HostCounters(()), [],
                               lambda: recorder_for(backend, readable))
    scalar_names = {s.name: n for s, n in zip((s for s in specs if s.role == "scalar"), names)}
    inputs = {f"in{k}": array_of(a) for k, a in enumerate(tensors)}
    return RecordedRuns(recorders[0].calls, recorders[1].calls, inputs,
                        [array_of(t) for t in flat_tensors(result)], scalar_names)


def your_emit_or_reference(emit, exercise):
    """The reader's ``emit`` when it passes ``exercise``, else the book's; prints which."""
    from minidl_book import build_emit, reader_code

    return reader_code.yours_or_reference(
        emit, build_emit.emit, "emit", lambda fn: exercise.find_failure(fn) is None)


def yours_or_reference(classify, exercise):
    """The reader's ``classify`` when it passes ``exercise`` (the chapter's build-it
    checker), else the reference classification; prints which."""
    from minidl_book import build_guard, reader_code

    return reader_code.yours_or_reference(
        classify, build_guard.classify, "classify",
        lambda fn: exercise.find_failure(fn) is None)
