"""minidl_book: the exercise checker and the side-by-side printer of burn's experiments."""

from __future__ import annotations

import io

import numpy as np
import pytest

from minidl_book import Exercise, max_abs_diff, report

# -- Exercise ------------------------------------------------------------------------------


def test_placeholder_prediction_asks_for_one_without_running_the_experiment(capsys):
    ran = []
    ex = Exercise("q?", truth=lambda: ran.append(1) or 3)
    assert ex.check(...) is False
    assert ex.check() is False
    assert "write your prediction first" in capsys.readouterr().out.lower()
    assert ran == []


def test_right_prediction_prints_a_tick(capsys):
    ex = Exercise("1 + 1?", truth=lambda: 1 + 1)
    assert ex.check(2) is True
    out = capsys.readouterr().out
    assert out.startswith("✓") and "Hint" not in out


def test_wrong_prediction_gives_the_hint_but_never_the_answer(capsys):
    ex = Exercise("6 * 7?", truth=lambda: 6 * 7, hint="multiply")
    assert ex.check(41) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and "Hint: multiply" in out
    assert "42" not in out


def test_truth_runs_live_at_every_check():
    state = {"v": 1}
    ex = Exercise("current value?", truth=lambda: state["v"])
    assert ex.check(1)
    state["v"] = 2  # the library changed: the stored prediction is now wrong
    assert not ex.check(1)
    assert ex.check(2)


def test_close_compare_uses_tolerances():
    ex = Exercise("1/sqrt(256)?", truth=lambda: 1 / np.sqrt(256), compare="close", rtol=1e-3)
    assert ex.check(0.0625) and ex.check(0.06251)
    assert not ex.check(0.063)
    assert not ex.check("a sixteenth")  # a prediction of the wrong kind is just wrong
    arr = Exercise("a", truth=lambda: np.array([1.0, 2.0]), compare="close", atol=0.1)
    assert arr.check([1.05, 1.95]) and not arr.check([1.0, 2.0, 3.0])


def test_exact_compare_treats_lists_tuples_and_arrays_alike():
    assert Exercise("shape?", truth=lambda: (2, 3)).check([2, 3])
    assert Exercise("shape?", truth=lambda: np.zeros((2, 3)).shape).check((2, 3))
    assert Exercise("mask?", truth=lambda: np.array([1, 0])).check([1, 0])
    assert not Exercise("mask?", truth=lambda: np.array([1, 0])).check([1, 0, 0])
    assert Exercise("name?", truth=lambda: "Dispatch").check(" Dispatch ")
    assert not Exercise("n?", truth=lambda: np.int64(5)).check(4)


def test_a_number_typed_as_text_is_the_same_answer():
    """Readers type "10" as often as 10; a number with thousands commas or as a fraction is
    the same answer too, while words, malformed groupings and other numbers are not."""
    ex = Exercise("q", truth=lambda: 24576)
    assert all(ex.accepts(a) for a in ("24576", " 24,576 ", "24576.0", "24_576"))
    assert not any(ex.accepts(a) for a in ("24575", "2,4576", "many", "24,5760"))
    spelled = ("24 576", "24\u202f576", "24576 bytes", "24,576 B", "24576B")
    assert all(ex.accepts(a) for a in spelled)
    assert not any(ex.accepts(a) for a in ("24 5760", "2 4576", "24576 24576", "bytes"))
    assert Exercise("q", truth=lambda: 3).accepts("three") and Exercise("q", truth=lambda: 3).accepts("3 ops")
    assert not Exercise("q", truth=lambda: 3).accepts("four")
    two = Exercise("how many?", truth=lambda: 2)  # a number, then why: as "6 ops" is accepted
    assert all(two.accepts(a) for a in ("2: the first and the third", "2 (the first, third)",
                                        "2 — first and third", "2 searches: first and third"))
    assert not any(two.accepts(a) for a in ("2: 1 or 3", "2 (or 3)", "3: the first and third",
                                            "2: not the third", "2 - 1"))
    shape = Exercise("which shape?", truth=lambda: (2, 3, 4))
    assert all(shape.accepts(a) for a in ("(2, 3, 4)", "[2,3,4]", "2, 3, 4", "2x3x4"))
    assert not any(shape.accepts(a) for a in ("(2, 3)", "(2, 1, 4)", "234", "2.3.4"))
    assert Exercise("tile?", truth=lambda: (6, 16)).accepts("6 × 16")
    pair = Exercise("one op, two ops?", truth=lambda: (2050.0, 2048.0))
    assert all(pair.accepts(a) for a in ("2050 and 2048", "2050, and 2048", "2050; 2048"))
    assert not any(pair.accepts(a) for a in ("2048 and 2050", "2050 and", "2050 band 2048"))
    assert Exercise("pair?", truth=lambda: (True, "train")).accepts("yes, Train")
    hits = Exercise("how many times?", truth=lambda: 0)
    assert all(hits.accepts(a) for a in ("never", "zero times", "None", "0 hits"))
    assert not any(hits.accepts(a) for a in ("once", "one time", "always", "three 4"))
    ratio = Exercise("q", truth=lambda: 4 / 3, compare="close", rtol=1e-3)
    assert ratio.accepts("4/3") and ratio.accepts("1.3333")
    assert not ratio.accepts("5/4") and not ratio.accepts("4/0")


def test_a_fraction_object_is_the_number_it_holds():
    """Fraction(4, 3) is the answer "4/3" already reads as; refused before as not plain."""
    from fractions import Fraction

    ratio = Exercise("q", truth=lambda: 4 / 3, compare="close", rtol=1e-3)
    assert ratio.accepts(Fraction(4, 3)) and not ratio.accepts(Fraction(5, 4))
    assert Exercise("q", truth=lambda: 2).accepts(Fraction(4, 2))
    custom = Exercise("q", truth=lambda: 4 / 3, compare=lambda p, t: abs(p - t) < 1e-3)
    assert custom.accepts(Fraction(4, 3))


def test_custom_compare():
    ex = Exercise("sign?", truth=lambda: -3.0, compare=lambda p, t: np.sign(p) == np.sign(t))
    assert ex.check(-1) and not ex.check(1)


def test_solution_prints_the_live_answer_and_explanation(capsys):
    ex = Exercise("q", truth=lambda: 0.0625, explanation="because 1/16")
    assert ex.solution() == 0.0625
    out = capsys.readouterr().out
    assert "0.0625" in out and "because 1/16" in out


def test_truth_must_be_callable_and_compare_known():
    with pytest.raises(TypeError, match="callable"):
        Exercise("q", truth=42)  # a stored answer is not allowed
    with pytest.raises(ValueError, match="compare"):
        Exercise("q", truth=lambda: 1, compare="roughly")


def test_question_displays_as_markdown():
    assert "Think about it" in Exercise("Why?", truth=lambda: 1)._repr_markdown_()


# -- report --------------------------------------------------------------------------------


def test_report_prints_the_seed_format_and_returns_the_worst():
    buf = io.StringIO()
    a = np.zeros((4, 3), np.float32)
    worst = report(
        {
            "train_out": (a, a + np.float32(1.19e-07)),
            "running_mean_1": ([0.0, 1.0, 2.0], (0.0, 1.0, 2.0)),
        },
        tol=1e-6,
        file=buf,
    )
    lines = buf.getvalue().splitlines()
    assert lines[0] == "train_out                n= 12  max|diff|=1.19e-07"
    assert lines[1] == "running_mean_1           n=  3  max|diff|=0.00e+00"
    assert lines[2] == "worst=1.19e-07 tol=1e-06 OK"
    assert worst == pytest.approx(1.19e-07, rel=1e-3)


def test_report_says_mismatch_above_tolerance(capsys):
    worst = report({"running_var_1": ([1.1665], [1.0999])}, tol=1e-6)
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "worst=6.66e-02 tol=1e-06 MISMATCH"
    assert worst == pytest.approx(0.0666)


def test_report_accepts_torch_tensors():
    import torch
    t = torch.ones(2, 3, requires_grad=True) * 2
    buf = io.StringIO()
    assert report({"x": (t, np.full((2, 3), 2.0))}, file=buf) == 0.0
    assert buf.getvalue().startswith("x                        n=  6  max|diff|=0.00e+00")


def test_shape_mismatch_and_nan_count_as_infinite():
    buf = io.StringIO()
    assert report({"y": (np.zeros(3), np.zeros(4))}, file=buf) == float("inf")
    assert "shapes (3,) vs (4,)" in buf.getvalue() and buf.getvalue().endswith("MISMATCH\n")
    assert max_abs_diff([np.nan, 1.0], [np.nan, 1.0]) == 0.0
    assert max_abs_diff([np.nan], [1.0]) == float("inf")
    assert max_abs_diff([np.inf], [np.inf]) == 0.0
