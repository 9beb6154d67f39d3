"""The GPU's kernel for a matmul block: a 2-D ``A @ B`` and the element-wise ops on its result
(a bias add, an activation, an optimizer's update) as one WGSL kernel, the epilogue applied to
each register block of the product before it is stored (burn-cubecl-fusion's
``MatmulOptimization``: fuse on write). The product's loop is eager Wgpu's register-blocked
matmul (:func:`minidl.backends.wgpu.shaders.matmul_kernel`), so the product is eager's to the
bit; the intermediates of the epilogue never reach memory, only the results someone holds.
"""

from __future__ import annotations

from minidl.backends.wgpu import ops, shaders
from minidl.backends.wgpu.fusion import io
from minidl.backends.wgpu.fusion.codegen import _expr, _name
from minidl.backends.wgpu.fusion.io import wgsl_type
from minidl.fusion.ir import OperationIr
from minidl.fusion.kernel import BlockValues, Kernel

BLOCK, TILE = shaders.BLOCK, shaders.TILE


class WgslMatmulKernel(Kernel):
    """``ops[0]`` a 2-D matmul, ``ops[1:]`` its epilogue, one dispatch over ``(N/32, M/32)``
    workgroups. ``p``: ``M, N, K``, A's and B's ``offset, row stride, column stride``, the
    scalars, then ``offset, row stride, column stride`` of every input read as ``[M, N]``
    (stride 0 where it broadcasts)."""

    language = "wgsl"
    flat_inputs = False

    def __init__(self, ops_: list[OperationIr], writes: list[int]):
        vals = BlockValues(ops_)
        mm = ops_[0]
        (m, k), (_, n) = mm.inputs[0].shape, mm.inputs[1].shape
        self.shape = (m, n)
        ia, ib = vals.ext_index[mm.inputs[0].id], vals.ext_index[mm.inputs[1].id]
        self.ia, self.ib = ia, ib
        n_in, n_s = len(vals.ext), len(vals.scalars)
        self.scalar_kinds = tuple(dtype.kind for _, _, dtype in vals.scalars)
        scalars = [io.scalar_load(9 + s, kind) for s, kind in enumerate(self.scalar_kinds)]
        eb = [9 + n_s + 3 * p for p in range(n_in)]  # each input's [M, N] view in p
        out_of = {j: q for q, j in enumerate(writes)}
        in_types = tuple(wgsl_type(t.dtype) for t in vals.ext)
        out_types = tuple(wgsl_type(ops_[j].out.dtype) for j in writes)
        body = [
            f"""  let M = p[0]; let N = p[1]; let K = p[2];
  let r0 = i32(gid.y) * {BLOCK}; let c0 = i32(gid.x) * {BLOCK};
  if (r0 >= M || c0 >= N) {{ return; }}
  let ao = p[3]; let ars = p[4]; let acs = p[5];
  let bo = p[6]; let brs = p[7]; let bcs = p[8];
  let rows = min({BLOCK}, M - r0); let cols = min({BLOCK}, N - c0);
  var acc: array<vec4<f32>, {BLOCK}>;
  for (var k = 0; k < K; k = k + 1) {{
    var bv = vec4<f32>(0.0);
    for (var j = 0; j < cols; j = j + 1) {{ bv[j] = a{ib}[bo + k * brs + (c0 + j) * bcs]; }}
    for (var r = 0; r < rows; r = r + 1) {{ acc[r] = acc[r] + a{ia}[ao + (r0 + r) * ars + k * acs] * bv; }}
  }}
  for (var r = 0; r < rows; r = r + 1) {{
    for (var j = 0; j < cols; j = j + 1) {{
      let row = r0 + r; let col = c0 + j;
      let v0 = acc[r][j];
"""
        ]
        if 0 in out_of:
            body.append(f"      out{out_of[0]}[row * N + col] = v0;\n")
        loaded: set[int] = set()
        for j in range(1, len(ops_)):
            ins = vals.inputs_of(j)
            for v in ins:
                if v.external and v.index not in loaded:
                    loaded.add(v.index)
                    at = f"p[{eb[v.index]}] + row * p[{eb[v.index] + 1}] + col * p[{eb[v.index] + 2}]"
                    body.append(
                        f"      let {_name(v)} = {shaders.load(wgsl_type(vals.ext[v.index].dtype), f'a{v.index}', at)};\n"
                    )
            expr = _expr(
                ops_[j], [_name(v) for v in ins], [scalars[s] for s in vals.scalar_indices(j)]
            )
            body.append(f"      let v{j} = {expr};\n")
            if j in out_of:
                body.append(
                    f"      out{out_of[j]}[row * N + col] = {shaders.store(wgsl_type(ops_[j].out.dtype), f'v{j}')};\n"
                )
        body.append("    }\n  }\n}\n")
        source = io.prologue(in_types, out_types, workgroup="8, 8") + "".join(body)
        kinds = [op.kind for op in ops_]
        name = "wgsl_matmul_" + "_".join(kinds[1:6] or ["alone"])
        read = sum(t.nbytes for t in vals.ext)
        written = sum(ops_[j].out.nbytes for j in writes)
        super().__init__(
            name,
            source,
            vals.slots,
            list(writes),
            vals.scalars,
            [],
            m * n * max(k, 1),
            kinds,
            read,
            written,
        )
        self.k = k

    def function(self) -> str:
        return self.source

    def launch(self, launch, values: list, scalars: list) -> None:
        """One dispatch; the outputs are new contiguous ``[M, N]`` tensors."""
        inputs = [values[i] for i in launch.inputs]
        a, b = inputs[self.ia], inputs[self.ib]
        outs = io.outputs(launch, a.index, self.name)
        (m, n), k = self.shape, self.k
        params = [
            m,
            n,
            k,
            a.offset,
            a.strides[0],
            a.strides[1],
            b.offset,
            b.strides[0],
            b.strides[1],
            *io.scalar_words(scalars[launch.scalars], self.scalar_kinds),
        ]
        for t in inputs:
            if len(t.shape) <= 2 and all(
                s in (1, f) for s, f in zip((1,) * (2 - len(t.shape)) + t.shape, (m, n))
            ):
                block = ops._block(t.shape, t.strides, t.offset, (m, n))
                params += block[:3]
            else:  # A or B read only by the product: no [M, N] view
                params += [0, 0, 0]
        io.dispatch(
            self.source,
            launch,
            values,
            params,
            inputs,
            outs,
            (-(-n // TILE), -(-m // TILE), 1),
            scalars=(9, scalars[launch.scalars], self.scalar_kinds),
        )
