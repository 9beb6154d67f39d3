"""The build-exercise checker itself: verdicts name the first difference, the broken rule and
the reader's line; exceptions stop at the reader's frame; the hint ladder opens one by one."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Tensor
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.harness import is_placeholder, tensor_call
from minidl_book.reader_code import numpy_uses


def _vectors():
    return st.integers(1, 5).flatmap(lambda n: st.fixed_dictionaries(
        {"a": st.lists(st.integers(-3, 3), min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype=np.float32))}))


def _square_exercise(**kw) -> BuildExercise:
    return BuildExercise(
        "square",
        cases=_vectors(),
        run=tensor_call(["a"]),
        references=[Reference("PyTorch", lambda c: {"out": torch.from_numpy(c["a"]) ** 2})],
        hints=["first", "second"],
        max_examples=10,
        **kw,
    )


def square_right(a: Tensor) -> Tensor:
    return a * a


def square_off_by_one_at_the_end(a: Tensor) -> Tensor:
    bump = Tensor.arange(0, a.shape[0], device=a.device) == a.shape[0] - 1
    return (a * a).mask_fill(bump, 100.0)


def square_raises(a: Tensor) -> Tensor:
    b = a.reshape([a.shape[0], 1])
    return b @ a  # a rank-1 rhs: the library refuses it


def test_right_solution_passes_and_says_so(capsys):
    verdict = _square_exercise().check(square_right)
    assert verdict.ok and verdict.kind == "ok"
    assert "every case passed" in capsys.readouterr().out


def test_value_verdict_names_the_first_differing_element_and_the_reference():
    verdict = _square_exercise().find_failure(square_off_by_one_at_the_end)
    assert verdict.kind == "value"
    n = len(verdict.inputs.split("[", 2)[1].split("]")[0].split(","))  # a = f32[n] [...]
    assert verdict.index == (n - 1,)
    assert verdict.found == 100.0 and verdict.expected != 100.0
    assert f"out[{n - 1}]: expected" in verdict.text and "(PyTorch), found 100" in verdict.text
    assert verdict.inputs.startswith("a = f32[")


def test_exception_is_reported_at_the_readers_line_without_a_traceback():
    verdict = _square_exercise().find_failure(square_raises)
    assert verdict.kind == "error"
    assert "return b @ a" in verdict.text and "square_raises" in verdict.text
    assert "Traceback" not in verdict.render() and 'File "' not in verdict.render()
    assert "raised inside minidl" in verdict.text  # the library's clear error, not ours


def test_hint_ladder_opens_one_hint_per_failed_check(capsys):
    ex = _square_exercise()
    first = ex.check(square_off_by_one_at_the_end)
    second = ex.check(square_off_by_one_at_the_end)
    third = ex.check(square_off_by_one_at_the_end)
    assert first.hints == ["first"] and second.hints == ["first", "second"]
    assert third.hints == ["first", "second"]
    out = capsys.readouterr().out
    assert "Hint 1 of 2: first" in out and "another hint opens" in out


def test_hints_tied_to_a_kind_open_for_that_kind_of_failure_only(capsys):
    for form in ({"rule": "rule hint", "value": ["value 1", "value 2"], "*": "any"},
                 [("rule", "rule hint"), ("value", "value 1"), (("value", "shape"), "value 2"), "any"]):
        ex = BuildExercise("square", cases=_vectors(), run=tensor_call(["a"]),
                           references=[Reference("PyTorch", lambda c: {"out": torch.from_numpy(c["a"]) ** 2})],
                           hints=form, max_examples=5)
        first = ex.check(square_off_by_one_at_the_end)
        second = ex.check(square_off_by_one_at_the_end)
        assert first.hints == ["value 1"], first.hints  # the rule hint is skipped: no rule broke
        assert second.hints == ["value 1", "value 2"]
        assert "Hint 2 of 3: value 2" in capsys.readouterr().out


def test_a_verdict_printed_on_its_own_never_says_hint_1_of_0():
    verdict = _square_exercise().find_failure(square_off_by_one_at_the_end)
    verdict.hints = ["look at the last element"]
    assert "Hint 1 of 1" in str(verdict) and "of 0" not in str(verdict)
    no_hints = BuildExercise("square", cases=_vectors(), run=tensor_call(["a"]),
                             references=[Reference("PyTorch", lambda c: {"out": torch.from_numpy(c["a"]) ** 2})],
                             max_examples=5)
    assert "Hint" not in str(no_hints.check(square_off_by_one_at_the_end))


def test_placeholder_and_ellipsis_only_ask_for_a_solution(capsys):
    def unfinished(a):
        ...  # your code here

    assert is_placeholder(unfinished) and not is_placeholder(square_right)
    ex = _square_exercise()
    assert ex.check(unfinished).kind == "todo" and ex.check(...).kind == "todo"
    assert ex.attempts == 0
    assert "Write your solution first" in capsys.readouterr().out


def test_rules_forbid_an_op_and_name_the_call():
    ex = _square_exercise(rules=Rules(allowed=["__add__"]))
    verdict = ex.find_failure(square_right)
    assert verdict.kind == "rule" and verdict.rule == "allowed ops (not __mul__)"
    assert "* is not an allowed op" in verdict.text and "`return a * a`" in verdict.text


def test_must_reach_fails_when_the_call_never_happens():
    ex = _square_exercise(rules=Rules(must_reach={r"^Tensor\.powi_scalar$": "call powi_scalar"}))
    verdict = ex.find_failure(square_right)
    assert verdict.kind == "rule" and "must call powi_scalar" in verdict.text


def test_numpy_names_in_the_readers_code_are_found_with_their_line():
    def uses_numpy(a):
        return Tensor.from_numpy(np.square(a.to_numpy()), a.device)

    uses = numpy_uses(uses_numpy)
    assert uses and uses[0][0] == "np.square (NumPy)" and "np.square(a.to_numpy())" in uses[0][1]
    assert numpy_uses(square_right) == []


def test_verdict_repr_is_short_because_check_already_printed_the_text():
    verdict = _square_exercise().find_failure(square_off_by_one_at_the_end)
    assert repr(verdict) == "Verdict(ok=False, kind='value')" and not verdict


def test_a_failure_that_does_not_replay_is_still_reported():
    calls = []

    def sometimes(a: Tensor) -> Tensor:  # wrong on the first call only: hypothesis calls it flaky
        calls.append(1)
        return a * a + (1.0 if len(calls) == 1 else 0.0)

    verdict = _square_exercise().find_failure(sometimes)
    assert verdict is not None and verdict.kind == "value"


def test_the_exercise_shows_its_references_and_rules_as_markdown():
    text = _square_exercise(rules=Rules(allowed=["__mul__"], no_data=True))._repr_markdown_()
    assert text.startswith("**Build it.** Square.") and "Checked against: PyTorch" in text
    assert "Allowed Tensor ops: *" in text and "No values out of a tensor" in text
