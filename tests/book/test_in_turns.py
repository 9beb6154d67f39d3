"""``best_in_turns``: contenders alternate round by round, each keeps its best, numba's
thread count is restored."""

import numba

from minidl_book.in_turns import best_in_turns


def test_turns_alternate_and_the_best_round_is_kept():
    calls = []
    slow = iter([2.0, 5.0, 3.0, 4.0])  # seconds a "b" call takes: warm-up, then rounds
    now = [0.0]

    def fake_clock():
        return now[0]

    def a():
        calls.append("a")
        now[0] += 1.0

    def b():
        calls.append("b")
        now[0] += next(slow)

    threads = numba.get_num_threads()
    best = best_in_turns({"a": a, "b": b}, rounds=3, clock=fake_clock)
    assert calls == ["a", "b"] + ["a", "b"] * 3  # a warm-up each, then turns
    assert best == {"a": 1.0, "b": 3.0}  # the warm-up is not timed
    assert numba.get_num_threads() == threads


def test_steps_divide_a_block():
    now = [0.0]

    def tick():
        now[0] += 0.5

    best = best_in_turns({"x": tick}, rounds=2, steps=4, clock=lambda: now[0])
    assert best == {"x": 0.5}
