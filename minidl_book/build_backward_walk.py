"""Build exercise of the autodiff chapter: the backward walk itself.

The reader writes ``backward_walk(root, root_grad, run_step)``: visit the recorded nodes from
the loss down to the leaves in an order where a node runs only after every node that
consumes it, add up the gradients that reach a node from several consumers, run each step
once, and return the gradients of the ``Grad`` leaves keyed by node id (what burn's
``Gradients`` holds). The checker records small random programs (a leaf used by several ops,
a constant, diamonds) on ``Autodiff[Flex]``, hands the reader the root node and a
``run_step`` that runs one recorded step, and compares the leaves' gradients with PyTorch's
and with minidl's own ``backward()``. It also checks that each step ran once and that no
intermediate (``GradInBackward``) gradient was returned.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.autodiff.checkpoint import Checkpointer
from minidl.autodiff.node import Requirement
from minidl.autodiff.step import State
from minidl.autodiff.tensor import autodiff_tensor_of
from minidl.backend.dtype import DType
from minidl.backends.flex import Flex
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import float32_arrays

__all__ = ["PLANTED", "backward_walk", "exercise", "program"]

KINDS = ("mul", "add", "sin", "scale")


def program(values: list, ops: list, sin, scale, made: list | None = None):
    """Run ``ops`` (``(kind, i, j)``: an op on ``values[i]`` and ``values[j]``) appending each
    result, then the loss ``sum(last * values[0])``. Works on minidl and torch tensors.
    ``made``, if given, receives each op's result in order (to name a node after its op)."""
    values = list(values)
    for kind, i, j in ops:
        a, b = values[i % len(values)], values[j % len(values)]
        if kind == "mul":
            values.append(a * b)
        elif kind == "add":
            values.append(a + b)
        elif kind == "sin":
            values.append(sin(a))
        else:
            values.append(scale(a))
    if made is not None:
        made.extend(values[len(values) - len(ops):])
    return (values[-1] * values[0]).sum()


# ----- the reference solution -----------------------------------------------------------------
def backward_walk(root, root_grad, run_step):
    """Every node under ``root`` once, highest id first (its consumers came after
    it); a pending table sums the gradients arriving at each node."""
    nodes, stack = {}, [root]
    while stack:  # collect every node the root depends on
        node = stack.pop()
        if node.id not in nodes:
            nodes[node.id] = node
            stack.extend(node.parents)
    pending, grads = {root.id: root_grad}, {}
    for node_id in sorted(nodes, reverse=True):  # consumers first
        node, grad = nodes[node_id], pending.pop(node_id, None)
        if grad is None:
            continue
        if node.step is None:  # a leaf, a Grad one
            grads[node_id] = grad
            continue
        for parent, g in run_step(node, grad):  # a fresh sum: g may be shared
            old = pending.get(parent.id)
            pending[parent.id] = g if old is None else old + g
    return grads


# ----- planted wrong solutions ----------------------------------------------------------------
def walk_depth_first(root, root_grad, run_step):
    """Recursion from the root, pushing each gradient down as soon as it arrives: right
    numbers (backward is linear), but a shared node's step runs once per path."""
    grads = {}

    def push(node, grad):
        if node.step is None:
            if node.requirement is Requirement.GRAD:
                grads[node.id] = grads[node.id] + grad if node.id in grads else grad
            return
        for parent, g in run_step(node, grad):
            push(parent, g)

    push(root, root_grad)
    return grads


def walk_first_come(root, root_grad, run_step):
    """Breadth-first from the root, running a node when first reached: a node shared with a
    deeper consumer runs before that consumer's gradient has arrived."""
    grads, seen, queue = {}, set(), [(root, root_grad)]
    while queue:
        node, grad = queue.pop(0)
        if node.id in seen:
            continue
        seen.add(node.id)
        if node.step is None:
            if node.requirement is Requirement.GRAD:
                grads[node.id] = grad
            continue
        queue.extend(run_step(node, grad))
    return grads


def walk_overwrites(root, root_grad, run_step):
    """The right order, but a second gradient replaces the first instead of adding to it."""
    nodes, stack = {}, [root]
    while stack:
        node = stack.pop()
        if node.id not in nodes:
            nodes[node.id] = node
            stack.extend(node.parents)
    pending, grads = {root.id: root_grad}, {}
    for node_id in sorted(nodes, reverse=True):
        node, grad = nodes[node_id], pending.pop(node_id, None)
        if grad is None:
            continue
        if node.step is None:
            if node.requirement is Requirement.GRAD:
                grads[node_id] = grad
            continue
        for parent, g in run_step(node, grad):
            pending[parent.id] = g
    return grads


def walk_keeps_all(root, root_grad, run_step):
    """The right walk, but it returns every node's gradient, intermediates included."""
    nodes, stack = {}, [root]
    while stack:
        node = stack.pop()
        if node.id not in nodes:
            nodes[node.id] = node
            stack.extend(node.parents)
    pending, grads = {root.id: root_grad}, {}
    for node_id in sorted(nodes, reverse=True):
        node, grad = nodes[node_id], pending.pop(node_id, None)
        if grad is None:
            continue
        grads[node_id] = grad
        if node.step is not None:
            for parent, g in run_step(node, grad):
                pending[parent.id] = g if parent.id not in pending else pending[parent.id] + g
    return grads


def walk_adds_in_place(root, root_grad, run_step):
    """The right order, but ``+=`` adds in place: ``Add`` hands the same array to both its
    parents, so adding into one parent's pending gradient changes the other's too."""
    nodes, stack = {}, [root]
    while stack:
        node = stack.pop()
        if node.id not in nodes:
            nodes[node.id] = node
            stack.extend(node.parents)
    pending, grads = {root.id: root_grad}, {}
    for node_id in sorted(nodes, reverse=True):
        node, grad = nodes[node_id], pending.pop(node_id, None)
        if grad is None:
            continue
        if node.step is None:
            grads[node_id] = grad
            continue
        for parent, g in run_step(node, grad):
            if parent.id in pending:
                pending[parent.id] += g
            else:
                pending[parent.id] = g
    return grads


#: name → (wrong walk, the verdict kind it must get)
PLANTED = {
    "depth first, step per path": (walk_depth_first, "check"),
    "first come, first run": (walk_first_come, "value"),
    "overwrites instead of adding": (walk_overwrites, "value"),
    "returns intermediates": (walk_keeps_all, "check"),
    "adds in place (+=)": (walk_adds_in_place, "check"),
}


# ----- the checker ----------------------------------------------------------------------------
LEAVES = ("a", "b", "c")  # a and b require grad; c is a constant


def _cases() -> st.SearchStrategy:
    leaf = float32_arrays(2)(3)
    op = st.tuples(st.sampled_from(KINDS), st.integers(0, 9), st.integers(0, 9))
    return st.fixed_dictionaries({"a": leaf, "b": leaf, "c": leaf,
                                  "ops": st.lists(op, min_size=1, max_size=6)})


def _step_runner(runs: Counter, checkpointer: Checkpointer, handed: list | None = None):
    """The ``run_step`` handed to the reader: runs one recorded step and counts it. It is the
    checker's code the reader is meant to call, so the rules list it in ``helpers`` (the count
    stays in its closure, out of the reader's reach). ``handed`` collects each gradient it
    returns with a copy, so the checker can tell one changed in place afterwards."""

    def run_step(node, grad):
        runs[node.id] += 1
        step = node.step
        input_grads = step.backward(Flex, grad, State(step, node, checkpointer))
        out = [(parent, g) for parent, tracked, g in zip(step.inputs, step.tracked, input_grads)
               if tracked and g is not None]
        if handed is not None:
            handed.extend((g, np.array(g, copy=True)) for _, g in out)
        return out

    return run_step


def _run(solution, case: dict) -> dict:
    dev = Device.flex().autodiff()
    leaves = [Tensor.from_numpy(case[n], dev) for n in LEAVES]
    leaves[0], leaves[1] = leaves[0].require_grad(), leaves[1].require_grad()
    made = []
    loss = program(leaves, case["ops"], lambda t: t.sin(), lambda t: t * 3.0, made)
    root = autodiff_tensor_of(loss)
    names = {root.node.id: "the loss's sum"}  # a node the reader can find in the case
    names.update({p.id: "the loss's product last * a" for p in root.node.parents})
    names.update({autodiff_tensor_of(t).node.id: f"ops[{k}] = {tuple(case['ops'][k])}"
                  for k, t in enumerate(made)})
    runs, handed = Counter(), []
    run_step = _step_runner(runs, Checkpointer(Flex), handed)
    ones = Flex.float_ones(root.shape, DType.of(root.dtype), Flex.float_device(root.inner))
    result = solution(root.node, ones, run_step)
    ids = {n: autodiff_tensor_of(t).node.id for n, t in zip(LEAVES, leaves)}
    out = {f"grad {n}": (result or {}).get(ids[n]) for n in LEAVES[:2]}
    out["_runs"], out["_extra"] = runs, sorted(set(result or {}) - {ids["a"], ids["b"]})
    out["_names"] = names
    out["_changed"] = any(not np.array_equal(np.asarray(g), kept) for g, kept in handed)
    return out


def _torch(case: dict) -> dict:
    a, b = (torch.from_numpy(case[n]).requires_grad_(True) for n in ("a", "b"))
    c = torch.from_numpy(case["c"])
    program([a, b, c], case["ops"], torch.sin, lambda t: t * 3.0).backward()
    return {"grad a": a.grad, "grad b": b.grad}


def _minidl(case: dict) -> dict:
    dev = Device.flex().autodiff()
    a, b = (Tensor.from_numpy(case[n], dev).require_grad() for n in ("a", "b"))
    c = Tensor.from_numpy(case["c"], dev)
    grads = program([a, b, c], case["ops"], lambda t: t.sin(), lambda t: t * 3.0).backward()
    return {f"grad {n}": None if (g := t.grad(grads)) is None else g.to_numpy()
            for n, t in (("a", a), ("b", b))}


def _once(solution, case, outputs, watch) -> str | None:
    twice = {i: n for i, n in outputs["_runs"].items() if n > 1}
    if twice:
        node_id, n = next(iter(twice.items()))
        what = outputs.get("_names", {}).get(node_id, f"node #{node_id}")
        return (f"the step of {what} ran {n} times; run each step once, after every "
                "gradient for its node has arrived (burn frees a step's saved arrays when it "
                "has run)")
    if outputs["_changed"]:
        return ("a gradient run_step returned was changed after it was returned: `+=` on a "
                "NumPy array adds in place, and a step may hand the same array to two parents "
                "(Add does), so adding into one parent's pending gradient corrupts the "
                "other's; make a fresh sum, pending[i] = pending[i] + g")
    if outputs["_extra"]:
        return (f"you returned gradients for nodes {outputs['_extra']}, which are not Grad "
                "leaves; Gradients keeps only the leaves that asked for a gradient")
    return None


def exercise(max_examples: int = 25) -> BuildExercise:
    """The checker for the reader's ``backward_walk(root, root_grad, run_step)``."""
    diamond = {"a": np.array([0.0, 1.0, 2.0], np.float32),
               "b": np.array([1.0, 1.0, 1.0], np.float32),
               "c": np.array([2.0, 0.5, -1.0], np.float32),
               "ops": [("mul", 0, 0), ("sin", 3, 3), ("add", 3, 4), ("scale", 5, 5),
                       ("mul", 6, 1)]}
    shared = {"a": np.array([0.0, 1.0, 2.0], np.float32),  # Add hands one array to both
              "b": np.array([1.0, 0.5, -1.0], np.float32),  # parents: += corrupts the other
              "c": np.array([2.0, 0.5, -1.0], np.float32),
              "ops": [("sin", 0, 0), ("scale", 1, 1), ("add", 1, 3), ("add", 4, 5)]}
    return BuildExercise(
        "the backward walk",
        cases=_cases(),
        run=_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5),
                    Reference("minidl's backward()", _minidl, rtol=1e-5, atol=1e-6)],
        rules=Rules(helpers=(_step_runner,)),  # run_step is the checker's, meant to be called
        checks=[_once],
        hints=[
            "Collect every node under the root first (follow node.parents). Node ids grow in "
            "creation order, so every consumer of a node has a larger id than the node.",
            "Keep a table {node id: gradient so far}; when a second gradient arrives, store "
            "a fresh sum (old + g, never old += g: a step may hand one array to two parents). "
            "Visit nodes from the highest id down, so a node's table entry is complete when "
            "you reach it.",
            "At a leaf (node.step is None) keep the gradient: every leaf you reach is a "
            "Requirement.GRAD one. At any other node call run_step(node, grad) once.",
        ],
        reference_solution=backward_walk,
        examples=[diamond, shared],
        max_examples=max_examples,
        order=("a", "b", "c", "ops"),
    )
