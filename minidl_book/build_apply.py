"""Build exercise of the storing-and-loading chapter: the load's plan, ``plan_apply``.

The reader writes ``plan_apply(slots, source, adapter)``, minidl's core of a load
(``minidl/store/applier.py``; burn's counterpart is ``Applier::apply_tensor`` in burn-store's
``applier.rs``, read at v0.22.0-pre.2). For every slot of the module (a
:class:`~minidl.store.adapter.TensorSlot`: path, module types, shape, dtype) it finds the
file's tensor under the slot's own name, else under the adapter's alternative name, lets the
adapter transform it, checks shape then dtype, and sorts it: ``applied`` (with its array in
``values``), ``missing``, ``errors``; file tensors no slot took go to ``unused``, or to
``ignored`` when the adapter drops them on purpose. It builds nothing: the store builds the
new module only once the whole result is accepted.

The checker runs the reader's function and minidl's own ``plan_apply`` on the same slots and
file (a Linear, a BatchNorm and a LayerNorm against a PyTorch state dict with generated sizes
and misfits) and compares every list (in any order) and every array of ``values``. Planted
slips, each with its own hint: dtype never compared, the adapter's alternative name never
tried, the alternative name tried instead of the slot's own (a file saved with minidl's
``gamma``/``beta``), the alternative name tried before the slot's own (a file holding both
``bn.gamma`` and ``bn.weight``), the shape compared before the adapter runs, the dtype compared before it (on the file's
array: with a casting adapter, ``PyTorchToMinidlAdapter().chain(FloatCastAdapter("float32"))``
on a float16 file, nothing applies), a value written before its checks (burn's
order: what fails is already half-applied), the shape compared by element count only (a
``[in, out]`` file for a ``[out, in]`` slot passes: the silent ``LinearLayout.Col`` trap),
``num_batches_tracked`` counted as unused, unused
keys found by name instead of by what was taken, a key counted as taken only when its
slot's checks pass (it lands in errors and in unused).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from minidl.store.adapter import (
    FloatCastAdapter,
    PyTorchToMinidlAdapter,
    TensorSlot,
)
from minidl.store.applier import ApplyResult
from minidl.store.applier import plan_apply as minidl_plan_apply
from minidl.store.errors import DTypeMismatch, ShapeMismatch
from minidl_book.cause_hints import CauseHints

__trace_hide__ = True

__all__ = ["PLANTED", "exercise", "file_for", "plan_apply", "slots_for"]


def slots_for(d_in: int, d_out: int, channels: int) -> list[TensorSlot]:
    """A ``Net``-like module's slots: ``fc`` a Linear, ``bn`` a BatchNorm, ``ln`` a LayerNorm."""
    lin, bn, ln = ("Net", "Linear"), ("Net", "BatchNorm"), ("Net", "LayerNorm")
    return [TensorSlot("fc.weight", lin, (d_in, d_out), "float32"),
            TensorSlot("fc.bias", lin, (d_out,), "float32"),
            TensorSlot("bn.gamma", bn, (channels,), "float32"),
            TensorSlot("bn.beta", bn, (channels,), "float32"),
            TensorSlot("bn.running_mean", bn, (channels,), "float32", "running"),
            TensorSlot("bn.running_var", bn, (channels,), "float32", "running"),
            TensorSlot("ln.gamma", ln, (d_in,), "float32"),
            TensorSlot("ln.beta", ln, (d_in,), "float32")]


def file_for(d_in: int, d_out: int, channels: int, *, seed: int = 0, drop: str | None = None,
             wide: str | None = None, f64: str | None = None, extra: bool = False,
             counter: bool = True, own: tuple[str, ...] = (),
             both: tuple[str, ...] = (), half: bool = False,
             flip: str | None = None) -> dict[str, np.ndarray]:
    """The PyTorch state dict of the same layers (``[out, in]`` weights, norms' ``weight`` /
    ``bias``), with misfits: a key dropped, a tensor one wider, one in float64, an extra
    ``head.weight``, BatchNorm's ``num_batches_tracked``. The norms named in ``own`` (``"bn"``,
    ``"ln"``) keep minidl's own names, ``gamma`` / ``beta``, as a file saved by minidl does;
    those in ``both`` hold both names, with different values (the own name must win).
    ``half``: every other float tensor in float16 (a half-precision checkpoint). ``flip``:
    that tensor saved with its shape reversed (a Linear weight already ``[in, out]``): as
    many elements as the slot wants, in another shape."""
    rng = np.random.default_rng(seed)
    shapes = {"fc.weight": (d_out, d_in), "fc.bias": (d_out,), "bn.weight": (channels,),
              "bn.bias": (channels,), "bn.running_mean": (channels,),
              "bn.running_var": (channels,), "ln.weight": (d_in,), "ln.bias": (d_in,)}
    if extra:
        shapes["head.weight"] = (2, d_out)
    file = {}
    for key, shape in shapes.items():
        if key == drop:
            continue
        if key == wide:
            shape = shape[:-1] + (shape[-1] + 1,)
        if key == flip:
            shape = shape[::-1]
        array = rng.standard_normal(shape).astype(np.float64 if key == f64 else np.float32)
        if half and key != f64:
            array = array.astype(np.float16)
        layer, _, name = key.partition(".")
        if layer in own and name in ("weight", "bias"):
            key = f"{layer}.{'gamma' if name == 'weight' else 'beta'}"
        elif layer in both and name in ("weight", "bias"):
            own_key = f"{layer}.{'gamma' if name == 'weight' else 'beta'}"
            file[own_key] = rng.standard_normal(shape).astype(np.float32)
        file[key] = array
    if counter:
        file["bn.num_batches_tracked"] = np.array(3, dtype=np.int64)
    return file


def plan_apply(slots, source, adapter):
    result = ApplyResult()
    taken = set()
    for slot in slots:
        key = slot.path
        alt = adapter.alternative_name(slot.name, slot.module_type)
        if key not in source and alt is not None:
            head = slot.path.rpartition(".")[0]
            key = f"{head}.{alt}" if head else alt
        if key not in source:
            result.missing.append(slot.path)
            continue
        taken.add(key)
        array = adapter.adapt(source[key], slot)  # e.g. a Linear weight transposed
        if array.shape != slot.shape:
            result.errors.append(ShapeMismatch(slot.path, slot.shape, array.shape))
        elif array.dtype.name != slot.dtype:
            result.errors.append(DTypeMismatch(slot.path, slot.dtype, array.dtype.name))
        else:  # checked: only now does it join what the load will build
            result.values[slot.path] = array
            result.applied.append(slot.path)
    for key in sorted(set(source) - taken):
        if adapter.ignores(key):
            result.ignored.append(key)
        else:
            result.unused.append(key)
    return result


# ----- planted slips --------------------------------------------------------------------------
def _variant(*, lookup: str = "own, then alternative", dtype: bool = True,
             adapt_first: bool = True, write_first: bool = False, ignore: bool = True,
             taken: str = "found", count_only: bool = False):
    """The reference plan with one slip. ``lookup``: "own, then alternative" (right), "own
    only", "alternative only" or "alternative, then own"; ``dtype``: whether the dtype is
    compared; ``adapt_first``: shape and dtype checked after the adapter (True, right), on
    the raw file tensor (False), or the shape after it and the dtype before ("shape only"); ``write_first``: the value written before its checks; ``ignore``: whether
    ``adapter.ignores`` is asked; ``taken``: a key counts as taken when "found" (right), when
    "applied" only, or unused is found "by name" (the file keys that are no slot's path);
    ``count_only``: the shape compared by element count, not dimension by dimension."""

    def keys_for(slot, adapter) -> list[str]:
        alt = adapter.alternative_name(slot.name, slot.module_type)
        alt_key = None if alt is None else f"{slot.path.rpartition('.')[0]}.{alt}"
        return {"own, then alternative": [slot.path, alt_key], "own only": [slot.path],
                "alternative only": [alt_key or slot.path],
                "alternative, then own": [alt_key, slot.path]}[lookup]

    def plan(slots, source, adapter):
        result, took = ApplyResult(), set()
        cast_first = adapt_first == "shape only"
        for slot in slots:
            key = next((k for k in keys_for(slot, adapter) if k is not None and k in source),
                       None)
            if key is None:
                result.missing.append(slot.path)
                continue
            if taken == "found":
                took.add(key)
            raw = source[key]
            array = adapter.adapt(raw, slot)
            checked = array if adapt_first else raw
            if write_first:
                result.values[slot.path] = array
            if (checked.size != int(np.prod(slot.shape)) if count_only
                    else checked.shape != slot.shape):
                result.errors.append(ShapeMismatch(slot.path, slot.shape, checked.shape))
            elif dtype and (raw if cast_first else checked).dtype.name != slot.dtype:
                found = (raw if cast_first else checked).dtype.name
                result.errors.append(DTypeMismatch(slot.path, slot.dtype, found))
            else:
                if taken == "applied":
                    took.add(key)
                result.values[slot.path] = array
                result.applied.append(slot.path)
        if taken == "by name":
            took = {slot.path for slot in slots}
        for key in sorted(set(source) - took):
            (result.ignored if ignore and adapter.ignores(key) else result.unused).append(key)
        return result

    return plan


no_dtype_check = _variant(dtype=False)
no_alternative_name = _variant(lookup="own only")
alternative_name_only = _variant(lookup="alternative only")
alternative_name_first = _variant(lookup="alternative, then own")
shape_before_adapter = _variant(adapt_first=False)
dtype_before_adapter = _variant(adapt_first="shape only")
built_before_checked = _variant(write_first=True)
counter_unused = _variant(ignore=False)
unused_by_name = _variant(taken="by name")
taken_only_if_applied = _variant(taken="applied")
shape_by_count = _variant(count_only=True)


#: name → (slip, the verdict kind it gets, the cause whose hint it opens)
PLANTED = {
    "dtype never compared": (no_dtype_check, "check", "dtype"),
    "alternative name never tried": (no_alternative_name, "check", "alternative name"),
    "alternative name only, own name never tried": (alternative_name_only, "check",
                                                     "own name first"),
    "alternative name tried before the own name": (alternative_name_first, "check",
                                                    "alternative name first"),
    "shape compared before the adapter": (shape_before_adapter, "check", "before the adapter"),
    "dtype compared before the adapter": (dtype_before_adapter, "check",
                                          "dtype before the adapter"),
    "value written before its checks": (built_before_checked, "check", "built before checked"),
    "num_batches_tracked counted as unused": (counter_unused, "check", "ignored"),
    "unused found by name": (unused_by_name, "check", "unused by name"),
    "only applied keys counted as taken": (taken_only_if_applied, "check", "taken if failed"),
    "shape compared by element count": (shape_by_count, "check", "same count"),
}


# ----- the checker ----------------------------------------------------------------------------
def _describe(slots, source) -> tuple[str, str]:
    module = ", ".join(f"{s.path} {list(s.shape)}" for s in slots)
    file = ", ".join(f"{k} {a.dtype.name} {list(a.shape)}" for k, a in source.items())
    return module, file


def _case(dims, seed, drop, wide, f64, extra, counter, own=(), both=(),
          half: bool = False, flip: str | None = None) -> dict:
    """``half``: a float16 file, loaded through the chapter's casting adapter; ``flip``: that
    tensor's shape reversed."""
    slots = slots_for(*dims)
    source = file_for(*dims, seed=seed, drop=drop, wide=wide, f64=f64, extra=extra,
                      counter=counter, own=own, both=both, half=half, flip=flip)
    module, file = _describe(slots, source)
    adapter = PyTorchToMinidlAdapter()
    if half:
        adapter = adapter.chain(FloatCastAdapter("float32"))
    return {"module": module, "file": file, "adapter": repr(adapter), "_slots": slots,
            "_source": source, "_adapter": adapter}


_KEYS = ("fc.weight", "fc.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
         "ln.weight", "ln.bias")


def _cases() -> st.SearchStrategy:
    maybe = st.one_of(st.none(), st.sampled_from(_KEYS))
    dims = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4))
    own = st.sampled_from([(), ("bn",), ("ln",), ("bn", "ln")])
    return st.builds(_case, dims, st.integers(0, 1000), maybe, maybe, maybe, st.booleans(),
                     st.booleans(), own, own, st.booleans())


def _fixed_cases() -> list[dict]:
    """Cases always tried first: every planted slip fails on them whatever hypothesis draws."""
    return [_case((3, 2, 4), 0, "ln.bias", "fc.bias", "bn.running_var", True, True),
            _case((2, 2, 2), 1, None, None, None, False, True),
            _case((3, 2, 4), 2, None, None, None, False, True, own=("bn", "ln")),
            _case((3, 2, 4), 3, None, None, None, False, True, both=("bn",)),
            _case((3, 2, 4), 5, None, None, None, False, True, flip="fc.weight"),
            _case((3, 2, 4), 4, None, None, None, False, True, half=True)]


def apply_run(solution, case: dict) -> dict:
    """The reader's plan and minidl's own, on the case's slots and file, with the case's
    adapter (PyTorch's, chained with a float32 cast for a float16 file)."""
    got = solution(case["_slots"], dict(case["_source"]), case["_adapter"])
    want = minidl_plan_apply(case["_slots"], case["_source"], case["_adapter"])
    return {"_got": got, "_want": want}


_LISTS = ("applied", "missing", "errors", "unused", "ignored")


def _names(result, field: str) -> list[str] | None:
    try:
        items = list(getattr(result, field))
    except (AttributeError, TypeError):
        return None
    return sorted(str(item) for item in items)


def _taken_keys(slots, source, adapter) -> dict[str, str]:
    """slot path → the file key it takes (own path first, then the adapter's name)."""
    keys = {}
    for slot in slots:
        alt = adapter.alternative_name(slot.name, slot.module_type)
        alt_key = f"{slot.path.rpartition('.')[0]}.{alt}" if alt is not None else None
        for key in (slot.path, alt_key):
            if key is not None and key in source:
                keys[slot.path] = key
                break
    return keys


def _alt_key(slots, path: str, adapter) -> str | None:
    slot = next(s for s in slots if s.path == path)
    alt = adapter.alternative_name(slot.name, slot.module_type)
    return None if alt is None else f"{path.rpartition('.')[0]}.{alt}"


def _diagnosis(got, want, case: dict) -> str:
    """The slip a wrong list points to, in words the cause tests read."""
    got_applied, got_unused = set(_names(got, "applied") or []), set(_names(got, "unused") or [])
    slots, source, adapter = case["_slots"], case["_source"], case["_adapter"]
    took = _taken_keys(slots, source, adapter)
    dtype_paths = {e.path for e in want.errors if isinstance(e, DTypeMismatch)}
    cast = sorted(e.path for e in getattr(got, "errors", []) if isinstance(e, DTypeMismatch)
                  and e.path in want.applied)
    if cast:
        return (f" {cast[:2]}: DTypeMismatch, yet this case's adapter casts every float "
                "tensor to float32: you compared the file's dtype, before adapter.adapt; "
                "compare the dtype of what the adapter returned.")
    flipped = sorted(e.path for e in want.errors if isinstance(e, ShapeMismatch)
                     and e.path in got_applied)
    if flipped:
        found = next(e for e in want.errors if e.path == flipped[0])
        return (f" {flipped[0]} went to applied, yet after the adapter it is "
                f"{list(found.found)}, the slot {list(found.expected)}: as many elements, "
                "another shape. A check of the element count lets it through, and the "
                "model then computes with a scrambled weight, silently.")
    if dtype_paths & got_applied:
        return (f" {sorted(dtype_paths & got_applied)} went to applied with the file's dtype: "
                "a tensor whose dtype is not the slot's must be an error.")
    own_missing = sorted(set(_names(got, "missing") or []) & got_unused)
    if own_missing:
        return (f" {own_missing} are in the file under the slot's own name, yet the plan "
                "calls them missing and the key unused.")
    both_names = sorted(path for path, key in took.items() if key == path
                        and key in got_unused and (alt := _alt_key(slots, path, adapter))
                        and alt in source and alt not in got_unused)
    if both_names:
        return (f" The file holds {both_names} under the slot's own path and under the "
                "adapter's name too; the plan took the adapter's and left the own one unused.")
    applied_keys = {took[p] for p in want.applied}
    failed = sorted(got_unused & {took[e.path] for e in want.errors if e.path in took})
    if failed and not got_unused & applied_keys:
        return (f" {failed}: each failed its slot's shape or dtype check and is in errors; "
                "its slot still took it, so it is not unused as well.")
    alt_missing = [p for p in (_names(got, "missing") or []) if p in want.applied
                   or any(getattr(e, "path", None) == p for e in want.errors)]
    if alt_missing:
        return (f" {alt_missing} are missing, yet the file holds them under the name the "
                "adapter gives (PyTorch's weight/bias for a norm's gamma/beta).")
    transposed = [str(e) for e in getattr(got, "errors", []) if isinstance(e, ShapeMismatch)
                  and e.path in want.applied]
    if transposed:
        return (f" {transposed[0]}: that is the file's shape before the adapter ran; compare "
                "what the slot will hold.")
    if set(want.ignored) & got_unused:
        return (f" {sorted(set(want.ignored) & got_unused)} has no slot on purpose: it is "
                "what the adapter drops.")
    taken_alt = got_unused - set(want.unused) - set(want.ignored)
    if taken_alt:
        return (f" {sorted(taken_alt)} was taken by a slot (under the adapter's name), so it "
                "is not unused.")
    return ""


def _matches(solution, case, outputs, watch) -> str | None:
    got, want = outputs["_got"], outputs["_want"]
    if not all(hasattr(got, f) for f in _LISTS + ("values",)):
        return (f"plan_apply returned {type(got).__name__}; it returns an ApplyResult "
                "(applied, missing, errors, unused, ignored, values)")
    for field in _LISTS:
        if _names(got, field) != _names(want, field):
            return (f"result.{field} is {_names(got, field)}; minidl's plan gives "
                    f"{_names(want, field)}." + _diagnosis(got, want, case))
    values = dict(got.values)
    if sorted(values) != sorted(want.values):
        extra = sorted(set(values) - set(want.values))
        text = f"result.values holds {sorted(values)}; it should hold {sorted(want.values)}."
        if extra:
            text += (f" {extra} failed a check, yet its value is ready to be built: a "
                     "half-applied load.")
        return text
    for path, array in want.values.items():
        mine = np.asarray(values[path])
        if mine.shape != array.shape or mine.dtype != array.dtype or not np.array_equal(
                mine, array):
            return (f"result.values[{path!r}] is not the adapted file tensor: "
                    f"{mine.dtype.name} {list(mine.shape)} vs {array.dtype.name} "
                    f"{list(array.shape)}.")
    return None


def _cause(*needles: str):
    return lambda verdict: all(n in verdict.text for n in needles)


HINTS = {
    "dtype": [
        "The file's bn.running_var is float64, the slot's float32. After the shape, "
        "compare array.dtype.name with slot.dtype.",
    ],
    "alternative name": [
        "A norm's slot is gamma, PyTorch's file says weight. When the slot's own path is "
        "not in the file, ask adapter.alternative_name(slot.name, slot.module_type).",
    ],
    "own name first": [
        "A file saved by minidl already says bn.gamma. Look the slot's own path up first; "
        "only when it is absent try adapter.alternative_name(slot.name, slot.module_type).",
    ],
    "alternative name first": [
        "This file holds bn.gamma and bn.weight. The slot's own path wins; the alternative "
        "name is tried only when the own path is not in the file.",
    ],
    "before the adapter": [
        "PyTorch stores a Linear weight [out, in]; the slot holds [in, out]. Run "
        "adapter.adapt(array, slot) first, then compare the shape.",
    ],
    "dtype before the adapter": [
        "An adapter may change the dtype (FloatCastAdapter casts float16 to float32): "
        "check the shape and the dtype of adapter.adapt(array, slot), not of the file's "
        "array.",
    ],
    "built before checked": [
        "Write result.values[slot.path] only after the shape and dtype checks passed: "
        "values is what the store builds.",
    ],
    "ignored": [
        "A file key no slot took is unused unless adapter.ignores(key) says the adapter "
        "drops it on purpose (PyTorch's step counter): then it is ignored.",
    ],
    "taken if failed": [
        "A key a slot took stays taken even when its shape or dtype check fails: add it to "
        "the taken set as soon as the slot finds it, before the checks.",
    ],
    "same count": [
        "Compare the whole shape, array.shape != slot.shape, not the number of elements: "
        "[2, 3] and [3, 2] hold six each, and a Linear weight read the wrong way round "
        "is exactly that.",
    ],
    "unused by name": [
        "Keep the set of file keys the slots took (under whichever name they were found); "
        "the unused ones are the rest.",
    ],
}

_CAUSES = [
    ("dtype", _cause("with the file's dtype")),
    ("alternative name first", _cause("left the own one unused")),
    ("own name first", _cause("under the slot's own name")),
    ("alternative name", _cause("under the name the adapter gives")),
    ("dtype before the adapter", _cause("before adapter.adapt")),
    ("before the adapter", _cause("before the adapter ran")),
    ("built before checked", _cause("half-applied")),
    ("ignored", _cause("what the adapter drops")),
    ("taken if failed", _cause("not unused as well")),
    ("unused by name", _cause("so it is not unused")),
    ("same count", _cause("as many elements, another shape")),
]


def exercise(max_examples: int = 8) -> CauseHints:
    """The checker for the reader's ``plan_apply(slots, source, adapter) -> ApplyResult``."""
    return CauseHints(
        "the load's plan: match, adapt, check, sort",
        cases=_cases(),
        run=apply_run,
        references=[],
        checks=[_matches],
        hints=["Go slot by slot: find its tensor, adapt it, check shape then dtype; then "
               "sort the file keys no slot took."],
        causes=[(name, test, HINTS[name]) for name, test in _CAUSES],
        reference_solution=plan_apply,
        examples=_fixed_cases(),
        max_examples=max_examples,
        order=("module", "file", "adapter"),
    )
