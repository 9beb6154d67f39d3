"""The fusion chapter's first-drain cost (:mod:`minidl_book.first_drain`): in a fresh
process with an empty numba cache folder, the first drain of a new op pattern searches and
compiles, and costs many times the drains that find its plan and kernel."""

from __future__ import annotations

from minidl_book.first_drain import first_drain_ms


def test_first_drain_pays_the_compile_once():
    ms = first_drain_ms()
    assert len(ms) == 3 and all(t > 0 for t in ms)
    assert ms[0] > 20 * max(ms[1:])
