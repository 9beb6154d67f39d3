"""The capture chapter's side-by-side view: a captured step's recorded run and its replay.

capture records the step eagerly (minidl's ``Recorder``; in burn, ``crates/burn-capture``
on main, not yet in v0.22.0-pre.2, where ``CaptureState::register_op`` records each
operation) and keeps one program line per call that makes an array. Each event of the recorded run is tagged with its kind: a kernel (in place
when it writes a state buffer), a device query, a host read of a declared input, a guard
(a Python branch on a declared scalar). A call is numbered ``k`` as capture's messages
number it (``call 46``) and as the program names its result (``t46``).
"""

from __future__ import annotations

import re
from typing import Any

from minidl import Device

__all__ = ["blocks", "call_kinds", "draw_recording_and_replay", "recording"]

_LINE = re.compile(r"^\s+t(\d+) = ")
COLORS = {"kernel": "#a9c4e4", "kernel, in place": "#c0392b", "query": "#e8b04a",
          "host read": "#9b7cc4", "guard": "#5aa469"}


def recording(device: Device, step, *args: Any, warmup: int = 1) -> list[dict]:
    """``step(*args)`` run as ``capture`` runs it (``warmup`` plain runs, two recorded; each
    a training step). The second recorded run's events in order: each backend call
    ``{"k", "op"}``, each host read of a declared input ``{"read": op}`` and each guard
    ``{"guard": text}``, the last two where they happened between the calls."""
    from minidl.capture.declared import recorded_runs
    from minidl.capture.graph import _HostCounters, _Spec
    from minidl.capture.launches import recorder_for
    from minidl.capture.recorder import root
    from minidl.capture.tensors import array_of
    from minidl.dispatch.route import backend_for

    backend = backend_for(device.inner())
    specs = [_Spec(i, a) for i, a in enumerate(args)]
    for _ in range(warmup):
        step(*args)
    readable = {id(root(array_of(a))) for a, s in zip(args, specs) if s.role == "tensor"}
    made, marks = [], []  # the recorders; (recorder, calls before it, event)

    def make():
        rec = recorder_for(backend, readable)
        refuse = rec._refuse_read

        def read(name: str, read_args: tuple) -> None:
            refuse(name, read_args)  # raises unless it reads a declared input
            marks.append((rec, len(rec.calls), {"read": name}))

        rec._refuse_read = read
        made.append(rec)
        return rec

    class Guards(list):
        def append(self, guard) -> None:
            super().append(guard)
            marks.append((made[-1], len(made[-1].calls), {"guard": guard.text}))

    recorders, _ = recorded_runs(step, args, specs, _HostCounters(()), Guards(), make)
    last = recorders[-1]
    events: list[dict] = []
    for k, call in enumerate(last.calls + [None]):
        events += [e for rec, at, e in marks if rec is last and at == k]
        if call is not None:
            events.append({"k": k, "op": call.name})
    return events


def call_kinds(graph: Any, events: list[dict] | None = None) -> list[dict]:
    """Per event of the recorded run (``events`` from :func:`recording`; by default the
    program's calls alone): ``k`` (``None`` for a read or a guard), ``op``, its ``kind``
    (``"kernel"``, ``"kernel, in place"``, ``"device query"``, ``"host read"``,
    ``"guard"``) and whether the program replays it (``replayed``: a line ``tk = ...``)."""
    lines = {}
    for line in graph.program_text.splitlines():
        found = _LINE.match(line)
        if found:
            lines[int(found.group(1))] = line
    if events is None:
        events = [{"k": k, "op": op} for k, op in enumerate(graph.program.names)]
    calls = []
    for event in events:
        if "read" in event:
            calls.append({"k": None, "op": event["read"], "kind": "host read",
                          "replayed": False})
            continue
        if "guard" in event:
            calls.append({"k": None, "op": event["guard"], "kind": "guard",
                          "replayed": False})
            continue
        k, op = event["k"], event["op"]
        line = lines.get(k)
        if line is None:
            kind = f"{op.rsplit('_', 1)[-1]} query"
        else:
            kind = "kernel, in place" if "in place" in line else "kernel"
        calls.append({"k": k, "op": op, "kind": kind, "replayed": line is not None})
    return calls


def blocks(calls: list[dict]) -> list[list[dict]]:
    """``calls`` cut into runs: consecutive calls a replay makes form one block (kernels,
    in place or not); each call a replay skips is a block of its own."""
    out: list[list[dict]] = []
    for call in calls:
        if out and call["replayed"] and out[-1][-1]["replayed"]:
            out[-1].append(call)
        else:
            out.append([call])
    return out


def _block_text(block: list[dict]) -> tuple[str, str]:
    """The recording column's and the replay column's label of ``block``."""
    first, last = block[0]["k"], block[-1]["k"]
    kind, op = block[0]["kind"], block[0]["op"]
    if kind == "guard":
        return f"guard: {op}", "checked before the program (top)"
    if kind == "host read":
        return f"{op}: host read (an input)", "skipped: no Python"
    if not block[0]["replayed"]:
        return f"{op}: {kind}", "skipped: makes no array"
    placed = sum(c["kind"] == "kernel, in place" for c in block)
    where = f", {placed} in place" if placed else ""
    span = f"t{first}" if first == last else f"t{first}–t{last}"
    return f"{len(block)} kernel calls{where}", f"{span}: the same {len(block)}{where}"


def draw_recording_and_replay(graph: Any, events: list[dict] | None = None,
                              python: str = "model, loss, autodiff, SGD"):
    """Two columns, one row per event: the recorded eager run (``events`` from
    :func:`recording`, each tagged by kind, the Python above them on top) beside the
    replay (the argument checks and guards, then only the calls that make an array). Runs
    of replayed calls are one labelled block; ``k`` at its edges is the listing's ``tk``."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    calls = call_kinds(graph, events)
    cut = blocks(calls)
    heights = [len(b) if b[0]["replayed"] else 3.4 for b in cut]
    total = sum(heights)
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ax.set_xlim(0, 10)
    ax.set_ylim(total + 4.5, -11.5)
    ax.axis("off")
    left, right, width = 0.3, 5.9, 3.8
    n_calls = sum(c["k"] is not None for c in calls)
    ax.text(left + width / 2, -10.3, f"recording: run 2, eager ({len(calls)} rows:\n"
            f"{n_calls} calls, {len(calls) - n_calls} host steps)",
            ha="center", fontsize=10)
    ax.text(right + width / 2, -10.3, f"replay: the program ({graph.calls} calls)",
            ha="center", fontsize=10)
    guards = ", ".join(g.text for g in graph.guards) or "none"
    tops = ((left, f"Python around every call:\n{python}", "#f6e3cc"),
            (right, f"argument checks: shape, dtype,\ndevice; guards: {guards}", "#eeeeee"))
    for x, text, color in tops:
        ax.add_patch(Rectangle((x, -8.2), width, 6.6, fc=color, ec="#888888"))
        ax.text(x + width / 2, -4.9, text, ha="center", va="center", fontsize=8.5)
    y = 0.0
    for block, h in zip(cut, heights):
        unit = h / len(block)
        for i, call in enumerate(block):
            top, kind = y + i * unit, call["kind"]
            color = COLORS.get(kind, COLORS["query"])
            ax.add_patch(Rectangle((left, top), width, unit * 0.86, fc=color, lw=0))
            if call["replayed"]:
                ax.add_patch(Rectangle((right, top), width, unit * 0.86, fc=color, lw=0))
            else:
                ax.add_patch(Rectangle((right, top), width, unit * 0.86, fc="white",
                                       ec="#999999", hatch="////", lw=0.6))
        for x, text in zip((left, right), _block_text(block)):
            ax.text(x + width / 2, y + h / 2 - 0.1, text, ha="center", va="center",
                    fontsize=8, bbox=dict(fc="white", ec="none", alpha=0.85, pad=1.0))
        ks = sorted({c["k"] for c in (block[0], block[-1]) if c["k"] is not None})
        edges = [y + unit * 0.43] if len(ks) == 1 else [y + 0.45, y + h - unit * 0.57]
        for k, at in zip(ks, edges):
            ax.text(5.1, at, f"k={k}", ha="center", va="center", fontsize=7.5,
                    family="monospace", color="#555555")
        y += h
    counts: dict[str, int] = {}
    for call in calls:
        counts[call["kind"]] = counts.get(call["kind"], 0) + 1
    legend = "   ".join(f"{kind}: {n}" for kind, n in counts.items())
    ax.text(5.0, total + 3.0, legend, ha="center", fontsize=8, color="#333333")
    fig.tight_layout()
    return fig
