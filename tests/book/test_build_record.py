"""The record build-it: the reference passes, each planted slip gets its own named verdict,
the library's record and Autodiff's ops are refused, and the reference builds what minidl's
own record builds."""

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.autodiff import Autodiff
from minidl.autodiff.ops import base as ad_base
from minidl.autodiff.ops.arithmetic import Mul
from minidl.autodiff.ops.math import Exp
from minidl.backends.flex import Flex
from minidl_book import build_record

AD = Autodiff[Flex]


def test_the_reference_passes():
    assert build_record.exercise(3).find_failure(build_record.record) is None


@pytest.mark.parametrize(("planted", "words"), [
    ("keeps everything", "kept ['lhs', 'out', 'rhs']"),
    ("tracks an untracked input", "made c's node a parent"),
    ("saves the wrapper", "as an AutodiffTensor"),
    ("parents in id order", "must follow the inputs"),
    ("forgets shapes", "step.shapes"),
])
def test_each_slip_is_named(planted, words):
    wrong, kind = build_record.PLANTED[planted]
    verdict = build_record.exercise(3).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind and words in verdict.text, verdict


def test_the_library_record_and_autodiff_ops_are_refused():
    def lib(step, *inputs):
        return ad_base.record(AD, step, *inputs)

    def ops(step, *inputs):
        return AD.float_mul(*inputs) if len(inputs) == 2 else AD.float_sin(inputs[0])

    for solution in (lib, ops):
        assert build_record.exercise(2).find_failure(solution).kind == "rule"


def test_the_reference_builds_what_minidl_builds():
    ad = Device.flex().autodiff()
    for make, specs in ((Mul, [([1.0, 2.0], True), ([3.0, -1.0], False)]),
                        (Mul, [([1.0, 2.0], True), ([3.0, -1.0], True)]),
                        (Exp, [([0.5, -1.0], True)]), (Exp, [([0.5, -1.0], False)])):
        built = []
        for rec in (lambda *a: ad_base.record(AD, *a), build_record.record):
            leaves = [Tensor.from_data(v, ad) for v, _ in specs]
            leaves = [t.require_grad() if tr else t for t, (_, tr) in zip(leaves, specs)]
            prims = [t.primitive.backend_tensor for t in leaves]
            step = make()
            y = rec(step, *prims)
            parents = [next(k for k, p in enumerate(prims) if p.node is n)
                       for n in y.node.parents]
            saved = {k: v.tolist() for k, v in step.saved.items()}
            built.append((np.asarray(y.inner).tolist(), saved, parents,
                          str(y.node.requirement)))
        assert built[0] == built[1], make
