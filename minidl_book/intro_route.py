"""The intro's last solution: one ``layer(x)``, step by step, down to its kernels.

:func:`call_sequence` draws what a :func:`minidl.debug.trace` of ``Linear.forward`` recorded,
step by step: down to ``Dispatch.linear``, which has no forwarder (burn-dispatch's
``linear`` is commented out too, ``crates/burn-dispatch/src/ops/module.rs``), so the
backend protocol's default body runs (burn-backend's ``linear``,
``crates/burn-backend/src/backend/ops/modules/linear.rs``) and each op it calls goes back
through ``Dispatch``, down ``Autodiff[Flex]`` to ``Flex`` and, with ``kernels``, to the
kernel that computed its numbers or to "no kernel: a view".
"""

from __future__ import annotations

from minidl.debug.flowchart import Flowchart
from minidl.debug.trace import Trace
from minidl_book.intro_map import DETOUR, _circled, detour_calls

#: What each frame above the detour is, beside its name.
ROLES = {
    "Linear.forward": "minidl.nn",
    "module.linear": "minidl.tensor",
    "Dispatch.linear": "no forwarder",
    "linear.linear[Dispatch]": "the default body",
}
_SHADE = "#FBE3CC"  # the detour's two steps, as in the map's colours


def call_sequence(run: Trace, kernels: bool = False) -> Flowchart:
    """The steps of one traced ``layer(x)``, numbered in call order: the frames down to
    ``Dispatch.linear`` and the default body, then each op it calls (one column each) back
    through ``Dispatch``, down by device to ``Flex``; with ``kernels``, each column ends in
    the kernel that computed (or "no kernel: a view")."""
    first = run.hits[0].chain()
    top = first[first.index("Linear.forward"):first.index("linear.linear[Dispatch]") + 1]
    top = [n for n in top if n != "module.linear_impl"]
    fc = Flowchart("TB", title="One layer(x), step by step, as the trace recorded it")
    step = 0
    for k, name in enumerate(top):
        step += bool(k)  # numbered as the map numbers its arrows: the forward itself is not
        detour = name in ("Dispatch.linear", "linear.linear[Dispatch]")
        mark = f"{_circled(step)} " if k else ""
        fc.node(f"t{k}", f"{mark}{name}\n{ROLES.get(name, '')}".rstrip(),
                fill=_SHADE if detour else None, stroke=DETOUR if detour else None)
        if k:
            fc.edge(f"t{k - 1}", f"t{k}")
    for c, (frames, done) in enumerate(detour_calls(run)):
        step += 1
        ids = []
        for j, name in enumerate(frames):
            ids.append(f"c{c}_{j}")
            label = f"{_circled(step)} {name}" if j == 0 else name
            fc.node(ids[-1], label + ("\nrecords it" if name.startswith("Autodiff[") else ""))
        if kernels:
            ids.append(f"c{c}_k")
            fc.node(ids[-1], "kernel " + ", ".join(done) if done else "no kernel: a view",
                    fill=None if done else "#F2F2F2", stroke=None if done else "#999999")
        fc.edge(f"t{len(top) - 1}", ids[0])
        for a, b in zip(ids, ids[1:]):
            fc.edge(a, b)
    return fc
