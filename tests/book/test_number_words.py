"""A count answered in words: "once" and "twice" are numbers, as "never" and "three" are."""

from minidl_book import Exercise


def test_once_and_twice_answer_how_many_times():
    once = Exercise("How many times does it run?", truth=lambda: 1)
    assert all(once.accepts(a) for a in ("once", "Once", "one time", "1"))
    assert not once.accepts("twice") and not once.accepts("never")
    twice = Exercise("How many times?", truth=lambda: 2)
    assert twice.accepts("twice") and not twice.accepts("once")
    assert not Exercise("How many times?", truth=lambda: 0).accepts("once")


def test_python_none_answers_a_zero_count_as_the_word_none_does():
    zero = Exercise("How many times does it hit?", truth=lambda: 0)
    assert zero.accepts("none") and zero.accepts(None) and zero.accepts(0)
    assert not Exercise("How many times?", truth=lambda: 1).accepts(None)
    assert not Exercise("What does it return?", truth=lambda: 0.0).accepts(None)


def test_all_before_a_count_is_the_count():
    nine = Exercise("How many params hold a value?", truth=lambda: 9)
    assert all(nine.accepts(a) for a in ("all 9", "All 9.", "all nine", "all of them: 9",
                                         "all 9 params"))
    assert not nine.accepts("all 8") and not nine.accepts("all") and not nine.accepts("8")
