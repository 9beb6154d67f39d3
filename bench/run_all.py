"""Run every benchmark of issue 3 in one go: ``bench/kernels.py`` (the Flex kernels alone, vs
NumPy and torch), ``bench/stack.py`` (the whole minidl stack vs torch eager), then
``bench/steps.py`` (the book's CNN and MLP training steps, one process per contender).

Run from the repository root: ``.venv/bin/python bench/run_all.py [--quick]``. Each script runs
in its own process, one after the other (never two benchmarks at once: their thread pools
would fight for the two cores), started without an inherited ``OPENBLAS_CORETYPE`` pin
(``minidl_book.peers.unpinned_env``), and its output is passed through as it comes.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from minidl_book.peers import environment_pins, unpinned_env  # noqa: E402

SCRIPTS = ("kernels.py", "stack.py", "steps.py")


def main(argv: list[str]) -> int:
    """Run each script with ``argv`` (e.g. ``--quick``); return the first non-zero exit code."""
    start = time.perf_counter()
    if environment_pins():
        print(f"# dropping the inherited {environment_pins()} for every benchmark (peers at their best)")
    for script in SCRIPTS:
        print(f"\n{'=' * 100}\n$ {Path(sys.executable).name} bench/{script} {' '.join(argv)}\n", flush=True)
        code = subprocess.call([sys.executable, str(BENCH / script), *argv], cwd=BENCH.parent,
                               env=unpinned_env())
        if code:
            return code
    print(f"\n(all benchmarks: {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
