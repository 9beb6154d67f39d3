"""The storing-and-loading chapter's build-it of the load's plan (``plan_apply``): the reference
passes, a right answer written another way passes too, each planted slip gets its verdict kind
and the first hint of its own cause, and the reader's result is compared with minidl's own
``plan_apply`` list by list, in any order."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.store.applier import ApplyResult
from minidl.store.errors import DTypeMismatch, ShapeMismatch
from minidl_book import build_apply as ba


def test_reference_passes():
    assert ba.exercise(8).find_failure(ba.plan_apply) is None


def test_another_right_answer_passes():
    """Unused keys listed first, errors kept in a dict: the order of the lists is free."""
    def other(slots, source, adapter):
        by_path = {s.path: s for s in slots}
        found = {}
        for slot in slots:
            alt = adapter.alternative_name(slot.name, slot.module_type)
            names = [slot.path] + ([slot.path.rsplit(".", 1)[0] + "." + alt] if alt else [])
            hit = next((n for n in names if n in source), None)
            if hit is not None:
                found[slot.path] = hit
        result = ApplyResult()
        rest = [k for k in source if k not in set(found.values())]
        result.ignored = [k for k in rest if adapter.ignores(k)]
        result.unused = [k for k in reversed(rest) if not adapter.ignores(k)]
        result.missing = [p for p in reversed(list(by_path)) if p not in found]
        for path, key in found.items():
            slot = by_path[path]
            array = adapter.adapt(source[key], slot)
            if tuple(array.shape) != tuple(slot.shape):
                result.errors.append(ShapeMismatch(path, slot.shape, array.shape))
            elif str(array.dtype) != slot.dtype:
                result.errors.append(DTypeMismatch(path, slot.dtype, str(array.dtype)))
            else:
                result.values[path] = array
                result.applied.append(path)
        return result

    assert ba.exercise(8).find_failure(other) is None


@pytest.mark.parametrize("name", sorted(ba.PLANTED))
def test_planted_slip_gets_its_kind_and_its_own_hint(name):
    slip, kind, cause = ba.PLANTED[name]
    ex = ba.exercise(4)
    verdict = ex.check(slip)
    assert verdict.kind == kind and ex.cause == cause, (verdict.render(), ex.cause)
    assert verdict.hints == [ba.HINTS[cause][0]]
    assert "Traceback" not in verdict.render()


def test_a_result_that_is_not_an_apply_result_is_named():
    verdict = ba.exercise(2).find_failure(lambda slots, source, adapter: {})
    assert verdict is not None and "it returns an ApplyResult" in verdict.text


def test_a_file_in_minidls_own_names_is_always_tried():
    """A plan that only ever looks a norm up under PyTorch's name reports bn.gamma missing
    on a file saved by minidl: the fixed cases hold such a file, so it cannot pass."""
    cases = ba._fixed_cases()
    assert any("bn.gamma" in case["_source"] for case in cases)
    verdict = ba.exercise(0).check(ba.alternative_name_only)
    assert verdict.kind == "check" and "under the slot's own name" in verdict.text


def test_a_file_holding_both_names_refuses_the_alternative_first():
    """A plan that tries the adapter's name first and falls back to the slot's own path
    passes every file that holds only one of them; a fixed case holds both bn.gamma and
    bn.weight (different values), where it takes bn.weight and leaves bn.gamma unused."""
    cases = ba._fixed_cases()
    assert any({"bn.gamma", "bn.weight"} <= set(case["_source"]) for case in cases)
    verdict = ba.exercise(0).check(ba.alternative_name_first)
    assert verdict.kind == "check" and "left the own one unused" in verdict.text


def test_a_key_whose_check_failed_stays_taken():
    """A plan that marks a key taken only when its slot's checks pass lists fc.bias (one
    wider than the slot) as an error and as unused. The verdict says so: the file does not
    hold it under two names (the alternative-first diagnosis used to fire here)."""
    verdict = ba.exercise(0).check(ba.taken_only_if_applied)
    assert verdict.kind == "check" and "not unused as well" in verdict.text, verdict.text
    assert "under the adapter's name too" not in verdict.text
    assert verdict.hints == [ba.HINTS["taken if failed"][0]]


def _dtype_of_the_file(slots, source, adapter):
    """A reader's plan: shape checked on the adapted array, dtype on the file's."""
    result, taken = ApplyResult(), set()
    for slot in slots:
        key = slot.path
        alt = adapter.alternative_name(slot.name, slot.module_type)
        if key not in source and alt is not None:
            key = f"{slot.path.rpartition('.')[0]}.{alt}"
        if key not in source:
            result.missing.append(slot.path)
            continue
        taken.add(key)
        if source[key].dtype.name != slot.dtype:  # before the adapter: the slip
            result.errors.append(DTypeMismatch(slot.path, slot.dtype, source[key].dtype.name))
            continue
        array = adapter.adapt(source[key], slot)
        if array.shape != slot.shape:
            result.errors.append(ShapeMismatch(slot.path, slot.shape, array.shape))
        else:
            result.values[slot.path] = array
            result.applied.append(slot.path)
    for key in set(source) - taken:
        (result.ignored if adapter.ignores(key) else result.unused).append(key)
    return result


def test_the_dtype_checked_before_a_casting_adapter_is_refused():
    """A reader's report: the float16 file through the chapter's casting adapter applies
    nothing with the file's dtype compared; the fixed cases catch it, with its own hint."""
    case = ba._fixed_cases()[-1]
    assert "FloatCastAdapter('float32')" in case["adapter"]
    assert len(ba.plan_apply(case["_slots"], case["_source"], case["_adapter"]).applied) == 8
    assert not _dtype_of_the_file(case["_slots"], case["_source"], case["_adapter"]).applied
    ex = ba.exercise(0)
    verdict = ex.check(_dtype_of_the_file)
    assert verdict.kind == "check" and ex.cause == "dtype before the adapter", verdict.render()
    assert "before adapter.adapt" in verdict.text
    assert verdict.hints == [ba.HINTS["dtype before the adapter"][0]]


def test_a_casting_adapter_case_passes_the_reference_and_a_right_answer():
    case = ba._fixed_cases()[-1]
    out = ba.apply_run(ba.plan_apply, case)
    assert out["_got"].applied == out["_want"].applied and not out["_want"].errors
    assert all(v.dtype.name == "float32" for v in out["_want"].values.values())


def _shape_by_count(slots, source, adapter):
    """A reader's plausible slip (read3-store): the shape compared by element count."""
    result, taken = ApplyResult(), set()
    for slot in slots:
        key = slot.path
        alt = adapter.alternative_name(slot.name, slot.module_type)
        if key not in source and alt is not None:
            key = f"{slot.path.rpartition('.')[0]}.{alt}"
        if key not in source:
            result.missing.append(slot.path)
            continue
        taken.add(key)
        array = adapter.adapt(source[key], slot)
        if array.size != np.prod(slot.shape):
            result.errors.append(ShapeMismatch(slot.path, slot.shape, array.shape))
        elif array.dtype.name != slot.dtype:
            result.errors.append(DTypeMismatch(slot.path, slot.dtype, array.dtype.name))
        else:
            result.values[slot.path] = array.reshape(slot.shape)
            result.applied.append(slot.path)
    for key in sorted(set(source) - taken):
        (result.ignored if adapter.ignores(key) else result.unused).append(key)
    return result


def test_a_count_only_shape_check_is_refused_with_its_own_hint():
    """A file's Linear weight already [in, out]: after the transpose it has the slot's
    element count in another shape, the silent LinearLayout.Col trap."""
    case = next(c for c in ba._fixed_cases() if "fc.weight float32 [3, 2]" in c["file"])
    want = ba.plan_apply(case["_slots"], case["_source"], case["_adapter"])
    assert [e.path for e in want.errors] == ["fc.weight"]
    ex = ba.exercise(0)
    verdict = ex.check(_shape_by_count)
    assert verdict.kind == "check" and ex.cause == "same count", verdict.render()
    assert "as many elements, another shape" in verdict.text
    assert ex.check(ba.plan_apply).kind == "ok"
