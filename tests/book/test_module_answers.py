"""The modules chapter's word-reading checkers: right answers in words pass, plausible
wrong ones do not, and an answer that cannot be read is said to be unread, not wrong."""

import pytest

from minidl_book import Exercise
from minidl_book.module_answers import all_or_count, equal_or_not, field_set, which_moved

MOVED = (True, False)
FIELDS = ("gamma", "beta", "running_mean", "running_var", "momentum", "epsilon", "training")
RECORD = ("gamma", "beta", "running_mean", "running_var")


@pytest.mark.parametrize("answer", [
    (True, False), (1, 0), ("yes", "no"), "True, False", "True False", "(1, 0)", "yes no",
    "first only", "only the first", "first moved, second did not", "the first",
    "first moved second did not", "the first, not the second", "first: yes, second: no",
    "just the first one", "first changed; second stayed the same", "moved, not moved",
    "the 1st moved but the 2nd stayed", "First Only."])
def test_which_moved_reads_right_answers(answer):
    assert which_moved(answer, MOVED)


@pytest.mark.parametrize("answer", [
    (True, True), (False, True), "True True", "(0, 1)", "no, yes", "second only", "both",
    "neither", "none", "first and second", "only the second", "not the first",
    "first did not move, second did", True, (True,)])
def test_which_moved_refuses_wrong_answers(answer):
    assert not which_moved(answer, MOVED)


def test_which_moved_says_an_unread_answer_was_not_read(capsys):
    with pytest.raises(ValueError, match="could not read"):
        which_moved("maybe", MOVED)
    ex = Exercise("pair?", truth=lambda: MOVED, compare=which_moved)
    assert not ex.check("moved")
    assert "could not be compared" in capsys.readouterr().out
    assert ex.check("first only")


@pytest.mark.parametrize("answer", [
    "gamma beta running mean running var", "gamma, beta, running_mean, running_var",
    "beta gamma running_var running_mean", ("Gamma", "Beta", "Running_Mean", "Running_Var"),
    ["running_var", "gamma", "beta", "running_mean"], "gamma beta running-mean running-var",
    "gamma, beta, running mean and running var"])
def test_field_set_reads_names_with_or_without_commas(answer):
    assert field_set(FIELDS)(answer, RECORD)


@pytest.mark.parametrize("answer", [
    ("gamma", "beta"), "gamma, beta, running_mean, running_var, training",
    "gamma beta running mean", "gamma beta momentum epsilon running mean running var",
    "gamma beta mean var", "gamma beta running"])
def test_field_set_refuses_wrong_sets(answer):
    assert not field_set(FIELDS)(answer, RECORD)


COUNT = all_or_count(9)  # a Classifier's nine tensor params


@pytest.mark.parametrize(("answer", "truth"), [
    ("0/9", 0), ("9/9", 9), ("9 / 9", 9), ("0 tensor params", 0), ("9 tensor params", 9),
    ("all 9 tensor params", 9), ("0/9 params", 0), ("9/9 are drawn", 9), ("none", 0),
    ("0 of 9", 0), ("all nine", 9), ("9 of 9 tensor params", 9), (0, 0), ("nine", 9),
    ("none of the tensor params", 0), ("0 params", 0), ("all of them", 9)])
def test_all_or_count_reads_a_count_and_a_pair(answer, truth):
    assert COUNT(answer, truth)


@pytest.mark.parametrize(("answer", "truth"), [
    ("9/9", 0), ("0/9", 9), ("0/7", 0), ("7/9", 9), ("9/7", 9), ("1/2", 0), ("3/6", 0),
    ("9 tensor params", 0), ("0 tensor params", 9), ("all 7 tensor params", 9),
    ("0 of 7", 0), ("all", 0), ("none", 9), ("1/9", 0), (1, 0), ("all 9", 0)])
def test_all_or_count_refuses_a_wrong_count_or_total(answer, truth):
    assert not COUNT(answer, truth)


@pytest.mark.parametrize("answer", [
    "not equal: b.bias took the first numbers", "not equal", "Different.", False, "no",
    "False: b.bias drew first", "not the same (b.bias drew first)",
    "different, because b.bias read first", "unequal - b.bias came first"])
def test_equal_or_not_reads_the_word_then_the_reason(answer):
    assert equal_or_not(answer, False)


@pytest.mark.parametrize("answer", [
    "equal: construction order decides", "the same", True, "yes", "equal",
    "same (a was built first)", "True: a was built first"])
def test_equal_or_not_refuses_the_wrong_word_with_any_reason(answer):
    assert not equal_or_not(answer, False)


# A right answer with a short reason after it is read as the answer (reader r1): the
# checker reads what stands before the reason, and still refuses wrong answers and hedges.
REASONED_RIGHT = [
    (which_moved, "(True, False): the grad is consumed at the first path", MOVED),
    (which_moved, "True, False because the second lookup finds nothing", MOVED),
    (which_moved, "only the first, the grad is consumed at the first path", MOVED),
    (COUNT, "0, only val() draws", 0), (COUNT, "zero, display uses lazy_shape", 0),
    (COUNT, "9, valid() calls val()", 9), (COUNT, "9 (valid calls val)", 9),
    (COUNT, "all of them, because valid() reads the values", 9),
    (equal_or_not, "False; a param draws at first read", False),
    (equal_or_not, "it differs", False),
    (field_set(FIELDS), "gamma, beta, running_mean, running_var (not the flag)", RECORD),
    (field_set(FIELDS), "gamma, beta, running_mean, running_var: what training changes",
     RECORD),
]
REASONED_WRONG = [
    (which_moved, "(True, True): the tie is kept by the step", MOVED),
    (which_moved, "first moved, the second too", MOVED),
    (which_moved, "first: no, second: yes", MOVED),
    (COUNT, "9, valid() calls val()", 0), (COUNT, "0, only val() draws", 9),
    (COUNT, "0 or 9", 0), (COUNT, "0 or 9", 9), (COUNT, "9, not 0", 9),
    (COUNT, "9, printing calls val() on each", 0),
    (equal_or_not, "True; construction order decides it", False),
    (equal_or_not, "yes or no", False),
    (field_set(FIELDS), "gamma, beta, training (the flag is state too)", RECORD),
    (field_set(FIELDS), "gamma, beta; running stats are learned too", RECORD),
]


@pytest.mark.parametrize(("compare", "answer", "truth"), REASONED_RIGHT)
def test_a_right_answer_with_a_reason_is_read(compare, answer, truth):
    assert compare(answer, truth)


@pytest.mark.parametrize(("compare", "answer", "truth"), REASONED_WRONG)
def test_a_wrong_answer_or_a_hedge_with_a_reason_is_refused(compare, answer, truth):
    try:
        assert not compare(answer, truth)
    except ValueError as err:  # unread is refused too, and says so
        assert "could not read" in str(err)
