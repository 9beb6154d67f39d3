"""Build exercise of the modules chapter: the map half of a module's walk.

An optimizer step, the modes and ``load_record`` do not change a module: each maps it, field
by field, into a **new** module whose params keep their ids (burn's ``Module::map`` with a
``ModuleMapper``). The reader writes that map for minidl's modules:
``map_params(module, fn)`` returns a new module of the same class where every tensor
``Param`` is replaced by a new ``Param`` with the **same id** holding ``fn(param.val())``;
sub-modules, lists, tuples and dicts are rebuilt around the new values; flags, running
states and constants are kept as they are; the original module is left untouched. A
``Param`` tied into two fields is mapped **once** and its one new ``Param`` put at both
paths, so the tie survives (minidl's own optimizer maps per path and splits it: the
chapter's tied-pair exercise).

The checker runs the reader's map on the parameter walk's models (a layer, a
``Sequential``, a model with a BatchNorm, a dropout, a list of blocks, a dict of heads,
constants and ``None``, a tuple, a tied pair) with an ``fn`` of its own (``2 * t + 1``) and
checks, in this order: a new module of the same class; the original untouched (the same
leaf objects at every path, the same field values); every path present; no ``fn`` on a flag
or a running state; every param mapped (not the original ``Param``), its id kept, its value
``fn`` of the original's; the leaves in the original's order (fields, dict keys: a dict
rebuilt in sorted key order is refused, as the walk's checker refuses it); a tied param
mapped once (one new ``Param`` at both paths); flags
and running states kept; constants kept. Each slip gets its own verdict and hint; a map that
wrote into the module it was handed is told so first ("you changed the caller's model"),
even when the write also broke a sandbox rule (a computed ``setattr``, ``__dict__``). The
library's own walks and maps (``Module.map``, ``clone``, the modes, records...) are refused
inside the reader's map: they are what the reader is writing.
"""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.module import Module, Param
from minidl.module.running import RunningState
from minidl_book import reader_code
from minidl_book.build_check import Reference, Rules, Verdict
from minidl_book.build_param_walk import MODELS, FixedModels
from minidl_book.cause_hints import CauseHints
from minidl_book.module_fields import with_fields

__all__ = ["MODELS", "PLANTED", "map_params", "exercise", "yours_or_reference", "sgd_step"]


# ----- the reference solution -------------------------------------------------------------
def map_params(module, fn):
    """A new module: every tensor Param replaced by one with the same id holding
    ``fn(param.val())``; a tied Param mapped once; everything else kept."""
    done = {}  # param id -> its new Param: a tied param is mapped once, the tie survives

    def go(value):
        if isinstance(value, Param):
            if value.is_flag():
                return value
            if value.id not in done:
                done[value.id] = value.with_value(fn(value.val()))
            return done[value.id]
        if isinstance(value, Module):  # a copy, constants and all, with new fields
            return with_fields(value, {n: go(f) for n, f in value.named_fields()})
        if isinstance(value, list | tuple):
            return type(value)(go(item) for item in value)
        if isinstance(value, dict):
            return {key: go(item) for key, item in value.items()}
        return value  # a RunningState, a constant, None: kept as they are

    return go(module)


def sgd_step(model, grads, lr: float, map_fn=map_params):
    """Plain SGD on top of a map: ``w - lr * grad`` for every param, a fresh leaf each."""
    def update(w):
        new = w.inner() - w.grad(grads) * lr  # on the inner device, in no graph
        return Tensor.from_inner(new, require_grad=True)

    return map_fn(model, update)


def yours_or_reference(yours):
    """The reader's ``map_params`` when it is defined and maps a test model right, else the
    reference; says which. The chapter builds its SGD step on what this returns."""
    ex = exercise(max_examples=1)

    def right(fn) -> bool:
        return all(ex.verdict_for(fn, case) is None for case in ex.examples)

    return reader_code.yours_or_reference(yours, map_params, "map_params", right)


# ----- a walk of the checker's own (the library's walks are forbidden during the run) -------
def _leaves(module) -> dict:
    """``{path: leaf}`` for every Param (flags too) and RunningState, in field order."""
    found = {}

    def walk(value, path):
        if isinstance(value, Param | RunningState):
            found[path] = value
        elif isinstance(value, Module):
            for name, field in value.named_fields():
                walk(field, f"{path}.{name}" if path else name)
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                walk(item, f"{path}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")

    walk(module, "")
    return found


def _modules(module, path="") -> dict:
    """``{path: Module}`` for the module and every sub-module under it."""
    found = {path: module}

    def walk(value, path):
        if isinstance(value, Module):
            found[path] = value
            for name, field in value.named_fields():
                walk(field, f"{path}.{name}" if path else name)
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                walk(item, f"{path}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")

    walk(module, path)
    return found


def _containers(module) -> dict:
    """``{path: type}`` for every list, tuple and dict under the module's fields."""
    found = {}

    def walk(value, path):
        if isinstance(value, Module):
            for name, field in value.named_fields():
                walk(field, f"{path}.{name}" if path else name)
        elif isinstance(value, list | tuple | dict):
            found[path] = type(value)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                walk(item, f"{path}.{key}")

    walk(module, "")
    return found


# ----- planted wrong solutions --------------------------------------------------------------
def map_in_place(module, fn):
    """Rebuilds modules but writes the new params into the original lists and dicts."""
    return _map_with(module, lambda p: p.with_value(fn(p.val())), in_place=True)


def map_new_ids(module, fn):
    """Wraps each new value in a fresh Param (Param.from_tensor): a new id for each."""
    return _map_with(module, lambda p: Param.from_tensor(fn(p.val())))


def map_skips_dicts(module, fn):
    """Rebuilds lists and tuples but hands a dict back as it was: the heads keep old params."""
    return _map_with(module, lambda p: p.with_value(fn(p.val())), dicts=False)


def map_tied_twice(module, fn):
    """Maps each path on its own: a tied Param gets fn twice, two new Params, one id."""
    return _map_with(module, lambda p: p.with_value(fn(p.val())), memo=False)


def map_sorted_dict_keys(module, fn):
    """Rebuilds a dict in sorted key order: on Blocks the heads come back left, right, so
    parameters() and the record list them in another order."""
    return _map_with(module, lambda p: p.with_value(fn(p.val())), sort_keys=True)


def map_flags_too(module, fn):
    """Treats a flag as any other Param: fn gets the Flag."""
    return _map_with(module, lambda p: p.with_value(fn(p.val())), flags=True)


def map_loses_constants(module, fn):
    """Makes the new module with cls.__new__ and sets only the walked fields: n_blocks,
    name and the absent part are gone."""
    return _map_with(module, lambda p: p.with_value(fn(p.val())), copy_module=False)


def map_tuple_as_list(module, fn):
    """Rebuilds every list and tuple as a list: the Pair model's tuple of layers comes back
    a list."""
    return _map_with(module, lambda p: p.with_value(fn(p.val())), tuples=False)


def map_setattr_copy(module, fn):
    """Right map, PyTorch-style copy: ``copy.copy`` then ``setattr(new, name, ...)`` with a
    computed name, which the checker cannot follow (``with_fields`` is the way)."""
    done = {}

    def go(value):
        if isinstance(value, Param):
            if value.is_flag():
                return value
            if value.id not in done:
                done[value.id] = value.with_value(fn(value.val()))
            return done[value.id]
        if isinstance(value, Module):
            new = copy.copy(value)
            for name, field in value.named_fields():
                setattr(new, name, go(field))
            return new
        if isinstance(value, list | tuple):
            return type(value)(go(item) for item in value)
        if isinstance(value, dict):
            return {key: go(item) for key, item in value.items()}
        return value

    return go(module)


def map_setattr_original(module, fn):
    """Right values, but ``setattr(module, name, ...)`` on the module it was handed: the
    caller's model changes under it (the verdict must say so, not only "setattr")."""
    done = {}

    def go(value):
        if isinstance(value, Param):
            if value.is_flag():
                return value
            if value.id not in done:
                done[value.id] = value.with_value(fn(value.val()))
            return done[value.id]
        if isinstance(value, Module):
            for name, field in value.named_fields():
                setattr(value, name, go(field))
            return value
        if isinstance(value, list | tuple):
            return type(value)(go(item) for item in value)
        if isinstance(value, dict):
            return {key: go(item) for key, item in value.items()}
        return value

    return go(module)


def map_dict_write_original(module, fn):
    """Right values, written through ``module.__dict__[name]`` into the module it was handed
    (the sandbox refuses the ``__dict__`` read; the verdict must name the changed model)."""
    done = {}

    def go(value):
        if isinstance(value, Param):
            if value.is_flag():
                return value
            if value.id not in done:
                done[value.id] = value.with_value(fn(value.val()))
            return done[value.id]
        if isinstance(value, Module):
            for name, field in value.named_fields():
                value.__dict__[name] = go(field)
            return value
        if isinstance(value, list | tuple):
            return type(value)(go(item) for item in value)
        if isinstance(value, dict):
            return {key: go(item) for key, item in value.items()}
        return value

    return go(module)


def map_by_library(module, fn):
    """Hands the work to the library's own Module.map."""
    from minidl.module.visitor import ModuleMapper

    class Mapper(ModuleMapper):
        def map_param(self, path, param):
            return param.with_value(fn(param.val()))

    return module.map(Mapper())


def _map_with(module, new_param, *, dicts=True, memo=True, flags=False, copy_module=True,
              in_place=False, tuples=True, sort_keys=False):
    done = {}

    def go(value):
        if isinstance(value, Param):
            if value.is_flag() and not flags:
                return value
            if not memo:
                return new_param(value)
            if value.id not in done:
                done[value.id] = new_param(value)
            return done[value.id]
        if isinstance(value, Module):
            base = value if copy_module else type(value).__new__(type(value))
            return with_fields(base, {n: go(f) for n, f in value.named_fields()})
        if isinstance(value, list) and in_place:
            for i, item in enumerate(value):
                value[i] = go(item)
            return value
        if isinstance(value, dict) and in_place:
            for key, item in value.items():
                value[key] = go(item)
            return value
        if isinstance(value, list | tuple):
            return (type(value) if tuples else list)(go(item) for item in value)
        if isinstance(value, dict) and dicts:
            keys = sorted(value) if sort_keys else list(value)
            return {key: go(value[key]) for key in keys}
        return value

    return go(module)


#: name -> (wrong map, the verdict kind it must get)
PLANTED = {
    "the library's Module.map": (map_by_library, "rule"),
    "mutates in place": (map_in_place, "check"),
    "new ids": (map_new_ids, "check"),
    "dict entries skipped": (map_skips_dicts, "check"),
    "tied param mapped twice": (map_tied_twice, "check"),
    "flags mapped": (map_flags_too, "check"),
    "constants lost": (map_loses_constants, "check"),
    "tuple rebuilt as a list": (map_tuple_as_list, "check"),
    "sorted dict keys": (map_sorted_dict_keys, "check"),
    "setattr on a copy": (map_setattr_copy, "rule"),
    "setattr on the original": (map_setattr_original, "check"),
    "__dict__ write on the original": (map_dict_write_original, "check"),
}


# ----- the checker ------------------------------------------------------------------------------
class _Fn:
    """The checker's fn: ``2 * t + 1``, recording what it was called on."""

    def __init__(self):
        self.calls = []  # the objects fn got, in order

    def __call__(self, value):
        self.calls.append(value)
        if not isinstance(value, Tensor):
            return value
        return value * 2.0 + 1.0


#: Where the last run's map changed the module it was handed (``""``: it did not). A verdict
#: on that run then leads with that bug, not with the sandbox rule the write also broke.
_LAST_RUN = {"mutated": ""}


def _mutated(model, before: dict, fields: dict) -> str:
    """Where the map changed the module it was handed (``""``: nowhere)."""
    after = _leaves(model)
    for path, leaf in before.items():
        if after.get(path) is not leaf:
            return f"at {path!r}"
    for path, m in _modules(model).items():
        old = fields.get(path) or {}
        if dict(vars(m)) != old or any(vars(m).get(k) is not v for k, v in old.items()):
            return f"in the fields of {path!r}" if path else "in the root's fields"
    return ""


def _run(solution, case: dict) -> dict:
    _LAST_RUN["mutated"] = ""
    device = Device.flex()
    device.seed(7)
    model = MODELS[case["model"]](device)
    before = _leaves(model)
    fields = {path: dict(vars(m)) for path, m in _modules(model).items()}
    fn = _Fn()
    try:
        new = solution(model, fn)
    finally:
        _LAST_RUN["mutated"] = _mutated(model, before, fields)
    return {"module": np.array([isinstance(new, Module)]), "_new": new, "_model": model,
            "_before": before, "_fields": fields, "_fn": fn}


def _expected(case: dict) -> dict:
    return {"module": np.array([True])}


def _checks(solution, case, outputs, trace) -> str | None:  # noqa: C901 - one verdict per slip
    new, model, fn = outputs["_new"], outputs["_model"], outputs["_fn"]
    before, fields = outputs["_before"], outputs["_fields"]
    if new is model:
        return ("your map handed back the original module: map builds a NEW module (the "
                "caller may still hold the old one, as a training loop holds the model "
                "before its step)")
    if type(new) is not type(model):
        return (f"your map returned a {type(new).__name__}, expected a new "
                f"{type(model).__name__}")
    after = _leaves(model)
    for path, leaf in before.items():
        if after.get(path) is not leaf:
            return (f"your map changed the original module: at {path!r} the original now "
                    "holds another object. Build new fields on the new module (or new "
                    "lists and dicts); leave the old one as it was")
    for path, module in _modules(model).items():
        if dict(vars(module)) != fields[path] or any(
                vars(module)[k] is not v for k, v in fields[path].items()):
            return (f"your map changed the original module's fields at {path or 'the root'!r}"
                    ": build new fields on the new module; leave the old one as it was")
    odd = [c for c in fn.calls if not isinstance(c, Tensor)]
    if odd:
        return (f"your map called fn on a {type(odd[0]).__name__}, not a tensor: a flag is a "
                "Param too (param.is_flag()), and flags are kept as they are")
    mine = _containers(new)
    for path, kind in _containers(model).items():
        if path in mine and mine[path] is not kind:
            return (f"{path!r} was a {kind.__name__}, your new module holds a "
                    f"{mine[path].__name__}: rebuild each container as its own kind")
    got = _leaves(new)
    params = {p: leaf for p, leaf in before.items()
              if isinstance(leaf, Param) and not leaf.is_flag()}
    for path, old in params.items():
        if path not in got:
            return (f"your new module has no param at {path!r}; expected the paths "
                    f"{list(params)}")
        mapped = got[path]
        if mapped is old:
            where = ("a dict's entries (map the values, keep the keys)"
                     if _in_dict(model, path) else "every param, wherever it sits")
            return (f"{path!r} was not mapped: your new module holds the original Param "
                    f"there. Map {where}")
        if not isinstance(mapped, Param):
            return f"at {path!r} your new module holds a {type(mapped).__name__}, not a Param"
        if mapped.id != old.id:
            return (f"{path!r} got a new id (…{mapped.id[-4:]} for …{old.id[-4:]}): the new "
                    "Param must keep the old one's id (the optimizer keys its state by it, "
                    "the record by path and id)")
        want = old.val().to_numpy() * 2.0 + 1.0
        value = mapped.val()
        if not isinstance(value, Tensor) or not np.allclose(value.to_numpy(), want,
                                                            rtol=1e-6, atol=1e-6):
            return (f"{path!r} does not hold fn(old value): a Param's new value is "
                    "fn(param.val())")
    order = [path for path in got if path in before]
    out_of_place = [(p, q) for p, q in zip(order, before) if p != q]
    if out_of_place:
        mine, theirs = out_of_place[0]
        return (f"your new module lists its leaves in another order: {mine!r} comes where "
                f"the original has {theirs!r}. parameters() and the record follow field "
                "order and each dict's own key order: keep both")
    by_param = {}
    for path, old in params.items():
        by_param.setdefault(id(old), []).append(path)
    for paths in by_param.values():
        if len(paths) > 1 and len({id(got[p]) for p in paths}) > 1:
            return (f"the tie is broken: {paths[0]!r} and {paths[1]!r} held one Param, your "
                    "new module holds two (fn ran once per path). Map each Param once and "
                    "put its one new Param at both paths")
    for path, old in before.items():
        if isinstance(old, RunningState) and got.get(path) is not old:
            return f"the running state at {path!r} was not kept as it was"
        if isinstance(old, Param) and old.is_flag():
            flag = got.get(path)
            if not (isinstance(flag, Param) and flag.id == old.id and flag.is_flag()
                    and flag.val() == old.val()):
                return f"the flag at {path!r} was not kept as it was"
    for path, module in _modules(model).items():
        mine = _modules(new).get(path)
        for name, value in vars(module).items():
            if name.startswith("_") or name in dict(module.named_fields()):
                continue
            if mine is None or name not in vars(mine) or vars(mine)[name] is not value:
                where = f"{path}.{name}" if path else name
                return (f"your new module lost the constant field {where!r} (="
                        f" {value!r}): a new module keeps every field, the walked ones "
                        "mapped and the others as they were")
    return None


def _in_dict(model, path) -> bool:
    owner, parts = model, path.split(".")
    for part in parts[:-1]:
        if isinstance(owner, dict):
            return True
        owner = (owner[int(part)] if isinstance(owner, list | tuple)
                 else getattr(owner, part, None))
    return isinstance(owner, dict)


#: The library's walks and maps, and what is built on them: the reader's map must not call them.
_LIBRARY_MAPS = (r"^(Module|ModuleNode)\.(parameters|named_parameters|_collect|visit|"
                 r"_visit_fields|map|_map_fields|flags|running_states|clone|to_device|fork|"
                 r"valid|train|freeze|unfreeze|no_grad|set_require_grad|into_record|"
                 r"load_record)$|^visitor\.(visit_value|map_value)$")

_CAUSES = [
    ("library map", lambda v: v.kind == "rule" and "library's own" in v.text, [
        "Module.map is built on the map you are writing. Start from "
        "module.named_fields() and rebuild each field's value: a Param, a Module, a "
        "list/tuple, a dict, or something kept."]),
    ("write on the original", lambda v: "caller's model" in v.text, [
        "The caller still holds the model it handed you (a training loop keeps the old one "
        "until the step returns). Build a new module instead: with_fields(module, {name: "
        "new value, ...}) copies module (constants kept) and replaces those fields."]),
    ("in place", lambda v: "original module" in v.text, [
        "Never assign into the old module, list or dict: build new ones, "
        "with_fields(module, {name: new value}) for a module, [go(v) for v in a_list], "
        "{key: go(v) for key, v in a_dict.items()}."]),
    ("setattr", lambda v: "the checker cannot read" in v.text, [
        "setattr on a copy would be right, but the checker refuses setattr with a computed "
        "name (it could reach any attribute, the library's own map too). Copy a module "
        "with with_fields(module, {name: new value, ...}): it copies module (constants "
        "kept) and replaces those fields."]),
    ("new id", lambda v: "got a new id" in v.text, [
        "param.with_value(new_value) (or param.map(fn)) makes a Param with the same id."]),
    ("not mapped", lambda v: "was not mapped" in v.text, [
        "Rebuild every container: [go(v) for v in a_list], a tuple likewise, "
        "{key: go(v) for key, v in a_dict.items()}."]),
    ("flag", lambda v: "called fn on a" in v.text, [
        "Before calling fn, test param.is_flag(): a flag is returned as it is."]),
    ("tie", lambda v: "tie is broken" in v.text, [
        "Keep a dict {param.id: new Param} for the whole map: a Param met again gets "
        "the new Param made the first time."]),
    ("container kind", lambda v: "its own kind" in v.text, [
        "type(value)(go(v) for v in value) rebuilds a list as a list and a tuple as a "
        "tuple."]),
    ("order", lambda v: "another order" in v.text, [
        "Rebuild a dict in its own order, {key: go(v) for key, v in a_dict.items()}, and "
        "the fields in named_fields() order: never sorted."]),
    ("constants", lambda v: "constant field" in v.text, [
        "named_fields() leaves constants out: with_fields(module, ...) starts from a copy "
        "of module itself, which keeps them; start from the old module, not an empty one."]),
]


class _MapExercise(FixedModels):
    """A map that wrote into the module it was handed is told that first, whatever else the
    run broke: a ``setattr`` or ``__dict__`` write on the original is also refused by the
    sandbox, and "a name the checker cannot read" hides the real bug."""

    def verdict_for(self, solution, case: dict):  # noqa: D102
        verdict = super().verdict_for(solution, case)
        where = _LAST_RUN["mutated"]
        if verdict is None or not where or "changed the original" in verdict.text:
            return verdict
        site = f"\n  {verdict.call}" if verdict.call else ""
        return Verdict(False, "check", "You changed the caller's model (a map returns a new "
                       "tree; the original must stay as it was): after your map, the model "
                       f"you were handed holds another object {where}{site}",
                       verdict.inputs, call=verdict.call)


def exercise(max_examples: int = 6) -> CauseHints:
    """The checker for the reader's ``map_params(module, fn)``."""
    return _MapExercise(
        "the map half of the walk",
        cases=st.fixed_dictionaries({"model": st.sampled_from(sorted(MODELS))}),
        run=_run,
        references=[Reference("the expected new module, with fn(t) = 2t + 1", _expected)],
        rules=Rules(forbidden={_LIBRARY_MAPS: "call the library's own walks or maps "
                               "(Module.map, clone, the modes, the record...): rebuild "
                               "module.named_fields() yourself"},
                    # fn is the checker's, handed to the reader to call on each value
                    helpers=(with_fields, _Fn.__call__)),
        checks=[_checks],
        causes=_CAUSES,
        hints=[
            "Recurse over module.named_fields() as your walk did; where the walk collected "
            "a Param, return a new one; where it recursed, return a rebuilt container.",
            "with_fields(module, {name: new value, ...}) is a new module with those fields "
            "replaced. param.with_value(fn(param.val())) keeps the id.",
            "A flag, a RunningState, a constant or None comes back as it is; a tied Param "
            "is mapped once (remember the new Param by id).",
        ],
        reference_solution=map_params,
        examples=[{"model": "Blocks"}, {"model": "Tied"}, {"model": "Pair"}],
        max_examples=max_examples,
        order=("model",),
    )

