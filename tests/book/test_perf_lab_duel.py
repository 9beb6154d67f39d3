"""perf_lab.head_to_head and Duel: interleaved best-of-rounds timing, verdicts past the noise."""

from minidl_book.perf_lab import Duel, head_to_head


def times(ours: list[float], other: list[float]) -> dict:
    return {"ours": {"best": min(ours), "rounds": ours},
            "other": {"best": min(other), "rounds": other}}


def test_head_to_head_interleaves_rounds_and_keeps_the_best():
    calls = []
    out = head_to_head({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                       rounds=4, budget=0.0, pause=0.0)
    assert calls[4:] == ["a", "b"] * 4  # after two warm-up calls each: a, b, a, b, ...
    for v in out.values():
        assert len(v["rounds"]) == 4 and v["best"] == min(v["rounds"]) <= v["median"]


def test_noise_is_the_spread_of_the_rounds_ratios():
    d = Duel.of(times([1.0] * 8, [0.8, 0.9, 0.95, 1.0, 1.0, 1.05, 1.1, 1.4]), "ours", "other")
    assert d.ratio == 0.8 and abs(d.noise - 0.05) < 1e-9  # the middle half: 0.95 to 1.05
    assert Duel.of(times([1.0] * 5, [1.0] * 5), "ours", "other").noise == Duel.FLOOR


def test_verdict_is_level_within_the_band():
    assert Duel(0.99, 0.02).verdict() == "level"
    assert Duel(0.86, 0.06).verdict() == "level"  # 14 % slower, but 6 % of noise
    assert Duel(0.78, 0.03).verdict() == "slower" and Duel(1.3, 0.05).verdict() == "faster"


def test_words_and_shares_fit_the_measured_ratio_both_ways():
    level = Duel(0.99, 0.03)
    assert level.fits("level") and not level.fits("slower") and not level.fits("faster")
    assert level.within(0.05) and not level.fits_share(0.2, "slower")
    slow = Duel(0.78, 0.03)
    assert slow.fits("slower") and not slow.fits("level") and not slow.fits("faster")
    assert slow.fits_share(0.2, "slower")  # 20 % less speed, or 20 % more time (0.83)
    assert not slow.fits_share(0.5, "slower") and not slow.fits_share(0.2, "faster")
    edge = Duel(0.88, 0.02)  # near the 10 % edge both words fit
    assert edge.fits("level") and edge.fits("slower")


def test_a_lean_needs_the_band_and_the_measured_side():
    faster = Duel(1.05, 0.02)  # ours 5 % faster, past the noise: level, leaning faster
    assert faster.verdict() == "level" and faster.leans("faster")
    assert not faster.leans("slower") and not faster.fits_share(0.01, "slower")
    even = Duel(1.01, 0.02)  # inside the noise of 1: either lean fits
    assert even.leans("slower") and even.leans("faster")
    assert not Duel(0.78, 0.03).leans("slower")  # past the band: no mere lean
