"""Run every benchmark of issue 3 in one go: ``bench/kernels.py`` (the Flex kernels alone, vs
NumPy and torch), ``bench/stack.py`` (the whole minidl stack vs torch eager), then
``bench/steps.py`` (the book's CNN and MLP training steps, one process per contender).

Run from the repository root: ``.venv/bin/python bench/run_all.py [--quick]``. Each script runs
in its own process, one after the other (never two benchmarks at once: their thread pools
would fight for the two cores), and its output is passed through as it comes.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SCRIPTS = ("kernels.py", "stack.py", "steps.py")


def main(argv: list[str]) -> int:
    """Run each script with ``argv`` (e.g. ``--quick``); return the first non-zero exit code."""
    start = time.perf_counter()
    for script in SCRIPTS:
        print(f"\n{'=' * 100}\n$ {Path(sys.executable).name} bench/{script} {' '.join(argv)}\n", flush=True)
        code = subprocess.call([sys.executable, str(BENCH / script), *argv], cwd=BENCH.parent)
        if code:
            return code
    print(f"\n(all benchmarks: {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
