"""Build exercise of the autodiff chapter: ``record``, where a step enters the graph.

The reader writes ``record(step, *inputs)``: each input is one of ``Autodiff``'s tensors (a
Flex array ``.inner`` and its ``.node``). It runs ``step.forward`` on Flex with the bare
arrays, returns an untracked tensor when no input is tracked, and otherwise notes
``step.tracked`` and ``step.shapes``, stores in ``step.saved`` the arrays ``step.keeps``
names (inputs by ``forward``'s parameter names, ``"out"`` for the output) and returns a
tensor whose ``GradInBackward`` node has the tracked inputs' nodes as parents, in order.

The checker runs small random programs (``Mul``, ``Add``, ``Sin``, ``Tanh`` on two tracked
leaves and a constant, then ``sum(last * a)``) through the reader's ``record``, walks
backward with the page's ``run_step`` (which reads only what ``record`` set), and compares
the loss and the leaves' gradients with PyTorch. Before that it checks each call's node and
step against what minidl's own ``record`` builds, so the slips that still give right numbers
(a constant made a parent, both inputs of ``Mul`` kept, the wrapper saved instead of its
array) are named.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl.autodiff.node import Node, Requirement
from minidl.autodiff.ops.arithmetic import Add, Mul
from minidl.autodiff.ops.math import Sin, Tanh
from minidl.autodiff.ops.reduce import Sum
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backends.flex import Flex
from minidl_book import build_backward_walk
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import float32_arrays

__all__ = ["PLANTED", "exercise", "record"]

STEPS = {"mul": Mul, "add": Add, "sin": Sin, "tanh": Tanh}
BINARY = ("mul", "add")
LEAVES = ("a", "b", "c")  # a and b require grad; c is a constant


# ----- the reference solution -----------------------------------------------------------------
def record(step, *inputs):
    out = step.forward(Flex, *[t.inner for t in inputs])  # the op, on Flex
    step.tracked = tuple(t.node.tracked for t in inputs)  # requirement not None
    if not any(step.tracked):  # nothing to differentiate: no step
        return AutodiffTensor(out, Node(Requirement.NONE))
    step.shapes = tuple(t.shape for t in inputs)  # for sum_to_shape
    named = dict(zip(step.input_names(len(inputs)), inputs))
    kept = step.keeps(step.tracked)  # the names backward will read
    step.saved = {n: out if n == "out" else named[n].inner for n in kept}
    parents = tuple(t.node for t in inputs if t.node.tracked)  # inputs' order
    node = Node(Requirement.GRAD_IN_BACKWARD, parents, step)
    return AutodiffTensor(out, node)


# ----- planted wrong solutions ----------------------------------------------------------------
def _variant(*, keeps_all: bool = False, tracks_all: bool = False, wrapper: bool = False,
             by_id: bool = False, shapes: bool = True):
    """The reference ``record`` with one slip: every input and the output saved whatever
    ``keeps`` says; every input tracked (a constant becomes a parent); the input tensors
    saved (node and all) instead of their Flex arrays; parents sorted by id instead of the
    inputs' order; ``step.shapes`` never set (``Sum``'s backward cannot spread back)."""

    def wrong(step, *inputs):
        out = step.forward(Flex, *[t.inner for t in inputs])
        step.tracked = tuple(tracks_all or t.node.tracked for t in inputs)
        if not any(step.tracked):
            return AutodiffTensor(out, Node(Requirement.NONE))
        if shapes:
            step.shapes = tuple(t.shape for t in inputs)
        named = dict(zip(step.input_names(len(inputs)), inputs))
        names = [*named, "out"] if keeps_all else step.keeps(step.tracked)
        step.saved = {n: out if n == "out" else named[n] if wrapper else named[n].inner
                      for n in names}
        parents = [t.node for t, tracked in zip(inputs, step.tracked) if tracked]
        if by_id:
            parents.sort(key=lambda n: n.id)
        return AutodiffTensor(out, Node(Requirement.GRAD_IN_BACKWARD, tuple(parents), step))

    return wrong


record_keeps_all = _variant(keeps_all=True)
record_tracks_all = _variant(tracks_all=True)
record_saves_wrapper = _variant(wrapper=True)
record_parents_by_id = _variant(by_id=True)
record_no_shapes = _variant(shapes=False)


#: name → (wrong record, the verdict kind it must get)
PLANTED = {
    "keeps everything": (record_keeps_all, "check"),
    "tracks an untracked input": (record_tracks_all, "check"),
    "saves the wrapper": (record_saves_wrapper, "check"),
    "parents in id order": (record_parents_by_id, "check"),
    "forgets shapes": (record_no_shapes, "check"),
}


# ----- the checker ----------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    leaf = float32_arrays(2)(3)
    op = st.tuples(st.sampled_from(tuple(STEPS)), st.integers(0, 9), st.integers(0, 9))
    return st.fixed_dictionaries({"a": leaf, "b": leaf, "c": leaf,
                                  "ops": st.lists(op, min_size=1, max_size=5)})


def run_step(node, grad):
    """The page's ``run_step``: one step's backward, ``[(parent, its gradient), ...]``."""
    step = node.step
    grads = step.backward(Flex, grad, step.saved)
    tracked = [g for g, t in zip(grads, step.tracked) if t]
    return list(zip(node.parents, tracked))


def _call_text(step, args, names) -> str:
    return f"record({type(step).__name__}(), {', '.join(names[id(a)] for a in args)})"


def _problem(step, args, out, names) -> str | None:
    """What this call built that minidl's record would not, in words; ``None`` if alike."""
    call = _call_text(step, args, names)
    tracked = tuple(a.node.tracked for a in args)
    if not isinstance(out, AutodiffTensor):
        return (f"{call} returned {type(out).__name__}; return AutodiffTensor(out, node), "
                "out the Flex array step.forward gave")
    if isinstance(out.inner, AutodiffTensor):
        return f"{call} wrapped a wrapper: AutodiffTensor's first argument is the Flex array"
    if not any(tracked):
        if out.node.tracked:
            return (f"{call}: no input is tracked (each node's requirement is None), yet the "
                    f"result's node is {out.node.requirement}. With nothing to differentiate, "
                    "record keeps no step: return AutodiffTensor(out, Node(Requirement.NONE))")
        return None
    if out.node.requirement is not Requirement.GRAD_IN_BACKWARD or out.node.step is not step:
        return (f"{call} gave a node with requirement {out.node.requirement} and step "
                f"{type(out.node.step).__name__}; expected GradInBackward and the step itself")
    parents = tuple(out.node.parents)
    want = tuple(a.node for a in args if a.node.tracked)
    label = {id(a.node): names[id(a)] for a in args}
    if any(not p.tracked for p in parents):
        constant = next(label.get(id(p), "an input") for p in parents if not p.tracked)
        return (f"{call} made {constant}'s node a parent, but its requirement is None: "
                "backward would compute a gradient for a constant. Parents are the tracked "
                "inputs' nodes only (node.tracked)")
    if {id(p) for p in parents} == {id(p) for p in want} and parents != want:
        return (f"{call} gave parents [{', '.join(label[id(p)] for p in parents)}]; run_step "
                "pairs node.parents with the tracked inputs' gradients in order, so they "
                f"must follow the inputs: [{', '.join(label[id(p)] for p in want)}]")
    if parents != want:
        return (f"{call} gave {len(parents)} parent(s); expected the tracked inputs' nodes "
                f"[{', '.join(label[id(p)] for p in want)}]")
    if tuple(getattr(step, "tracked", ())) != tracked:
        return (f"{call} set step.tracked = {getattr(step, 'tracked', None)}; expected "
                f"{tracked} (t.node.tracked for each input): backward reads it")
    kept = step.keeps(tracked)
    saved = dict(getattr(step, "saved", {}) or {})
    if set(saved) != set(kept):
        extra = sorted(set(saved) - set(kept))
        return (f"{call} kept {sorted(saved)}; step.keeps(step.tracked) names {list(kept)}"
                + (f": {extra} would stay in memory until backward for nothing"
                   if extra else ""))
    wrapped = [n for n, v in saved.items() if isinstance(v, AutodiffTensor)]
    if wrapped:
        return (f"{call} saved {wrapped[0]!r} as an AutodiffTensor (array and node); "
                "backward computes with Flex on bare arrays: save its .inner")
    inputs = dict(zip(step.input_names(len(args)), args))
    for n, v in saved.items():
        want_v = out.inner if n == "out" else inputs[n].inner
        if v is not want_v:
            return f"{call} saved something other than {n!r}'s own array as {n!r}"
    shapes = tuple(getattr(step, "shapes", ()) or ())
    if [tuple(s) for s in shapes] != [tuple(a.shape) for a in args]:
        return (f"{call} left step.shapes = {shapes}; expected each input's shape, "
                f"{tuple(tuple(a.shape) for a in args)}: backward sums or spreads its "
                "gradient back to them (Sum's backward reads step.shapes[0])")
    return None


def _run(solution, case: dict) -> dict:
    leaves = [AutodiffTensor(case[n], Node(Requirement.GRAD if n != "c" else Requirement.NONE))
              for n in LEAVES]
    values, names = list(leaves), {id(t): n for t, n in zip(leaves, LEAVES)}
    problems = []

    def call(label, step, *args):
        out = solution(step, *args)
        if not problems:
            why = _problem(step, args, out, names)
            if why:
                problems.append(why)
        names[id(out)] = label
        return out

    for k, (kind, i, j) in enumerate(case["ops"]):
        args = (values[i % len(values)], values[j % len(values)])[:2 if kind in BINARY else 1]
        values.append(call(f"ops[{k}]", STEPS[kind](), *args))
    loss = call("the loss", Sum(), call("last * a", Mul(), values[-1], values[0]))
    if problems:
        return {"_problem": problems[0]}
    grads = build_backward_walk.backward_walk(loss.node, np.ones(1, np.float32), run_step)
    zeros = np.zeros(3, np.float32)  # b unused by the program: the walk never reaches it
    return {"loss": loss.inner, "grad a": grads.get(leaves[0].node.id, zeros),
            "grad b": grads.get(leaves[1].node.id, zeros)}


TORCH = {"mul": lambda x, y: x * y, "add": lambda x, y: x + y,
         "sin": lambda x, _: torch.sin(x), "tanh": lambda x, _: torch.tanh(x)}


def _torch(case: dict) -> dict:
    a, b = (torch.from_numpy(case[n]).requires_grad_(True) for n in ("a", "b"))
    c = torch.from_numpy(case["c"])
    values = [a, b, c]
    for kind, i, j in case["ops"]:
        x, y = values[i % len(values)], values[j % len(values)]
        values.append(TORCH[kind](x, y))
    loss = (values[-1] * values[0]).sum()
    loss.backward()
    zeros = torch.zeros(3)
    return {"loss": loss.detach().reshape(1),
            "grad a": a.grad if a.grad is not None else zeros,
            "grad b": b.grad if b.grad is not None else zeros}


def _built_as_minidl(solution, case, outputs, watch) -> str | None:
    return outputs.get("_problem")


def exercise(max_examples: int = 20) -> BuildExercise:
    """The checker for the reader's ``record(step, *inputs)``."""
    arr = np.array
    first = {"a": arr([1.0, 2.0, -1.0], np.float32), "b": arr([0.5, -1.0, 2.0], np.float32),
             "c": arr([3.0, -1.0, 0.5], np.float32),  # Mul(a, c), constant beside tracked,
             "ops": [("mul", 0, 2), ("tanh", 2, 2), ("mul", 3, 1), ("sin", 1, 1),
                     ("add", 4, 6)]}  # Tanh(c) untracked, Mul(older rhs b), Sin, Add
    return BuildExercise(
        "record: a step enters the graph",
        cases=_cases(),
        run=_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5)],
        rules=Rules(forbidden={r"^Autodiff\[": "use Autodiff's ops (run step.forward(Flex, ...))",
                               r"record$|finish$|attach_step$": "call the library's record"}),
        checks=[_built_as_minidl],
        hints=[
            "Run out = step.forward(Flex, *[t.inner for t in inputs]); step.tracked is "
            "t.node.tracked for each input. If none is tracked, return "
            "AutodiffTensor(out, Node(Requirement.NONE)): no step is kept.",
            "Otherwise set step.shapes (each t.shape), then step.saved: for each name in "
            "step.keeps(step.tracked), out if the name is \"out\", else the .inner array of "
            "the input forward calls by that name (step.input_names(len(inputs))).",
            "The node: Node(Requirement.GRAD_IN_BACKWARD, parents, step), parents the tracked "
            "inputs' nodes in the inputs' order.",
        ],
        reference_solution=record,
        examples=[first],
        max_examples=max_examples,
        order=("a", "b", "c", "ops"),
    )
