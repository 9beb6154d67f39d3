"""The tensors chapter's build exercise: a protocol default (``log_softmax``) written from
``cls`` ops, installed on Flex and on NdArray and compared with PyTorch; and the float_exp
checker's reach rule, which must not depend on how the reader's function is named."""

from __future__ import annotations

import numpy as np
import pytest

from minidl_book import build_backend, build_default_op


def test_reference_default_passes_on_both_backends():
    assert build_default_op.exercise(10).find_failure(build_default_op.log_softmax) is None


@pytest.mark.parametrize("planted", sorted(build_default_op.PLANTED))
def test_planted_wrong_default_gets_its_verdict(planted):
    wrong, kind = build_default_op.PLANTED[planted]
    verdict = build_default_op.exercise(10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()


def test_a_lambda_default_passes():
    # the reader's helper is the reader's own code: it may not name minidl_book or call the
    # book's reference (both are the checker's), so the body is written out here
    def shifted(cls, t, d):
        return cls.float_sub(t, cls.float_max_dim(t, d))

    def log_sum(cls, s, d):
        return cls.float_log(cls.float_sum_dim(cls.float_exp(s), d))

    default = lambda cls, t, d: cls.float_sub(shifted(cls, t, d), log_sum(cls, shifted(cls, t, d), d))  # noqa: E731
    assert build_default_op.exercise(5).find_failure(default) is None


def test_calling_a_backends_own_softmax_breaks_the_rule():
    def log_of_cls_softmax(cls, tensor, dim):
        return cls.float_log(cls.softmax(tensor, dim))

    verdict = build_default_op.exercise(5).find_failure(log_of_cls_softmax)
    assert verdict is not None and verdict.kind == "rule" and "softmax" in verdict.text, verdict


def test_the_naive_default_overflows_at_90():
    verdict = build_default_op.exercise(5).find_failure(build_default_op.naive)
    assert "inf" in verdict.text and "90" in verdict.inputs


def test_installed_default_runs_with_cls_the_backend():
    seen = []

    def spy(cls, tensor, dim):
        seen.append(cls.__mro__[1].__name__)
        return build_default_op.log_softmax(cls, tensor, dim)

    for backend, device in build_default_op.BACKENDS.values():
        B = build_default_op.install(spy, backend)
        out = B.log_softmax(B.float_from_data(np.zeros((2, 2), np.float32), device()), 1)
        assert np.allclose(np.asarray(out), np.log(0.5))
    assert seen == ["Flex", "NdArray"]


@pytest.mark.parametrize("how", ["lambda", "named function"])
def test_float_exp_written_outside_a_class_body_is_not_refused(how):
    def my_exp(cls, tensor):
        return np.exp(tensor)

    op = classmethod(lambda cls, t: np.exp(t)) if how == "lambda" else classmethod(my_exp)
    backend = type("MyNdArray", (build_backend.ForgetfulNdArray,), {"float_exp": op})
    assert build_backend.exercise(5).find_failure(backend) is None
