"""The nn-modules chapter's build-it: layer_norm's ModuleOps default from cls ops."""

import inspect
import linecache

import pytest

from minidl.backend.modules import norm
from minidl_book import build_layer_norm


def test_reference_default_passes_on_flex_autodiff_and_wgpu():
    assert build_layer_norm.exercise(4).find_failure(build_layer_norm.layer_norm) is None


@pytest.mark.parametrize("planted", sorted(build_layer_norm.PLANTED))
def test_planted_wrong_default_gets_its_verdict(planted):
    wrong, kind = build_layer_norm.PLANTED[planted]
    verdict = build_layer_norm.exercise(4).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()
    # each slip is named in the verdict, not answered by a hint ladder in a fixed order
    named = {"unbiased variance": "n - 1", "eps outside the sqrt": "sqrt(var + eps)",
             "gamma not reshaped": "same rank", "E[x^2] - mean^2": "cancel",
             "beta None not handled": "beta is None in this case",
             "beta None drops gamma": "gamma still scales",
             "if beta:": "beta is not None"}
    assert named[planted] in verdict.text, verdict.text


def test_borrowing_the_librarys_default_breaks_the_rule():
    def borrowed(cls, x, gamma, beta, epsilon):
        return norm.layer_norm(cls, x, gamma, beta, epsilon)

    verdict = build_layer_norm.exercise(4).find_failure(borrowed)
    assert verdict is not None and verdict.kind == "rule", verdict


def test_the_patched_backends_get_their_own_layer_norm_back():
    from minidl import Device
    from minidl.dispatch.route import backend_for

    names = ("layer_norm", "float_add", "float_sub", "float_mul", "float_div")

    def patched():
        return {(label, name): vars(backend_for(make())).get(name)
                for label, make in build_layer_norm.DEVICES.items() for name in names}

    before = patched()
    build_layer_norm.exercise(2).find_failure(build_layer_norm.eps_outside)
    build_layer_norm.exercise(2).find_failure(build_layer_norm.no_reshape)
    assert patched() == before and Device.flex() is not None


def _from_cell(source: str, name: str):
    """``name`` as a notebook cell defines it: compiled from source text by the kernel (under
    ipykernel's kind of file name), in a namespace of its own, not imported from minidl_book."""
    filename = f"/tmp/ipykernel_0/{abs(hash(source))}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def test_a_solution_typed_into_a_cell_passes():
    # the reader's cls.float_* calls reach the checker's same-rank wrapper: that must count
    # as the backend's op, not as "the checker's objects" (every reader was refused so)
    cell = _from_cell(inspect.getsource(build_layer_norm.layer_norm), "layer_norm")
    assert cell.__code__.co_filename.startswith("/tmp/ipykernel_0/")
    assert build_layer_norm.exercise(2).find_failure(cell) is None


@pytest.mark.parametrize("planted", ["gamma not reshaped", "unbiased variance"])
def test_a_slip_typed_into_a_cell_gets_its_named_verdict(planted):
    wrong, kind = build_layer_norm.PLANTED[planted]
    source = "".join(inspect.getsource(f) for f in (
        build_layer_norm._param_shape, build_layer_norm._affine, wrong))
    verdict = build_layer_norm.exercise(2).find_failure(_from_cell(source, wrong.__name__))
    assert verdict is not None and verdict.kind == kind, verdict
    assert {"check": "n - 1", "error": "same rank"}[kind] in verdict.text, verdict.text


def test_last_dim_hard_coded_to_1_is_refused_on_a_rank_3_input():
    def dim_one(cls, x, gamma, beta, epsilon):
        centred = cls.float_sub(x, cls.float_mean_dim(x, 1))
        var = cls.float_mean_dim(cls.float_mul(centred, centred), 1)
        out = cls.float_div(centred, cls.float_sqrt(cls.float_add_scalar(var, epsilon)))
        out = cls.float_mul(out, cls.float_reshape(gamma, (1, x.shape[-1])))
        return cls.float_add(out, cls.float_reshape(beta, (1, x.shape[-1])))

    verdict = build_layer_norm.exercise(4).find_failure(dim_one)
    assert verdict is not None and verdict.kind in ("error", "check", "value"), verdict


def test_beta_none_is_a_case_and_a_default_that_needs_beta_fails_it():
    def needs_beta(cls, x, gamma, beta, epsilon):
        out = build_layer_norm.layer_norm(cls, x, gamma, None, epsilon)
        return cls.float_add(out, cls.float_reshape(beta, (1,) * (len(x.shape) - 1)
                                                    + (x.shape[-1],)))

    assert any(case["beta"] is None for case in build_layer_norm.EXAMPLES)
    verdict = build_layer_norm.exercise(4).find_failure(needs_beta)
    assert verdict is not None, "a default that crashes on beta=None was accepted"


def test_calling_the_backends_own_layer_norm_says_it_is_the_op_being_written():
    def cheat(cls, x, gamma, beta, epsilon):
        return cls.layer_norm(x, gamma, beta, epsilon)

    verdict = build_layer_norm.exercise(2).find_failure(cheat)
    assert verdict is not None and verdict.kind == "rule", verdict
    assert "the backend's layer_norm is the op you are writing" in verdict.text
    assert "installed" not in verdict.text


@pytest.mark.parametrize("planted", ["beta None not handled", "beta None drops gamma",
                                     "if beta:"])
def test_a_beta_none_slip_gets_its_own_hint_not_the_gamma_one(planted):
    wrong, _ = build_layer_norm.PLANTED[planted]
    source = "".join(inspect.getsource(f) for f in (
        build_layer_norm._param_shape, build_layer_norm._affine, build_layer_norm._x_hat,
        wrong))
    ex = build_layer_norm.exercise(2)
    verdict = ex.check(_from_cell(source, wrong.__name__))
    shown = verdict.render()
    assert "beta" in verdict.text and "None" in verdict.text, shown
    assert "reshape(gamma" not in shown and "mean of its squares" not in shown, shown


def test_a_failing_case_names_g_the_upstream_gradient():
    verdict = build_layer_norm.exercise(2).find_failure(build_layer_norm.unbiased)
    g_lines = [line for line in verdict.inputs.splitlines() if line.startswith("g = ")]
    assert g_lines and "the upstream gradient" in g_lines[0], verdict.inputs


def _sum_times_reciprocal(cls, x, gamma, beta, epsilon):
    """The mean as float_sum_dim times 1 / n: right, with another float32 rounding."""
    dim, n = len(x.shape) - 1, x.shape[-1]
    shape = (1,) * dim + (n,)
    centred = cls.float_sub(x, cls.float_mul_scalar(cls.float_sum_dim(x, dim), 1.0 / n))
    var = cls.float_mul_scalar(cls.float_sum_dim(cls.float_mul(centred, centred), dim), 1.0 / n)
    out = cls.float_div(centred, cls.float_sqrt(cls.float_add_scalar(var, epsilon)))
    out = cls.float_mul(out, cls.float_reshape(gamma, shape))
    return out if beta is None else cls.float_add(out, cls.float_reshape(beta, shape))


@pytest.mark.parametrize("max_examples", [0, 30])
def test_a_mean_as_sum_times_one_over_n_passes(max_examples):
    """float32 noise of a mean over a row of spread 0.01 (EXAMPLES[1]) is 1e-4 in x_hat and
    2e-3 in the gradient of x: the tolerances take it (rtol 1e-4 refused this right answer),
    and still refuse every planted slip (test above)."""
    ex = build_layer_norm.exercise(max_examples)
    assert ex.find_failure(_sum_times_reciprocal) is None
    assert ex.find_failure(build_layer_norm.layer_norm) is None
