"""perf_answers: the performance chapter's "which roof?" and "Flex against OpenBLAS" checkers
accept right answers written differently and refuse plausible wrong ones."""

import pytest

from minidl_book.perf_answers import blas_compare, bound_compare
from minidl_book.perf_lab import Duel

MEASURED = Duel(1.05, 0.02)  # the reader's build: Flex 5 % faster than OpenBLAS, level


@pytest.mark.parametrize("said", [
    "memory-bound", "Memory bound", "Memory-bound.", "memory", "bound by memory",
    "memory bound on DRAM", "bandwidth-limited", "memory bandwidth", "memory (1 flop/byte)",
    "limited by DRAM bandwidth", "DRAM bandwidth", "memory, not compute",
    "not compute but memory", "memory-bound, not compute-bound", "memory (not compute)",
    "bandwidth-bound (on DRAM)", "memory bound, left of the ridge", "1 flop/byte, memory",
    # reasons stated in flops name no roof
    "it is memory-bound: 8 flops per 8 bytes",
    "memory: 1 flop per byte is far below the ridge of 14.8 flops per byte",
    "memory-bound, 8 flops for 8 bytes is far below the compute roof",
    "memory bound: the arrays are too big for L3", "memory, past L3: DRAM",
    "memory-bound on DRAM, not L3",
])
def test_bound_accepts_memory_however_written(said):
    assert bound_compare(said, "memory") and not bound_compare(said, "compute")


@pytest.mark.parametrize("said", [
    "not memory", "compute, not memory", "memory or compute",
    "compute bound, right of the ridge", "bandwidth or flops", "compute: 8 flops per element",
    # the wrong roof: the question asks for DRAM's, and the arrays are far past L3
    "memory-bound on L3", "memory bound, from L3", "L3-bound", "cache-bound",
    "bandwidth-bound on the L2 roof",
])
def test_bound_refuses_wrong_answers(said):
    assert not bound_compare(said, "memory"), said


def test_bound_accepts_compute_when_it_is_the_truth():
    for said in ("compute-bound", "compute bound: 64 flops per byte", "flops", "FMA-bound"):
        assert bound_compare(said, "compute") and not bound_compare(said, "memory"), said


@pytest.mark.parametrize("said", ["slightly slower", "level, maybe slightly slower",
                                  "a little slower", "level or a little slower",
                                  "marginally slower", "about 2% slower", "slower"])
def test_blas_refuses_slower_when_flex_measured_faster_past_the_noise(said):
    assert not blas_compare(said, MEASURED), said


@pytest.mark.parametrize("said", ["level", "about the same", "slightly faster",
                                  "level, maybe slightly faster", "a bit faster",
                                  "about 5% faster", "within 10%", "level (within 10%)",
                                  "level, not slower", "as fast as OpenBLAS"])
def test_blas_accepts_level_and_the_measured_lean(said):
    assert blas_compare(said, MEASURED), said


def test_a_hedge_gets_the_same_verdict_alone_or_beside_level():
    for d in (MEASURED, Duel(0.95, 0.02), Duel(1.0, 0.02), Duel(0.99, 0.04),
              Duel(1.08, 0.02), Duel(0.78, 0.03), Duel(1.3, 0.05), Duel(0.88, 0.02)):
        for way in ("slower", "faster"):
            alone = blas_compare(f"slightly {way}", d)
            assert alone == blas_compare(f"level, maybe slightly {way}", d), (d, way)
            assert alone == blas_compare(f"level or slightly {way}", d), (d, way)
            assert alone == d.leans(way), (d, way)


def test_blas_within_the_noise_both_leans_fit():
    even = Duel(1.0, 0.02)
    for said in ("slightly slower", "slightly faster", "level or a little slower",
                 "about the same", "on par", "within 10%", "roughly equal", "it's as fast",
                 "close to OpenBLAS", "it\u2019s as fast as OpenBLAS"):
        assert blas_compare(said, even), said
    for said in ("twice as fast", "faster", "much slower", "faster or slower", "slower"):
        assert not blas_compare(said, even), said


def test_blas_past_the_band_and_shares():
    slow = Duel(0.78, 0.03)
    for said in ("about 20% slower", "slower", "much slower", "20 percent slower"):
        assert blas_compare(said, slow), said
    for said in ("level", "level or a little slower", "about the same", "faster",
                 "slightly slower"):
        assert not blas_compare(said, slow), said
    assert blas_compare("about 7% slower", Duel(0.93, 0.02))
    assert not blas_compare("50% slower", Duel(0.93, 0.02))
    assert not blas_compare("a bit slower, maybe 20%", Duel(0.986, 0.02))  # share read
    for said in ("roughly as fast as OpenBLAS", "within a few percent", "within 5%",
                 "nearly as fast", "almost as fast as OpenBLAS", "Nearly as fast."):
        assert blas_compare(said, Duel(0.986, 0.02)), said
        assert not blas_compare(said, Duel(0.7, 0.02)), said
        assert not blas_compare(said, Duel(1.5, 0.02)), said
    assert not blas_compare(3, MEASURED) and not blas_compare("", MEASURED)
