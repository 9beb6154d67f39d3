"""The modules chapter's two word-reading checkers: right answers in words pass, plausible
wrong ones do not, and an answer that cannot be read is said to be unread, not wrong."""

import pytest

from minidl_book import Exercise
from minidl_book.module_answers import field_set, which_moved

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
