"""Build exercise of the modules chapter: a module's parameter walk.

burn's ``#[derive(Module)]`` generates, from a struct's fields, the code that visits every
parameter. The reader writes that walk for minidl's modules at run time:
``named_params(module) -> {dotted path: Param}`` over the instance's fields in the order
``__init__`` set them (``module.named_fields()``: the checker's watch refuses ``vars()`` and
``__dict__`` in the reader's code), recursing into sub-modules, lists and tuples (``blocks.0``) and dicts
(``heads.left``), keeping tensor params, and skipping flags (``Param[Flag]``), running states
and constants. The checker runs it on a set of models (a layer, a ``Sequential``, a model with
a BatchNorm, a dropout, a list of blocks, a dict of heads, constants and ``None``, one ``Param``
tied into two fields) and compares
the paths, their order and the very ``Param`` objects with minidl's own ``parameters()``; it
also checks that the walk draws no number (it must read fields, not values). A tied param is
listed at every path (as ``Module.parameters()`` and burn's generated visit do); a walk that
de-duplicates by id, as PyTorch's ``parameters()`` does, is refused.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from minidl import Device
from minidl.module import Module, Param
from minidl.nn import BatchNormConfig, DropoutConfig, LinearConfig, Relu, Sequential
from minidl_book import reader_code
from minidl_book.build_check import BuildExercise, Reference

__all__ = ["MODELS", "PLANTED", "named_params", "exercise", "yours_or_reference"]


# ----- the models the walk is tried on ----------------------------------------------------
class Blocks(Module):
    """A stem, a list of blocks, a dict of heads, a dropout, an absent part and constants."""

    def __init__(self, device: Device, n_blocks: int = 2):
        self.stem = LinearConfig(3, 4).init(device)
        self.blocks = [LinearConfig(4, 4).init(device) for _ in range(n_blocks)]
        self.norm = BatchNormConfig(4).init(device)
        self.drop = DropoutConfig(0.1).init()
        self.heads = {"left": LinearConfig(4, 2).init(device),
                      "right": LinearConfig(4, 1, bias=False).init(device)}
        self.extra = None  # an absent optional part
        self.n_blocks = n_blocks  # constants
        self.name = "blocks"


class Pair(Module):
    """Two params set directly on the module, in the order b then a, and a tuple of layers."""

    def __init__(self, device: Device):
        self.b = LinearConfig(2, 2).init(device).bias
        self.a = LinearConfig(2, 2).init(device).weight
        self.layers = (LinearConfig(2, 3).init(device), Relu())


class Tied(Module):
    """Weight tying: one Param in two fields (``second.weight is first.weight``)."""

    def __init__(self, device: Device):
        self.first = LinearConfig(4, 4, bias=False).init(device)
        self.second = LinearConfig(4, 4).init(device)
        self.second.weight = self.first.weight


MODELS = {
    "Linear(3, 2)": lambda d: LinearConfig(3, 2).init(d),
    "Sequential(Linear, Relu, Linear)": lambda d: Sequential(
        LinearConfig(3, 4).init(d), Relu(), LinearConfig(4, 2).init(d)),
    "Blocks": lambda d: Blocks(d),
    "Blocks(3 blocks)": lambda d: Blocks(d, 3),
    "Pair": lambda d: Pair(d),
    "Tied": lambda d: Tied(d),
}


# ----- the reference solution -------------------------------------------------------------
def named_params(module) -> dict:
    """Every tensor Param under ``module``, by dotted path, in field order."""
    found = {}

    def walk(value, path):
        if isinstance(value, Param):
            if not value.is_flag():
                found[path] = value
        elif isinstance(value, Module):
            for name, field in value.named_fields():
                walk(field, f"{path}.{name}" if path else name)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        # anything else (a RunningState, a constant, None) holds no parameter

    walk(module, "")
    return found


def yours_or_reference(yours):
    """The reader's ``named_params`` when it is defined and walks a test model right (the
    same paths and ``Param`` objects as ``Module.parameters()``), else the reference; says
    which. The chapter runs it to show the count, a record and a step on top of the walk."""
    model = Blocks(Device.flex())
    return reader_code.yours_or_reference(
        yours, named_params, "named_params", lambda fn: _same(fn(model), model.parameters()))


def _same(got, expected) -> bool:
    return (isinstance(got, dict) and list(got) == list(expected)
            and all(got[k] is expected[k] for k in expected))


# ----- planted wrong solutions --------------------------------------------------------------
def walk_keeps_flags(module) -> dict:
    """Forgets that a Flag is a Param too: dropout's and BatchNorm's `training` come along."""
    found = {}

    def walk(value, path):
        if isinstance(value, Param):
            found[path] = value
        elif isinstance(value, Module):
            for name, field in value.named_fields():
                walk(field, f"{path}.{name}" if path else name)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")

    walk(module, "")
    return found


def walk_no_lists(module) -> dict:
    """Sub-modules only: a list of blocks and a dict of heads are skipped as constants."""
    found = {}

    def walk(value, path):
        if isinstance(value, Param):
            if not value.is_flag():
                found[path] = value
        elif isinstance(value, Module):
            for name, field in value.named_fields():
                walk(field, f"{path}.{name}" if path else name)

    walk(module, "")
    return found


def walk_sorted(module) -> dict:
    """The right params, in alphabetical order instead of field order."""
    return dict(sorted(named_params(module).items()))


def walk_draws(module) -> dict:
    """The right walk, but it reads each value (to check it is a tensor): every param drawn."""
    found = named_params(module)
    for param in found.values():
        param.val()
    return found


def walk_dedup_by_id(module) -> dict:
    """PyTorch's habit: each Param once, at its first path, so a tied param loses a path."""
    found, seen = {}, set()
    for path, param in named_params(module).items():
        if param.id not in seen:
            seen.add(param.id)
            found[path] = param
    return found


#: name → (wrong walk, the verdict kind it must get)
PLANTED = {
    "keeps flags": (walk_keeps_flags, "check"),
    "skips lists and dicts": (walk_no_lists, "check"),
    "sorted paths": (walk_sorted, "check"),
    "draws the values": (walk_draws, "check"),
    "de-duplicates by id": (walk_dedup_by_id, "check"),
}


# ----- the checker ------------------------------------------------------------------------------
def _run(solution, case: dict) -> dict:
    model = MODELS[case["model"]](Device.flex().autodiff())
    found = solution(model)
    if not isinstance(found, dict):
        raise TypeError(f"named_params must return a dict, got {type(found).__name__}")
    truth = model.parameters()
    return {"count": np.array([len(found)]), "_found": found, "_truth": truth,
            "_drawn": [path for path, p in truth.items() if p.is_initialized()]}


def _minidl(case: dict) -> dict:
    model = MODELS[case["model"]](Device.flex().autodiff())
    return {"count": np.array([len(model.parameters())])}


def _checks(solution, case, outputs, trace) -> str | None:
    found, truth = outputs["_found"], outputs["_truth"]
    extra = [p for p in found if p not in truth]
    missing = [p for p in truth if p not in found]
    if extra:
        kinds = {p: type(found[p]).__name__ + (" holding a Flag" if isinstance(
            found[p], Param) and found[p].is_flag() else "") for p in extra}
        first = extra[0]
        return (f"your walk returned {len(extra)} path(s) that are no tensor param, e.g. "
                f"{first!r} (a {kinds[first]})")
    if missing:
        tied = [(p, q) for p in missing for q in found if found[q] is truth[p]]
        if tied:
            p, q = tied[0]
            return (f"your walk dropped {p!r}: it holds the same Param as {q!r} (a tied "
                    "param, one id). The walk lists every path, even when the id repeats: "
                    "the record and the optimizer visit each path")
        return (f"your walk missed {len(missing)} param(s), e.g. {missing[0]!r}; expected "
                f"{list(truth)}")
    if list(found) != list(truth):
        return (f"the right params in the wrong order: expected field order "
                f"{list(truth)}, found {list(found)}")
    if outputs["_drawn"]:
        return (f"your walk drew {len(outputs['_drawn'])} params ({outputs['_drawn'][0]}, "
                "...): it must read the fields, never a value (no val()): a walk runs no "
                "initializer")
    if any(found[p] is not truth[p] for p in found):
        return ("your paths are right, but some values are not the module's own Param "
                "objects (the optimizer needs each Param itself: its id keys the state)")
    return None


def exercise(max_examples: int = 5) -> BuildExercise:
    """The checker for the reader's ``named_params(module)``."""
    return BuildExercise(
        "a module's parameter walk",
        cases=st.fixed_dictionaries({"model": st.sampled_from(sorted(MODELS))}),
        run=_run,
        references=[Reference("minidl's Module.parameters()", _minidl)],
        checks=[_checks],
        hints=[
            "module.named_fields() lists the fields in the order __init__ set them "
            "(constants left out). A field is a Param, a Module, a list/tuple/dict of them, "
            "or something the walk skips.",
            "A Param holding a Flag is a Param too: param.is_flag() tells them apart. "
            "A RunningState, a number, a string or None holds no parameter.",
            "Paths join field names, list indices and dict keys with dots: blocks.0.weight, "
            "heads.left.bias.",
        ],
        reference_solution=named_params,
        examples=[{"model": "Blocks"}, {"model": "Pair"}, {"model": "Tied"}],
        max_examples=max_examples,
        order=("model",),
    )
