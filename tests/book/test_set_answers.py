"""A set answer written as one string: names of several words stay whole.

The modules chapter asks which fields of a BatchNorm are keys of its record; the truth is
``("gamma", "beta", "running_mean", "running_var")``. A reader who writes the names as words
(``"gamma, beta, running mean, running var"``) names the same four fields: the string split at
every space gave six words and the answer was refused.
"""

from __future__ import annotations

from minidl_book.exercises import Exercise

TRUTH = ("gamma", "beta", "running_mean", "running_var")


def _ex() -> Exercise:
    return Exercise("Which fields are keys of the record?", truth=lambda: TRUTH,
                    compare="set")


def test_names_of_several_words_written_with_spaces_are_accepted():
    ex = _ex()
    assert ex.accepts("gamma, beta, running mean, running var")
    assert ex.accepts("gamma, beta, running mean and running var")
    assert ex.accepts("Running Var; Running Mean; Beta; Gamma")


def test_the_other_ways_still_compare_as_before():
    ex = _ex()
    assert ex.accepts("gamma, beta, running_mean, running_var")
    assert ex.accepts("gamma beta running_mean running_var")
    assert ex.accepts(("Gamma", "Beta", "Running_Mean", "Running_Var"))
    assert not ex.accepts("gamma, beta, running mean, running var, training")
    assert not ex.accepts("gamma, beta")
    letters = Exercise("Which of (a), (b), (c)?", truth=lambda: ("a", "c"))
    assert letters.accepts("a c") and letters.accepts("a and c") and letters.accepts("ac")
