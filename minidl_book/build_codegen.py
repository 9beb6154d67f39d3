"""Build exercise of the fusion chapter, step 2: the element-wise block's code generator.

burn-cubecl-fusion turns the ops of an element-wise block into one kernel: each op becomes a
line over a local value (burn's ``Arg::Input`` / ``Arg::Local``), the block's inputs are read
at the element the thread computes (a broadcast input at its own, smaller, index), and only
the block's outputs are written. minidl's Flex writes that kernel as numba source
(``minidl/backends/flex/fusion/codegen.py``). The reader writes the body of its one loop.

The checker installs the reader's ``body(block)`` as ``Fusion[Flex]``'s generator for
element-wise blocks (a fresh plan store; reduce and matmul blocks keep the real generator),
runs the chain ``u = x * s + b``, ``y = ((tanh(u) - b) - 0.5).exp() * u`` (``u`` held, so the
block writes two outputs) and compares ``u`` and ``y`` with eager Flex and PyTorch. Before a
launch it reads the reader's lines as Python (``ast``): no loop of their own, every value
computed before it is used (ops in block order), each input read at the element it holds for
``i`` (``[1, d]``: ``i % d``), only ``out<q>`` stored, each with op ``block.writes[q]``'s
result. A body that breaks one of these is not launched (the real kernel runs instead, so the
drain finishes) and the verdict names the rule.
"""

from __future__ import annotations

import ast
import builtins
import math
import re
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import torch
from hypothesis import strategies as st

from minidl.backends.flex.fusion.codegen import NumbaKernel
from minidl.backends.flex.fusion.generator import NumbaGenerator
from minidl.fusion.ir import ELEMENTWISE
from minidl.fusion.kernel import BlockValues
from minidl_book.build_check import BuildExercise, Reference
from minidl_book.strategies import float32_arrays

__all__ = ["EXPR", "PLANTED", "Block", "Op", "beside", "body", "chain_block", "exercise"]


def _positional(template: str) -> str:
    """minidl's template with its scalars numbered after its tensors: ``{0} * {s0}`` is
    ``{0} * {1}``."""
    tensors = len(set(re.findall(r"\{(\d+)\}", template)))
    return re.sub(r"\{s(\d+)\}", lambda m: "{" + str(tensors + int(m.group(1))) + "}", template)


#: kind -> the op's scalar expression: ``{0}``, ``{1}``... its tensor operands, then its scalars
#: (``EXPR["mul_scalar"]`` is ``"{0} * {1}"``: ``{1}`` is the scalar). minidl's own templates
#: (``minidl.fusion.ir.ELEMENTWISE``), renumbered.
EXPR = {kind: _positional(t) for kind, t in ELEMENTWISE.items()}


@dataclass(frozen=True)
class Op:
    """One op of a block: its kind, its tensor operands (``x<p>``: block input ``p``'s
    element, ``v<k>``: op ``k``'s result) and its scalar operands (``s<k>``: kernel arguments).
    Its own result is ``v<j>``, ``j`` its place in ``block.ops``."""

    kind: str
    inputs: tuple[str, ...]
    scalars: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    """An element-wise block: ``shape`` the loop's ``[n, d]``; ``inputs[p]`` the shape of
    array ``in<p>`` (read flat); ``ops`` in stream order; ``writes[q]`` the op whose result
    ``out<q>`` stores (flat, of the block's shape)."""

    shape: tuple[int, ...]
    inputs: tuple[tuple[int, ...], ...]
    ops: tuple[Op, ...]
    writes: tuple[int, ...]

    def __str__(self) -> str:
        ins = ", ".join(f"in{p} {s}" for p, s in enumerate(self.inputs))  # tuples, as held
        outs = ", ".join(f"out{q} = v{j}" for q, j in enumerate(self.writes))
        rows = [f"block.shape {self.shape}; inputs {ins}; writes {self.writes}: {outs}"]
        for j, op in enumerate(self.ops):
            args = ", ".join(op.inputs + op.scalars)
            rows.append(f"  ops[{j}]: v{j} = {op.kind}({args}){'':<{max(0, 22 - len(op.kind) - len(args))}}"
                        f"EXPR: {EXPR[op.kind]!r}")
        return "\n".join(rows)


def block_of(ops, shape, writes) -> Block:
    """The reader's view of a block the element-wise fuser took (its IR read by
    :class:`~minidl.fusion.kernel.BlockValues`, as the real generator reads it)."""
    vals = BlockValues(ops)
    name = {True: "x", False: "v"}
    return Block(
        tuple(shape),
        tuple(tuple(t.shape) for t in vals.ext),
        tuple(Op(op.kind, tuple(f"{name[v.external]}{v.index}" for v in vals.inputs_of(j)),
                 tuple(f"s{k}" for k in vals.scalar_indices(j))) for j, op in enumerate(ops)),
        tuple(writes))


# ----- the reference -----------------------------------------------------------------------
def body(block):
    lines = []
    for p, shape in enumerate(block.inputs):  # each input's element for i
        index = "i" if shape == block.shape else "i % d"  # [1, d]: its column
        lines.append(f"x{p} = in{p}[{index}]")
    for j, op in enumerate(block.ops):  # in block order: operands computed before
        expr = EXPR[op.kind].format(*op.inputs, *op.scalars)
        lines.append(f"v{j} = {expr}")
    for q, j in enumerate(block.writes):  # only the outputs reach memory
        lines.append(f"out{q}[i] = v{j}")
    return lines


# ----- planted slips -------------------------------------------------------------------------
def body_writes_every_result(block):
    """Stores every op's result (an intermediate reaches memory)."""
    lines = [f"x{p} = in{p}[{'i' if s == block.shape else 'i % d'}]"
             for p, s in enumerate(block.inputs)]
    for j, op in enumerate(block.ops):
        lines += [f"v{j} = {EXPR[op.kind].format(*op.inputs, *op.scalars)}", f"out{j}[i] = v{j}"]
    return lines


def body_flat_broadcast(block):
    """Reads every input at the flat index, the [1, d] one too."""
    return [f"x{p} = in{p}[i]" for p in range(len(block.inputs))] + body(block)[len(block.inputs):]


def body_out_of_order(block):
    """Emits the ops last first."""
    lines = body(block)
    k, n = len(block.inputs), len(block.ops)
    return lines[:k] + lines[k:k + n][::-1] + lines[k + n:]


def body_forgets_scalars(block):
    """Formats each template with the tensor operands only."""
    lines = body(block)[:len(block.inputs)]
    lines += [f"v{j} = {EXPR[op.kind].format(*op.inputs)}" for j, op in enumerate(block.ops)]
    return lines + [f"out{q}[i] = v{j}" for q, j in enumerate(block.writes)]


def body_scalars_first(block):
    """Formats each template with the scalars before the tensors: right for ``x * s``,
    wrong for ``v - 0.5`` (it computes ``0.5 - v``)."""
    lines = body(block)[:len(block.inputs)]
    lines += [f"v{j} = {EXPR[op.kind].format(*op.scalars, *op.inputs)}"
              for j, op in enumerate(block.ops)]
    return lines + [f"out{q}[i] = v{j}" for q, j in enumerate(block.writes)]


def body_last_only(block):
    """Stores only the last op's result, into out0 (the held ``u`` is lost)."""
    return body(block)[:len(block.inputs) + len(block.ops)] + [f"out0[i] = v{len(block.ops) - 1}"]


#: name → (wrong body, the verdict kind it must get, words its verdict must hold)
PLANTED = {
    "writes an intermediate": (body_writes_every_result, "check", "intermediate"),
    "reads the [1, d] input at the flat index": (body_flat_broadcast, "check", "i % d"),
    "applies the ops out of order": (body_out_of_order, "check", "block order"),
    "forgets a scalar operand": (body_forgets_scalars, "error", "its scalars after"),
    "stores the last result only": (body_last_only, "check", "out0 stores"),
    "formats the scalars first": (body_scalars_first, "value", "y[0, 0]"),
}


# ----- reading the reader's lines ------------------------------------------------------------
def _lines(result) -> list[str]:
    if isinstance(result, str):
        return result.splitlines()
    if not isinstance(result, list | tuple) or not all(isinstance(ln, str) for ln in result):
        raise TypeError(f"body(block) must return a list of source lines (str), "
                        f"not {type(result).__name__}")
    return list(result)


def _element(shape: tuple[int, ...], full: tuple[int, ...], i: int) -> int:
    """The flat index, in an input of ``shape`` broadcast to ``full``, of element ``i``."""
    padded = (1,) * (len(full) - len(shape)) + tuple(shape)
    at = np.unravel_index(i, full)
    return int(np.ravel_multi_index([0 if s == 1 else a for a, s in zip(at, padded)], padded))


#: builtins a body may call (index arithmetic such as ``r, c = divmod(i, d)``)
SAFE_BUILTINS = frozenset({"divmod", "min", "max", "abs", "int"})


def _indices(node: ast.expr, full: tuple[int, ...], defs: tuple[ast.stmt, ...] = ()
             ) -> list[int] | str:
    """``node`` evaluated for every ``i`` of ``full`` (``d`` its last size), after the index
    lines ``defs`` before it (``r, c = divmod(i, d)``), or why it cannot be."""
    code = compile(ast.Expression(node), "<index>", "eval")
    setup = compile(ast.fix_missing_locations(ast.Module(list(defs), [])), "<index>", "exec")
    size, d = math.prod(full), full[-1]
    space = {"__builtins__": {name: getattr(builtins, name) for name in SAFE_BUILTINS}}
    try:
        values = []
        for i in range(size):
            local = {"i": i, "d": d, "size": size}
            exec(setup, space, local)
            values.append(int(eval(code, space, local)))
        return values
    except Exception as err:  # noqa: BLE001 - the reader's index expression
        return f"{type(err).__name__}: {err}"


def _targets(target: ast.expr) -> list[ast.expr]:
    """An assignment's targets, a tuple unpacked (``r, c = divmod(i, d)``)."""
    if isinstance(target, ast.Tuple | ast.List):
        return [t for element in target.elts for t in _targets(element)]
    return [target]


def _slip(block: Block, lines: list[str]) -> str | None:
    """The first rule the body breaks (see the module's docstring), or None."""
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError as err:
        return f"your lines are not Python: {err.msg} in line {err.lineno}: {err.text!r}"
    if any(isinstance(n, ast.For | ast.While | ast.comprehension) for n in ast.walk(tree)):
        return ("your lines hold a loop of their own: they are the body of the kernel's one "
                "loop, run once per element i")
    for number, stmt in enumerate(tree.body, 1):
        if not isinstance(stmt, ast.Assign):
            return f"line {number} is not an assignment: each line reads, computes or stores one value"
    n_in, n_out = len(block.inputs), len(block.writes)
    known = {"i", "d", "size", "np", "math"} | {f"s{k}" for k in range(99)} | SAFE_BUILTINS
    known |= {f"in{p}" for p in range(n_in)} | {f"out{q}" for q in range(n_out)}
    assigned_later = {t.id for st_ in tree.body for n in ast.walk(st_) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Store) for t in [n]}
    stored: dict[int, str] = {}
    index_names, index_defs = {"i", "d", "size"}, []  # lines of index arithmetic
    for number, stmt in enumerate(tree.body, 1):
        text = ast.get_source_segment("\n".join(lines), stmt) or ""
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
                if node.id in assigned_later and re.fullmatch(r"[vx]\d+", node.id):
                    return (f"line {number} `{text}` uses {node.id} before a line computes it: "
                            "emit the ops in block order (op j reads block inputs and the "
                            "results of ops before j)")
                return f"line {number} `{text}` uses {node.id}, which no line before it defines"
            if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
                    and isinstance(node.value, ast.Name) and node.value.id.startswith("in")):
                p = int(node.value.id[2:])
                got = _indices(node.slice, block.shape, tuple(index_defs))
                want = [_element(block.inputs[p], block.shape, i) for i in range(math.prod(block.shape))]
                if isinstance(got, str):
                    return f"line {number} `{text}`: in{p}'s index cannot be computed ({got}); use i and d"
                if got != want:
                    i = next(k for k, (a, b) in enumerate(zip(got, want)) if a != b)
                    shape = block.inputs[p]
                    why = ("one row, repeated down the block: element i of the block is its "
                           "column, i % d" if shape != block.shape else "the block's shape: read it at i")
                    return (f"line {number} `{text}`: in{p} has shape {shape} ({why}). At "
                            f"i = {i} of a {block.shape} block your index is {got[i]}, "
                            f"the element is in{p}[{want[i]}]. (Shapes are tuples: a "
                            f"tuple never equals a list, (1, 3) == [1, 3] is False.)")
        if isinstance(stmt, ast.Assign):
            names = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
            if names <= index_names | SAFE_BUILTINS:  # index arithmetic: i, d, divmod...
                index_defs.append(stmt)
                index_names |= {t.id for t in ast.walk(stmt) if isinstance(t, ast.Name)
                                and isinstance(t.ctx, ast.Store)}
            for target in (t for whole in stmt.targets for t in _targets(whole)):
                if isinstance(target, ast.Name):
                    if target.id in known and not re.fullmatch(r"[vx]\d+", target.id):
                        return f"line {number} `{text}` assigns {target.id}, a name of the kernel's own"
                    known.add(target.id)
                    continue
                if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                        and re.fullmatch(r"out\d+", target.value.id)):
                    return f"line {number} `{text}` stores into something other than out0..out{n_out - 1}"
                q = int(target.value.id[3:])
                value = stmt.value.id if isinstance(stmt.value, ast.Name) else None
                if value and re.fullmatch(r"v\d+", value) and int(value[1:]) not in block.writes:
                    return (f"line {number} `{text}` stores {value}, an intermediate: nobody holds "
                            f"op {value[1:]}'s result after the drain, so a fused kernel keeps it in "
                            f"a register. Store only block.writes = {list(block.writes)}")
                if q >= n_out:
                    return (f"line {number} `{text}`: the kernel has out0..out{n_out - 1} only, "
                            f"one per op of block.writes = {list(block.writes)}")
                if value != f"v{block.writes[q]}":
                    return (f"line {number} `{text}`: out{q} stores v{block.writes[q]}, the result "
                            f"of block.writes[{q}]")
                if (_indices(target.slice, block.shape, tuple(index_defs))
                        != list(range(math.prod(block.shape)))):
                    return f"line {number} `{text}`: out{q} has the block's shape: store it at i"
                stored[q] = text
    missing = [q for q in range(n_out) if q not in stored]
    if missing:
        q = missing[0]
        return (f"out{q} is never stored: out{q} stores v{block.writes[q]} (block.writes[{q}]), "
                "a result someone still holds after the drain")
    return None


def kernel_source(block: Block, lines: list[str]) -> str:
    """The reader's kernel: the one loop over the block's elements, the lines its body."""
    params = [f"in{p}" for p in range(len(block.inputs))]
    params += [f"out{q}" for q in range(len(block.writes))]
    params += sorted({s for op in block.ops for s in op.scalars}, key=lambda s: int(s[1:]))
    body_text = "".join(f"        {ln}\n" for ln in lines)
    return (f"def kernel({', '.join(params + ['size', 'd'])}):\n"
            f"    for i in range(size):\n{body_text}")


class _ReaderGenerator(NumbaGenerator):
    """Flex's generator with the reader's body for element-wise blocks."""

    def __init__(self, solution):
        self.solution = solution
        self.slips: list[str] = []
        self.error: BaseException | None = None
        self.made: list[tuple[Block, list[str]]] = []

    def elementwise(self, ops, shape, writes):
        real = super().elementwise(ops, shape, writes)
        block = block_of(ops, shape, writes)
        try:
            lines = _lines(self.solution(block))
        except Exception as err:  # noqa: BLE001 - raised again after the drain, at the reader's line
            self.error = self.error or err
            return real
        slip = _slip(block, lines)
        if slip is None:
            space = {"np": np, "math": math}
            try:
                exec(compile(kernel_source(block, lines), "<your kernel>", "exec"), space)
                dry = [np.zeros(math.prod(s), np.float32) for s in block.inputs]
                dry += [np.zeros(math.prod(block.shape), np.float32) for _ in block.writes]
                space["kernel"](*dry, *[1.0] * len(real.scalars), math.prod(block.shape), block.shape[-1])
            except Exception as err:  # noqa: BLE001 - the reader's lines, run
                slip = f"your kernel raised {type(err).__name__}: {err}"
        if slip is not None:
            self.slips.append(slip)
            return real  # the drain finishes; the verdict names the slip
        fn = space["kernel"]
        self.made.append((block, lines))
        return NumbaKernel("reader_" + real.name, kernel_source(block, lines),
                           SimpleNamespace(kernel_seq=fn, kernel_par=fn), real.inputs, real.writes,
                           real.scalars, [math.prod(block.shape), block.shape[-1]], real.work,
                           real.kinds, real.bytes_read, real.bytes_written)


def _stream(backend, device, case: dict) -> dict:
    """The chain, op by op on ``backend`` (below Tensor: no handle is kept but ``u``'s and
    ``y``'s, so the block writes those two only)."""
    x, b = (backend.float_from_data(case[k], device) for k in ("x", "b"))
    u = backend.float_add(backend.float_mul_scalar(x, case["s"]), b)
    v = backend.float_sub_scalar(backend.float_sub(backend.float_tanh(u), b), 0.5)
    y = backend.float_mul(backend.float_exp(v), u)
    del v
    return {"y": backend.float_into_data(y).array, "u": backend.float_into_data(u).array}


def _installed(generator, fn):
    """Run ``fn()`` on ``Fusion[Flex]`` with ``generator`` and a fresh plan store, every op
    recorded; the plan of its first drain."""
    from minidl.backends.flex.fusion import FusionFlex
    from minidl.debug import fusion_history
    from minidl.fusion.plan import ExecutionPlanStore

    stream = FusionFlex.stream
    FusionFlex.sync()
    explorer, processor = stream.processor.explorer, stream.processor
    kept = explorer.generator, processor.store
    explorer.generator, processor.store = generator, ExecutionPlanStore()
    start = stream.executions
    try:
        with stream.recording_every_op():
            out = fn()
        plans = fusion_history(since=start, backend=FusionFlex)
    finally:
        explorer.generator, processor.store = kept
    return out, plans[0]


def _run(solution, case: dict) -> dict:
    from minidl import Device
    from minidl.backends.flex.fusion import FusionFlex

    gen = _ReaderGenerator(solution)
    out, plan = _installed(gen, lambda: _stream(FusionFlex, Device.fusion(), case))
    if gen.error is not None:
        err = gen.error
        if isinstance(err, IndexError) and "Replacement index" in str(err):
            err.args = (f"{err}: a template numbers an op's tensors, then its scalars after "
                        f"them (EXPR['mul_scalar'] is '{{0}} * {{1}}', {{1}} the scalar): "
                        "format it with *op.inputs, *op.scalars",)
        raise err
    return {**out, "_blocks": plan.blocks, "_slips": gen.slips, "_made": gen.made}


def _torch(case: dict) -> dict:
    x, b = (torch.from_numpy(case[k]) for k in ("x", "b"))
    u = x * case["s"] + b
    return {"u": u, "y": torch.exp((torch.tanh(u) - b) - 0.5) * u}


def _eager_flex(case: dict) -> dict:
    from minidl import Device
    from minidl.backends.flex import Flex

    return _stream(Flex, Device.flex(), case)


def _no_slip(solution, case, outputs, trace) -> str | None:
    if outputs["_slips"]:
        return f"Rule broken: {outputs['_slips'][0]}."
    return None


def _yours_ran(solution, case, outputs, trace) -> str | None:
    blocks = [b for b in outputs["_blocks"] if b.fuser == "elementwise"]
    if len(blocks) == 1 and blocks[0].kernel.startswith("reader_") and len(outputs["_made"]) == 1:
        return None
    return (f"The chain must run as one element-wise kernel written by your body; the plan "
            f"ran {[(b.fuser, b.kinds) for b in outputs['_blocks']]}")


def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(2)
    dims = st.tuples(st.integers(2, 4), st.integers(2, 5), st.sampled_from([0.5, 2.0, -1.5]))
    return dims.flatmap(lambda t: st.fixed_dictionaries(
        {"x": arrays(t[0], t[1]), "b": arrays(1, t[1]), "s": st.just(t[2])}))


def _fixed_case() -> dict:
    rng = np.random.default_rng(0)
    return {"x": rng.normal(size=(2, 3)).astype(np.float32),
            "b": rng.normal(size=(1, 3)).astype(np.float32), "s": 2.0}


def exercise(max_examples: int = 6) -> BuildExercise:
    """The checker for the reader's ``body(block)``."""
    return BuildExercise(
        "the element-wise block's code generator",
        cases=_cases(),
        run=_run,
        references=[Reference("eager Flex", _eager_flex, rtol=1e-5, atol=1e-6),
                    Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5)],
        checks=[_no_slip, _yours_ran],
        hints=[
            "Three parts, in order: read each input, one line per op, store the outputs.",
            ("error", "EXPR's templates number an op's tensors first, then its scalars: "
                      "format with *op.inputs, *op.scalars."),
            "in<p> of shape [1, d] holds one row: element i of the block is its column, i % d.",
        ],
        reference_solution=body,
        examples=[_fixed_case()],
        max_examples=max_examples,
        order=("x", "b", "s"),
    )


# ----- the reveal ----------------------------------------------------------------------------
def chain_block() -> tuple[Block, str]:
    """The block of the checker's chain on the fixed case, and minidl's real numba source."""
    from minidl import Device
    from minidl.backends.flex.fusion import FusionFlex

    gen = NumbaGenerator()
    seen: list = []

    class Keep(NumbaGenerator):
        def elementwise(self, ops, shape, writes):
            kernel = gen.elementwise(ops, shape, writes)
            seen.append((block_of(ops, shape, writes), kernel.source))
            return kernel

    _installed(Keep(), lambda: _stream(FusionFlex, Device.fusion(), _fixed_case()))
    return seen[0]


def beside(solution=None, width: int = 34) -> str:
    """The kernel of ``solution`` (the book's body when it is missing or has not passed) for
    the chain's block, beside minidl's real ``kernel_seq`` of the same block, op lines paired."""
    from minidl_book.fusion_lab import kernel_text
    from minidl_book.harness import is_placeholder

    block, real = chain_block()
    label = "yours"
    if solution is None or is_placeholder(solution) or exercise(2).find_failure(solution):
        solution, label = body, "the book's body"
    left = ["for i in range(size):", *("    " + ln for ln in _lines(solution(block)))]
    right = kernel_text(real).splitlines()
    right = [ln[4:] for ln in right[next(k for k, ln in enumerate(right) if "for i0" in ln):]]

    def groups(lines):
        out = [[]]
        for ln in lines:
            out[-1].append(ln)
            if re.match(r"\s*v\d+ =", ln):
                out.append([])
        return out

    rows = []
    for a, b in zip(groups(left), groups(right), strict=True):
        depth = max(len(a), len(b))
        a, b = [""] * (depth - len(a)) + a, [""] * (depth - len(b)) + b
        rows += zip(a, b, strict=True)
    head = [f"{label + ' (Python)':<{width}}| minidl's kernel_seq (numba)", "-" * width + "+" + "-" * 50]
    return "\n".join(head + [f"{a:<{width}}| {b}".rstrip() for a, b in rows])
