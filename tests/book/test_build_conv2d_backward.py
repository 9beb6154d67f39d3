"""The nn-modules chapter's conv2d backward build-it: the reader's
``conv2d_backward(B, x, weight, grad, options)`` installed as Autodiff's conv2d step."""

import linecache

import numpy as np
import pytest

from minidl import Device, DType, Tensor
from minidl.autodiff.ops import module as ad_module
from minidl.backend.options import ConvOptions
from minidl.tensor import module as functional
from minidl_book import build_conv2d_backward as bb


def test_reference_passes():
    assert bb.exercise(4).find_failure(bb.conv2d_backward) is None


@pytest.mark.parametrize("planted", sorted(bb.PLANTED))
def test_each_planted_slip_is_refused_with_its_own_hint(planted):
    wrong, kind = bb.PLANTED[planted]
    verdict = bb.exercise(4).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert bb._SAID[planted][:40] in verdict.text, verdict.text
    assert "Traceback" not in verdict.render()


@pytest.mark.parametrize("planted", sorted(bb.PLANTED))
def test_each_slip_fails_on_the_fixed_cases_alone(planted):
    """No lucky draw needed: the examples (with the corners) catch every planted slip."""
    verdict = bb.exercise(0).find_failure(bb.PLANTED[planted][0])
    assert verdict is not None and bb._SAID[planted][:40] in verdict.text, verdict


def test_the_corner_cases_have_the_shapes_they_claim():
    one_by_one, whole = bb.EXAMPLES[-2], bb.EXAMPLES[-1]
    assert one_by_one["weight"].shape[2:] == (1, 1) and one_by_one["options"].stride == (3, 2)
    assert whole["g"].shape[2:] == (1, 1)  # one window
    assert bb.exercise(0).find_failure(bb.conv2d_backward) is None


def _from_cell(source: str, name: str, **names):
    """``name`` compiled from source text as a notebook cell would (not imported)."""
    filename = f"/tmp/ipykernel_0/{abs(hash(source))}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__", **names}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


# a reader's solution as typed into the chapter's cell (the dropdown's, <= 80 columns)
READER = """
from minidl import DType
from minidl_book.build_conv2d_backward import im2col


def conv2d_backward(B, x, weight, grad, options):
    n, c, h, w = x.shape
    c_out, _, k1, k2 = weight.shape
    h_out, w_out = grad.shape[2:]
    (top, left), (bottom, right) = options.padding, options.padding_end
    (s1, s2), (d1, d2) = options.stride, options.dilation
    g = B.float_reshape(B.float_permute(grad, (0, 2, 3, 1)),
                        (n * h_out * w_out, c_out))
    w_mat = B.float_permute(weight, (2, 3, 1, 0))
    w_mat = B.float_reshape(w_mat, (k1 * k2 * c, c_out))
    d_w = B.float_matmul(B.float_transpose(im2col(B, x, (k1, k2), options)), g)
    d_w = B.float_permute(B.float_reshape(d_w, (k1, k2, c, c_out)), (3, 2, 0, 1))
    cols = B.float_matmul(g, B.float_transpose(w_mat))
    cols = B.float_reshape(cols, (n, h_out, w_out, k1 * k2 * c))
    cols = B.float_permute(cols, (0, 3, 1, 2))
    xp = B.float_zeros((n, c, top + h + bottom, left + w + right), DType.F32,
                       B.float_device(x))
    for i in range(k1):
        for j in range(k2):
            t = i * k2 + j
            at = [slice(None), slice(None),
                  slice(i * d1, i * d1 + (h_out - 1) * s1 + 1, s1),
                  slice(j * d2, j * d2 + (w_out - 1) * s2 + 1, s2)]
            tap = B.float_slice(cols, [slice(None), slice(t * c, (t + 1) * c)])
            xp = B.float_slice_assign(xp, at, B.float_add(B.float_slice(xp, at), tap))
    d_x = B.float_slice(xp, [slice(None), slice(None), slice(top, top + h),
                             slice(left, left + w)])
    return d_x, d_w
"""


def test_a_solution_typed_into_a_cell_passes():
    assert bb.exercise(4).find_failure(_from_cell(READER, "conv2d_backward")) is None


def test_an_overwriting_col2im_typed_into_a_cell_gets_the_overlap_hint():
    wrong = _from_cell(READER.replace(
        "B.float_add(B.float_slice(xp, at), tap)", "tap"), "conv2d_backward")
    verdict = bb.exercise(4).check(wrong)
    assert verdict.kind == "check" and "without the adding" in verdict.text, verdict.text


def test_a_col2im_ignoring_the_stride_typed_into_a_cell_is_named():
    wrong = _from_cell(READER.replace(
        "(h_out - 1) * s1 + 1, s1)", "h_out)").replace(
        "(w_out - 1) * s2 + 1, s2)", "w_out)"), "conv2d_backward")
    verdict = bb.exercise(4).check(wrong)
    assert verdict.kind == "check" and "as with stride 1" in verdict.text, verdict.text


def test_the_padded_gradient_handed_back_is_named_not_crashed():
    wrong = _from_cell(READER.replace("return d_x, d_w", "return xp, d_w"),
                       "conv2d_backward")
    verdict = bb.exercise(4).check(wrong)
    assert "padded input's shape" in verdict.text, verdict.render()


def test_numpy_and_the_backends_own_helpers_are_rules():
    cheat = _from_cell(READER.replace(
        "    return d_x, d_w",
        "    return B.conv2d_x_backward(x, weight, grad, options), d_w"),
        "conv2d_backward")
    verdict = bb.exercise(4).find_failure(cheat)
    assert verdict.kind == "rule" and "conv2d_x_backward" in verdict.text, verdict.text
    numpy = _from_cell("import numpy as np\n" + READER.replace(
        "    return d_x, d_w", "    return d_x, np.asarray(d_w) * 1.0"), "conv2d_backward")
    assert bb.exercise(4).find_failure(numpy).kind == "rule"


def test_plugged_in_step_is_recorded_and_gives_torchs_gradients(capsys):
    """Inside ``plugged_in`` a Conv2d layer's recorded step calls the reader's backward (a
    spy counts the calls); outside, minidl's own steps are back."""
    import torch

    calls = []

    def spy(B, x, weight, grad, options):
        calls.append(options)
        return bb.conv2d_backward(B, x, weight, grad, options)

    library = ad_module.Conv2dWithBias
    dev = Device.flex().autodiff()
    rng = np.random.default_rng(0)
    xs, ws, bs = (rng.normal(size=s).astype(np.float32)
                  for s in ((2, 3, 7, 6), (4, 3, 3, 3), (4,)))
    opts = ConvOptions(stride=(2, 2), padding=(1, 1), dilation=(1, 1), groups=1,
                       padding_end=(1, 1))
    with bb.plugged_in(spy, bb.exercise(2)):
        x, w = (Tensor.from_numpy(a, dev).require_grad() for a in (xs, ws))
        y = functional.conv2d(x, w, Tensor.from_numpy(bs, dev), options=opts)
        grads = (y * y).sum().backward()
    assert "plugged in" in capsys.readouterr().out and calls
    assert ad_module.Conv2dWithBias is library
    tx, tw = (torch.tensor(a, requires_grad=True) for a in (xs, ws))
    ty = torch.nn.functional.conv2d(tx, tw, torch.tensor(bs), stride=2, padding=1)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad(grads).to_numpy(), tx.grad.numpy(), 1e-4, 1e-4)
    np.testing.assert_allclose(w.grad(grads).to_numpy(), tw.grad.numpy(), 1e-4, 1e-4)
    assert DType.F32 is not None


def test_a_placeholder_keeps_the_books_backward(capsys):
    def conv2d_backward(B, x, weight, grad, options):
        ...

    with bb.plugged_in(conv2d_backward, bb.exercise(2)):
        assert ad_module.Conv2dWithBias._reader is bb.conv2d_backward
    assert "does not pass the checker yet" in capsys.readouterr().out


def test_a_col2im_ignoring_padding_end_gets_the_shape_hint_not_the_rule_hint():
    # the reader's report: bottom/right read from padding, a broadcast error in col2im
    wrong = _from_cell(READER.replace(
        "(top, left), (bottom, right) = options.padding, options.padding_end",
        "(top, left), (bottom, right) = options.padding, options.padding"),
        "conv2d_backward")
    ex = bb.exercise(4)
    verdict = None
    for _ in range(3):  # every hint of the ladder opened
        verdict = ex.check(wrong)
    text = verdict.render()
    assert verdict.kind != "pass"
    assert "(bottom, right) = options.padding_end" in text, text
    assert "Use only B's ops" not in text, text


# the page's swapped conv (burn's conv2d_weight_grad_no_groups) in place of patchesᵀ @ g
SWAPPED_CONV = """
    sx, sg = B.float_swap_dims(x, 0, 1), B.float_swap_dims(grad, 0, 1)
    o = ConvOptions(stride=options.dilation, padding=options.padding,
                    dilation=options.stride, groups=1,
                    padding_end=options.padding_end)
    d_w = B.float_swap_dims(B.conv2d(sx, sg, None, o), 0, 1)
    d_w = B.float_slice(d_w, [slice(None), slice(None), slice(0, k1), slice(0, k2)])
    return d_x, d_w
"""


def test_the_weight_gradient_as_a_swapped_conv_is_refused_with_a_hint():
    """The exercise says "use only these ops": B.conv2d is not one of them, even though
    it is burn's own route for the weight's gradient."""
    cheat = _from_cell("from minidl.backend.options import ConvOptions\n" + READER.replace(
        "    return d_x, d_w\n", SWAPPED_CONV), "conv2d_backward")
    verdict = bb.exercise(4).find_failure(cheat)
    assert verdict is not None and verdict.kind == "check", verdict
    assert "B.conv2d" in verdict.text and "patchesᵀ @ g" in verdict.text, verdict.text
