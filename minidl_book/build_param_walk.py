"""Build exercise of the modules chapter: a module's parameter walk.

burn's ``#[derive(Module)]`` generates, from a struct's fields, the code that visits every
parameter. The reader writes that walk for minidl's modules at run time:
``named_params(module) -> {dotted path: Param}`` over the instance's fields in the order
``__init__`` set them (``module.named_fields()``: the checker's watch refuses ``vars()`` and
``__dict__`` in the reader's code), recursing into sub-modules, lists and tuples (``blocks.0``) and dicts
(``heads.left``), keeping tensor params, and skipping flags (``Param[Flag]``), running states
and constants. The checker runs it on a set of models (a layer, a ``Sequential``, a model with
a BatchNorm, a dropout, a list of blocks, a dict of heads whose keys are not in sorted order, constants and ``None``, one ``Param``
tied into two fields) and compares
the paths, their order and the very ``Param`` objects with minidl's own ``parameters()``; it
also checks that the walk draws no number (it must read fields, not values). A tied param is
listed at every path (as ``Module.parameters()`` and burn's generated visit do); a walk that
de-duplicates by id, as PyTorch's ``parameters()`` does, is refused. The library's own walks
(``parameters()``, ``visit``, ``map``, the record, ``num_params``...) are refused inside the
reader's walk: they are what the reader is writing. Each way of going wrong gets its own
verdict and its own hint (a leading dot, a dict's entries named by position, a flag kept...).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from minidl import Device
from minidl.module import Module, Param
from minidl.nn import BatchNormConfig, DropoutConfig, LinearConfig, Relu, Sequential
from minidl_book import reader_code
from minidl_book.build_check import Reference, Rules
from minidl_book.cause_hints import CauseHints

__all__ = ["MODELS", "PLANTED", "named_params", "exercise", "yours_or_reference"]


# ----- the models the walk is tried on ----------------------------------------------------
class Blocks(Module):
    """A stem, a list of blocks, a dict of heads, a dropout, an absent part and constants."""

    def __init__(self, device: Device, n_blocks: int = 2):
        self.stem = LinearConfig(3, 4).init(device)
        self.blocks = [LinearConfig(4, 4).init(device) for _ in range(n_blocks)]
        self.norm = BatchNormConfig(4).init(device)
        self.drop = DropoutConfig(0.1).init()
        # keys not in sorted order: a walk that sorts a dict's keys gets the order wrong
        self.heads = {"right": LinearConfig(4, 1, bias=False).init(device),
                      "left": LinearConfig(4, 2).init(device)}
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
        # else a RunningState: no param (named_fields() drops constants, None)

    walk(module, "")
    return found


def yours_or_reference(yours):
    """The reader's ``named_params`` when it is defined and walks a test model right (the
    same paths and ``Param`` objects as ``Module.parameters()``, nothing drawn), else the reference; says
    which. The chapter runs it to show the count, a record and a step on top of the walk."""
    def right(fn) -> bool:
        model = Blocks(Device.flex())
        truth = model.parameters()
        return _same(fn(model), truth) and not any(p.is_initialized() for p in truth.values())

    return reader_code.yours_or_reference(yours, named_params, "named_params", right)


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


def walk_sorted_dict_keys(module) -> dict:
    """Field order kept, but a dict's entries visited in sorted key order."""
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
            for key in sorted(value):
                walk(value[key], f"{path}.{key}")

    walk(module, "")
    return found


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


def walk_by_library(module) -> dict:
    """Hands back the library's own walk: the exercise asks for the walk behind it."""
    return dict(module.parameters())


def walk_leading_dot(module) -> dict:
    """Joins every name with a dot, the root's too: '.stem.weight'."""
    found = {}

    def walk(value, path):
        if isinstance(value, Param):
            if not value.is_flag():
                found[path] = value
        elif isinstance(value, Module):
            for name, field in value.named_fields():
                walk(field, f"{path}.{name}")
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")

    walk(module, "")
    return found


def walk_dict_by_index(module) -> dict:
    """Names a dict's entries by position, as a list's: 'heads.0.weight' for 'heads.left'."""
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
            for i, item in enumerate(value.values()):
                walk(item, f"{path}.{i}")

    walk(module, "")
    return found


#: name → (wrong walk, the verdict kind it must get)
PLANTED = {
    "the library's parameters()": (walk_by_library, "rule"),
    "leading dot": (walk_leading_dot, "check"),
    "dict keyed by index": (walk_dict_by_index, "check"),
    "keeps flags": (walk_keeps_flags, "check"),
    "skips lists and dicts": (walk_no_lists, "check"),
    "sorted paths": (walk_sorted, "check"),
    "sorted dict keys": (walk_sorted_dict_keys, "check"),
    "draws the values": (walk_draws, "check"),
    "de-duplicates by id": (walk_dedup_by_id, "check"),
}


class FixedModels(CauseHints):
    """A checker whose cases are the fixed :data:`MODELS`, and whose card says so (the shared
    card says "on generated cases", which oversells a choice among six models)."""

    def _repr_markdown_(self) -> str:
        return super()._repr_markdown_().replace("on generated cases", MODELS_SAID)


#: what the checkers of the walk and of the map run on, as their cards say it
MODELS_SAID = ("on six fixed models (among them lists, a tuple, a dict with unsorted "
               "keys, a BatchNorm, a dropout, a tie)")


# ----- the checker ------------------------------------------------------------------------------
def _run(solution, case: dict) -> dict:
    model = MODELS[case["model"]](Device.flex().autodiff())
    found = solution(model)
    if not isinstance(found, dict):
        raise TypeError(f"named_params must return a dict, got {type(found).__name__}")
    # minidl's own walk runs in _checks, after the watch: inside it, it is a forbidden call
    return {"count": np.array([len(found)]), "_found": found, "_model": model}


def _minidl(case: dict) -> dict:
    model = MODELS[case["model"]](Device.flex().autodiff())
    return {"count": np.array([len(model.parameters())])}


def _checks(solution, case, outputs, trace) -> str | None:
    found, truth = outputs["_found"], outputs["_model"].parameters()
    drawn = [path for path, p in truth.items() if p.is_initialized()]
    extra = [p for p in found if p not in truth]
    missing = [p for p in truth if p not in found]
    if extra:
        first = extra[0]
        if all(str(p).startswith(".") for p in extra):
            return (f"your paths start with a dot: {first!r} where minidl's path is "
                    f"{first[1:]!r}. The root module's own path is empty, so its fields are "
                    "named without a dot in front")
        flags = [p for p in extra if isinstance(found[p], Param) and found[p].is_flag()]
        if flags:
            return (f"your walk returned {len(flags)} flag(s) as params, e.g. {flags[0]!r} "
                    "(a Param holding a Flag, no tensor)")
        elsewhere = {p: q for p in extra for q in truth if found[p] is truth[q]}
        if first in elsewhere:
            q = elsewhere[first]
            by_index = [(a, b) for a, b in zip(first.split("."), q.split("."))
                        if a != b and a.isdigit() and not b.isdigit()]
            why = (f": a dict's entry goes under its key ({by_index[0][1]!r}), not its "
                   f"position ({by_index[0][0]!r})" if by_index else "")
            return f"your walk returned {first!r} for the param minidl names {q!r}{why}"
        kind = type(found[first]).__name__
        return (f"your walk returned {len(extra)} path(s) that are no tensor param of the "
                f"model, e.g. {first!r} (a {kind})")
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
    if drawn:
        return (f"your walk drew {len(drawn)} params ({drawn[0]}, "
                "...): it must read the fields, never a value (no val()): a walk runs no "
                "initializer")
    if any(found[p] is not truth[p] for p in found):
        return ("your paths are right, but some values are not the module's own Param "
                "objects (the optimizer needs each Param itself: its id keys the state)")
    return None


#: The library's walks, and what is built on them: the reader's walk must not call them.
_LIBRARY_WALKS = (r"^(Module|ModuleNode)\.(parameters|named_parameters|_collect|visit|"
                  r"_visit_fields|map|_map_fields|flags|running_states|num_params|"
                  r"into_record|load_record)$|^visitor\.(visit_value|map_value)$")

_CAUSES = [
    ("library walk", lambda v: v.kind == "rule" and "library's own walk" in v.text, [
        "parameters() is built on the walk you are writing. Start from "
        "module.named_fields() and recurse: a Module's fields, a list's items, a dict's "
        "values."]),
    ("leading dot", lambda v: "start with a dot" in v.text, [
        "Join with a dot only below the root: f\"{path}.{name}\" if path else name."]),
    ("dict by position", lambda v: "not its position" in v.text, [
        "A list's items are named by index (blocks.0), a dict's by key (heads.left): "
        "for key, item in value.items()."]),
    ("flag", lambda v: "flag(s) as params" in v.text, [
        "A Param holding a Flag is a Param too: param.is_flag() tells them apart, "
        "without val()."]),
    ("drawn", lambda v: "your walk drew" in v.text, [
        "Decide from the Param itself (isinstance, param.is_flag()), never from its value: "
        "val() runs the initializer."]),
    ("missed", lambda v: "your walk missed" in v.text, [
        "Fields can be lists, tuples and dicts of modules: recurse into their items too "
        "(blocks.0.weight, heads.left.bias)."]),
    ("order", lambda v: "wrong order" in v.text, [
        "Keep the order named_fields() gives (the order __init__ set the fields) and a "
        "dict's own (insertion) order: do not sort the paths or the keys."]),
]


def exercise(max_examples: int = 5) -> CauseHints:
    """The checker for the reader's ``named_params(module)``."""
    return FixedModels(
        "a module's parameter walk",
        cases=st.fixed_dictionaries({"model": st.sampled_from(sorted(MODELS))}),
        run=_run,
        references=[Reference("minidl's Module.parameters()", _minidl)],
        rules=Rules(forbidden={_LIBRARY_WALKS: "call the library's own walk (parameters(), "
                               "visit(), the record...): walk module.named_fields() yourself"}),
        checks=[_checks],
        causes=_CAUSES,
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
