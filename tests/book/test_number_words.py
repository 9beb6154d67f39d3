"""A count answered in words: "once" and "twice" are numbers, as "never" and "three" are."""

from minidl_book import Exercise


def test_once_and_twice_answer_how_many_times():
    once = Exercise("How many times does it run?", truth=lambda: 1)
    assert all(once.accepts(a) for a in ("once", "Once", "one time", "1"))
    assert not once.accepts("twice") and not once.accepts("never")
    twice = Exercise("How many times?", truth=lambda: 2)
    assert twice.accepts("twice") and not twice.accepts("once")
    assert not Exercise("How many times?", truth=lambda: 0).accepts("once")
