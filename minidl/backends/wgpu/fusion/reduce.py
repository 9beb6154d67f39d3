"""The GPU's kernel for a reduce block: reductions with their element-wise prologue (fused on
read), the ops on their results and the epilogue that broadcasts them back over the row, as one
WGSL kernel (burn-cubecl-fusion's ``ReduceOptimization`` / ``ReduceBroadcastedFuser``, a
``layer_norm`` in one dispatch).

One thread per row (the block's shape with the reduced dims taken out, whichever they are: on
a GPU a sum across rows, a bias gradient, reads coalesced across threads), as eager Wgpu's
reduce kernel does: it walks the reduced elements once per *level* (a reduction that reads another's
result needs a second pass), recomputing the element-wise values it needs in each pass instead
of storing them, and writes only the results someone holds. Values come from the block's IR
(:func:`~minidl.fusion.kernel.reduce_levels`), as in Flex's numba generator; the
element-wise expressions are eager Wgpu's, and sums run in eager's order (fused == eager).
"""

from __future__ import annotations

import numpy as np

from minidl.backends.wgpu import ops, shaders
from minidl.backends.wgpu.fusion import io
from minidl.backends.wgpu.fusion.codegen import _expr, _name
from minidl.backends.wgpu.fusion.io import wgsl_type
from minidl.backends.wgpu.runtime import groups_1d
from minidl.backends.wgpu.tensor import c_strides
from minidl.fusion.ir import REDUCE, OperationIr
from minidl.fusion.kernel import BlockValues, Kernel, Value, reduce_levels

MAXD = shaders.MAXD

#: (start, update) of each reduction: NaN propagates through max and min, as eagerly
UPDATE = {
    "sum_dim": ("0.0", "{acc} + {x}"),
    "sum": ("0.0", "{acc} + {x}"),
    "max_dim": ("-inf()", "select({acc}, {x}, {x} > {acc} || is_nan({x}))"),
    "min_dim": ("inf()", "select({acc}, {x}, {x} < {acc} || is_nan({x}))"),
}


class WgslReduceKernel(Kernel):
    """A reduce block as one WGSL dispatch, one thread per row. Sizes are written into the
    source (a plan is made per shape); offsets and strides of the inputs, which may be views,
    and the scalars travel in ``p``: ``rows, reduced length, scalars..., then per input offset,
    outer strides[MAXD], inner strides[MAXD]``."""

    language = "wgsl"

    def __init__(
        self,
        ops_: list[OperationIr],
        full: tuple[int, ...],
        reduced: tuple[int, ...],
        writes: list[int],
    ):
        full = tuple(full) if full else (1,)
        vals = BlockValues(ops_)
        is_full, level = reduce_levels(vals, full, reduced)
        self.full, self.reduced = full, tuple(reduced)
        self.outer = [d for d in range(len(full)) if d not in reduced]
        self.inner = [d for d in range(len(full)) if d in reduced]
        self.rows = int(np.prod([full[d] for d in self.outer], dtype=np.int64)) if self.outer else 1
        self.inner_count = (
            int(np.prod([full[d] for d in self.inner], dtype=np.int64)) if self.inner else 1
        )
        n_in, n_s = len(vals.ext), len(vals.scalars)
        self.n_in, self.scalar_kinds = n_in, tuple(dtype.kind for _, _, dtype in vals.scalars)
        block = [2 + n_s + p * (1 + 2 * MAXD) for p in range(n_in)]  # each input's words in p
        scalars = [io.scalar_load(2 + k, kind) for k, kind in enumerate(self.scalar_kinds)]
        out_of = {j: q for q, j in enumerate(writes)}

        # a full-size output is contiguous in ``full``: its element is ``ob + oi`` (the row's part
        # and the reduced dims' part), whichever dims are reduced
        cst = c_strides(full)
        lines = [f"  let r = i;\n  if (r >= {self.rows}) {{ return; }}\n  var ob = 0;\n"]
        for p in range(n_in):
            lines.append(f"  var b{p} = p[{block[p]}];\n")
        if self.outer:
            lines.append("  var rem = r;\n")
            for k in reversed(range(len(self.outer))):
                size = max(full[self.outer[k]], 1)  # no rows: no thread gets past the bound check
                lines.append(
                    f"  let c{k} = rem % {size};\n  rem = rem / {size};\n"
                    f"  ob = ob + c{k} * {cst[self.outer[k]]};\n"
                )
                for p in range(n_in):
                    lines.append(f"  b{p} = b{p} + c{k} * p[{block[p] + 1 + k}];\n")
        done: set[Value] = set()

        def load(v: Value, at: str, indent: str) -> None:
            t = wgsl_type(vals.ext[v.index].dtype)
            lines.append(
                f"{indent}let {_name(v)} = {shaders.load(t, f'a{v.index}', f'{at}{v.index}')};\n"
            )

        def row_emit() -> None:
            progress = True
            while progress:
                progress = False
                for j, op in enumerate(ops_):
                    v = vals.result(j)
                    if v in done or is_full[v] or op.kind in REDUCE:
                        continue
                    ins = vals.inputs_of(j)
                    if not all(i in done or (i.external and not is_full[i]) for i in ins):
                        continue
                    for i in ins:
                        if i.external and i not in done:
                            load(i, "b", "  ")
                            done.add(i)
                    args = [_name(i) for i in ins]
                    lines.append(
                        f"  let {_name(v)} = {_expr(op, args, [scalars[k] for k in vals.scalar_indices(j)])};\n"
                    )
                    done.add(v)
                    if j in out_of:
                        lines.append(
                            f"  out{out_of[j]}[r] = {shaders.store(wgsl_type(op.out.dtype), _name(v))};\n"
                        )
                    progress = True

        for lvl in range(max(level.values(), default=0) + 1):
            row_emit()
            reds = [
                j
                for j, op in enumerate(ops_)
                if op.kind in REDUCE and level[vals.value(op.inputs[0])] == lvl
            ]
            outs = [j for j in writes if is_full[vals.result(j)] and level[vals.result(j)] == lvl]
            if not reds and not outs:
                continue
            for j in reds:
                lines.append(f"  var acc{j}: f32 = {UPDATE[ops_[j].kind][0]};\n")
            lines.append(
                "  for (var k = 0; k < p[1]; k = k + 1) {\n    var kr = k;\n    var oi = 0;\n"
            )
            for p in range(n_in):
                lines.append(f"    var o{p} = b{p};\n")
            for k in reversed(range(len(self.inner))):
                size = max(
                    full[self.inner[k]], 1
                )  # a 0 never runs the loop; a constant % 0 fails to compile
                lines.append(
                    f"    let e{k} = kr % {size};\n    kr = kr / {size};\n    oi = oi + e{k} * {cst[self.inner[k]]};\n"
                )
                for p in range(n_in):
                    lines.append(f"    o{p} = o{p} + e{k} * p[{block[p] + 1 + MAXD + k}];\n")
            local: set[Value] = set()

            def need(v: Value, local: set[Value] = local) -> str:
                if v in done or v in local:
                    return _name(v)
                if v.external:
                    load(v, "o", "    ")
                else:
                    j = v.index
                    args = [need(i) for i in vals.inputs_of(j)]
                    expr = _expr(ops_[j], args, [scalars[k] for k in vals.scalar_indices(j)])
                    lines.append(f"    let {_name(v)} = {expr};\n")
                local.add(v)
                return _name(v)

            for j in reds:
                x = need(vals.value(ops_[j].inputs[0]))
                lines.append(
                    f"    acc{j} = {UPDATE[ops_[j].kind][1].format(acc=f'acc{j}', x=x)};\n"
                )
            for j in outs:
                name = need(vals.result(j))
                t = wgsl_type(ops_[j].out.dtype)
                lines.append(f"    out{out_of[j]}[ob + oi] = {shaders.store(t, name)};\n")
            lines.append("  }\n")
            for j in reds:
                v = vals.result(j)
                lines.append(f"  let {_name(v)} = acc{j};\n")
                done.add(v)
                if j in out_of:
                    lines.append(f"  out{out_of[j]}[r] = {_name(v)};\n")
        row_emit()

        in_types = tuple(wgsl_type(t.dtype) for t in vals.ext)
        out_types = tuple(wgsl_type(ops_[j].out.dtype) for j in writes)
        source = "".join([io.prologue(in_types, out_types), *lines, "}\n"])
        kinds = [op.kind for op in ops_]
        name = "wgsl_reduce_" + "_".join(kinds[:6] + (["etc"] if len(kinds) > 6 else []))
        read = sum(t.nbytes for t in vals.ext)
        written = sum(ops_[j].out.nbytes for j in writes)
        super().__init__(
            name,
            source,
            vals.slots,
            list(writes),
            vals.scalars,
            [],
            int(np.prod(full)),
            kinds,
            read,
            written,
        )

    def function(self) -> str:
        return self.source

    def launch(self, launch, values: list, scalars: list) -> None:
        """One dispatch over the rows; outputs are new contiguous tensors of their recorded shapes."""
        inputs = [values[i] for i in launch.inputs]
        outs = io.outputs(launch, inputs[0].index if inputs else 0, self.name)
        # the reduced length travels in p, not in the source: with a constant 0 the compiler
        # folds the empty sum and then 0 / 0 to 0 (WGSL lets it assume finite math)
        params = [
            self.rows,
            self.inner_count,
            *io.scalar_words(scalars[launch.scalars], self.scalar_kinds),
        ]
        for t in inputs:
            strides = ops._block(
                t.shape, t.strides, t.offset, self.full
            )  # offset, strides broadcast to full
            outer = [strides[1 + d] for d in self.outer]
            inner = [strides[1 + d] for d in self.inner]
            params += [
                strides[0],
                *outer,
                *[0] * (MAXD - len(outer)),
                *inner,
                *[0] * (MAXD - len(inner)),
            ]
        io.dispatch(
            self.source,
            launch,
            values,
            params,
            inputs,
            outs,
            groups_1d(self.rows),
            scalars=(2, scalars[launch.scalars], self.scalar_kinds),
        )
