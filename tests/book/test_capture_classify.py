"""The capture chapter's classify build-it: host-made arrays are refused, messages are read
case-insensitively."""

from __future__ import annotations

from minidl.capture import CaptureError
from minidl_book import build_guard


def test_the_explicit_host_array_examples_are_refusals():
    for case in build_guard.HOST_ARRAY_EXAMPLES:
        try:
            build_guard.classify(case["run1"], case["run2"], case["inputs"])
        except CaptureError as err:
            assert "read" in str(err)
        else:
            raise AssertionError("a host array changed in run 2 must be refused")


def test_wrong_host_array_classifiers_get_a_specific_verdict():
    for name in ("a changed host array is a constant", "any unmatched array is state"):
        wrong, kind = build_guard.CLASSIFY_PLANTED[name]
        verdict = build_guard.classify_exercise(max_examples=10).find_failure(wrong)
        assert verdict is not None and verdict.kind == kind, (name, verdict)
        assert "no call of run 1 made" in verdict.render(), verdict.render()


def test_a_refusal_naming_call_with_a_capital_passes():
    def capital(run1, run2, inputs):
        made1 = {c["makes"] for c in run1}
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
                elif array == old:
                    kinds[array] = "constant"
                else:
                    raise CaptureError(f"Call {i} read an array made on the host")
            made2.add(call["makes"])
        return kinds

    assert build_guard.classify_exercise(max_examples=10).find_failure(capital) is None
