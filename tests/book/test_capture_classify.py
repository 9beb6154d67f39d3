"""The capture chapter's classify build-it: host-made arrays are refused, messages are read
case-insensitively."""

from __future__ import annotations

from minidl.capture import CaptureError
from minidl_book import build_guard


def test_the_explicit_host_array_examples():
    """A new host array is refused unless its values equal run 1's (minidl's program.py takes
    that as a constant); a constant read where run 1 read another array is refused."""
    verdicts = []
    for case in build_guard.HOST_ARRAY_EXAMPLES:
        try:
            build_guard.classify(case["run1"], case["run2"], case["inputs"],
                                 build_guard._equal(case))
        except CaptureError as err:
            assert "read" in str(err)
            verdicts.append("refused")
        else:
            verdicts.append("captured")
    assert verdicts == ["refused", "captured", "refused", "refused"]


def test_a_constant_read_at_another_call_is_caught():
    wrong, kind = build_guard.CLASSIFY_PLANTED["a constant read at another call"]
    verdict = build_guard.classify_exercise(max_examples=10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "another call does not count" in verdict.render(), verdict.render()


def test_an_equal_copy_refused_is_caught():
    wrong, kind = build_guard.CLASSIFY_PLANTED["an equal copy refused"]
    verdict = build_guard.classify_exercise(max_examples=10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "same values" in verdict.render(), verdict.render()


def test_every_planted_classifier_fails_and_the_reference_passes():
    ex = build_guard.classify_exercise(max_examples=30)
    for name, (wrong, kind) in build_guard.CLASSIFY_PLANTED.items():
        verdict = ex.find_failure(wrong)
        assert verdict is not None and verdict.kind == kind, (name, verdict)
    assert ex.find_failure(build_guard.classify) is None


def test_wrong_host_array_classifiers_get_a_specific_verdict():
    for name in ("a changed host array is a constant", "any unmatched array is state"):
        wrong, kind = build_guard.CLASSIFY_PLANTED[name]
        verdict = build_guard.classify_exercise(max_examples=10).find_failure(wrong)
        assert verdict is not None and verdict.kind == kind, (name, verdict)
        assert "no call of run 1 made" in verdict.render(), verdict.render()


def test_a_refusal_naming_call_with_a_capital_passes():
    def capital(run1, run2, inputs, equal):
        made1 = {a for c in run1 for a in c["makes"]}
        made2 = set()
        kinds = {}
        for i, (before, call) in enumerate(zip(run1, run2)):
            if call["number"] != before["number"]:
                raise CaptureError(f"Call {i} got another host number")
            for old, array in zip(before["reads"], call["reads"]):
                if array in made2:
                    kinds[array] = "temporary"
                elif array in inputs:
                    kinds[array] = "input"
                elif array in made1:
                    kinds[array] = "state"
                elif array == old or equal(old, array):
                    kinds[array] = "constant"
                else:
                    raise CaptureError(f"Call {i} read an array made on the host")
            made2.update(call["makes"])
        return kinds

    assert build_guard.classify_exercise(max_examples=10).find_failure(capital) is None


def test_a_weight_unchanged_at_lr_0_is_still_state():
    """At lr 0 run 2's weight has run 1's values; minidl (program.py) tests "made by the
    previous run" first, so a classify that tests equal values first must be refused."""
    case = build_guard.WEIGHT_UNCHANGED
    kinds = build_guard.classify(case["run1"], case["run2"], case["inputs"],
                                 build_guard._equal(case))
    assert sorted(kinds.values()).count("state") == 1
    wrong, kind = build_guard.CLASSIFY_PLANTED["constant tested before state"]
    verdict = build_guard.classify_exercise(max_examples=10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "made by run 1" in verdict.render(), verdict.render()



def _hash_numbered(run1, run2, inputs, equal):
    """A right classify whose refusals name the call as "call #i"."""
    made1 = {a for c in run1 for a in c["makes"]}
    made2 = set()
    kinds = {}
    for i, (before, call) in enumerate(zip(run1, run2)):
        if call["number"] != before["number"]:
            raise CaptureError(f"call #{i} got another host number")
        for old, array in zip(before["reads"], call["reads"]):
            if array in made2:
                kinds[array] = "temporary"
            elif array in inputs:
                kinds[array] = "input"
            elif array in made1:
                kinds[array] = "state"
            elif array == old or equal(old, array):
                kinds[array] = "constant"
            else:
                raise CaptureError(f"call #{i} read an array made on the host")
        made2.update(call["makes"])
    return kinds


def test_a_refusal_naming_call_hash_i_passes():
    assert build_guard.classify_exercise(max_examples=10).find_failure(_hash_numbered) is None


def test_a_refusal_naming_another_call_is_still_refused():
    def off_by_one(run1, run2, inputs, equal):
        made1 = {a for c in run1 for a in c["makes"]}
        made2 = set()
        kinds = {}
        for i, (before, call) in enumerate(zip(run1, run2)):
            if call["number"] != before["number"]:
                raise CaptureError(f"call #{i + 1} got another host number")
            for old, array in zip(before["reads"], call["reads"]):
                if array in made2:
                    kinds[array] = "temporary"
                elif array in inputs:
                    kinds[array] = "input"
                elif array in made1:
                    kinds[array] = "state"
                elif array == old or equal(old, array):
                    kinds[array] = "constant"
                else:
                    raise CaptureError(f"call #{i + 1} read an array made on the host")
            made2.update(call["makes"])
        return kinds

    verdict = build_guard.classify_exercise(max_examples=10).find_failure(off_by_one)
    assert verdict is not None and "does not name" in verdict.render(), verdict.render()


def _first_made_only(skip_queries: bool):
    """A classify reading only makes[0] (the reader's slip), optionally skipping queries."""
    def classify(run1, run2, inputs, equal):
        made1 = {c["makes"][0] for c in run1 if c["makes"] or not skip_queries}
        made2, kinds = set(), {}
        for i, (c1, c2) in enumerate(zip(run1, run2)):
            if c1["number"] != c2["number"]:
                raise CaptureError(f"call {i}: numbers differ")
            for old, a in zip(c1["reads"], c2["reads"]):
                if a in made2:
                    kinds[a] = "temporary"
                elif a in inputs:
                    kinds[a] = "input"
                elif a in made1:
                    kinds[a] = "state"
                elif a == old or equal(old, a):
                    kinds[a] = "constant"
                else:
                    raise CaptureError(f"call {i} read {old}, then {a}")
            if c2["makes"] or not skip_queries:
                made2.add(c2["makes"][0])
        return kinds
    return classify


def test_the_query_and_pair_case_refuses_a_makes0_classify():
    ex = build_guard.classify_exercise(max_examples=5)
    assert ex.find_failure(build_guard.classify) is None
    crash = ex.find_failure(_first_made_only(skip_queries=False))
    assert crash is not None and "IndexError" in crash.render(), crash
    assert 'c2["makes"][0]' in crash.render() or 'c["makes"][0]' in crash.render()
    pair = ex.find_failure(_first_made_only(skip_queries=True))
    assert pair is not None and "makes two arrays" in pair.render(), pair.render()
    assert "not only the first" in pair.render()
