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


def test_of_them_after_a_count_is_the_count():
    """The modules chapter's reader wrote "none of them" (0) and "9 of them" (9): refused."""
    assert Exercise("How many?", truth=lambda: 0).accepts("none of them")
    nine = Exercise("How many params hold a value?", truth=lambda: 9)
    assert nine.accepts("9 of them") and nine.accepts("nine of them")
    assert not nine.accepts("8 of them") and not nine.accepts("none of them")


def test_a_boolean_then_its_explanation_is_the_boolean():
    """ "False: b.bias drew first" answered False, as "2: the first and the third" answers
    2; an explanation naming the other answer stays refused."""
    no = Exercise("Is a.weight the same? True or False.", truth=lambda: False)
    for said in ("False: b.bias drew first", "false (b.bias drew first)",
                 "False, because b.bias drew first", "no - it moved", "False"):
        assert no.accepts(said), said
    for said in ("True: it is", "false: no wait, true", "not false", "falsehood"):
        assert not no.accepts(said), said
    assert Exercise("Same?", truth=lambda: True).accepts("True (the same stream)")
