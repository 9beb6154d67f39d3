"""The conv-backward chapter's second build-it: conv2d's backward as burn's two defaults
(a transposed conv with padding_out; the swapped conv with stride and dilation traded,
swapped back and cropped), installed as Autodiff's conv2d step."""

import linecache

import pytest

from minidl_book import build_conv_burn_backward as bb


def _from_cell(source: str, name: str = "conv2d_backward"):
    """``name`` compiled from source text as a notebook cell would (not imported)."""
    filename = f"/tmp/ipykernel_0/{abs(hash(source))}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def _shown(verdict) -> str:
    """What the reader sees on a first failure: the verdict and the first hint of its kind
    (an error's hint names the unpadded weight's conv, which fails before any check)."""
    if verdict.kind != "error":
        return verdict.render()  # a check's own text names the slip
    fits = [t for kinds, t in bb.exercise(0).hint_ladder if kinds and "error" in kinds]
    return verdict.render() + "\n" + fits[0]


def test_calculate_padding_out_is_burns():
    # the page's stride-3 2 x 2 conv on 7 rows: windows at 0 and 3 cover 5, 2 left over
    assert bb.calculate_padding_out(2, 3, 0, 1, 7, 2) == 2
    assert bb.calculate_padding_out(2, 3, 0, 1, 8, 3) == 0
    assert bb.calculate_padding_out(3, 1, 1, 1, 5, 5) == 0  # stride 1: always 0


def test_reference_passes():
    assert bb.exercise(4).find_failure(bb.conv2d_backward) is None


@pytest.mark.parametrize("planted", sorted(bb.PLANTED))
def test_each_planted_slip_is_refused_with_its_own_hint(planted):
    wrong, kind = bb.PLANTED[planted]
    verdict = bb.exercise(0).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert bb._SAID[planted][:40] in _shown(verdict), _shown(verdict)
    assert "Traceback" not in verdict.render()


# a reader's solution as typed into the chapter's cell
READER = """
from minidl.backend.options import ConvOptions, ConvTransposeOptions
from minidl_book.build_conv_burn_backward import calculate_padding_out


def conv2d_backward(B, x, weight, grad, options):
    k1, k2 = weight.shape[2:]
    po = [calculate_padding_out(k1, options.stride[0], options.padding[0],
                                options.dilation[0], x.shape[2], grad.shape[2]),
          calculate_padding_out(k2, options.stride[1], options.padding[1],
                                options.dilation[1], x.shape[3], grad.shape[3])]
    d_x = B.conv_transpose2d(grad, weight, None, ConvTransposeOptions(
        options.stride, options.padding, po, options.dilation, 1))
    xs = B.float_swap_dims(x, 0, 1)
    gs = B.float_swap_dims(grad, 0, 1)
    o = ConvOptions(options.dilation, options.padding, options.stride, 1)
    d_w = B.float_swap_dims(B.conv2d(xs, gs, None, o), 0, 1)
    d_w = B.float_slice(d_w, [slice(None), slice(None), slice(0, k1), slice(0, k2)])
    return d_x, d_w
"""

# the same, written differently: permutes for the swaps, padding_out by its own formula,
# keyword options, open-start crop slices
OTHER = """
from minidl.backend.options import ConvOptions, ConvTransposeOptions


def conv2d_backward(B, x, weight, grad, options):
    k = weight.shape[2:]
    po = []
    for i in range(2):
        s, p, d = options.stride[i], options.padding[i], options.dilation[i]
        reach = (grad.shape[2 + i] - 1) * s + d * (k[i] - 1) + 1 - 2 * p
        po.append(x.shape[2 + i] - reach)
    t = ConvTransposeOptions(stride=options.stride, padding=options.padding,
                             padding_out=tuple(po), dilation=options.dilation)
    d_x = B.conv_transpose2d(grad, weight, None, t)
    o = ConvOptions(stride=options.dilation, padding=options.padding,
                    dilation=options.stride)
    full = B.conv2d(B.float_permute(x, (1, 0, 2, 3)),
                    B.float_permute(grad, (1, 0, 2, 3)), None, o)
    full = B.float_permute(full, (1, 0, 2, 3))
    return d_x, B.float_slice(full, [slice(None), slice(None), slice(None, k[0]),
                                     slice(None, k[1])])
"""


@pytest.mark.parametrize("source", [READER, OTHER], ids=["as-burn", "written-differently"])
def test_right_solutions_typed_into_a_cell_pass(source):
    assert bb.exercise(4).find_failure(_from_cell(source)) is None


@pytest.mark.parametrize("old, new, said", [
    ("options.padding, po, options.dilation", "options.padding, (0, 0), options.dilation",
     "padding_out"),
    ("ConvOptions(options.dilation, options.padding, options.stride, 1)",
     "ConvOptions(options.stride, options.padding, options.dilation, 1)",
     "forward's stride as its stride"),
    ("    d_w = B.float_slice(d_w, [slice(None), slice(None), slice(0, k1), "
     "slice(0, k2)])\n", "", "top-left k1 x k2"),
    ("B.conv2d(xs, gs, None, o)", "B.conv2d(x, grad, None, o)", "Swap dims 0 and 1"),
    ("d_w = B.float_swap_dims(B.conv2d(xs, gs, None, o), 0, 1)",
     "d_w = B.conv2d(xs, gs, None, o)", "swapped conv's layout"),
    ("ConvOptions(options.dilation, options.padding, options.stride, 1)",
     "ConvOptions(options.dilation, (0, 0), options.stride, 1)", "forward's padding"),
], ids=["no-padding-out", "stride-dilation-kept", "no-crop", "no-swap", "not-back",
        "weight-conv-unpadded"])
def test_slips_typed_into_a_cell_are_refused_and_named(old, new, said):
    assert old in READER
    verdict = bb.exercise(4).find_failure(_from_cell(READER.replace(old, new)))
    assert verdict is not None and said in _shown(verdict), verdict and _shown(verdict)


def test_the_backends_own_helpers_and_numpy_are_rules():
    cheat = _from_cell(READER.replace(
        "    return d_x, d_w", "    return B.conv2d_x_backward(x, weight, grad, options),"
        " d_w"))
    verdict = bb.exercise(4).find_failure(cheat)
    assert verdict.kind == "rule" and "conv2d_x_backward" in verdict.text, verdict.text
    numpy = _from_cell("import numpy as np\n" + READER.replace(
        "    return d_x, d_w", "    return d_x, np.asarray(d_w) * 1.0"))
    assert bb.exercise(4).find_failure(numpy).kind == "rule"
