"""The fusion chapter's second build exercise (the element-wise block's code generator, run
as Fusion[Flex]'s): the reference body passes and its kernel really runs, each planted slip
fails with a verdict naming its cause, and the real generator is put back after."""

from __future__ import annotations

import pytest

from minidl.backends.flex.fusion import FusionFlex
from minidl.backends.flex.fusion.generator import NumbaGenerator
from minidl_book import build_codegen
from minidl_book.build_codegen import EXPR


def test_reference_body_passes_and_the_generator_is_restored():
    processor = FusionFlex.stream.processor
    generator, store = processor.explorer.generator, processor.store
    assert build_codegen.exercise(max_examples=4).find_failure(build_codegen.body) is None
    assert processor.explorer.generator is generator and processor.store is store
    assert type(generator) is NumbaGenerator


def test_the_reference_kernel_is_the_one_launched():
    out = build_codegen._run(build_codegen.body, build_codegen._fixed_case())
    assert out["_slips"] == [] and len(out["_made"]) == 1
    assert [b.kernel.startswith("reader_") for b in out["_blocks"]] == [True]
    block, lines = out["_made"][0]
    assert block.writes == (1, 6)  # u (held) and y: no intermediate
    assert sum(line.startswith("out") for line in lines) == 2


@pytest.mark.parametrize("planted", sorted(build_codegen.PLANTED))
def test_planted_slip_fails_naming_its_cause(planted):
    wrong, kind, words = build_codegen.PLANTED[planted]
    verdict = build_codegen.exercise(max_examples=0).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert words in verdict.text, verdict.text
    assert "Traceback" not in verdict.render()


def test_beside_pairs_the_op_lines():
    text = build_codegen.beside()
    assert "the book's body" in text and "kernel_seq" in text
    rows = [row for row in text.splitlines() if "v6 =" in row]
    assert len(rows) == 1 and "|" in rows[0]  # v6 on one row, both sides
    assert max(len(row) for row in text.splitlines()) <= 88


def _divmod_body(block):
    """The reference body, a broadcast input read at its column from ``divmod``."""
    lines = ["r, c = divmod(i, d)"]
    lines += [f"x{p} = in{p}[{'i' if shape == block.shape else 'c'}]"
              for p, shape in enumerate(block.inputs)]
    lines += [f"v{j} = {EXPR[op.kind].format(*op.inputs, *op.scalars)}"
              for j, op in enumerate(block.ops)]
    return lines + [f"out{q}[i] = v{j}" for q, j in enumerate(block.writes)]


def test_index_arithmetic_with_builtins_and_unpacking_is_accepted():
    """``r, c = divmod(i, d)`` then ``in1[c]`` reads the right element: a right answer."""
    out = build_codegen._run(_divmod_body, build_codegen._fixed_case())
    assert out["_slips"] == [] and len(out["_made"]) == 1
    assert build_codegen.exercise(max_examples=2).find_failure(_divmod_body) is None
