"""The train-and-inference chapter's build-it (BatchNorm's RunningState on one thread): the
reference passes; each planted wrong class (value() folding eagerly, update overwriting the
pending value, value_sync forgetting it, a copying clone) gets a value verdict; the chapter's
own calls are the first cases tried."""

from __future__ import annotations

import pytest

from minidl_book import build_running_state
from minidl_book.modes import vec


def test_reference_passes():
    assert build_running_state.exercise(10).find_failure(build_running_state.MyRunningState) is None


@pytest.mark.parametrize("planted", sorted(build_running_state.PLANTED))
def test_planted_wrong_class_gets_its_verdict(planted):
    wrong, kind = build_running_state.PLANTED[planted]
    verdict = build_running_state.exercise(10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()


def test_the_chapter_case_reads_the_stale_digits_burn_printed():
    case = build_running_state.chapter_cases()[0]
    reads = build_running_state.running_state_run(build_running_state.MyRunningState, case)
    values = [vec(t) for t in reads.values()]
    assert values[0] == "[0.0, 0.0, 0.0]"  # value() after one update: stale
    assert values[1] == "[0.009881697, 0.09698707, 0.1868625]"  # the first update, folded
    assert values[2] == values[3] != values[1]  # value_sync() folds the second


def test_a_class_that_stores_updates_in_a_list_is_accepted():
    class Listed:
        def __init__(self, value):
            self.folded, self.queue = value, []

        def update(self, value):
            if self.queue:
                self.folded = self.queue.pop()
            self.queue.append(value)

        def value(self):
            return self.folded

        def value_sync(self):
            if self.queue:
                self.folded = self.queue.pop()
            return self.folded

        def clone(self):
            return self

    assert build_running_state.exercise(10).find_failure(Listed) is None
