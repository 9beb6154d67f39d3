"""How build exercises drive a solution: the calls the framework would make, hidden from trace.

Every function here runs *inside* the checker's traced run, so this module is marked
``__trace_hide__``: a rule then sees the reader's code and what it dispatched, never the
harness that called it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minidl import Device, Tensor
from minidl_book.reader_code import show_source
from minidl_book.verdict import Verdict

__trace_hide__ = True


def to_tensor(value: Any, device: Device) -> Any:
    """A case's NumPy array as a minidl tensor (float32, int64 or bool); anything else as is."""
    if isinstance(value, np.ndarray):
        return Tensor.from_numpy(np.ascontiguousarray(value), device)
    return value


def tensor_call(params: Sequence[str], device: Device | None = None) -> Callable[[Any, dict], dict]:
    """A ``run`` that calls ``solution(*case[p] for p in params)`` with arrays as tensors on
    ``device`` (Flex by default) and returns ``{"out": result}``."""
    dev = Device.flex() if device is None else device

    def run(solution: Any, case: dict) -> dict:
        args = [to_tensor(case[p], dev) for p in params]
        return {"out": solution(*args)}

    return run


def is_placeholder(fn: Any) -> bool:
    """Whether ``fn`` is the page's unfinished ``def f(...): ...`` (its body only ``...``), or
    a class with such a method (the page's ``class MyStep(Step)`` before the reader fills it)."""
    if isinstance(fn, type):
        return any(is_placeholder(v) for v in vars(fn).values()
                   if hasattr(getattr(v, "__func__", v), "__code__"))
    fn = getattr(fn, "__func__", fn)
    if getattr(fn, "__code__", None) is None:
        return False
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    func = tree.body[0] if tree.body else None
    if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = [node for node in func.body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str))]  # a docstring does not count
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and body[0].value.value is Ellipsis


# ----- a backward Step, recorded and run the way Autodiff runs its own -----------------------
def attach_step(AD: type, step: Any, *inputs: Any) -> Any:
    """Run ``step.forward`` on ``AD``'s inner backend and put the step in the graph.

    burn's ``OpsPrep`` for a custom op: the inputs' nodes become the parents, ``keeps`` says
    what to save given which inputs are tracked, and the result carries a new node whose step
    the engine will call in backward (with a ``State`` that reads ``saved``).
    """
    from minidl.autodiff import AutodiffTensor, Node, Requirement

    tensors = [t if isinstance(t, AutodiffTensor) else AD.from_inner(t) for t in inputs]
    inner = AD.inner_backend()
    out = step.forward(inner, *[AD.inner(t) for t in tensors])
    nodes = tuple(t.node for t in tensors)
    tracked = tuple(n.requirement is not Requirement.NONE for n in nodes)
    step.inputs, step.tracked = nodes, tracked
    step.shapes = tuple(tuple(AD.inner(t).shape) for t in tensors)
    step.dtypes = tuple(AD.inner(t).dtype for t in tensors)
    names = step.input_names(len(tensors))
    for name in step.keeps(tracked):
        if name != "out" and name not in names:
            raise ValueError(f"{type(step).__name__} keeps {name!r}, but forward's inputs are {names} "
                             "(or 'out' for the output)")
        step.saved[name] = out if name == "out" else AD.inner(tensors[names.index(name)])
    parents = tuple(n for n, t in zip(nodes, tracked) if t)
    return AutodiffTensor(out, Node(Requirement.GRAD_IN_BACKWARD, parents, step))


def unary_step_run(solution: Any, case: dict) -> dict:
    """Record ``solution()`` (a unary ``Step`` class) on ``case["x"]`` under ``Autodiff[Flex]``,
    backward from ``sum(out * case["w"])``; outputs ``out``, ``grad`` and ``_saved`` (the
    names the step kept)."""
    from minidl.autodiff import Autodiff
    from minidl.backends.flex import Flex

    AD, dev = Autodiff[Flex], Device.flex()
    x = AD.float_require_grad(AD.from_inner(Flex.float_from_data(case["x"], dev)))
    w = AD.from_inner(Flex.float_from_data(case["w"], dev))
    step = solution()
    y = attach_step(AD, step, x)
    saved = sorted(step.saved)
    grads = AD.backward(AD.float_sum(AD.float_mul(y, w)))
    return {"out": AD.inner(y), "grad": AD.grad(x, grads), "_saved": saved}


# ----- a backend class, driven through its own ops and the protocol's defaults ------------------
def backend_run(solution: Any, case: dict) -> dict:
    """Call ``float_exp`` on the reader's backend class, then two protocol defaults written
    with ``cls.float_exp`` (``sigmoid``, ``softmax`` along the last dim); outputs all three
    (only ``exp`` when its shape is wrong, so the verdict names the op, not a default)."""
    B, dev = solution, Device.ndarray()
    x = B.float_from_data(case["x"], dev)
    exp = B.float_exp(x)
    if getattr(exp, "shape", None) != x.shape:  # the defaults would fail on it: report the op
        return {"exp": exp}
    return {"exp": exp, "sigmoid": B.sigmoid(x), "softmax": B.softmax(x, x.ndim - 1)}


# ----- a running statistic, updated batch after batch ---------------------------------------------
def running_var_run(solution: Any, case: dict) -> dict:
    """Start from ones (a fresh BatchNorm's ``running_var``) and fold each ``[n, C]`` batch of
    ``case["batches"]`` in with ``solution(running_var, batch, momentum)``; output the final
    ``running_var``."""
    dev = Device.flex()
    batches = case["batches"]
    running = Tensor.ones([batches.shape[2]], dev)
    for batch in batches:
        running = solution(running, Tensor.from_numpy(np.ascontiguousarray(batch), dev), case["momentum"])
    return {"running_var": running}


# ----- a forwarder installed on Dispatch for the length of one run --------------------------------
def dispatch_linear_run(solution: Any, case: dict) -> dict:
    """Install ``solution`` as ``Dispatch.linear`` (removed again afterwards), run
    ``functional.linear`` on ``Autodiff[Flex]`` and backward from ``sum(out * g)``; outputs
    the value, the gradients, and ``_ops`` (the graph's step names)."""
    from minidl import functional
    from minidl.autodiff import graph
    from minidl.dispatch import Dispatch

    if "linear" in vars(Dispatch):
        raise RuntimeError("Dispatch already forwards linear: the exercise adds that forwarder")
    ad = Device.flex().autodiff()
    x, w = (Tensor.from_numpy(case[k], ad).require_grad() for k in ("x", "w"))
    b = Tensor.from_numpy(case["b"], ad).require_grad() if case["b"] is not None else None
    Dispatch.linear = classmethod(solution)
    try:
        out = functional.linear(x, w, b)
    finally:
        del Dispatch.linear
    ops = graph(out).ops
    grads = (out * Tensor.from_numpy(case["g"], ad)).sum().backward()
    return {"out": out.inner(), "grad x": x.grad(grads), "grad w": w.grad(grads),
            "grad b": None if b is None else b.grad(grads), "_ops": ops}


# ----- a layer: Config → Module, walked, recorded, trained and made valid ------------------------
def layer_run(solution: Any, case: dict) -> dict:
    """``solution(d_model).with_epsilon(case["epsilon"]).init(autodiff device)`` (the default
    config when the case has no ``epsilon``), then: the module walk (fields, params, record
    keys), ``load_record`` with the case's ``gamma``, forward + backward from
    ``sum(out * g)``, and the ``valid()`` copy's forward on the plain device. With an
    ``epsilon``, ``_eps_probe`` holds the outputs of that layer and of the default config's on
    a row of 0.01s (where epsilon shows), so a layer that ignores its config can be named."""
    ad = Device.flex().autodiff()
    x_np = case["x"]
    d = x_np.shape[-1]
    config = solution(d)
    if "epsilon" in case:
        if not callable(getattr(config, "with_epsilon", None)):
            return {"_no_with_epsilon": True}
        config = config.with_epsilon(case["epsilon"])
    layer = config.init(ad)
    out: dict = {"_fields": [name for name, _ in layer.named_fields()], "_num_params": layer.num_params(),
                 "_record": sorted(layer.into_record())}
    if out["_record"] != ["gamma"]:
        return out
    layer = layer.load_record({"gamma": Tensor.from_numpy(case["gamma"], ad)})
    x = Tensor.from_numpy(x_np, ad).require_grad()
    y = layer(x)
    grads = (y * Tensor.from_numpy(case["g"], ad)).sum().backward()
    gamma = layer.parameters()["gamma"].val()
    valid = layer.valid()
    out.update({
        "out": y.inner(), "grad x": x.grad(grads), "grad gamma": gamma.grad(grads),
        "valid out": valid(Tensor.from_numpy(x_np, Device.flex())),
        "_valid_autodiff": valid.parameters()["gamma"].val().device.is_autodiff(),
    })
    if "epsilon" in case:
        plain = Device.flex()
        probe = np.full((1, d), 0.01, dtype=np.float32)
        out["_eps_probe"] = [
            np.asarray(made.init(plain)(Tensor.from_numpy(probe, plain)).to_numpy())
            for made in (config, solution(d))]
    return out


# ----- a PyTorch checkpoint with other names, loaded through the reader's remapping -------------
def remap_run(solution: Any, case: dict) -> dict:
    """Save ``case["torch_model"]()``'s ``state_dict`` with ``torch.save``, open it with
    ``PytorchStore``, let ``solution(store)`` add its renaming rules, load into
    ``case["target"](device)`` and run it on ``case["x"]``."""
    import tempfile
    from pathlib import Path

    import torch

    from minidl.store import PytorchStore

    dev = Device.flex()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "checkpoint.pt"
        torch.save(case["_torch"].state_dict(), path)
        store = solution(PytorchStore.from_file(path))
        model = store.load_into(case["_target"](dev))
    return {"out": model(Tensor.from_numpy(case["x"], dev))}


# ----- a random op: dropout, on a plain or an autodiff device --------------------------------------
def dropout_run(solution: Any, case: dict) -> dict:
    """``solution(x, prob, training)`` on Flex, autodiff or plain as the case says; on an
    autodiff device also the gradient of ``sum(out * g)``."""
    dev = Device.flex().autodiff() if case["autodiff"] else Device.flex()
    x = Tensor.from_numpy(case["x"], dev)
    if case["autodiff"]:
        x = x.require_grad()
    out = solution(x, case["prob"], case["training"])
    grad = again = None
    if case["autodiff"] and out is not None and out is not x and getattr(out, "shape", None) == x.shape:
        grad = x.grad((out * Tensor.from_numpy(case["g"], dev)).sum().backward())
        again = solution(x, case["prob"], case["training"])  # a second mask, drawn anew
        again = again.to_numpy() if type(again) is Tensor else None
    return {"out": out, "_grad": grad, "_again": again}


def run_check(exercise: Any, solution: Any, ok_text: Callable[[], str]) -> Verdict:
    """Check a build-it whose ``exercise`` judges with its own ``find_failure`` (the
    resume and train-step build-its): a placeholder asks for a solution first, anything
    else counts an attempt and gets the first failure or ✓ ``ok_text()``; printed and
    returned."""
    if solution is Ellipsis or is_placeholder(solution):
        verdict = Verdict(False, "todo", "Write your solution first: replace ... with it "
                          "and run the cell again.", "")
    else:
        exercise.attempts += 1
        failure = exercise.find_failure(solution)
        # a refusal is falsy (Verdict.__bool__ is its ok), so test for None, not truth
        verdict = failure if failure is not None else Verdict(True, "ok", "", "")
        if verdict.ok:
            verdict.text = ok_text()
    print(verdict.render())
    return verdict


def show_solution(exercise: Any, reference: Callable, name: str | None, passed: str) -> Callable:
    """Show ``reference``'s source (its ``def`` renamed to ``name`` when given) as the page's
    solution, check it with ``exercise.find_failure`` and print ``passed``; return it. The
    book's own answer must pass: a failure is a broken checker, not the reader's."""
    source = inspect.getsource(reference).rstrip()
    if name:
        source = source.replace(f"def {reference.__name__}(", f"def {name}(", 1)
    show_source(source)
    verdict = exercise.find_failure(reference)
    if verdict is not None:
        raise RuntimeError(f"{exercise.title}: the reference solution fails: {verdict.text}")
    print(passed)
    return reference
