"""The autodiff chapter's whole engine: the reader's ``record`` and ``backward_walk`` plugged
into minidl's own ``Autodiff[Flex]``.

Every op ``Autodiff`` overrides ends in ``record(cls, step, *inputs)``, a name each op module
of :mod:`minidl.autodiff.ops` imported from ``ops/base.py``; ``Autodiff.backward`` calls
:func:`minidl.autodiff.engine.backward`. :func:`your_engine` rebinds those names for the
length of a ``with`` block, so every op recorded on a ``Device.flex().autodiff()`` tensor goes
through the reader's ``record`` and every ``backward()`` walks with the reader's
``backward_walk`` (each where it passes its checker, the book's reference otherwise), and puts
the library's back on exit, an exception included.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from minidl.autodiff import engine
from minidl.autodiff.grad_mode import STATE as GRAD_MODE
from minidl.autodiff.gradients import Gradients
from minidl.autodiff.ops import activation, arithmetic, base, layout, math, module, reduce, tensor
from minidl.backend.dtype import DType
from minidl.backends.flex import Flex

__all__ = ["Ran", "choose", "your_engine"]

#: the modules whose ``record`` the Autodiff ops call (``base`` for ``autodiff_lab.apply``)
RECORDERS = (activation, arithmetic, base, layout, math, module, reduce, tensor)


@dataclass
class Ran:
    """What ran inside the block: whose functions, how often."""

    record_is_yours: bool
    walk_is_yours: bool
    records: int = 0  # calls of the plugged record (steps it was handed)
    walks: int = 0  # backward() calls, each one backward_walk
    steps: list = field(default_factory=list)  # node ids run_step ran, in order

    def __str__(self) -> str:
        whose = {True: "yours", False: "the book's (until yours passes)"}
        once = "each once" if len(self.steps) == len(set(self.steps)) else "some twice"
        return (f"record: {whose[self.record_is_yours]}, called for {self.records} ops\n"
                f"backward_walk: {whose[self.walk_is_yours]}, {self.walks} walk, "
                f"ran {len(self.steps)} steps, {once}")


def choose(yours: Any, reference: Any, passes: Callable[[Any], bool]) -> bool:
    """Whether ``yours`` is defined and passes (an exception counts as failing)."""
    from minidl_book.harness import is_placeholder

    try:
        return yours is not None and not is_placeholder(yours) and passes(yours)
    except Exception:  # noqa: BLE001 - an unfinished answer falls back to the reference
        return False


@contextlib.contextmanager
def your_engine(record_fn: Callable, walk_fn: Callable, *,
                checked: bool = True) -> Iterator[Ran]:
    """Inside the block ``Autodiff[Flex]`` records with ``record_fn(step, *inputs)`` and
    backward walks with ``walk_fn(root, root_grad, run_step)``; each is the reader's when it
    passes its checker (``checked``), else the book's reference. Yields a :class:`Ran`
    that says which ran and counts the calls (print it). Outside ``Autodiff[Flex]``, under
    ``no_grad()`` or with checkpointing, the library's ``record`` runs as before."""
    from minidl_book import build_backward_walk, build_record

    def passes(exercise) -> Callable[[Any], bool]:
        return (lambda fn: exercise.find_failure(fn) is None) if checked else bool

    mine_rec = choose(record_fn, build_record.record,
                      passes(build_record.exercise(max_examples=5)))
    mine_walk = choose(walk_fn, build_backward_walk.backward_walk,
                       passes(build_backward_walk.exercise(max_examples=5)))
    use_record = record_fn if mine_rec else build_record.record
    use_walk = walk_fn if mine_walk else build_backward_walk.backward_walk
    ran = Ran(mine_rec, mine_walk)
    library_record = base.record
    library_backward = engine.backward

    def plugged_record(AD: type, step, *inputs):
        if AD._inner is not Flex or not GRAD_MODE.enabled or AD.checkpointing:
            return library_record(AD, step, *inputs)
        ran.records += 1
        tensors = [base.lift(t) for t in inputs]
        out = use_record(step, *tensors)
        if getattr(getattr(out, "node", None), "step", None) is step:
            step.inputs = tuple(t.node for t in tensors)  # what debug.graph reads
            step.dtypes = tuple(t.dtype for t in tensors)
        return out

    def run_step(node, grad):  # as on the page: [(parent, its gradient), ...]
        ran.steps.append(node.id)
        step = node.step
        grads = step.backward(Flex, grad, step.saved)
        return list(zip(node.parents, [g for g, t in zip(grads, step.tracked) if t]))

    def plugged_backward(AD: type, root, retain_graph: bool = False) -> Gradients:
        if AD._inner is not Flex or AD.checkpointing:
            return library_backward(AD, root, retain_graph)
        grads = Gradients()
        if not root.node.tracked:
            return grads
        ran.walks += 1
        first = len(ran.steps)
        ones = Flex.float_ones(root.shape, DType.of(root.inner.dtype),
                               Flex.float_device(root.inner))
        for node_id, grad in use_walk(root.node, ones, run_step).items():
            grads.register(node_id, grad, Flex)
        if not retain_graph:  # backward consumes what it ran, as the library's does
            for node in _nodes_under(root.node, set(ran.steps[first:])):
                node.step.consumed = True
                node.step.saved.clear()
        return grads

    try:
        for mod in RECORDERS:
            mod.record = plugged_record
        engine.backward = plugged_backward
        yield ran
    finally:
        for mod in RECORDERS:
            mod.record = library_record
        engine.backward = library_backward


def _nodes_under(root, ids: set) -> list:
    """The nodes under ``root`` whose id is in ``ids``."""
    seen, stack, found = set(), [root], []
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        if node.id in ids and node.step is not None:
            found.append(node)
        stack.extend(node.parents)
    return found
