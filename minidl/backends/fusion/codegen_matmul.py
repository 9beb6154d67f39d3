"""Generate the kernel of a matmul block (burn-cubecl-fusion's ``matmul`` optimization, for a CPU).

It computes ``A @ B`` in 4x4 tiles (B packed transposed, so each output is a dot product of two contiguous rows)
and applies the block's element-wise epilogue (bias add, activation) to each tile before
writing it (fuse on write): the product itself is never stored unless someone holds it.
"""

from __future__ import annotations

from minidl.backends.fusion.codegen import (
    Kernel,
    ParallelLoop,
    _at,
    _broadcast_strides,
    _expr,
    _finish,
    _np,
    _Values,
)
from minidl.backends.fusion.ir import OperationIr, TensorIr


def _tile_lines(dtype: str, ind: str) -> list[str]:
    """A 4x4 block of C = A @ B in the dot-product form (B packed transposed): 16 scalar
    accumulators, the loop over k vectorized by LLVM (fastmath ``reassoc``)."""
    acc = [f"c{r}{c}" for r in range(4) for c in range(4)]
    lines = [f"{ind}{' = '.join(acc[:8])} = {dtype}(0)", f"{ind}{' = '.join(acc[8:])} = {dtype}(0)"]
    lines += [f"{ind}pa{r} = (i0 + {r}) * K" for r in range(4)] + [f"{ind}pb{c} = (j0 + {c}) * K" for c in range(4)]
    lines.append(f"{ind}for kk in range(K):")
    lines += [f"{ind}    ta{r} = A[np.uint64(pa{r} + kk)]" for r in range(4)]
    lines += [f"{ind}    tb{c} = Bt[np.uint64(pb{c} + kk)]" for c in range(4)]
    lines += [f"{ind}    c{r}{c} += ta{r} * tb{c}" for r in range(4) for c in range(4)]
    lines += [f"{ind}tile[{r * 4 + c}] = c{r}{c}" for r in range(4) for c in range(4)]
    return lines


def matmul_kernel(ops: list[OperationIr], writes: list[int]) -> Kernel:
    """``A @ B`` (2-D) followed by its element-wise epilogue, applied to each 4x4 tile of the
    product before it is written (fuse on write): the product itself is never stored unless
    someone holds it."""
    vals = _Values(ops)
    mm = ops[0]
    (m, k), (_, n) = mm.inputs[0].shape, mm.inputs[1].shape
    a_name, b_name = (f"in{vals.ext_index[t.id]}" for t in mm.inputs)
    full = (m, n)
    params = [f"in{p}" for p in range(len(vals.ext))] + [f"out{q}" for q in range(len(writes))]
    params += [f"s{i}" for i in range(len(vals.scalars))] + ["M", "K", "N"]
    meta = [m, k, n]
    dtype = _np(mm.out.dtype)
    ind = "    "
    lines = [
        f"{ind}A = {a_name}",
        f"{ind}Bt = np.empty(N * K, dtype={dtype})",
        ParallelLoop(ind, "jj", "N"),
        f"{ind * 2}for kk in range(K):",
        f"{ind * 3}Bt[np.uint64(jj * K + kk)] = {b_name}[np.uint64(kk * N + jj)]",
        ParallelLoop(ind, "ib", "(M + 3) // 4"),
        f"{ind * 2}i0 = ib * 4",
        f"{ind * 2}tile = np.empty(16, dtype={dtype})",
        f"{ind * 2}for jb in range((N + 3) // 4):",
        f"{ind * 3}j0 = jb * 4",
        f"{ind * 3}if i0 + 4 <= M and j0 + 4 <= N:",
        *_tile_lines(dtype, ind * 4),
        f"{ind * 3}else:",
        f"{ind * 4}for r in range(min(4, M - i0)):",
        f"{ind * 5}for c in range(min(4, N - j0)):",
        f"{ind * 6}acc = {dtype}(0)",
        f"{ind * 6}for kk in range(K):",
        f"{ind * 7}acc += A[np.uint64((i0 + r) * K + kk)] * Bt[np.uint64((j0 + c) * K + kk)]",
        f"{ind * 6}tile[r * 4 + c] = acc",
        f"{ind * 3}for r in range(min(4, M - i0)):",
        f"{ind * 4}i = i0 + r",
        f"{ind * 4}for c in range(min(4, N - j0)):",
        f"{ind * 5}j = j0 + c",
        f"{ind * 5}v0 = tile[r * 4 + c]",
    ]
    deep = ind * 5

    def name_of(t: TensorIr) -> str:
        return f"v{vals.produced[t.id]}" if t.id in vals.produced else f"x{vals.ext_index[t.id]}"

    for p, t in enumerate(vals.ext):
        if not any(name_of(u) == f"x{p}" for op in ops[1:] for u in op.inputs):
            continue
        st = _broadcast_strides(t.shape, full)
        terms = [term for term in (("i" if st[0] == 1 else f"i * {st[0]}") if st[0] else None,
                                   ("j" if st[1] == 1 else f"j * {st[1]}") if st[1] else None) if term]
        lines.append(f"{deep}x{p} = {_at(f'in{p}', ' + '.join(terms) or '0')}")
    for j, op in enumerate(ops[1:], start=1):
        lines.append(f"{deep}v{j} = {_expr(op, [name_of(t) for t in op.inputs], vals.scalar_args(j))}")
    for q, j in enumerate(writes):
        lines.append(f"{deep}{_at(f'out{q}', 'i * N + j')} = v{j}")
    body = vals.scalar_casts(ind) + lines
    kinds = [op.kind for op in ops]
    name, source, module = _finish("matmul", "matmul with epilogue", body, params, kinds)
    read = sum(t.nbytes for t in vals.ext)
    written = sum(ops[j].out.nbytes for j in writes)
    return Kernel(name, source, module, vals.slots, list(writes), vals.scalars, meta, m * n * max(k, 1) // 8,
                  kinds, read, written)
