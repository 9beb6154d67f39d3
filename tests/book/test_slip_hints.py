"""nn_modules' exercises name the slip a wrong answer shows, chosen afresh at every check:
a hint picked for one answer must not stick to the next (a dict the checker refuses after a
named slip got the stale 'The zeros are right' hint)."""

from __future__ import annotations

from minidl_book.slip_hints import SlipHintExercise


def _exercise() -> SlipHintExercise:
    def slip(p, t):
        return "no scaling" if p == (t[0], 1) else None

    return SlipHintExercise("q", truth=lambda: (5000, 2), hint="ordinary",
                            compare=lambda p, t: p == t, slip_hint=slip)


def test_a_named_slip_gets_its_hint(capsys):
    assert not _exercise().check((5000, 1))
    assert "Hint: no scaling" in capsys.readouterr().out


def test_a_refused_answer_after_a_slip_gets_the_ordinary_hint(capsys):
    ex = _exercise()
    ex.check((5000, 1))
    capsys.readouterr()
    assert not ex.check({"zeros": 5000})
    out = capsys.readouterr().out
    assert "Hint: ordinary" in out and "no scaling" not in out


def test_another_wrong_answer_after_a_slip_gets_the_ordinary_hint(capsys):
    ex = _exercise()
    ex.check((5000, 1))
    capsys.readouterr()
    assert not ex.check((0, 1))
    out = capsys.readouterr().out
    assert "Hint: ordinary" in out and "no scaling" not in out
    assert ex.hint == "ordinary" and ex.check((5000, 2))


def _measured_exercise() -> SlipHintExercise:
    runs = iter([0.0831, 0.0829])
    return SlipHintExercise("q", truth=lambda: next(runs), compare="close", rtol=1e-2,
                            hint="ordinary", slip_hint=lambda p, t: None,
                            measured=lambda t: f"largest |weight| {t:.4f}")


def test_a_right_verdict_shows_the_value_it_was_compared_with(capsys):
    assert _measured_exercise().check(1 / 12)
    out = capsys.readouterr().out
    assert "Right" in out and "Measured: largest |weight| 0.0831" in out


def test_a_wrong_verdict_shows_no_measured_value(capsys):
    assert not _measured_exercise().check(1 / 24)
    out = capsys.readouterr().out
    assert "Measured" not in out and "0.083" not in out
