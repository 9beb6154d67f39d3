"""The fusion chapter's build exercise (a fuser rule run through Fusion[Flex]): the reference
rule passes, each planted wrong rule gets its verdict, and the real rule is put back after."""

from __future__ import annotations

import pytest

from minidl.backends.flex.fusion import FusionFlex
from minidl.fusion import ElementwiseFuser
from minidl_book import build_fuser


def test_reference_rule_passes_and_the_fusers_are_restored():
    processor = FusionFlex.stream.processor
    fusers, store = processor.explorer.fusers, processor.store
    assert build_fuser.exercise(max_examples=5).find_failure(build_fuser.fits) is None
    assert processor.explorer.fusers is fusers and processor.store is store
    assert type(fusers[0]) is ElementwiseFuser


@pytest.mark.parametrize("planted", sorted(build_fuser.PLANTED))
def test_planted_wrong_rule_gets_its_verdict(planted):
    wrong, kind = build_fuser.PLANTED[planted]
    verdict = build_fuser.exercise(max_examples=5).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()
    if planted in ("accepts every op", "tests the kind only in an open block"):
        assert "'matmul' has no element-wise expression" in verdict.text
    if planted == "compares element counts":
        assert "equal element counts are not enough" in verdict.text
    if planted == "requires equal input shapes":
        assert "it broadcasts to the block's [n, d]" in verdict.text
        ladder = build_fuser.exercise().hint_ladder  # the hints this failure opens
        opened = [text for kinds, text in ladder if kinds is None or kind in kinds]
        assert "broadcast" in opened[-1] and not any("ELEMENTWISE" in t for t in opened)
    if planted == "requires the result's dtype":  # relu: lower_elem's result is bool
        assert "relu is lower_elem (float inputs, a bool result)" in verdict.text
    if planted == "no dtype test":  # a float16 chain: no generator writes its kernel
        assert "let cast (float32 -> float16) join a block" in verdict.text
        assert "test dtypes_ok(op)" in verdict.text
    if planted == "opens a block with the first input's shape":  # b.exp() * x, b [1, d]
        assert "an empty block\n  takes the shape of the op's result" in verdict.text
        ladder = build_fuser.exercise().hint_ladder
        assert any("b.exp() * x" in text for kinds, text in ladder if kinds and kind in kinds)
    if planted == "ignores the shape":
        assert "the result must have the block's shape" in verdict.text
    if kind == "check":
        assert ("must be fused into\n  one element-wise kernel" in verdict.text
                or "join a block of shape" in verdict.text
                or "join a block.\n" in verdict.text
                or "must be\n  one element-wise kernel" in verdict.text)
