"""Flex kernel benchmarks: Flex (numba) side by side with NumPy (OpenBLAS) and torch (oneDNN/MKL)
in one run, as medians over repeats after a warm-up, printed as ratios.

Run from the repository root::

    .venv/bin/python bench/kernels.py            # everything (about 2-4 minutes)
    .venv/bin/python bench/kernels.py --quick    # fewer repeats, no cold-compile probe

A ratio is ``other time / Flex time``: above 1 Flex is faster. See ``bench/README.md``.

Thread pools fight (ARCHITECTURE.md, "Performance facts"): numba's OpenMP workers, OpenBLAS's and torch's all spin for a
while after a parallel call, and this machine has two cores. So the contenders never
interleave inside a timed loop: each is timed in its own block of repeats, followed by a
pause that lets its threads go to sleep, and the blocks of all contenders alternate over
several rounds (so a noisy neighbour hurts all of them alike). The median is over all the
repeats of all rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))

import numpy as np  # noqa: E402

from minidl_book.peers import environment_pins, format_peer_report, limit_pools, unpinned_env  # noqa: E402

PAUSE = 0.08  # seconds between blocks: spinning pool threads go back to sleep


# ---------------------------------------------------------------------------------------------
# Peers at their best: a pinned environment re-runs the benchmark in an unpinned child
# ---------------------------------------------------------------------------------------------

#: set in the child's environment so it never re-runs itself again
CHILD_MARK = "MINIDL_BENCH_UNPINNED_CHILD"


def rerun_plan(script: str, argv: list[str], env: dict[str, str] | None = None):
    """``(command, environment)`` that re-runs ``script`` unpinned when ``env`` (default: this
    process's) pins a peer (``OPENBLAS_CORETYPE``, ...), else ``None``. The pin is read when
    NumPy loads its OpenBLAS, so this process cannot drop it; a child started without it can."""
    env = dict(os.environ if env is None else env)
    if not environment_pins(env) or env.get(CHILD_MARK):
        return None
    dropped = ", ".join(f"{k}={v}" for k, v in environment_pins(env).items())
    child = unpinned_env(env, **{CHILD_MARK: dropped})
    return [sys.executable, script, *argv], child


def rerun_unpinned_if_pinned(script: str, argv: list[str]) -> None:
    """Re-run ``script`` in an unpinned child and exit with its code, if this process is pinned."""
    plan = rerun_plan(script, argv)
    if plan is None:
        return
    cmd, env = plan
    print(f"# this process inherited {env[CHILD_MARK]}: re-running in a child without it, so "
          "each peer picks its own kernels\n", flush=True)
    sys.exit(subprocess.call(cmd, env=env))


_PEERS: list[str] = []


def peers_line() -> str:
    """:func:`format_peer_report` of this process (computed once), and a note if a pin was dropped."""
    if not _PEERS:
        text = format_peer_report()
        try:
            import torch

            text += (f"\ntorch backends: oneDNN {torch.backends.mkldnn.is_available()}, "
                     f"MKL {torch.backends.mkl.is_available()}")
        except ImportError:
            pass
        if os.environ.get(CHILD_MARK):
            text += f"\n(the parent's {os.environ[CHILD_MARK]} was dropped for this run)"
        _PEERS.append(text)
    return _PEERS[0]


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


def _block(fn: Callable[[], object], reps: int) -> list[float]:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def compare(contenders: dict[str, Callable[[], object]], budget: float, rounds: int) -> dict:
    """Median and best time of each contender: warm-up, then ``rounds`` rounds in which every
    contender runs one block of repeats (about ``budget / rounds / len`` seconds each)."""
    reps = {}
    for name, fn in contenders.items():
        fn()  # warm-up (and compile, if a kernel is not cached yet)
        t0 = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        reps[name] = int(min(max(3, budget / rounds / len(contenders) / one), 2000))
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            times[name] += _block(fn, reps[name])
            time.sleep(PAUSE)
    return {n: (float(np.median(t)), float(np.min(t)), len(t)) for n, t in times.items()}


def _fmt_t(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    return f"{s * 1e3:8.2f} ms"


def table(title: str, rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"\n## {title}\n")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    print("peers: " + peers_line().replace("\n", "\n       "))


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------


def bench_gemm(sizes: list[int], scale: float) -> list[dict]:
    import torch

    from minidl.backends.flex.kernels import gemm

    rows, out = [], []
    rng = np.random.default_rng(0)
    for n in sizes:
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        res = compare(
            {
                "flex": lambda a=a, b=b: gemm.matmul(a, b),
                "numpy": lambda a=a, b=b: a @ b,
                "torch": lambda ta=ta, tb=tb: torch.mm(ta, tb),
            },
            budget=scale * (1.5 if n < 2048 else 6.0),
            rounds=5,
        )
        gf = {k: 2 * n**3 / v[0] / 1e9 for k, v in res.items()}
        best = {k: 2 * n**3 / v[1] / 1e9 for k, v in res.items()}
        rows.append(
            [f"{n}", f"{gf['flex']:.0f} ({best['flex']:.0f})", f"{gf['numpy']:.0f} ({best['numpy']:.0f})",
             f"{gf['torch']:.0f} ({best['torch']:.0f})", f"{gf['flex'] / gf['numpy']:.2f}",
             f"{gf['flex'] / gf['torch']:.2f}", f"{res['flex'][2]}"]
        )  # fmt: skip
        out.append({"n": n, "gflops_median": gf, "gflops_best": best})
    table(
        "gemm float32, n x n @ n x n: GFLOP/s, median (best)",
        rows,
        ["n", "flex", "numpy", "torch.mm", "flex/numpy", "flex/torch", "repeats"],
    )
    print("target: flex/numpy >= 0.95 at n = 1024 and 2048 (NumPy's OpenBLAS on its native kernels)")
    return out


def _ratio_rows(res: dict, base: str = "flex") -> list[list[str]]:
    rows = []
    for name, (med, best, n) in res.items():
        ratio = "1.00" if name == base else f"{med / res[base][0]:.2f}"
        rows.append([name, _fmt_t(med), _fmt_t(best), ratio, str(n)])
    return rows


HEADER = ["impl", "median", "best", "ratio (its time / flex)", "repeats"]


def bench_conv(scale: float) -> dict:
    import torch
    import torch.nn.functional as F

    from minidl.backends.flex.kernels import conv, conv_tile, conv_wgrad, isa

    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 16, 32, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    go = rng.standard_normal((32, 32, 32, 32)).astype(np.float32)
    xt, wt, bt, got = map(torch.from_numpy, (x, w, b, go))
    res = compare(
        {
            "flex": lambda: conv.conv2d(x, w, b, 1, 1),
            "torch": lambda: F.conv2d(xt, wt, bt, padding=1),
        },
        budget=scale * 4.0,
        rounds=5,
    )
    tile = conv_tile.tile_shape(32)
    table(
        f"conv2d N=32 C=16 32x32, K=32 3x3, pad 1 (float32; {isa.ISA}: {conv_tile.LANES}-lane "
        f"vectors, {tile[0]}x{tile[1]} tile)",
        _ratio_rows(res),
        HEADER,
    )
    flops = 2 * 32 * 32 * 32 * 32 * 16 * 9
    print(f"flex {flops / res['flex'][0] / 1e9:.0f} GFLOP/s, torch "
          f"{flops / res['torch'][0] / 1e9:.0f} GFLOP/s (median); target: torch/flex >= 0.8")  # fmt: skip

    def torch_grad(mask):
        return lambda: torch.ops.aten.convolution_backward(
            got, xt, wt, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, mask
        )

    backward = {}
    for name, flex_fn, torch_fn in (
        ("input", lambda: conv.conv2d_x_backward(go, w, x.shape, 1, 1), [True, False, False]),
        ("weight", lambda: conv.conv2d_weight_backward(x, go, w.shape, 1, 1), [False, True, False]),
    ):
        backward[name] = compare(
            {"flex": flex_fn, "torch": torch_grad(torch_fn)}, budget=scale * 3.0, rounds=5
        )
        extra = ""
        if name == "weight":
            extra = f"; {conv_wgrad.NR} positions x {conv_wgrad.KV} channel vectors tile"
        table(f"conv2d backward, gradient of the {name} (same shapes{extra})",
              _ratio_rows(backward[name]), HEADER)  # fmt: skip
    return {"forward": res, **backward}


def bench_layer_norm(scale: float) -> dict:
    import torch
    import torch.nn.functional as F

    from minidl.backends.flex.kernels import norm

    rng = np.random.default_rng(2)
    x = rng.standard_normal((4096, 1024)).astype(np.float32)
    g = rng.standard_normal(1024).astype(np.float32)
    b = rng.standard_normal(1024).astype(np.float32)
    xt, gt, bt = map(torch.from_numpy, (x, g, b))
    res = compare(
        {
            "flex": lambda: norm.layer_norm(x, g, b),
            "torch": lambda: F.layer_norm(xt, (1024,), gt, bt),
            "numpy": lambda: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b,
        },
        budget=scale * 4.0,
        rounds=5,
    )  # fmt: skip
    table("layer_norm [4096, 1024] float32 (gamma, beta)", _ratio_rows(res), HEADER)
    print("target: torch/flex >= 1.0")
    return res


def bench_relu_affine(scale: float) -> dict:
    import torch

    from minidl.backends.flex.kernels import elementwise as ew

    rng = np.random.default_rng(3)
    x = rng.standard_normal(4 * 1024 * 1024).astype(np.float32)
    xt = torch.from_numpy(x)
    res = compare(
        {
            "flex": lambda: ew.relu_affine(x, 1.5, -0.25),
            "numpy": lambda: np.maximum(x * np.float32(1.5) + np.float32(-0.25), 0),
            "torch": lambda: torch.relu(xt * 1.5 + (-0.25)),
        },
        budget=scale * 4.0,
        rounds=5,
    )
    table(
        "relu(x * a + b) on 4M float32 (fused Flex kernel vs three eager ops)",
        _ratio_rows(res),
        HEADER,
    )
    print("target: torch/flex >= 3 (each side allocates its output)")
    return res


#: (name, Flex call, torch call) on x (1M float32 normal * 3) or xp = |x| + 0.1
_TRANSCENDENTAL = [
    ("exp", lambda u, x, xp: u.unary("exp", x), lambda torch, F, t, tp: torch.exp(t)),
    ("log", lambda u, x, xp: u.unary("log", xp), lambda torch, F, t, tp: torch.log(tp)),
    ("tanh", lambda u, x, xp: u.unary("tanh", x), lambda torch, F, t, tp: torch.tanh(t)),
    ("sigmoid", lambda u, x, xp: u.unary("sigmoid", x), lambda torch, F, t, tp: torch.sigmoid(t)),
    ("erf", lambda u, x, xp: u.unary("erf", x), lambda torch, F, t, tp: torch.erf(t)),
    ("gelu", lambda u, x, xp: u.unary("gelu", x), lambda torch, F, t, tp: F.gelu(t)),
    ("gelu (tanh form)", lambda u, x, xp: u.unary("gelu_tanh", x),
     lambda torch, F, t, tp: F.gelu(t, approximate="tanh")),
    ("sin", lambda u, x, xp: u.unary("sin", x), lambda torch, F, t, tp: torch.sin(t)),
    ("cos", lambda u, x, xp: u.unary("cos", x), lambda torch, F, t, tp: torch.cos(t)),
    ("powf_scalar 2.7", lambda u, x, xp: u.powf_scalar(xp, 2.7), lambda torch, F, t, tp: torch.pow(tp, 2.7)),
]  # fmt: skip


def bench_transcendental(scale: float) -> dict:
    import torch
    import torch.nn.functional as F

    from minidl.backends.flex.kernels import unary

    x = (np.random.default_rng(4).standard_normal(1 << 20) * 3).astype(np.float32)
    xp = np.abs(x) + np.float32(0.1)
    t, tp = torch.from_numpy(x), torch.from_numpy(xp)
    rows, out = [], {}
    for name, flex_fn, torch_fn in _TRANSCENDENTAL:
        res = compare(
            {"flex": lambda f=flex_fn: f(unary, x, xp), "torch": lambda f=torch_fn: f(torch, F, t, tp)},
            budget=scale * 1.5,
            rounds=5,
        )
        out[name] = res
        (fm, fb, n), (tm, tb, _) = res["flex"], res["torch"]
        rows.append([name, f"{_fmt_t(fm)} ({_fmt_t(fb).strip()})", f"{_fmt_t(tm)} ({_fmt_t(tb).strip()})",
                     f"{tm / fm:.2f}", str(n)])  # fmt: skip
    table("transcendental kernels, 1M float32: median (best)", rows,
          ["op", "flex", "torch", "torch/flex (> 1: flex faster)", "repeats"])  # fmt: skip
    print("target: torch/flex >= 1.0 for tanh, erf, gelu, cos, powf_scalar; every float32 result within "
          "2 ulp of the correctly rounded one (tests/flex_kernels/test_vmath_transcendental.py)")
    return out


def bench_tiny(scale: float) -> dict:
    import torch

    from minidl.backends.flex.kernels import elementwise as ew

    a = np.ones((4, 4), np.float32)
    ta = torch.from_numpy(a)
    res = compare(
        {"flex": lambda: ew.add(a, a), "numpy": lambda: a + a, "torch": lambda: ta + ta},
        budget=scale * 1.0,
        rounds=5,
    )
    table(
        "tiny 4x4 add, kernel wrapper only (no tensor stack): time per op", _ratio_rows(res), HEADER
    )
    return res


# ---------------------------------------------------------------------------------------------
# Compile cost: first call in a fresh process, cold cache vs warm cache
# ---------------------------------------------------------------------------------------------


def _probe_cases():
    """(name, callable) pairs, each the first call of one kernel in this process."""
    from minidl.backends.flex.kernels import (
        conv,
        copy,
        elementwise,
        gemm,
        norm,
        pool,
        reduce,
        rng,
        softmax,
    )  # fmt: skip

    r = np.random.default_rng(0)
    small = r.standard_normal((8, 8)).astype(np.float32)
    big = r.standard_normal((256, 256)).astype(np.float32)
    img = r.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = r.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bimg = r.standard_normal((32, 16, 32, 32)).astype(np.float32)
    bw = r.standard_normal((32, 16, 3, 3)).astype(np.float32)
    vec = r.standard_normal(1 << 17).astype(np.float32)
    return [
        ("copy.full (serial; numba's one-time init)", lambda: copy.full((4,), 1.0, np.float32)),
        ("gemm.matmul 8x8 (serial)", lambda: gemm.matmul(small, small)),
        ("gemm.matmul 256x256 (parallel)", lambda: gemm.matmul(big, big)),
        ("conv.conv2d small (serial)", lambda: conv.conv2d(img, w, None, 1, 1)),
        ("conv.conv2d bench shape (parallel)", lambda: conv.conv2d(bimg, bw, None, 1, 1)),
        ("norm.layer_norm 8x8 (serial)", lambda: norm.layer_norm(small)),
        ("softmax.softmax 8x8 (serial)", lambda: softmax.softmax(small)),
        ("reduce.sum dim (serial)", lambda: reduce.sum(small, 1)),
        ("elementwise.add (serial)", lambda: elementwise.add(small, small)),
        ("elementwise.relu_affine 128K (parallel)", lambda: elementwise.relu_affine(vec, 2.0, 1.0)),
        ("elementwise.exp (serial)", lambda: elementwise.exp(small)),
        ("pool.max_pool2d (serial)", lambda: pool.max_pool2d(img, 2)),
        ("rng.uniform (serial)", lambda: rng.RngState(0).uniform((16,))),
    ]


def probe() -> None:
    """Child process: time the import and the first call of each kernel, print JSON."""
    t0 = time.perf_counter()
    import numba  # noqa: F401

    t_numba = time.perf_counter() - t0
    t0 = time.perf_counter()
    import minidl.backends.flex.kernels  # noqa: F401

    t_import = time.perf_counter() - t0
    result = {"import numba": t_numba, "import minidl...kernels": t_import}
    for name, fn in _probe_cases():
        t0 = time.perf_counter()
        fn()
        result[name] = time.perf_counter() - t0
    print(json.dumps(result))


def bench_compile() -> None:
    with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
        env = unpinned_env(NUMBA_CACHE_DIR=cache)
        runs = []
        for _ in ("cold", "warm"):
            proc = subprocess.run(
                [sys.executable, __file__, "--probe"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    rows = [
        [k, _fmt_t(cold[k]), _fmt_t(warm[k]), f"{cold[k] / max(warm[k], 1e-9):.0f}x"] for k in cold
    ]
    table(
        "first call in a fresh process: empty numba cache (compile) vs populated cache",
        rows,
        ["step", "cold cache", "warm cache", "cold / warm"],
    )
    print(f"total first calls: cold {sum(cold.values()):.1f} s, warm {sum(warm.values()):.2f} s")


# ---------------------------------------------------------------------------------------------


def threading_report() -> None:
    import numba
    import threadpoolctl
    import torch

    from minidl.backends.flex.kernels import elementwise as ew

    ew.relu_affine(np.ones(1 << 17, np.float32), 1.0, 0.0)  # start numba's pool
    print("## threads\n")
    print("contenders are timed in separate blocks with pauses between them (never interleaved")
    print("inside a timed loop): the pools of numba, OpenBLAS and torch each spin after a call")
    print(f"numba {numba.__version__}: threading layer {numba.threading_layer()!r}, "
          f"{numba.get_num_threads()} threads (NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS})")  # fmt: skip
    print(f"torch {torch.__version__}: {torch.get_num_threads()} intra-op threads")
    for pool in threadpoolctl.threadpool_info():
        print(f"threadpoolctl: {pool['user_api']}/{pool['internal_api']} {pool.get('version', '')} "
              f"{pool['num_threads']} threads ({Path(pool['filepath']).name})")  # fmt: skip
    print(
        f"cpus: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} (a shared machine: ratios"
    )
    print("within one run are comparable, absolute times drift with the neighbours' load)")
    print("\n## peers (kernel choices, threads, ISA)\n")
    print(peers_line())


SECTIONS = ("gemm", "conv2d", "layer_norm", "relu_affine", "transcendental", "tiny_add")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, no compile probe")
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help="also write the results as JSON here")
    ap.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        help="run only these sections (default: all)",
    )
    ap.add_argument(
        "--threads",
        type=int,
        help="limit numba, torch and BLAS to this many threads (1: a like-for-like single-core "
        "comparison that a busy neighbour on the other core barely disturbs)",
    )
    args = ap.parse_args()
    if args.probe:
        probe()
        return
    rerun_unpinned_if_pinned(__file__, sys.argv[1:])
    # every pool held at --threads for the whole run, SciPy's OpenBLAS included: limit_pools
    # imports it first (it loads late, with scipy.linalg, and a limit set before misses it)
    with limit_pools(args.threads) if args.threads else contextlib.nullcontext():
        run_sections(args)


def run_sections(args: argparse.Namespace) -> None:
    """The report, then each section asked for, then the compile probe."""
    t_start = time.perf_counter()
    scale = 0.4 if args.quick else 1.0
    print("# Flex kernel benchmarks (median (best) over repeats; ratio > 1: Flex faster)\n")
    threading_report()
    sections = {
        "gemm": lambda: bench_gemm([256, 512, 1024, 2048], scale),
        "conv2d": lambda: bench_conv(scale),
        "layer_norm": lambda: bench_layer_norm(scale),
        "relu_affine": lambda: bench_relu_affine(scale),
        "transcendental": lambda: bench_transcendental(scale),
        "tiny_add": lambda: bench_tiny(scale),
    }
    results = {k: fn() for k, fn in sections.items() if not args.only or k in args.only}
    if not args.quick and not args.only:
        bench_compile()
    print(f"\n(whole run: {time.perf_counter() - t_start:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
