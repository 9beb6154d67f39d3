"""The instruction set the kernels are compiled for, and the gemm tile it picks (no compiling)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from minidl.backends.flex.kernels import isa


@pytest.mark.parametrize(
    ("name", "features", "expected"),
    [
        ("haswell", "-avx512f", "avx2"),
        ("haswell", "+avx2,+fma", "avx2"),
        ("skylake-avx512", "+avx2", "avx512"),
        ("znver4", "+avx2,+fma", "avx512"),
        ("generic", "+avx2,+fma,+avx512f", "avx512"),
        ("znver4", "+avx2,-avx512f", "avx2"),
    ],
)
def test_detect_reads_numba_cpu_name_and_features(monkeypatch, name, features, expected):
    monkeypatch.setenv("NUMBA_CPU_NAME", name)
    monkeypatch.setenv("NUMBA_CPU_FEATURES", features)
    assert isa.detect() == expected


def test_a_cpu_name_alone_keeps_the_hosts_features(monkeypatch):
    # numba passes the host's features whenever NUMBA_CPU_FEATURES is unset, whatever the name
    monkeypatch.setenv("NUMBA_CPU_NAME", "haswell")
    monkeypatch.delenv("NUMBA_CPU_FEATURES", raising=False)
    with open("/proc/cpuinfo") as f:
        host = "avx512" if "avx512f" in f.read() else "avx2"
    assert isa.detect() == host


def test_the_host_isa_matches_proc_cpuinfo(monkeypatch):
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    monkeypatch.delenv("NUMBA_CPU_FEATURES", raising=False)
    with open("/proc/cpuinfo") as f:
        host = "avx512" if "avx512f" in f.read() else "avx2"
    assert isa.detect() == host


_PROBE = (
    "from minidl.backends.flex.kernels import gemm, gemm_pack, isa;"
    "print(isa.ISA, gemm.MR, gemm.NR, gemm.LANES, gemm.MC % gemm.MR,"
    " len(gemm_pack.block_task.signatures), len(gemm_pack.gemm_parallel.signatures))"
)


@pytest.mark.parametrize(("cpu", "expected"), [("haswell", "avx2 6 16 8 0 0 0"),
                                                ("skylake-avx512", "avx512 12 32 16 0 0 0")])
def test_gemm_picks_its_tile_at_import_without_compiling(cpu, expected):
    features = isa.AVX2_BUILD["NUMBA_CPU_FEATURES"] if cpu == "haswell" else "+avx512f"
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES=features)
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == expected.split()
