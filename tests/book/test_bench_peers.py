"""Benchmarks run peers at their best: ``minidl_book.peers.unpinned_env`` drops the inherited
OpenBLAS pins (and only those), and ``bench/kernels.py`` decides to re-run itself in an
unpinned child exactly when its environment pins a peer (nothing is timed here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from minidl_book import peers

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench_kernels():
    spec = importlib.util.spec_from_file_location("bench_kernels_under_test", ROOT / "bench" / "kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unpinned_env_drops_the_pins_and_keeps_the_rest():
    env = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "1048576", "PATH": "/bin", "OMP_NUM_THREADS": "2"}
    out = peers.unpinned_env(env, NUMBA_CACHE_DIR="/tmp/c")
    assert out == {"PATH": "/bin", "OMP_NUM_THREADS": "2", "NUMBA_CACHE_DIR": "/tmp/c"}
    assert env["OPENBLAS_CORETYPE"] == "Haswell"  # the caller's mapping is left alone
    assert peers.environment_pins(env) == {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "1048576"}
    assert peers.environment_pins(out) == {}


def test_unpinned_env_may_set_a_pin_on_purpose():
    # gemm_isa's AVX2 build sets OPENBLAS_CORETYPE itself, after dropping an inherited one
    out = peers.unpinned_env({"OPENBLAS_CORETYPE": "SkylakeX"}, OPENBLAS_CORETYPE="Haswell")
    assert out == {"OPENBLAS_CORETYPE": "Haswell"}


def test_a_pinned_benchmark_reruns_itself_unpinned(bench_kernels):
    env = {"OPENBLAS_CORETYPE": "Haswell", "PATH": "/bin"}
    plan = bench_kernels.rerun_plan("bench/kernels.py", ["--quick"], env)
    assert plan is not None
    cmd, child = plan
    assert cmd == [sys.executable, "bench/kernels.py", "--quick"]
    assert "OPENBLAS_CORETYPE" not in child and child["PATH"] == "/bin"
    assert "OPENBLAS_CORETYPE=Haswell" in child[bench_kernels.CHILD_MARK]  # the child says what was dropped
    # the child itself never re-runs again, and an unpinned process runs in place
    assert bench_kernels.rerun_plan("bench/kernels.py", [], child) is None
    assert bench_kernels.rerun_plan("bench/kernels.py", [], {"PATH": "/bin"}) is None


def test_gemm_isa_children_drop_inherited_pins_unless_avx2_is_asked(monkeypatch):
    spec = importlib.util.spec_from_file_location("bench_gemm_isa_under_test", ROOT / "bench" / "gemm_isa.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Prescott")
    assert "OPENBLAS_CORETYPE" not in module.child_env(avx2=False)
    avx2 = module.child_env(avx2=True)
    assert avx2["OPENBLAS_CORETYPE"] == "Haswell" and avx2["NUMBA_CPU_FEATURES"] == "-avx512f"


def test_the_peer_report_names_every_side():
    text = peers.format_peer_report({"numba_isa": "avx2", "numba_cpu": "znver3", "numba_threads": 2,
                                     "torch_capability": "AVX2", "torch_threads": 2,
                                     "blas": [{"library": "openblas", "version": "0.3", "core_type": "Zen",
                                               "threads": 2}], "pins": {"OPENBLAS_CORETYPE": "Haswell"}})
    assert "avx2 (znver3)" in text and "CPU capability AVX2" in text and "core type Zen" in text
    assert "WARNING" in text and "OPENBLAS_CORETYPE=Haswell" in text


def test_limit_pools_limits_every_pool_and_the_report_names_who_ran_the_products():
    import numba
    import numpy as np  # noqa: F401
    import threadpoolctl

    with peers.limit_pools(1):
        assert all(pool["num_threads"] == 1 for pool in threadpoolctl.threadpool_info())
        assert numba.get_num_threads() == 1
        report = peers.peer_report()
    text = peers.format_peer_report(report)
    assert "NumPy's a @ b: openblas" in text and "1 thread," in text
    if "torch_blas" in report:
        assert report["torch_threads"] == 1 and "MKL" in report["torch_blas"]
