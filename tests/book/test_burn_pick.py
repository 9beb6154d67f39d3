"""The fusion chapter's burn-score exercise (:mod:`minidl_book.burn_pick`): with ``p``
held both fusers score 310 and burn's strict ``>`` keeps the element-wise fuser, offered
first (plan 1), where the greedy search runs the longer reduce block; with ``p`` dropped the
reduce kernel saves its write and wins, 410 to 310. The checker reads the plan named first
and refuses hedges, negations and the other plan however written."""

from __future__ import annotations

import pytest

from minidl_book.burn_pick import burn_pick, count_table, counts, pick_said, scores


def test_scores_tie_when_p_is_held():
    held, dropped = scores(True), scores(False)
    assert (held.elementwise, held.reduce) == (310, 310)
    assert held.burn == "elementwise 2 | B 1" and held.greedy == "reduce 3"
    assert (dropped.elementwise, dropped.reduce) == (310, 410)
    assert dropped.burn == dropped.greedy == "reduce 3"
    assert burn_pick() == 1


def test_counts_are_the_score_calls_of_burns_explorer():
    # exp and * one by one: 3 reads, 2 writes, 2 launches; fused: t read, p written
    held, dropped = counts(True), counts(False)
    assert held["elementwise"] == held["reduce"] == (3, 2, 2, 1, 1, 0)
    assert dropped["reduce"] == (3, 2, 2, 1, 0, 0)  # p in registers: one write saved
    assert dropped["elementwise"] == held["elementwise"]  # the sum reads p: written


def test_count_table_fits_and_shows_both_scores():
    table = count_table()
    assert all(len(line) <= 80 for line in table.splitlines())
    rows = {line[:28].strip(): line.split() for line in table.splitlines()[1:]}
    assert rows["(1) element-wise kernel"][-1] == rows["(2) reduce kernel"][-1] == "310"
    assert rows["(2) reduce kernel, p dropped"][-1] == "410"
    assert "plan 1" not in table  # the exercise's glued answer stays in its solution


@pytest.mark.parametrize("right", [
    1, "1", "plan 1", "(1)", "Plan 1 (a tie)", "one", "the first", "element-wise",
    "elementwise: both score 310", "the element-wise plan, because p is written anyway",
    "1: a tie, and element-wise is offered first", "(1) element-wise, sum alone"])
def test_accepts_plan_one_written_differently(right):
    assert pick_said(right, 1), right


@pytest.mark.parametrize("wrong", [
    2, True, 1.5, "2", "plan 2", "(2)", "two", "second", "reduce",
    "the reduce kernel: it takes more ops", "1 or 2", "element-wise or reduce", "both",
    "either", "neither", "not 1", "not element-wise", "it isn't the reduce", ""])
def test_refuses_plausible_wrong_answers(wrong):
    assert not pick_said(wrong, 1), wrong


def test_reads_plan_two_when_it_is_the_truth():
    assert pick_said("reduce", 2) and pick_said("(2)", 2) and not pick_said("1", 2)


def test_the_question_asks_only_for_the_plan():
    # the checker reads the plan, not a reason: the question must not ask "Why?"
    from pathlib import Path

    page = (Path(__file__).parents[2] / "chapters" / "fusion.md").read_text()
    start = page.index(":label: ex-fusion-burn-score")
    question = page[start:page.index("```", start)]
    assert "(1)" in question and "(2)" in question and "why" not in question.lower()
