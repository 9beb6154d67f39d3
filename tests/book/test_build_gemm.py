"""The performance chapter's two build-its (loop swap, 4 x 8 register tile): the right kernel
passes, each slip is named."""

import numpy as np

from minidl_book.build_gemm import LoopSwap, RegisterTile, reference, tile_reference


def not_zeroed(a, b, c):
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            for j in range(b.shape[1]):
                c[i, j] += a[i, p] * b[p, j]


def overwrite(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            for j in range(b.shape[1]):
                c[i, j] = a[i, p] * b[p, j]


def swapped(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            for j in range(b.shape[1]):
                c[j, i] += a[i, p] * b[p, j]


def same_order(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            for p in range(a.shape[1]):
                c[i, j] += a[i, p] * b[p, j]


def bound_slip(a, b, c):  # j's range taken from A's columns: past B's end when k > n
    c[:] = 0
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            for j in range(a.shape[1]):
                c[i, j] += a[i, p] * b[p, j]


def placeholder(a, b, c):
    ...


def test_slips_are_named_and_the_solution_passes(capsys):
    ex = LoopSwap(np.ones((4, 8), np.float32), np.ones((8, 8), np.float32), rows=4,
                  naive_rows=2)
    assert ex.slip(reference) is None
    assert ex.slip(not_zeroed) == "not zeroed"
    assert ex.slip(overwrite) == "overwrite"
    assert ex.slip(swapped) == "swapped"
    assert ex.slip(same_order) == "column"
    assert ex.check(placeholder) is False and ex.kernel is None
    assert ex.check(swapped) is False and "swapped" in capsys.readouterr().out
    assert ex.check(reference) is True and ex.kernel is not None
    point = ex.point()
    assert point.name == "i-k-j (yours)" and point.intensity == 0.5


def library(a, b, c):
    c[:] = a @ b


def library_dot(a, b, c):
    c[:] = np.dot(a, b)


def jpi(a, b, c):  # innermost i: walks C and A down their columns
    c[:] = 0
    for j in range(b.shape[1]):
        for p in range(a.shape[1]):
            for i in range(a.shape[0]):
                c[i, j] += a[i, p] * b[p, j]


def row_slice(a, b, c):  # the right order, but a temporary array per step
    c[:] = 0
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            c[i, :] += a[i, p] * b[p, :]


def column_slice(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            c[i, j] = np.sum(a[i, :] * b[:, j])


def test_library_calls_other_orders_and_row_slices(capsys):
    ex = LoopSwap(np.ones((4, 8), np.float32), np.ones((8, 8), np.float32), rows=4,
                  naive_rows=2)
    assert ex.slip(library) == "library"
    assert ex.slip(library_dot) == "library"
    assert ex.check(library) is False and "no @" in capsys.readouterr().out
    assert ex.slip(jpi) == "across"
    assert ex.slip(column_slice) == "column"
    assert ex.slip(row_slice) == "slice"
    assert ex.check(row_slice) is False and "temporary" in capsys.readouterr().out


def kij(a, b, c):  # right values, but p outermost: not naive's loops with the inner two swapped
    c[:] = 0
    for p in range(a.shape[1]):
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                c[i, j] += a[i, p] * b[p, j]


def zero_each_row(a, b, c):  # right: C zeroed row by row, inside the loop over i
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            c[i, j] = 0
        for p in range(a.shape[1]):
            for j in range(b.shape[1]):
                c[i, j] += a[i, p] * b[p, j]


def test_the_outer_loop_stays_over_i():
    ex = LoopSwap(np.ones((4, 8), np.float32), np.ones((8, 8), np.float32), rows=4)
    assert ex.slip(kij) == "kij"
    assert ex.slip(zero_each_row) is None


def tile_in_c(a, b, c):  # the tile's order, but every sum kept in C
    c[:] = 0
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            for p in range(a.shape[1]):
                for r in range(4):
                    for q in range(8):
                        c[i + r, j + q] += a[i + r, p] * b[p, j + q]


def tile_not_restarted(a, b, c):  # local sums, but not set to 0 for each tile
    s = np.zeros((4, 8), np.float32)
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            for p in range(a.shape[1]):
                for r in range(4):
                    x = a[i + r, p]
                    for q in range(8):
                        s[r, q] += x * b[p, j + q]
            c[i:i + 4, j:j + 8] = s


def tile_local_array(a, b, c):  # right: the 32 sums in a small local array
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            s = np.zeros((4, 8), np.float32)
            for p in range(a.shape[1]):
                for r in range(4):
                    x = a[i + r, p]
                    for q in range(8):
                        s[r, q] += x * b[p, j + q]
            c[i:i + 4, j:j + 8] = s


def tile_written_back_in_a_loop(a, b, c):  # right: the sums leave s after the reduction
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            s = np.zeros((4, 8), np.float32)
            for p in range(a.shape[1]):
                for r in range(4):
                    for q in range(8):
                        s[r, q] += a[i + r, p] * b[p, j + q]
            for r in range(4):
                for q in range(8):
                    c[i + r, j + q] = s[r, q]


def tile_in_c_assigned(a, b, c):  # a sum kept in C, written c[..] = c[..] + ..
    c[:] = 0
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            for p in range(a.shape[1]):
                for r in range(4):
                    x = a[i + r, p]
                    for q in range(8):
                        c[i + r, j + q] = c[i + r, j + q] + x * b[p, j + q]


def tile_outer(a, b, c):  # right values, but np.outer builds a temporary per step
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            s = np.zeros((4, 8), np.float32)
            for p in range(a.shape[1]):
                s += np.outer(a[i:i + 4, p], b[p, j:j + 8])
            c[i:i + 4, j:j + 8] = s


def tile_row_slices(a, b, c):  # right values, a slice of B per row and step
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            s = np.zeros((4, 8), np.float32)
            for p in range(a.shape[1]):
                for r in range(4):
                    s[r] += a[i + r, p] * b[p, j:j + 8]
            c[i:i + 4, j:j + 8] = s


def tile_wrong_column(a, b, c):
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            s = np.zeros((4, 8), np.float32)
            for p in range(a.shape[1]):
                for r in range(4):
                    for q in range(8):
                        s[r, q] += a[i + r, p] * b[p, j]
            c[i:i + 4, j:j + 8] = s


def test_register_tile_slips_are_named_and_the_solution_passes(capsys):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    ex = RegisterTile(a, b, rows=8, naive_rows=2)
    assert ex.slip(tile_reference) is None and ex.slip(tile_local_array) is None
    assert ex.slip(tile_in_c) == "in C"
    # C written from the locals by a loop after the reduction is the write-back, not a slip
    assert ex.slip(tile_written_back_in_a_loop) is None
    assert ex.slip(tile_in_c_assigned) == "in C"
    assert ex.slip(tile_not_restarted) == "not zeroed"
    assert ex.slip(tile_wrong_column) == "wrong"
    assert ex.slip(library) == "library"
    # no register tile: a temporary array per step (Ex 2's no-slices rule)
    assert ex.slip(tile_outer) == "slice" and ex.slip(tile_row_slices) == "slice"
    assert ex.check(tile_in_c) is False and "local variables" in capsys.readouterr().out
    assert ex.point().name == "4×8 tile (solution)"
    assert ex.check(tile_reference) is True and ex.kernel is not None
    point = ex.point()
    assert point.name == "4×8 tile (yours)" and point.intensity == 2 * 32 / (4 * 12)


def _from_cell(source: str, name: str):
    """``name`` compiled from source text as a notebook cell would (not imported): the
    checker reads its source back through linecache, as in a live notebook."""
    import linecache

    filename = f"/tmp/ipykernel_0/{abs(hash(source))}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__", "np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


TYPED_KIJ = """
def ikj(a, b, c):
    c[:] = 0
    for p in range(a.shape[1]):
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                c[i, j] += a[i, p] * b[p, j]
"""

TYPED_SLICE = """
def ikj(a, b, c):
    c[:] = 0
    for i in range(a.shape[0]):
        for p in range(a.shape[1]):
            c[i, :] += a[i, p] * b[p, :]
"""

TYPED_IKJ = """
def ikj(a, b, c):
    m, k = a.shape
    c[:] = 0
    for i in range(m):
        for p in range(k):
            for j in range(b.shape[1]):
                c[i, j] += a[i, p] * b[p, j]
"""

TYPED_TILE_IN_C = """
def tile(a, b, c):
    c[:] = 0
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            for p in range(a.shape[1]):
                for r in range(4):
                    for q in range(8):
                        c[i + r, j + q] += a[i + r, p] * b[p, j + q]
"""

TYPED_TILE = """
def tile(a, b, c):
    for i in range(0, a.shape[0], 4):
        for j in range(0, b.shape[1], 8):
            s = np.zeros((4, 8), np.float32)
            for p in range(a.shape[1]):
                for r in range(4):
                    x = a[i + r, p]
                    for q in range(8):
                        s[r, q] += x * b[p, j + q]
            c[i:i + 4, j:j + 8] = s
"""


def test_kernels_typed_into_a_cell_get_the_verdicts(capsys):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    ikj = LoopSwap(a, b, rows=8, naive_rows=2)
    assert ikj.check(_from_cell(TYPED_KIJ, "ikj")) is False
    assert "k-i-j" in capsys.readouterr().out
    assert ikj.check(_from_cell(TYPED_SLICE, "ikj")) is False
    assert "temporary" in capsys.readouterr().out
    assert ikj.check(_from_cell(TYPED_IKJ, "ikj")) is True
    assert "i-k-j (yours)" in capsys.readouterr().out
    tile = RegisterTile(a, b, rows=8, naive_rows=2)
    assert tile.check(_from_cell(TYPED_TILE_IN_C, "tile")) is False
    assert "local variables" in capsys.readouterr().out
    assert tile.check(_from_cell(TYPED_TILE, "tile")) is True
    assert tile.point().name == "4×8 tile (yours)"


def test_an_index_past_the_end_is_not_called_swapped(capsys):
    """A range bound taken from the wrong shape raises IndexError, as C[j, i] does on a C
    that is not square: only the latter is named "swapped"."""
    ex = LoopSwap(np.ones((4, 8), np.float32), np.ones((8, 8), np.float32), rows=4,
                  naive_rows=2)
    assert ex.slip(bound_slip) == "bounds"
    assert ex.check(bound_slip) is False
    out = capsys.readouterr().out
    assert "swapped" not in out and "range" in out
    assert ex.slip(swapped) == "swapped"


def test_a_rebound_c_is_named():
    """c = np.zeros(...) inside the kernel leaves the caller's C untouched: the hint says
    so, not the generic 'compare your loops with naive's'."""

    def rebound(a, b, c):
        c = np.zeros((a.shape[0], b.shape[1]), np.float32)
        for i in range(a.shape[0]):
            for p in range(a.shape[1]):
                for j in range(b.shape[1]):
                    c[i, j] += a[i, p] * b[p, j]

    ex = LoopSwap(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))
    assert ex.slip(rebound) == "untouched"
