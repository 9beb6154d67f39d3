"""Every WGSL kernel of the ``Wgpu`` backend, generated here and nowhere else (burn's
CubeBackend writes its kernels once in CubeCL and compiles them per runtime; minidl writes
WGSL text from Python templates).

Conventions shared by all kernels:

* binding 0 is ``p``, an ``array<i32>`` of parameters (shapes, strides, offsets, scalars;
  a float scalar travels as its bits, ``bitcast<f32>``); then the inputs, read-only; the
  output is the last binding.
* elements are 32-bit: ``f32`` for float32, ``i32`` for int32, ``u32`` (0/1) for bool.
* a strided operand is ``offset, strides[MAXD]`` in ``p``; rank is at most ``MAXD``.
* the 1-D kernels run ``WORKGROUP`` threads per group over a 2-D grid of groups (past 65535
  groups), each thread one output element.

Sources are cached by their arguments here and pipelines by their text in the runtime.
"""

from __future__ import annotations

import functools

from minidl.backends.wgpu.runtime import WORKGROUP

MAXD = 8
#: WGSL element type of each NumPy dtype kind.
WGSL_TYPE = {"f": "f32", "i": "i32", "b": "u32"}

HELPERS = """
fn is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }
fn nan() -> f32 { return bitcast<f32>(0x7fc00000u); }
fn finite(v: f32) -> bool { return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u; }
// comparisons written out for NaN: WGSL lets a compiler assume floats are never NaN
fn eq(a: f32, b: f32) -> bool { return !is_nan(a) && !is_nan(b) && a == b; }
fn gt(a: f32, b: f32) -> bool { return !is_nan(a) && !is_nan(b) && a > b; }
fn lt(a: f32, b: f32) -> bool { return !is_nan(a) && !is_nan(b) && a < b; }
fn inf() -> f32 { return bitcast<f32>(0x7f800000u); }
fn erf_(x: f32) -> f32 {
  // Abramowitz-Stegun 7.1.26 is 1e-7 absolute only far out; use the W. J. Cody-style
  // rational form through exp: max error ~1.2e-7 (float32 tolerance)
  let a = abs(x);
  let t = 1.0 / (1.0 + 0.5 * a);
  let y = t * exp(-a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
          t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
          t * (-0.82215223 + t * 0.17087277)))))))));
  if (a < 1e-3) { return x * 1.1283791 * (1.0 - x * x / 3.0); }  // keeps -0 and tiny values
  return select(1.0 - y, y - 1.0, x < 0.0);
}
fn tanh_(x: f32) -> f32 {
  if (abs(x) < 0.55) {
    let x2 = x * x;
    // odd Taylor/minimax to 1e-7 on |x| < 0.55
    return x * (1.0 + x2 * (-0.33333334 + x2 * (0.13333334 + x2 * (-0.053968254 + x2 * (0.021869488 + x2 * -0.008863239)))));
  }
  let e = exp(-2.0 * abs(x));
  return sign(x) * (1.0 - e) / (1.0 + e);
}
fn odd(b: f32) -> bool { return abs(b) < 16777216.0 && floor(b) == b && (i32(abs(b)) & 1) == 1; }
fn powf_(a: f32, b: f32) -> f32 {
  // C's pow (torch.pow) case by case, then |a|^b through exp2/log2 with the sign of an odd power
  if (b == 0.0 || a == 1.0) { return 1.0; }
  if (is_nan(a) || is_nan(b)) { return nan(); }
  let neg = a < 0.0 || (a == 0.0 && (bitcast<u32>(a) & 0x80000000u) != 0u);
  let sgn = select(1.0, -1.0, neg && odd(b));
  if (!finite(b)) {
    if (abs(a) == 1.0) { return 1.0; }
    let big = abs(a) > 1.0;
    return select(0.0, inf(), big == (b > 0.0));
  }
  let zero = select(0.0, bitcast<f32>(0x80000000u), sgn < 0.0);  // a signed zero, not folded
  if (a == 0.0) { return select(zero, sgn * inf(), b < 0.0); }
  if (!finite(a)) { return select(zero, sgn * inf(), b > 0.0); }
  if (a < 0.0 && floor(b) != b) { return nan(); }
  return sgn * exp2(b * log2(abs(a)));
}
fn rem_f(a: f32, b: f32) -> f32 { let r = a - b * floor(a / b); return r; }
fn rem_i(a: i32, b: i32) -> i32 { let r = a % b; return select(r, r + b, r != 0 && ((r < 0) != (b < 0))); }
"""


def header(inputs: tuple[str, ...], out: str) -> str:
    lines = ["@group(0) @binding(0) var<storage, read> p: array<i32>;"]
    for i, t in enumerate(inputs):
        lines.append(f"@group(0) @binding({i + 1}) var<storage, read> a{i}: array<{t}>;")
    lines.append(f"@group(0) @binding({len(inputs) + 1}) var<storage, read_write> out: array<{out}>;")
    return "\n".join(lines) + HELPERS


def entry(workgroup: str = f"{WORKGROUP}") -> str:
    return (f"@compute @workgroup_size({workgroup})\n"
            "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {\n")


THREAD = f"  let i = i32(gid.x + gid.y * nwg.x * {WORKGROUP}u);\n"


def load(t: str, name: str, index: str) -> str:
    """A WGSL value of ``name[index]``: bool elements (u32) become ``bool``."""
    return f"({name}[{index}] != 0u)" if t == "u32" else f"{name}[{index}]"


def store(t: str, expr: str) -> str:
    return f"select(0u, 1u, {expr})" if t == "u32" else expr


def scalar(k: int, t: str, base: str) -> str:
    if t == "f32":
        return f"bitcast<f32>(p[{base} + {k}])"
    if t == "u32":
        return f"(p[{base} + {k}] != 0)"
    return f"p[{base} + {k}]"


# ----- element-wise: n strided inputs -> a strided output, one expression --------------------------


def map_layout(n_inputs: int) -> tuple[int, int]:
    """(first operand block, first scalar) indices in ``p`` of a map kernel."""
    first = 2 + MAXD
    return first, first + (n_inputs + 1) * (1 + MAXD)


@functools.cache
def map_kernel(inputs: tuple[str, ...], out: str, expr: str, scalars: tuple[str, ...] = (),
               flat: bool = False) -> str:
    """``out[o] = expr(x0, x1, ..., s0, s1, ...)`` over every element, inputs and output strided.

    ``p``: ``n, ndim, shape[MAXD]``, then ``offset, strides[MAXD]`` per input and for the
    output, then the scalars."""
    first, sbase = map_layout(len(inputs))
    blocks = [first + k * (1 + MAXD) for k in range(len(inputs) + 1)]
    names = [f"o{k}" for k in range(len(inputs))] + ["oo"]
    src = [header(inputs, out), entry(), THREAD, "  if (i >= p[0]) { return; }\n"]
    if flat:
        # every operand contiguous, of the output's shape: element i sits at offset + i (a speed
        # trick: the strided loop below, a division per dim, cost ~20x on lavapipe)
        for name, b in zip(names, blocks, strict=True):
            src.append(f"  let {name} = p[{b}] + i;\n")
    else:
        src.append("  var rem = i;\n")
        for name, b in zip(names, blocks, strict=True):
            src.append(f"  var {name} = p[{b}];\n")
        src.append("  for (var d = p[1] - 1; d >= 0; d = d - 1) {\n    let n = p[2 + d];\n"
                   "    let c = rem % n;\n    rem = rem / n;\n")
        for name, b in zip(names, blocks, strict=True):
            src.append(f"    {name} = {name} + c * p[{b + 1} + d];\n")
        src.append("  }\n")
    for k, t in enumerate(inputs):
        src.append(f"  let x{k} = {load(t, f'a{k}', f'o{k}')};\n")
    body = expr
    for k, t in enumerate(scalars):
        body = body.replace(f"s{k}", scalar(k, t, str(sbase)))
    src.append(f"  out[oo] = {store(out, body)};\n}}\n")
    return "".join(src)


# ----- reductions along one dim ------------------------------------------------------------------

REDUCE_INIT = {"sum": "0", "prod": "1", "any": "false", "all": "true"}


@functools.cache
def reduce_kernel(t: str, out: str, op: str) -> str:
    """One thread per output element folds the reduced dim, or one chunk of it.

    ``p``: ``n_out, ndim, out_shape[MAXD], in_offset, in_strides[MAXD], len, stride, cdim,
    chunk``. With ``chunk`` < ``len`` the output has one element per chunk at dim ``cdim``
    (whose in-stride is ``stride * chunk``) and folds ``chunk`` elements from ``j * chunk``;
    an arg index is then the index in the whole dim (``ops.reduce_dim`` folds the partials).
    lavapipe (llvmpipe) stops a shader's loops after 65535 iterations in all
    (gallivm's ``LP_MAX_TGSI_LOOP_ITERATIONS``), so no thread may fold more than that.
    ``op``: sum, prod, max, min (NaN propagates), argmax, argmin (the first extreme, the first
    NaN), any, all."""
    b = 2 + MAXD
    ln, st = b + 1 + MAXD, b + 2 + MAXD
    src = [header((t,), out), entry(), THREAD, "  if (i >= p[0]) { return; }\n  var rem = i;\n",
           f"  var o = p[{b}];\n  var j = 0;\n",
           "  for (var d = p[1] - 1; d >= 0; d = d - 1) {\n    let n = p[2 + d];\n"
           f"    if (d == p[{st + 1}]) {{ j = rem % n; }}\n"
           f"    o = o + (rem % n) * p[{b + 1} + d];\n    rem = rem / n;\n  }}\n",
           f"  let start = j * p[{st + 2}];\n  let len = min(p[{st + 2}], p[{ln}] - start);\n"
           f"  let step = p[{st}];\n"]
    x = load(t, "a0", "o + k * step")
    nan = "is_nan(v)" if t == "f32" else "false"
    accnan = "is_nan(acc)" if t == "f32" else "false"
    ty = {"f32": "f32", "i32": "i32", "u32": "bool"}[t]
    if op in ("sum", "prod"):
        sym = "+" if op == "sum" else "*"
        src.append(f"  var acc = {ty}({REDUCE_INIT[op]});\n"
                   f"  for (var k = 0; k < len; k = k + 1) {{ acc = acc {sym} {x}; }}\n"
                   f"  out[i] = {store(out, 'acc')};\n}}\n")
    elif op in ("any", "all"):
        sym = "||" if op == "any" else "&&"
        src.append(f"  var acc = {REDUCE_INIT[op]};\n"
                   f"  for (var k = 0; k < len; k = k + 1) {{ acc = acc {sym} {x}; }}\n"
                   f"  out[i] = {store(out, 'acc')};\n}}\n")
    else:
        cmp = ">" if op in ("max", "argmax") else "<"
        src.append(f"  var acc = {load(t, 'a0', 'o')};\n  var at = 0;\n"
                   "  for (var k = 1; k < len; k = k + 1) {\n"
                   f"    let v = {x};\n"
                   f"    if (!{accnan} && ({nan} || v {cmp} acc)) {{ acc = v; at = k; }}\n  }}\n")
        src.append(f"  out[i] = {'start + at' if op.startswith('arg') else store(out, 'acc')};\n}}\n")
    return "".join(src)


# ----- matmul ------------------------------------------------------------------------------------

#: Each thread computes a BLOCK x BLOCK block of C in registers; a workgroup is 8 x 8 threads,
#: so one covers TILE x TILE of C. Measured on lavapipe (2 threads, 128x784 @ 784x256): this
#: register-blocked form ran 1.5 GFLOP/s, a 16x16 workgroup-memory tiled kernel 0.08-0.11 and a
#: one-output-per-thread loop 0.26-0.36 (lavapipe pays for every workgroupBarrier).
BLOCK = 4
TILE = 8 * BLOCK


@functools.cache
def matmul_kernel() -> str:
    """A batched product, register-blocked: thread (x, y) of workgroup (wx, wy, batch) owns the
    4x4 block of C at rows ``(wy*8 + y)*4``, columns ``(wx*8 + x)*4``, and runs K once, one
    row of B as a vec4 against four elements of A. Batch dims broadcast through strides.

    ``p``: ``M, N, K, nb, bshape[MAXD], a_off, a_bstrides[MAXD], a_rs, a_cs, b_off,
    b_bstrides[MAXD], b_rs, b_cs``; workgroups ``(ceil(N/32), ceil(M/32), batch)``."""
    a = 4 + MAXD
    b = a + MAXD + 3
    return (header(("f32", "f32"), "f32") + entry("8, 8")
            + f"""  let M = p[0]; let N = p[1]; let K = p[2];
  let r0 = i32(gid.y) * {BLOCK}; let c0 = i32(gid.x) * {BLOCK};
  let batch = i32(wid.z);
  if (r0 >= M || c0 >= N) {{ return; }}
  var ao = p[{a}]; var bo = p[{b}];
  var rem = batch;
  for (var d = p[3] - 1; d >= 0; d = d - 1) {{
    let n = p[4 + d]; let c = rem % n; rem = rem / n;
    ao = ao + c * p[{a + 1} + d]; bo = bo + c * p[{b + 1} + d];
  }}
  let ars = p[{a + 1 + MAXD}]; let acs = p[{a + 2 + MAXD}];
  let brs = p[{b + 1 + MAXD}]; let bcs = p[{b + 2 + MAXD}];
  let rows = min({BLOCK}, M - r0); let cols = min({BLOCK}, N - c0);
  var acc: array<vec4<f32>, {BLOCK}>;
  for (var k = 0; k < K; k = k + 1) {{
    var bv = vec4<f32>(0.0);
    for (var j = 0; j < cols; j = j + 1) {{ bv[j] = a1[bo + k * brs + (c0 + j) * bcs]; }}
    for (var r = 0; r < rows; r = r + 1) {{ acc[r] = acc[r] + a0[ao + (r0 + r) * ars + k * acs] * bv; }}
  }}
  for (var r = 0; r < rows; r = r + 1) {{
    for (var j = 0; j < cols; j = j + 1) {{ out[(batch * M + r0 + r) * N + c0 + j] = acc[r][j]; }}
  }}
}}
""")


# ----- random: a counter-based generator ----------------------------------------------------------

RANDOM_HELPERS = """
fn pcg(v: u32) -> u32 {
  let s = v * 747796405u + 2891336453u;
  let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
  return (w >> 22u) ^ w;
}
fn draw(k0: u32, k1: u32, ctr: u32, idx: u32) -> u32 {
  // the element's counter (idx) hashed with the stream's key and the call's counter
  return pcg(pcg(pcg(idx ^ pcg(k0)) + k1) ^ pcg(ctr + 0x9e3779b9u));
}
fn unit(x: u32) -> f32 { return f32(x >> 8u) * 5.9604645e-8; }  // [0, 1) from 24 bits
"""


@functools.cache
def random_kernel(dist: str) -> str:
    """``p``: ``n, key0, key1, counter, a (f32 bits), b (f32 bits)`` (int: low, high)."""
    exprs = {
        "uniform": "let lo = bitcast<f32>(p[4]); let hi = bitcast<f32>(p[5]);\n"
                   "  out[i] = min(lo + (hi - lo) * unit(draw(k0, k1, ctr, u32(i))), hi - (hi - lo) * 5.9604645e-8);",
        "normal": "let u1 = max(unit(draw(k0, k1, ctr, 2u * u32(i))), 5.9604645e-8);\n"
                  "  let u2 = unit(draw(k0, k1, ctr, 2u * u32(i) + 1u));\n"
                  "  out[i] = bitcast<f32>(p[4]) + bitcast<f32>(p[5]) * sqrt(-2.0 * log(u1)) * cos(6.2831853 * u2);",
        "bernoulli": "out[i] = select(0.0, 1.0, unit(draw(k0, k1, ctr, u32(i))) < bitcast<f32>(p[4]));",
        "int": "out[i] = p[4] + i32(draw(k0, k1, ctr, u32(i)) % u32(p[5] - p[4]));",
    }
    out = "i32" if dist == "int" else "f32"
    return (header((), out) + RANDOM_HELPERS + entry() + THREAD
            + "  if (i >= p[0]) { return; }\n  let k0 = u32(p[1]); let k1 = u32(p[2]); let ctr = u32(p[3]);\n  "
            + exprs[dist] + "\n}\n")


# ----- index ops: gather, scatter, select, select_assign -----------------------------------------


def _nd(names_blocks: list[tuple[str, int]], shape_at: int, ndim: str = "p[1]") -> str:
    """Decompose ``i`` by the shape at ``p[shape_at..]``: coordinates ``c[d]`` and the offset of
    each named operand (offset at ``p[block]``, strides after it)."""
    src = ["  var c: array<i32, 8>;\n  var rem = i;\n"]
    for name, b in names_blocks:
        src.append(f"  var {name} = p[{b}];\n")
    src.append(f"  for (var d = {ndim} - 1; d >= 0; d = d - 1) {{\n    let n = p[{shape_at} + d];\n"
               "    c[d] = rem % n;\n    rem = rem / n;\n")
    for name, b in names_blocks:
        src.append(f"    {name} = {name} + c[d] * p[{b + 1} + d];\n")
    src.append("  }\n")
    return "".join(src)


def operand(k: int) -> int:
    """Index in ``p`` of operand ``k``'s block in the index kernels (``n, ndim, dim,
    shape[MAXD]``, then operand blocks ``offset, strides[MAXD], shape[MAXD]``)."""
    return 3 + MAXD + k * (1 + 2 * MAXD)


@functools.cache
def gather_kernel(t: str) -> str:
    """``out[c] = tensor[c with dim = idx[c]]`` (out shape = index shape). Operands: 0 tensor,
    1 indices."""
    tb, ib = operand(0), operand(1)
    return (header((t, "i32"), t) + entry() + THREAD + "  if (i >= p[0]) { return; }\n  let dim = p[2];\n"
            + _nd([("oi", ib)], 3)
            + f"  var ot = p[{tb}];\n"
            + "  for (var d = 0; d < p[1]; d = d + 1) {\n"
            + f"    let cc = select(c[d], a1[oi], d == dim);\n    ot = ot + cc * p[{tb + 1} + d];\n  }}\n"
            + "  out[i] = a0[ot];\n}\n")


@functools.cache
def select_kernel(t: str) -> str:
    """``out[c] = tensor[c with dim = idx[c[dim]]]`` (``idx`` 1-D). Operands: 0 tensor, 1 idx."""
    tb, ib = operand(0), operand(1)
    return (header((t, "i32"), t) + entry() + THREAD + "  if (i >= p[0]) { return; }\n  let dim = p[2];\n"
            + _nd([], 3)
            + f"  var ot = p[{tb}];\n"
            + "  for (var d = 0; d < p[1]; d = d + 1) {\n"
            + f"    let cc = select(c[d], a1[p[{ib}] + c[d] * p[{ib + 1}]], d == dim);\n"
            + f"    ot = ot + cc * p[{tb + 1} + d];\n  }}\n"
            + "  out[i] = a0[ot];\n}\n")


@functools.cache
def scatter_kernel(t: str, mode: str) -> str:
    """``out[c] = tensor[c] + sum of value[c with dim = j]`` over the ``j`` whose index names
    ``c[dim]``: ``mode`` "scatter" (indices shaped like value, ``idx[c with dim = j]``) or
    "select" (1-D ``idx[j]``). No atomics: each output element sums its own contributions, in
    index order. Operands: 0 tensor, 1 indices, 2 value (``value``'s shape at its block)."""
    tb, ib, vb = operand(0), operand(1), operand(2)
    add = "+" if t != "u32" else "|"
    zero = {"f32": "0.0", "i32": "0", "u32": "0u"}[t]
    if mode == "scatter":
        body = (f"  var inside = true;\n  for (var d = 0; d < p[1]; d = d + 1) {{\n"
                f"    if (d != dim && c[d] >= p[{vb + 1 + MAXD} + d]) {{ inside = false; }}\n  }}\n"
                f"  if (inside) {{\n  for (var j = 0; j < p[{vb + 1 + MAXD} + dim]; j = j + 1) {{\n"
                f"    var oi = p[{ib}]; var ov = p[{vb}];\n"
                f"    for (var d = 0; d < p[1]; d = d + 1) {{\n      let cc = select(c[d], j, d == dim);\n"
                f"      oi = oi + cc * p[{ib + 1} + d]; ov = ov + cc * p[{vb + 1} + d];\n    }}\n"
                f"    if (a1[oi] == c[dim]) {{ acc = acc {add} a2[ov]; }}\n  }}\n  }}\n")
    else:
        body = (f"  for (var j = 0; j < p[{vb + 1 + MAXD} + dim]; j = j + 1) {{\n"
                f"    if (a1[p[{ib}] + j * p[{ib + 1}]] == c[dim]) {{\n"
                f"      var ov = p[{vb}];\n"
                f"      for (var d = 0; d < p[1]; d = d + 1) {{ ov = ov + select(c[d], j, d == dim) * p[{vb + 1} + d]; }}\n"
                f"      acc = acc {add} a2[ov];\n    }}\n  }}\n")
    return (header((t, "i32", t), t) + entry() + THREAD + "  if (i >= p[0]) { return; }\n  let dim = p[2];\n"
            + _nd([("ot", tb)], 3) + f"  var acc = {zero};\n" + body
            + "  out[i] = a0[ot] " + add + " acc;\n}\n")


# ----- convolutions and pools (contiguous NCHW operands; one thread per output element) ------------
#
# p of every conv kernel: n_out, N, CI, H, W, CO, KH, KW, OH, OW, sh, sw, pt, pl, dh, dw, groups,
# has_bias; N..groups are also written into the kernel's source (see _kernel). x is [N, CI, H, W], the weight [CO, CI/groups, KH, KW] (conv_transpose2d: [CI,
# CO/groups, KH, KW]), the output gradient [N, CO, OH, OW].

#: the names of p[1..16] in a conv kernel's body
CONV_SIZES = ("N", "CI", "H", "W", "CO", "KH", "KW", "OH", "OW", "sh", "sw", "pt", "pl", "dh", "dw", "G")


def _kernel(inputs: tuple[str, ...], body: str, sizes: tuple[int, ...]) -> str:
    """A conv kernel whose sizes (``CONV_SIZES``, the values of p[1..16]) are written into the
    source as constants, a kernel per shape (speed trick: lavapipe divides by a constant with a
    multiply and unrolls constant loops; the CNN step's conv kernels ran 1.7-5x faster)."""
    consts = "".join(f"  let {name} = {int(v)};\n" for name, v in zip(CONV_SIZES, sizes, strict=True))
    return header(inputs, "f32") + entry() + THREAD + "  if (i >= p[0]) { return; }\n" + consts + body + "}\n"


@functools.cache
def conv2d_kernel(sizes: tuple[int, ...]) -> str:
    """out[n, co, oy, ox] = bias[co] + sum over the group's channels and the kernel window."""
    return _kernel(("f32", "f32", "f32"), """  let ox = i % OW; let oy = (i / OW) % OH; let co = (i / (OW * OH)) % CO; let n = i / (OW * OH * CO);
  let cig = CI / G; let g = co / (CO / G);
  var acc = 0.0;
  if (p[17] != 0) { acc = a2[co]; }
  for (var c = 0; c < cig; c = c + 1) {
    let ci = g * cig + c;
    for (var ky = 0; ky < KH; ky = ky + 1) {
      let iy = oy * sh - pt + ky * dh;
      if (iy < 0 || iy >= H) { continue; }
      for (var kx = 0; kx < KW; kx = kx + 1) {
        let ix = ox * sw - pl + kx * dw;
        if (ix < 0 || ix >= W) { continue; }
        acc = acc + a0[((n * CI + ci) * H + iy) * W + ix] * a1[((co * cig + c) * KH + ky) * KW + kx];
      }
    }
  }
  out[i] = acc;
""", sizes)


@functools.cache
def conv2d_x_backward_kernel(sizes: tuple[int, ...]) -> str:
    """dx[n, ci, iy, ix]: every output position whose window read x[n, ci, iy, ix]."""
    return _kernel(("f32", "f32"), """  let ix = i % W; let iy = (i / W) % H; let ci = (i / (W * H)) % CI; let n = i / (W * H * CI);
  let cig = CI / G; let cog = CO / G; let g = ci / cig; let c = ci - g * cig;
  var acc = 0.0;
  for (var k = 0; k < cog; k = k + 1) {
    let co = g * cog + k;
    for (var ky = 0; ky < KH; ky = ky + 1) {
      let ty = iy + pt - ky * dh;
      if (ty < 0 || ty % sh != 0 || ty / sh >= OH) { continue; }
      for (var kx = 0; kx < KW; kx = kx + 1) {
        let tx = ix + pl - kx * dw;
        if (tx < 0 || tx % sw != 0 || tx / sw >= OW) { continue; }
        acc = acc + a0[((n * CO + co) * OH + ty / sh) * OW + tx / sw] * a1[((co * cig + c) * KH + ky) * KW + kx];
      }
    }
  }
  out[i] = acc;
""", sizes)


@functools.cache
def conv2d_weight_backward_kernel(sizes: tuple[int, ...]) -> str:
    """dw[co, c, ky, kx] = sum over n, oy, ox of x[n, ci, iy, ix] * dy[n, co, oy, ox]."""
    return _kernel(("f32", "f32"), """  let cig = CI / G;
  let kx = i % KW; let ky = (i / KW) % KH; let c = (i / (KW * KH)) % cig; let co = i / (KW * KH * cig);
  let g = co / (CO / G); let ci = g * cig + c;
  var acc = 0.0;
  for (var n = 0; n < N; n = n + 1) {
    for (var oy = 0; oy < OH; oy = oy + 1) {
      let iy = oy * sh - pt + ky * dh;
      if (iy < 0 || iy >= H) { continue; }
      for (var ox = 0; ox < OW; ox = ox + 1) {
        let ix = ox * sw - pl + kx * dw;
        if (ix < 0 || ix >= W) { continue; }
        acc = acc + a0[((n * CI + ci) * H + iy) * W + ix] * a1[((n * CO + co) * OH + oy) * OW + ox];
      }
    }
  }
  out[i] = acc;
""", sizes)


@functools.cache
def conv_transpose2d_kernel(sizes: tuple[int, ...]) -> str:
    """out[n, co, oy, ox] = bias + every input pixel whose painted patch covers (oy, ox);
    the weight is [CI, CO/groups, KH, KW]."""
    return _kernel(("f32", "f32", "f32"), """  let ox = i % OW; let oy = (i / OW) % OH; let co = (i / (OW * OH)) % CO; let n = i / (OW * OH * CO);
  let cig = CI / G; let cog = CO / G; let g = co / cog; let o = co - g * cog;
  var acc = 0.0;
  if (p[17] != 0) { acc = a2[co]; }
  for (var c = 0; c < cig; c = c + 1) {
    let ci = g * cig + c;
    for (var ky = 0; ky < KH; ky = ky + 1) {
      let ty = oy + pt - ky * dh;
      if (ty < 0 || ty % sh != 0 || ty / sh >= H) { continue; }
      for (var kx = 0; kx < KW; kx = kx + 1) {
        let tx = ox + pl - kx * dw;
        if (tx < 0 || tx % sw != 0 || tx / sw >= W) { continue; }
        acc = acc + a0[((n * CI + ci) * H + ty / sh) * W + tx / sw] * a1[((ci * cog + o) * KH + ky) * KW + kx];
      }
    }
  }
  out[i] = acc;
""", sizes)


# p of the pool kernels: n_out, N*C, H, W, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, ph, pw,
# count_include_pad; x is [N*C, H, W].
POOL_PARAMS = """  let H = p[2]; let W = p[3]; let OH = p[4]; let OW = p[5]; let KH = p[6]; let KW = p[7];
  let sh = p[8]; let sw = p[9]; let pt = p[10]; let pl = p[11]; let dh = p[12]; let dw = p[13];
  let ph = p[14]; let pw = p[15];
"""


REAL = """fn real(start: i32, size: i32, k: i32, d: i32) -> bool {
  // whether a window starting at `start` (k taps, d apart) holds a position inside [0, size)
  for (var j = 0; j < k; j = j + 1) { let at = start + j * d; if (at >= 0 && at < size) { return true; } }
  return false;
}
"""


def _pool(inputs: tuple[str, ...], out: str, body: str) -> str:
    return header(inputs, out) + REAL + entry() + THREAD + "  if (i >= p[0]) { return; }\n" + POOL_PARAMS + body + "}\n"


@functools.cache
def max_pool2d_kernel(want: str) -> str:
    """The maximum of each window and its flat position ``iy * W + ix``: the first maximum,
    or the last NaN, over real elements; a window of padding only gives -inf and torch's
    fallback position (the first one past the top/left padding). ``want``: "values" or
    "indices"."""
    out = "f32" if want == "values" else "i32"
    result = "mx" if want == "values" else "at"
    return _pool(("f32",), out, f"""  let ox = i % OW; let oy = (i / OW) % OH; let plane = i / (OW * OH);
  var mx = -inf(); var at = -1; var nan_at = -1; var fallback = -1;
  for (var ky = 0; ky < KH; ky = ky + 1) {{
    let iy = oy * sh - pt + ky * dh;
    for (var kx = 0; kx < KW; kx = kx + 1) {{
      let ix = ox * sw - pl + kx * dw;
      if (fallback < 0 && iy >= 0 && ix >= 0) {{ fallback = iy * W + ix; }}
      if (iy < 0 || iy >= H || ix < 0 || ix >= W) {{ continue; }}
      let v = a0[(plane * H + iy) * W + ix];
      if (is_nan(v)) {{ nan_at = iy * W + ix; }}
      else if (at < 0 || v > mx) {{ mx = v; at = iy * W + ix; }}
    }}
  }}
  if (nan_at >= 0) {{ mx = nan(); at = nan_at; }}
  if (at < 0) {{ at = fallback; }}
  out[i] = {result};
""")


@functools.cache
def max_pool2d_backward_kernel() -> str:
    """dx[plane, iy, ix] = the output gradients of the windows (with a real element) whose
    maximum came from here."""
    return _pool(("f32", "i32"), "f32", """  let ix = i % W; let iy = (i / W) % H; let plane = i / (W * H);
  let here = iy * W + ix;
  var acc = 0.0;
  let y0 = max(0, (iy + pt - (KH - 1) * dh + sh - 1) / sh); let y1 = min(OH - 1, (iy + pt) / sh);
  let x0 = max(0, (ix + pl - (KW - 1) * dw + sw - 1) / sw); let x1 = min(OW - 1, (ix + pl) / sw);
  for (var oy = y0; oy <= y1; oy = oy + 1) {
    for (var ox = x0; ox <= x1; ox = ox + 1) {
      let o = (plane * OH + oy) * OW + ox;
      if (a1[o] == here && real(oy * sh - pt, H, KH, dh) && real(ox * sw - pl, W, KW, dw)) { acc = acc + a0[o]; }
    }
  }
  out[i] = acc;
""")


AVG_DIVISOR = """fn divisor(oy: i32, ox: i32) -> f32 {
  let H = p[2]; let W = p[3]; let KH = p[6]; let KW = p[7]; let sh = p[8]; let sw = p[9];
  let pt = p[10]; let pl = p[11]; let ph = p[14]; let pw = p[15];
  let y0 = oy * sh - pt; let x0 = ox * sw - pl;
  var lo_y = 0; var hi_y = H; var lo_x = 0; var hi_x = W;
  if (p[16] != 0) { lo_y = -ph; hi_y = H + ph; lo_x = -pw; hi_x = W + pw; }
  let ny = min(y0 + KH, hi_y) - max(y0, lo_y); let nx = min(x0 + KW, hi_x) - max(x0, lo_x);
  return f32(max(ny, 0) * max(nx, 0));
}
"""


@functools.cache
def avg_pool2d_kernel() -> str:
    """The sum of the window's real elements over torch's divisor (``count_include_pad``
    counts the padded input, never a ceil_mode overhang)."""
    return (header(("f32",), "f32") + AVG_DIVISOR + entry() + THREAD
            + "  if (i >= p[0]) { return; }\n" + POOL_PARAMS + """  let ox = i % OW; let oy = (i / OW) % OH; let plane = i / (OW * OH);
  var acc = 0.0;
  for (var ky = 0; ky < KH; ky = ky + 1) {
    let iy = oy * sh - pt + ky;
    if (iy < 0 || iy >= H) { continue; }
    for (var kx = 0; kx < KW; kx = kx + 1) {
      let ix = ox * sw - pl + kx;
      if (ix < 0 || ix >= W) { continue; }
      acc = acc + a0[(plane * H + iy) * W + ix];
    }
  }
  out[i] = acc / divisor(oy, ox);
}
""")


@functools.cache
def avg_pool2d_backward_kernel() -> str:
    return (header(("f32",), "f32") + AVG_DIVISOR + entry() + THREAD
            + "  if (i >= p[0]) { return; }\n" + POOL_PARAMS + """  let ix = i % W; let iy = (i / W) % H; let plane = i / (W * H);
  var acc = 0.0;
  let y0 = max(0, (iy + pt - KH + 1 + sh - 1) / sh); let y1 = min(OH - 1, (iy + pt) / sh);
  let x0 = max(0, (ix + pl - KW + 1 + sw - 1) / sw); let x1 = min(OW - 1, (ix + pl) / sw);
  for (var oy = y0; oy <= y1; oy = oy + 1) {
    for (var ox = x0; ox <= x1; ox = ox + 1) {
      acc = acc + a0[(plane * OH + oy) * OW + ox] / divisor(oy, ox);
    }
  }
  out[i] = acc;
}
""")


ADAPTIVE_BINS = """fn bin_start(o: i32, size: i32, n: i32) -> i32 { return (o * size) / n; }
fn bin_end(o: i32, size: i32, n: i32) -> i32 { return ((o + 1) * size + n - 1) / n; }
"""


@functools.cache
def adaptive_pool2d_kernel(kind: str) -> str:
    """torch's bins ``[floor(o*size/out), ceil((o+1)*size/out))``; ``kind``: "avg", "max" or
    "argmax" (the first maximum or the last NaN, as a flat ``iy * W + ix``)."""
    out = "i32" if kind == "argmax" else "f32"
    if kind == "avg":
        fold = "acc = acc + v;"
        result = "acc / f32((y1 - y0) * (x1 - x0))"
    else:
        fold = ("if (is_nan(v)) { nan_at = iy * W + ix; } "
                "else if (at < 0 || v > mx) { mx = v; at = iy * W + ix; }")
        result = "at" if kind == "argmax" else "select(mx, nan(), nan_at >= 0)"
    fix = "if (nan_at >= 0) { at = nan_at; }\n" if kind == "argmax" else ""
    return (header(("f32",), out) + ADAPTIVE_BINS + entry() + THREAD
            + "  if (i >= p[0]) { return; }\n" + POOL_PARAMS + f"""  let ox = i % OW; let oy = (i / OW) % OH; let plane = i / (OW * OH);
  let y0 = bin_start(oy, H, OH); let y1 = bin_end(oy, H, OH);
  let x0 = bin_start(ox, W, OW); let x1 = bin_end(ox, W, OW);
  var acc = 0.0; var mx = -inf(); var at = -1; var nan_at = -1;
  for (var iy = y0; iy < y1; iy = iy + 1) {{
    for (var ix = x0; ix < x1; ix = ix + 1) {{
      let v = a0[(plane * H + iy) * W + ix];
      {fold}
    }}
  }}
  {fix}  out[i] = {result};
}}
""")


@functools.cache
def adaptive_pool2d_backward_kernel(kind: str) -> str:
    """dx: the gradients of the bins holding this element (avg: each divided by its bin's
    area; max: only where the bin's index names this element)."""
    inputs = ("f32", "i32") if kind == "max" else ("f32",)
    take = ("if (a1[o] == iy * W + ix) { acc = acc + a0[o]; }" if kind == "max"
            else "acc = acc + a0[o] / f32((bin_end(oy, H, OH) - bin_start(oy, H, OH)) * (bin_end(ox, W, OW) - bin_start(ox, W, OW)));")
    return (header(inputs, "f32") + ADAPTIVE_BINS + entry() + THREAD
            + "  if (i >= p[0]) { return; }\n" + POOL_PARAMS + f"""  let ix = i % W; let iy = (i / W) % H; let plane = i / (W * H);
  var acc = 0.0;
  for (var oy = 0; oy < OH; oy = oy + 1) {{
    if (iy < bin_start(oy, H, OH) || iy >= bin_end(oy, H, OH)) {{ continue; }}
    for (var ox = 0; ox < OW; ox = ox + 1) {{
      if (ix < bin_start(ox, W, OW) || ix >= bin_end(ox, W, OW)) {{ continue; }}
      let o = (plane * OH + oy) * OW + ox;
      {take}
    }}
  }}
  out[i] = acc;
}}
""")


# ----- interpolate (nearest, bilinear): per-axis taps computed on the host ------------------------
#
# p: n_out, planes, H, W, OH, OW, bilinear. a1 (f32) holds the taps: for the rows, OH low indices,
# OH high indices, OH weights lambda of the high tap; then the same three for the OW columns.
# Nearest has only the low tap, of weight 1.

@functools.cache
def interpolate_kernel() -> str:
    """out[plane, i, j] = the weighted sum of x over row taps of i and column taps of j."""
    return (header(("f32", "f32"), "f32") + entry() + THREAD + """  if (i >= p[0]) { return; }
  let H = p[2]; let W = p[3]; let OH = p[4]; let OW = p[5];
  let oj = i % OW; let oi = (i / OW) % OH; let plane = i / (OW * OH);
  let rl = i32(a1[oi]); let rh = i32(a1[OH + oi]); let ry = a1[2 * OH + oi];
  let cb = 3 * OH;
  let cl = i32(a1[cb + oj]); let ch = i32(a1[cb + OW + oj]); let cx = a1[cb + 2 * OW + oj];
  let base = plane * H * W;
  if (p[6] == 0) { out[i] = a0[base + rl * W + cl]; return; }
  // the four taps, added one by one in NdArray's order (low-low, low-high, high-low, high-high)
  var acc = a0[base + rl * W + cl] * ((1.0 - ry) * (1.0 - cx));
  acc = acc + a0[base + rl * W + ch] * ((1.0 - ry) * cx);
  acc = acc + a0[base + rh * W + cl] * (ry * (1.0 - cx));
  acc = acc + a0[base + rh * W + ch] * (ry * cx);
  out[i] = acc;
}
""")


@functools.cache
def interpolate_backward_kernel() -> str:
    """dx[plane, r, c] = every output gradient whose taps read (r, c), times the taps' weights."""
    return (header(("f32", "f32"), "f32") + entry() + THREAD + """  if (i >= p[0]) { return; }
  let H = p[2]; let W = p[3]; let OH = p[4]; let OW = p[5]; let bilinear = p[6] != 0;
  let c = i % W; let r = (i / W) % H; let plane = i / (W * H);
  let cb = 3 * OH;
  var acc = 0.0;
  for (var oi = 0; oi < OH; oi = oi + 1) {
    let rl = i32(a1[oi]); let rh = i32(a1[OH + oi]); let ry = a1[2 * OH + oi];
    var wr = 0.0;
    if (rl == r) { wr = select(1.0, 1.0 - ry, bilinear); }
    if (bilinear && rh == r) { wr = wr + ry; }
    if (wr == 0.0) { continue; }
    for (var oj = 0; oj < OW; oj = oj + 1) {
      let cl = i32(a1[cb + oj]); let ch = i32(a1[cb + OW + oj]); let cx = a1[cb + 2 * OW + oj];
      var wc = 0.0;
      if (cl == c) { wc = select(1.0, 1.0 - cx, bilinear); }
      if (bilinear && ch == c) { wc = wc + cx; }
      if (wc != 0.0) { acc = acc + a0[(plane * OH + oi) * OW + oj] * (wr * wc); }
    }
  }
  out[i] = acc;
}
""")
