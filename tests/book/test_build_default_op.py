"""The tensors chapter's build exercise: a protocol default (``log_softmax``) written from
``cls`` ops, installed on Flex, NdArray and Wgpu (when an adapter exists) and compared with
PyTorch; and the float_exp checker's reach rule, which must not depend on how the reader's
function is named."""

from __future__ import annotations

import numpy as np
import pytest

from minidl_book import build_backend, build_default_op


def test_reference_default_passes_on_both_backends():
    assert build_default_op.exercise(10).find_failure(build_default_op.log_softmax) is None


needs_wgpu = pytest.mark.skipif(build_default_op.wgpu_missing() is not None,
                                reason="no WebGPU adapter (Device.wgpu() cannot run here)")


@pytest.mark.parametrize("planted", sorted(build_default_op.PLANTED))
def test_planted_wrong_default_gets_its_verdict(planted):
    wrong, kind = build_default_op.PLANTED[planted]
    if planted == "operators" and build_default_op.wgpu_missing() is not None:
        pytest.skip("NumPy's operators on the primitive are caught on Wgpu only")
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

    for backend, device, _ in build_default_op.backends().values():
        B = build_default_op.install(spy, backend)
        out = B.log_softmax(B.float_from_data(np.zeros((2, 2), np.float32), device()), 1)
        assert np.allclose(np.asarray(out), np.log(0.5))
    assert seen == list(build_default_op.backends())


@needs_wgpu
def test_numpy_operators_on_the_primitive_are_refused_on_wgpu():
    # `tensor - m` names no NumPy function and gives the right values on both CPU backends,
    # whose primitive is an ndarray; a default must also run where the primitive is not one
    verdict = build_default_op.exercise(5).find_failure(build_default_op.with_operators)
    assert verdict is not None and verdict.kind == "error", verdict
    assert "WgpuTensor" in verdict.text and "tensor - cls.float_max_dim" in verdict.text
    assert "Wgpu" in build_default_op.exercise(5).title


def test_without_an_adapter_the_check_runs_on_the_cpu_backends(monkeypatch):
    monkeypatch.setattr(build_default_op, "wgpu_missing", lambda: "no adapter")
    ex = build_default_op.exercise(5)
    assert "no WebGPU adapter" in ex.title
    assert ex.find_failure(build_default_op.log_softmax) is None
    assert ex.find_failure(build_default_op.with_operators) is None  # the hole Wgpu closes


def test_a_default_returning_another_primitive_is_refused():
    # right values, but an ndarray made outside the backend on Wgpu (or a list anywhere)
    def as_list(cls, tensor, dim):  # the reader's code may not call the book's reference
        shifted = cls.float_sub(tensor, cls.float_max_dim(tensor, dim))
        log_sum = cls.float_log(cls.float_sum_dim(cls.float_exp(shifted), dim))
        return [cls.float_sub(shifted, log_sum)]

    verdict = build_default_op.exercise(3).find_failure(as_list)
    assert verdict is not None and verdict.kind == "error" and "returned a list" in verdict.text


def test_underflow_and_overflow_name_their_cause_and_open_the_fix_first():
    under = build_default_op.exercise(5).check(build_default_op.log_of_softmax)
    assert under.kind == "check" and "1.4e-45" in under.text and "3.4e38" not in under.text
    over = build_default_op.exercise(5).check(build_default_op.naive)
    assert over.kind == "check" and "3.4e38" in over.text and "1.4e-45" not in over.text
    for verdict in (under, over):  # the first hint is the shift, never the formula again
        assert len(verdict.hints) == 1 and "constant c" in verdict.hints[0], verdict.hints
        assert "x_i - log(sum_j e^(x_j))" not in verdict.hints[0]
        assert "log(sum" not in verdict.hints[0]  # a nudge: the formula is the 2nd hint


def test_the_second_overflow_hint_is_the_shifted_formula():
    ex = build_default_op.exercise(5)
    first = ex.check(build_default_op.naive)
    second = ex.check(build_default_op.naive)
    assert first.hints != second.hints, (first.hints, second.hints)
    assert "log(sum_j e^(x_j - c))" in second.hints[-1], second.hints


def test_a_wrong_formula_still_opens_the_formula_first():
    verdict = build_default_op.exercise(5).check(build_default_op.last_dim)
    assert verdict.kind == "value" and "x_i - log" in verdict.hints[0], verdict.hints


@pytest.mark.parametrize("how", ["lambda", "named function"])
def test_float_exp_written_outside_a_class_body_is_not_refused(how):
    def my_exp(cls, tensor):
        return np.exp(tensor)

    op = classmethod(lambda cls, t: np.exp(t)) if how == "lambda" else classmethod(my_exp)
    backend = type("MyNdArray", (build_backend.ForgetfulNdArray,), {"float_exp": op})
    assert build_backend.exercise(5).find_failure(backend) is None


def test_calling_cls_log_softmax_is_a_recursion_not_a_profile_switch():
    # installed as the backend's log_softmax, the reader's function is what cls.log_softmax
    # names: the verdict says so (it once read "your code called sys.setprofile")
    def calls_itself(cls, tensor, dim):
        return cls.log_softmax(tensor, dim)

    verdict = build_default_op.exercise(3).find_failure(calls_itself)
    assert verdict is not None and verdict.kind == "rule", verdict
    assert "itself" in verdict.text and "setprofile" not in verdict.text, verdict.text


def _global_max_shift(cls, tensor, dim):
    """Shifts every row by the tensor's max, not its own: a row far below it sums to 0."""
    top = tensor
    for axis in reversed(range(tensor.ndim)):
        top = cls.float_max_dim(top, axis)
    shifted = cls.float_sub(tensor, top)
    return cls.float_sub(shifted, cls.float_log(cls.float_sum_dim(cls.float_exp(shifted), dim)))


@needs_wgpu
def test_a_global_max_shift_on_wgpu_names_the_subnormal_flush():
    # [0, 88] vs 0: e^-88 is 6e-39 on Flex (a subnormal) and 0 on Wgpu, which flushes them
    case = {"x": np.array([[0.0, 0.0], [0.0, 88.0]], np.float32), "dim": 0}
    outputs = {k: np.asarray(v) for k, v in build_default_op._run(_global_max_shift, case).items()}
    assert np.isfinite(outputs["on Flex"]).all()
    said = build_default_op._zero_sum(None, case, outputs, None)
    assert said.startswith("on Wgpu: inf") and "flushes subnormals" in said and "1.2e-38" in said
    verdict = build_default_op.exercise(10).find_failure(_global_max_shift)
    assert verdict is not None and verdict.kind == "check" and "log(0)" in verdict.text, verdict


def test_a_global_max_shift_on_flex_names_its_own_floor():
    case = {"x": np.array([[0.0, -110.0], [0.0, 0.0]], np.float32), "dim": 1}
    flex = build_default_op.install(_global_max_shift, build_default_op.Flex)
    x = flex.float_from_data(case["x"], build_default_op.Device.flex())
    said = build_default_op._zero_sum(None, case, {"on Flex": np.asarray(flex.log_softmax(x, 1))},
                                      None)
    assert said is None  # row 0 holds 0 = the global max: its sum holds e^0
    case["x"] = np.array([[-110.0, -110.0], [0.0, 0.0]], np.float32)
    x = flex.float_from_data(case["x"], build_default_op.Device.flex())
    said = build_default_op._zero_sum(None, case, {"on Flex": np.asarray(flex.log_softmax(x, 1))},
                                      None)
    assert "1.4e-45" in said and "flushes" not in said
