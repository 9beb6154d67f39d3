"""The performance chapter's gemm ladder: each rung computes the product, and its counts say
the reuse the chapter states (no timing here)."""

import numpy as np
import pytest

from minidl_book import gemm_ladder as ladder

SHAPES = [(1, 1, ladder.NR), (5, 7, 2 * ladder.NR), (ladder.MR + 1, 300, 96),
          (37, ladder.KB + 3, 288), (64, 64, 64)]


@pytest.mark.parametrize("rung", sorted(ladder.RUNGS))
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_each_rung_computes_the_product(rung, m, k, n):
    rng = np.random.default_rng(m * 1000 + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    ladder.RUNGS[rung](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4 * np.sqrt(k))


def test_each_rung_overwrites_c_on_a_second_call():
    a = np.ones((ladder.MR + 2, 8), np.float32)
    b = np.ones((8, 32), np.float32)
    for rung in ladder.RUNGS.values():
        c = np.full((a.shape[0], 32), 5.0, np.float32)
        rung(a, b, c)
        rung(a, b, c)
        np.testing.assert_array_equal(c, 8.0)


def test_traffic_states_each_rungs_reuse():
    mr, nr = ladder.MR, ladder.NR
    naive, ikj, blocked, packed = (ladder.traffic(r, 1024, 1024, 1024)
                                   for r in ("naive", "i-k-j", "blocked", "packed"))
    assert naive[0].flops == blocked[0].flops == packed[0].flops == 2.0 * 1024**3
    assert naive[0].intensity == pytest.approx(2 / 64)  # a cache line per multiply-add
    assert ikj[0].intensity == blocked[0].intensity == pytest.approx(0.5)  # 4 B per MAC
    assert packed[0].intensity == pytest.approx(2 * mr * nr / (4 * (mr + nr)))
    assert ikj[1] == 4 * 1024**2 and blocked[1] == 4 * ladder.KB * 1024
    # one column's lines, a row apart, use one cache set in 64: they take B's room
    assert naive[1] == 4 * 1024 * 1024
    with pytest.raises(ValueError):
        ladder.traffic("tiled", 1, 1, 1)


def test_points_and_biggest_step():
    times = {"naive": (1.0, 128), "i-k-j": (0.05, 256), "blocked": (0.2, 1024),
             "packed": (0.05, 1024)}
    pts = {p.name: p for p in ladder.points(times, k=1024, n=1024)}
    assert pts["naive"].counts.flops == 2.0 * 128 * 1024 * 1024
    assert pts["blocked"].seconds == 0.2
    gains = ladder.step_gains(times)
    assert gains == pytest.approx({"loop order": 40.0, "blocking": 1.0, "register tile": 4.0})
    assert ladder.biggest_step(times) == "loop order"
    slow_naive = {**times, "naive": (0.025, 128)}  # loop order 2x, register tile 4x
    assert ladder.biggest_step(slow_naive) == "register tile"
    assert ladder.biggest_step({**slow_naive, "blocked": (0.05, 1024)}) == "blocking"


def test_source_is_the_kernel_without_its_decorator():
    text = ladder.source(ladder.blocked)
    assert text.startswith("def blocked(a, b, c):") and "@" not in text
    assert max(len(line) for rung in ladder.RUNGS.values()
               for line in ladder.source(rung).splitlines()) <= 88
