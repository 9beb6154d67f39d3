"""The dispatch chapter's predict-the-grid checker: two grids, burn's and minidl's; a right
pair written in other words passes, each plausible wrong cell (in either grid, and
minidl's lifting written into burn's) is refused and named with its rule (never its
answer), and a grid with ``...`` left in or of the wrong shape gets a reminder, not a
verdict."""

from __future__ import annotations

import pytest

from minidl_book.dispatch_grid import KINDS, burn_grid, cell_name, grid_exercise, minidl_grid

RIGHT = [["Flex", "Autodiff[Flex]", "error"],
         ["Autodiff[Flex]", "Autodiff[Flex]", "error"],
         ["error", "error", "NdArray"]]
BURN = [["Flex", "error", "error"],
        ["error", "Autodiff[Flex]", "error"],
        ["error", "error", "NdArray"]]


def test_the_live_grid_is_the_rules():
    assert minidl_grid() == tuple(map(tuple, RIGHT))


def test_burns_grid_panics_off_the_diagonal():
    assert burn_grid() == tuple(map(tuple, BURN))


@pytest.mark.parametrize("written, name", [
    ("autodiff", "Autodiff[Flex]"), ("Autodiff<Flex>", "Autodiff[Flex]"),
    ("plain flex", "Flex"), ("ValueError", "error"), ("wrong device", "error"),
    ("err", "error"), ("Err", "error"), ("raises", "error"), ("crash", "error"),
    ("ndarray", "NdArray"), ("Autodiff[NdArray]", None), ("lifted", None), (1, None),
    # a hedge names no one outcome, in either order or in a note
    ("Autodiff[Flex] or error", None), ("error or Autodiff[Flex]", None),
    ("Flex (or error)", None), ("Flex, or error", None), ("Flex or NdArray", None),
    # a note after a right name, denying an error or saying why, is a note
    ("Flex (no error)", "Flex"), ("Autodiff[Flex] (lifts, no error)", "Autodiff[Flex]"),
    ("Autodiff[Flex], x lifted", "Autodiff[Flex]"), ("Flex (not an error)", "Flex"),
    ("error: wrong device", "error"), ("error (NdArray vs Flex)", "error")])
def test_cell_names(written, name):
    assert cell_name(written) == name


def test_a_right_grid_in_other_words_passes(capsys):
    words = [["flex", "autodiff", "fails"], ["Autodiff<Flex>", "autodiff[flex]", "panic"],
             ["raises", "ValueError", "plain NdArray"]]
    burn = [["flex", "panic", "panics"], ["crash", "Autodiff<Flex>", "err"],
            ["error", "raises", "ndarray"]]
    assert grid_exercise().check((burn, words))
    out = capsys.readouterr().out
    assert "burn's grid matches its source" in out and "minidl's what the experiment" in out


@pytest.mark.parametrize("i, j, wrong", [(0, 1, "Flex"), (1, 0, "Flex"), (0, 2, "Flex"),
                                         (2, 0, "NdArray"), (1, 1, "Flex")])
def test_a_wrong_minidl_cell_is_refused_and_named(capsys, i, j, wrong):
    cells = [row[:] for row in RIGHT]
    cells[i][j] = wrong
    assert not grid_exercise().check((BURN, cells))
    out = capsys.readouterr().out
    assert f"minidl, a on {KINDS[i]}, b on {KINDS[j]}: rule" in out
    assert out.count("a on ") == 1


@pytest.mark.parametrize("i, j, wrong", [(0, 1, "Autodiff[Flex]"), (1, 0, "Autodiff[Flex]"),
                                         (0, 1, "Flex"), (1, 1, "error")])
def test_a_wrong_burn_cell_is_refused_and_named(capsys, i, j, wrong):
    cells = [row[:] for row in BURN]
    cells[i][j] = wrong
    assert not grid_exercise().check((cells, RIGHT))
    out = capsys.readouterr().out
    assert f"burn, a on {KINDS[i]}, b on {KINDS[j]}: burn's match" in out
    assert out.count("a on ") == 1


def test_a_hedged_error_cell_is_refused():
    burn = [row[:] for row in BURN]
    burn[0][1] = "Autodiff[Flex] or error"
    assert not grid_exercise().accepts((burn, RIGHT))


def test_right_cells_with_notes_pass():
    burn = [["Flex (no error)", "error", "error"],
            ["error", "Autodiff[Flex], no error", "error"],
            ["error", "error (NdArray vs Flex)", "NdArray (not an error)"]]
    minidl = [["Flex", "Autodiff[Flex] (lifts, no error)", "error"],
              ["Autodiff[Flex], b lifted", "Autodiff[Flex]", "error"],
              ["error", "error", "NdArray"]]
    assert grid_exercise().accepts((burn, minidl))


def test_the_grids_swapped_or_one_grid_for_both_are_refused():
    assert not grid_exercise().accepts((RIGHT, BURN))
    assert not grid_exercise().accepts((RIGHT, RIGHT))
    assert not grid_exercise().accepts(RIGHT)


@pytest.mark.parametrize("unfinished", [..., ([[..., ..., ...]] * 3, RIGHT),
                                        "Flex", [["Flex"]], RIGHT])
def test_unfinished_answers_get_a_reminder(capsys, unfinished):
    assert not grid_exercise().check(unfinished)
    out = capsys.readouterr().out
    assert "Fill every cell" in out or "write two grids" in out


def test_a_note_in_parentheses_after_a_right_cell_is_read_as_a_note():
    noted = [row[:] for row in RIGHT]
    noted[0][1], noted[1][0] = "Autodiff[Flex] (x lifted)", "Autodiff<Flex> (b lifted)"
    assert grid_exercise().accepts((BURN, noted))
    assert cell_name("Autodiff (Flex)") == cell_name("Autodiff(Flex)") == "Autodiff[Flex]"


@pytest.mark.parametrize("cell, named", [
    ("Flex (x lifted)", "Flex"),  # the note does not change a wrong name
    ("Flex (error)", None),  # a note naming another outcome: a hedge, no one outcome
    ("x lifted", None),
])
def test_a_note_does_not_make_a_wrong_cell_right(cell, named):
    assert cell_name(cell) == named
    wrong = [row[:] for row in RIGHT]
    wrong[0][1] = cell
    assert not grid_exercise().accepts((BURN, wrong))
