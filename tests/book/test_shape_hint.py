"""The tensors chapter's scatter exercise: an answer of the wrong nesting gets a hint about
its shape, an answer of the right shape the ordinary hint."""

from __future__ import annotations

from minidl_book.shape_hint import MistakeHintExercise, ShapeHintExercise


def _exercise() -> ShapeHintExercise:
    return ShapeHintExercise("q", truth=lambda: [[4.0, 1.0, 4.0]], hint="numbers hint",
                             shape_hint="shape {found}, not {expected}")


def test_a_flat_answer_gets_the_shape_hint(capsys):
    assert not _exercise().check([4, 1, 4])
    out = capsys.readouterr().out
    assert "shape [3], not [1, 3]" in out and "numbers hint" not in out


def test_a_wrong_answer_of_the_right_shape_gets_the_ordinary_hint(capsys):
    ex = _exercise()
    assert not ex.check([[3, 1, 3]])
    out = capsys.readouterr().out
    assert "numbers hint" in out and "shape [" not in out
    assert ex.hint == "numbers hint"  # put back after the check


def test_the_right_answer_passes(capsys):
    assert _exercise().check([[4, 1, 4]])


def _strides() -> MistakeHintExercise:
    return MistakeHintExercise(
        "q", truth=lambda: ((1, 4), (0, 1)), hint="steps hint",
        mistakes=lambda t: {tuple(tuple(4 * s for s in p) for p in t): "bytes hint"})


def test_the_foreseen_mistake_gets_its_own_hint(capsys):
    ex = _strides()
    assert not ex.check([[4, 16], [0, 4]])
    out = capsys.readouterr().out
    assert "bytes hint" in out and "steps hint" not in out
    assert ex.hint == "steps hint"


def test_another_wrong_answer_gets_the_ordinary_hint(capsys):
    assert not _strides().check(((4, 1), (0, 1)))
    out = capsys.readouterr().out
    assert "steps hint" in out and "bytes hint" not in out
    assert _strides().check([[1, 4], [0, 1]])
