"""The train-and-inference chapter's answer readers: a (zeros, moves) pair typed as one
string is read as the pair, and a Fraction is the number it holds."""

from __future__ import annotations

from fractions import Fraction

import pytest

from minidl_book import modes
from minidl_book.exercises import Exercise
from minidl_book.modes import PairExercise, close_number


def test_a_pair_written_as_one_string_is_the_pair():
    ex = PairExercise("zeros and moves?", truth=lambda: (4000, True))
    for right in ("4000, True", "(3900, yes)", "[4000; true]", (4000, "True"), "4000 yes",
                  "4000 True", "about 4000 moves"):
        assert ex.accepts(right), right
    for wrong in ("4000, False", "0, True", "4000 no", "4000, True, 1"):
        assert not ex.accepts(wrong), wrong


def test_the_count_is_judged_around_the_reasoned_count_not_the_measured_one():
    """Measured 4034: 3600 is within 400 of p * n = 4000, the count a reader reasons to."""
    ex = PairExercise("zeros and moves?", truth=lambda: (4034, True), centre=4000)
    assert ex.accepts((3600, True)) and ex.accepts("4400, yes")
    assert not ex.accepts((4434, True)) and not ex.accepts((3590, True))


def test_a_non_pair_gets_a_plain_message(capsys):
    ex = PairExercise("zeros and moves?", truth=lambda: (4000, True))
    assert not ex.check(4000)
    out = capsys.readouterr().out
    assert "not a pair" in out and "TypeError" not in out


def test_a_fraction_is_read_as_the_ratio_it_holds():
    ex = Exercise("ratio?", truth=lambda: 4 / 3, compare=close_number(atol=5e-3))
    assert ex.accepts(Fraction(4, 3)) and ex.accepts("4/3")
    assert ex.accepts("n/(n-1) = 4/3") and ex.accepts("4:3")
    assert not ex.accepts(Fraction(5, 4)) and not ex.accepts("n/(n-1) = 5/4")


def test_a_number_word_is_the_number_and_a_hedged_count_is_read():
    from minidl_book.modes import same_int

    ex = Exercise("how many?", truth=lambda: 1, compare=same_int)
    assert ex.accepts("one") and ex.accepts("1") and not ex.accepts("two")
    pair = PairExercise("zeros and moves?", truth=lambda: (4000, True))
    assert pair.accepts("about 4000, yes") and pair.accepts("~3900, True")


def test_an_unreadable_count_says_so(capsys):
    ex = PairExercise("zeros and moves?", truth=lambda: (4000, True))
    assert not ex.check("lots, yes")
    out = capsys.readouterr().out
    assert "Could not read" in out and "zero count is not a number" in out
    assert "Not quite" not in out and "count is not right" not in out


def test_the_ratio_is_read_as_a_mixed_number_or_as_its_formula_in_n():
    """The ratio exercise names n = 4: "n/(n-1)" is 4/3, and so are "1 1/3" and "1⅓";
    the formulas the other way round are refused."""
    ex = Exercise("ratio?", truth=lambda: 4 / 3, compare=close_number(atol=5e-3, n=4))
    for right in ("n/(n-1)", "n / (n - 1)", "1 1/3", "1⅓", "4 / 3"):
        assert ex.accepts(right), right
    for wrong in ("(n-1)/n", "n/(n+1)", "1 1/4", "1¼", "3 / 4"):
        assert not ex.accepts(wrong), wrong
    assert not Exercise("ratio?", truth=lambda: 4 / 3,
                        compare=close_number(atol=5e-3)).accepts("n/(n-1)")


def test_the_reader_panels_right_answers_written_otherwise_are_read():
    """("half", True), (4000, "it moves"), "4/3 ≈ 1.33", "133%" and "False, it moved" are
    right answers; a still-zero answer whose word and reason disagree is refused."""
    truth = (3990, True)
    for right in (("half", True), (4000, "it moves"), "about half, yes"):
        assert all(x is True for x in modes.zeros_and_moves(right, truth, 400, 4000, 8000))
    ratio = modes.close_number(atol=5e-3, n=4)
    assert ratio("4/3 ≈ 1.33", 4 / 3) and ratio("133%", 4 / 3)
    assert not ratio("125%", 4 / 3)
    assert modes.still_zero("False, it moved", False)
    assert modes.still_zero("no: it moved", False) and not modes.still_zero("True", False)
    with pytest.raises(ValueError, match="says both"):
        modes.still_zero("True, it moved", False)


def test_a_running_mean_half_written_as_a_phrase_is_read_and_an_unreadable_one_says_so(
        capsys):
    """The third reader's right answers were told "the running-mean half is not right"; a
    half the checker cannot read is now reported as unreadable, not as wrong, and "4k" is
    4000 (it was read as 4)."""
    ex = PairExercise("zeros and moves?", truth=lambda: (4010, True), centre=4000,
                      total=8000)
    for right in ("4000 zeros; the mean moves", (4000, "the running mean moves"),
                  (4000, "it updates"), "4000, True (it moves)", ("4k", True),
                  (4000, "yes, it moves")):
        assert ex.accepts(right), right
    for wrong in ((4000, "it does not move"), (4000, "the mean stays zero"),
                  "4000, False (it stays)", ("4k", False), ("40", True)):
        assert not ex.accepts(wrong), wrong
    assert not ex.check((4000, "perhaps"))
    out = capsys.readouterr().out
    assert "Could not read" in out and "running-mean half is not a yes/no" in out
    assert "Not quite" not in out and "is not right" not in out
    with pytest.raises(ValueError, match="says both"):
        modes.as_bool("True, it does not move")


def test_a_repeating_decimal_is_the_number_and_unreadable_is_not_called_wrong(capsys):
    """"1.333..." was told "✗ Not quite" and then "could not be read"."""
    ex = modes.ReadExercise("ratio?", truth=lambda: 4 / 3, read=lambda p: modes.as_number(
        p, {"n": 4}), compare=close_number(atol=5e-3, n=4))
    for right in ("1.333...", "1.333…", "1.3333 ..."):
        assert ex.accepts(right), right
    assert not ex.accepts("1.25...")
    assert not ex.check("a third more")
    out = capsys.readouterr().out
    assert "Could not read" in out and "Not quite" not in out


def test_the_clone_answer_reads_moves_as_not_still_zero():
    """The clone exercise asks "is it still zero?", the opposite of the mixed exercise's
    "does it move?": "it stays zero" was marked right and "it moved" wrong."""
    ex = modes.ReadExercise("still zeros?", truth=lambda: False, read=modes.read_still_zero,
                            compare=modes.still_zero)
    for wrong in ("it stays zero", "still zeros", "unchanged", "it does not move", "True",
                  "yes", "True (it stays zero)"):
        assert not ex.accepts(wrong, False), wrong
    for right in ("it moved", "it updates", "the running mean moves", "False", "no",
                  False, "False, it moved", "no: it moved", "not zero", "nonzero",
                  "it is not still zero"):
        assert ex.accepts(right, False), right
    with pytest.raises(ValueError, match="says both"):
        modes.read_still_zero("yes, it moved")
    with pytest.raises(ValueError):
        modes.read_still_zero("perhaps")


def test_the_ratio_said_in_words_is_read():
    """The fourth reader's "4 over 3" was refused as unreadable."""
    ratio = modes.close_number(atol=5e-3, n=4)
    for right in ("4 over 3", "4 divided by 3", "n over n-1", "n over (n - 1)"):
        assert ratio(right, 4 / 3), right
    for wrong in ("3 over 4", "n-1 over n"):
        assert not ratio(wrong, 4 / 3), wrong


def test_the_ratio_with_its_n_given_or_a_remark_after_it_is_read():
    """The reader's "n/(n-1) where n=4" was refused as wrong (the "=" split read it as 4);
    "4/3, PyTorch larger" and "sqrt(16/9)" were unreadable. Wrong ratios written the same
    ways are still refused."""
    ratio = modes.close_number(atol=5e-3, n=4)
    for right in ("n/(n-1) where n=4", "n/(n-1) where n = 4", "n/(n-1), with n=4",
                  "4/3, PyTorch larger", "4/3 (Bessel)", "sqrt(16/9)", "(4/3)**1"):
        assert ratio(right, 4 / 3), right
    for wrong in ("n/(n-1) where n=5", "(n-1)/n where n=4", "3/4, PyTorch larger",
                  "sqrt(9/16)", "n/(n+1) where n=4"):
        assert not ratio(wrong, 4 / 3), wrong
    assert modes.as_number("4,000") == 4000


def test_the_clone_answer_reads_its_true_false_word_wherever_it_stands():
    """"False: shared Arc" passed while "shared, so False" was unreadable; both read as
    False now, "shared" alone says it moved, and a word against its reason is refused."""
    for right in ("shared, so False", "False: shared Arc", "shared", "it is shared",
                  "the state is shared, hence False"):
        assert modes.still_zero(right, False), right
    for wrong in ("not shared, so True", "True", "it is a copy, so True"):
        assert not modes.still_zero(wrong, False), wrong
    for both in ("shared, so True", "True, shared"):
        with pytest.raises(ValueError, match="says both"):
            modes.read_still_zero(both)


def test_running_mean_prints_every_update_folded_in():
    from minidl import Device
    from minidl.nn import BatchNormConfig

    ad = Device.flex().autodiff()
    bn = BatchNormConfig(3).init(ad)
    assert modes.running_mean(bn) == "[0.0, 0.0, 0.0]"
    bn(modes.T(modes.batch(0), ad))
    assert modes.running_mean(bn) == "[0.009881697, 0.09698707, 0.1868625]"


def test_the_clone_answer_no_shared_is_read_as_false_and_a_clash_says_what_each_means():
    """Reader r2's "no, shared" was refused as contradictory: the answer word "no" was
    counted as negating "shared", and the message called "shared" "still zero"."""
    for right in ("no, shared", "No: shared Arc", "no, it is shared", "no - shared state"):
        assert modes.still_zero(right, False), right
    for wrong in ("yes, it is not shared", "not shared, so True", "True"):
        assert not modes.still_zero(wrong, False), wrong
    with pytest.raises(ValueError, match="'shared' says it moved"):
        modes.read_still_zero("yes, shared")
    with pytest.raises(ValueError, match="'not shared' says still zero"):
        modes.read_still_zero("no, not shared")


def test_the_zero_count_as_a_share_of_the_total_is_read_as_that_share(capsys):
    """Reader r2's ("50%", True) and ("0.5", True) were told "the zero count is not
    right"; with the total known, a share is a share of it. Wrong shares stay wrong."""
    ex = PairExercise("zeros and moves?", truth=lambda: (3990, True), centre=4000,
                      total=8000)
    for right in (("50%", True), ("0.5", True), (0.5, "yes"), "50%, yes",
                  ("about 50%", True), ("1/2", True), ("49.5%", True)):
        assert ex.accepts(right), right
    for wrong in (("50%", False), ("25%", True), ("100%", True), (0.25, True),
                  (0, True), (1, True), ("5%", True)):
        assert not ex.accepts(wrong), wrong
    assert not ex.check(("25%", True))
    assert "zero count is not right" in capsys.readouterr().out
    no_total = PairExercise("zeros and moves?", truth=lambda: (4000, True))
    assert not no_total.accepts(("50%", True))  # a share of nothing known is no count


def test_statistics_used_names_pytorchs_folded_unbiased_variance_with_ddof_1():
    """PyTorch's bn.eval() after one training forward normalises with its updated buffers,
    whose variance is the unbiased one: ``ddof=1`` reads them as folded."""
    import numpy as np
    import torch

    x = modes.batch(0)
    bn = torch.nn.BatchNorm1d(3)
    bn(torch.from_numpy(x))
    out = bn.eval()(torch.from_numpy(x)).detach().numpy()
    assert modes.statistics_used(out, x, ddof=1) == ("folded", "folded")
    fresh = torch.nn.BatchNorm1d(3).eval()(torch.from_numpy(x)).detach().numpy()
    assert modes.statistics_used(fresh, x, ddof=1) == ("initial", "initial")
    with pytest.raises(ValueError):  # the biased reading matches nothing here
        modes.statistics_used(out, x)
    assert np.isfinite(out).all()
