"""The nn-modules chapter's build-it: conv2d from cls ops (pad, im2col, matmul)."""

import linecache

import pytest

from minidl_book import build_conv2d


def test_reference_conv2d_passes_on_flex_autodiff_and_wgpu():
    assert build_conv2d.exercise(3).find_failure(build_conv2d.conv2d) is None


@pytest.mark.parametrize("planted", sorted(build_conv2d.PLANTED))
def test_planted_wrong_conv2d_is_refused(planted):
    wrong, kind = build_conv2d.PLANTED[planted]
    verdict = build_conv2d.exercise(3).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()


def _from_cell(source: str, name: str, **names):
    """``name`` compiled from source text as a notebook cell would (not imported)."""
    filename = f"/tmp/ipykernel_0/{abs(hash(source))}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__", **names}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


# a reader's im2col with the weight reshaped [c_out, c * k1 * k2] and transposed: its rows
# run (c, i, j) while the patches, concatenated tap by tap, run (i, j, c)
READER_TRANSPOSED = """
def conv2d(cls, x, weight, bias, options):
    n, _, h, w = x.shape
    c_out, c_group, k1, k2 = weight.shape
    (top, left), (bottom, right) = options.padding, options.padding_end
    (s1, s2), (d1, d2), groups = options.stride, options.dilation, options.groups
    x = pad(cls, pad(cls, x, 2, top, bottom), 3, left, right)
    h_out = (h + top + bottom - d1 * (k1 - 1) - 1) // s1 + 1
    w_out = (w + left + right - d2 * (k2 - 1) - 1) // s2 + 1
    per_group, outs = c_out // groups, []
    for g in range(groups):
        xg = cls.float_slice(x, [slice(None), slice(g * c_group, (g + 1) * c_group)])
        taps = [cls.float_slice(xg, [slice(None), slice(None),
                                     slice(i * d1, i * d1 + (h_out - 1) * s1 + 1, s1),
                                     slice(j * d2, j * d2 + (w_out - 1) * s2 + 1, s2)])
                for i in range(k1) for j in range(k2)]
        cols = cls.float_permute(cls.float_cat(taps, 1), (0, 2, 3, 1))
        cols = cls.float_reshape(cols, (n * h_out * w_out, k1 * k2 * c_group))
        wg = cls.float_slice(weight, [slice(g * per_group, (g + 1) * per_group)])
        wg = cls.float_reshape(wg, (per_group, c_group * k1 * k2))
        outs.append(cls.float_matmul(cols, cls.float_permute(wg, (1, 0))))
    out = cls.float_cat(outs, 1) if groups > 1 else outs[0]
    if bias is not None:
        out = cls.float_add(out, cls.float_reshape(bias, (1, c_out)))
    out = cls.float_reshape(out, (n, h_out, w_out, c_out))
    return cls.float_permute(out, (0, 3, 1, 2))
"""


def test_a_weight_order_slip_typed_into_a_cell_gets_the_weight_order_hint():
    wrong = _from_cell(READER_TRANSPOSED, "conv2d", pad=build_conv2d.pad)
    ex = build_conv2d.exercise(3)
    verdict = ex.check(wrong)
    assert verdict.kind == "check", verdict.render()
    assert "weight's rows run (c, i, j)" in verdict.text, verdict.text
    assert "(2, 3, 1, 0)" not in verdict.text  # the first hint names the order only
    assert "so its axes run (i, j, c, c_out)" in verdict.text, verdict.text
    # it names the axes' order already: what a repeat adds is the permute's argument
    assert "gives the permute's argument" in verdict.text, verdict.text
    again = ex.check(wrong)  # the same slip again: now the axes
    assert "(2, 3, 1, 0)" in again.text and "Slip again" not in again.text, again.text
    assert "Pad first" not in verdict.render()  # not the generic value hint
    right = _from_cell(READER_TRANSPOSED.replace(
        "cls.float_reshape(wg, (per_group, c_group * k1 * k2))",
        "cls.float_permute(wg, (2, 3, 1, 0))").replace(
        "cls.float_permute(wg, (1, 0))",
        "cls.float_reshape(wg, (k1 * k2 * c_group, per_group))"), "conv2d",
        pad=build_conv2d.pad)
    assert build_conv2d.exercise(3).find_failure(right) is None


def test_a_weight_reshaped_without_a_permute_is_named():
    verdict = build_conv2d.exercise(3).find_failure(
        build_conv2d.PLANTED["weight reshaped without a permute"][0])
    assert verdict.kind == "check" and "mixes the output channels" in verdict.text


def test_calling_the_backends_own_conv2d_is_a_rule():
    def cheat(cls, x, weight, bias, options):
        return cls.conv2d(x, weight, bias, options)

    verdict = build_conv2d.exercise(2).find_failure(cheat)
    assert verdict is not None and verdict.kind == "rule", verdict
    assert "the op you are writing" in verdict.text, verdict.text


def test_the_backends_get_their_own_conv2d_back():
    from minidl.dispatch.route import backend_for

    before = {label: vars(backend_for(make())).get("conv2d")
              for label, make in build_conv2d.DEVICES.items()}
    build_conv2d.exercise(2).find_failure(build_conv2d.PLANTED["pads swapped top/bottom"][0])
    after = {label: vars(backend_for(make())).get("conv2d")
             for label, make in build_conv2d.DEVICES.items()}
    assert after == before


def test_without_an_adapter_the_wgpu_case_is_left_out_not_failed(monkeypatch):
    monkeypatch.setattr(build_conv2d, "_GPU", [False])
    assert "Wgpu" not in build_conv2d.devices()
    assert build_conv2d.exercise(1).find_failure(build_conv2d.conv2d) is None


def test_a_dilation_slip_typed_into_a_cell_gets_the_dilation_hint():
    # the taps read rows i and columns j (no dilation); h_out, w_out keep it or not
    for h_out in ("(h + top + bottom - d1 * (k1 - 1) - 1) // s1 + 1",
                  "(h + top + bottom - (k1 - 1) - 1) // s1 + 1"):
        source = READER_TRANSPOSED.replace(
            "cls.float_reshape(wg, (per_group, c_group * k1 * k2))",
            "cls.float_permute(wg, (2, 3, 1, 0))").replace(
            "cls.float_permute(wg, (1, 0))",
            "cls.float_reshape(wg, (k1 * k2 * c_group, per_group))").replace(
            "slice(i * d1, i * d1 +", "slice(i, i +").replace(
            "slice(j * d2, j * d2 +", "slice(j, j +").replace(
            "(h + top + bottom - d1 * (k1 - 1) - 1) // s1 + 1", h_out)
        if "(k1 - 1) - 1) // s1" in h_out and "d1" not in h_out:
            source = source.replace("(w + left + right - d2 * (k2 - 1) - 1)",
                                    "(w + left + right - (k2 - 1) - 1)")
        verdict = build_conv2d.exercise(3).check(
            _from_cell(source, "conv2d", pad=build_conv2d.pad))
        assert verdict.kind == "check", verdict.render()
        assert "as with dilation 1" in verdict.text, verdict.text
        assert "Pad first" not in verdict.render()  # not the generic value hint


def test_a_failing_case_prints_shapes_and_names_the_upstream_gradient():
    # a value slip no check names: the bias added twice
    source = READER_TRANSPOSED.replace(
        "cls.float_reshape(wg, (per_group, c_group * k1 * k2))",
        "cls.float_permute(wg, (2, 3, 1, 0))").replace(
        "cls.float_permute(wg, (1, 0))",
        "cls.float_reshape(wg, (k1 * k2 * c_group, per_group))").replace(
        "out = cls.float_add(out, cls.float_reshape(bias, (1, c_out)))",
        "out = cls.float_add(out, cls.float_reshape(bias, (1, c_out)))\n"
        "        out = cls.float_add(out, cls.float_reshape(bias, (1, c_out)))")
    verdict = build_conv2d.exercise(3).find_failure(
        _from_cell(source, "conv2d", pad=build_conv2d.pad))
    assert verdict is not None and verdict.kind == "value", verdict
    lines = verdict.inputs.splitlines()
    assert lines[0].startswith("x = f32[") and lines[0].endswith("]"), lines[0]
    assert "[[" not in verdict.inputs  # no values, only shapes
    assert any(line.startswith("g = ") and "the upstream gradient" in line
               for line in lines), verdict.inputs
    assert "expected" in verdict.text and "found" in verdict.text  # the first difference


def test_an_output_of_the_wrong_shape_gets_a_shape_verdict_not_a_crash():
    source = READER_TRANSPOSED.replace(
        "    return cls.float_permute(out, (0, 3, 1, 2))",
        "    out = cls.float_permute(out, (0, 3, 1, 2))\n"
        "    return cls.float_slice(out, [slice(None), slice(None), slice(0, 1)])")
    verdict = build_conv2d.exercise(3).find_failure(
        _from_cell(source, "conv2d", pad=build_conv2d.pad))
    assert verdict is not None and verdict.kind == "shape", verdict.render()


def test_swapped_pads_and_ignored_groups_get_their_own_hints():
    swapped = build_conv2d.exercise(3).find_failure(
        build_conv2d.PLANTED["pads swapped top/bottom"][0])
    assert swapped.kind == "check" and "swapped end for end" in swapped.text, swapped.text
    assert "Pad first" not in swapped.render()  # not the generic value hint
    ignored = build_conv2d.exercise(3).find_failure(
        build_conv2d.PLANTED["groups ignored"][0])
    assert ignored.kind == "check" and "the first group's" in ignored.text, ignored.text
    assert "Pad first" not in ignored.render()


def test_stride_and_dilation_swapped_get_their_own_hint():
    verdict = build_conv2d.exercise(3).find_failure(
        build_conv2d.PLANTED["stride and dilation swapped"][0])
    assert verdict.kind == "check" and "swapped stride and dilation" in verdict.text, \
        verdict.render()
    assert "Pad with options.padding" not in verdict.render()  # not the generic hint


def test_pads_read_in_the_pairs_order_get_the_pad_order_hint_not_the_shape_one():
    # (pt, pb), (pl, pr) = options.padding, options.padding_end: left and bottom exchanged;
    # the output's shape is wrong, and h_out's formula is not the slip
    verdict = build_conv2d.exercise(3).find_failure(
        build_conv2d.PLANTED["pads read as (top, bottom), (left, right)"][0])
    assert verdict.kind == "check" and "three pad orders" in verdict.text, verdict.render()
    assert "(top, left)" in verdict.text and "h_out = (h + top" not in verdict.render()


# ----- step 1: the figure's case (stride 1, dilation 1, one group, symmetric pads) ----------
def test_step_one_references_pass_step_one():
    ex = build_conv2d.exercise(3, step=1)
    assert ex.reference_solution is build_conv2d.conv2d_plain
    assert ex.find_failure(build_conv2d.conv2d_plain) is None
    assert build_conv2d.exercise(3, step=1).find_failure(build_conv2d.conv2d) is None


def test_step_one_cases_are_the_figures_kind():
    from hypothesis import given, settings

    seen = []

    @settings(max_examples=20, database=None, deadline=None)
    @given(build_conv2d._plain_cases())
    def collect(case):
        seen.append(case["options"])

    collect()
    for o in seen + [c["options"] for c in build_conv2d.EXAMPLES_STEP1]:
        assert tuple(o.stride) == tuple(o.dilation) == (1, 1) and o.groups == 1, o
        assert tuple(o.padding) == tuple(o.padding_end), o


@pytest.mark.parametrize("planted", sorted(build_conv2d.PLANTED_STEP1))
def test_step_one_planted_slips_are_refused(planted):
    wrong, kind = build_conv2d.PLANTED_STEP1[planted]
    verdict = build_conv2d.exercise(3, step=1).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()


READER_STEP1 = """
def conv2d(cls, x, weight, bias, options):
    n, _, h, w = x.shape
    c_out, c_in, k1, k2 = weight.shape
    p1, p2 = options.padding
    x = pad(cls, pad(cls, x, 2, p1, p1), 3, p2, p2)
    h_out, w_out = h + 2 * p1 - k1 + 1, w + 2 * p2 - k2 + 1
    taps = [cls.float_slice(x, [slice(None), slice(None),
                                slice(i, i + h_out), slice(j, j + w_out)])
            for i in range(k1) for j in range(k2)]
    cols = cls.float_permute(cls.float_cat(taps, 1), (0, 2, 3, 1))
    cols = cls.float_reshape(cols, (n * h_out * w_out, k1 * k2 * c_in))
    w_mat = cls.float_reshape(cls.float_permute(weight, (2, 3, 1, 0)),
                              (k1 * k2 * c_in, c_out))
    out = cls.float_matmul(cols, w_mat)
    if bias is not None:
        out = cls.float_add(out, cls.float_reshape(bias, (1, c_out)))
    out = cls.float_reshape(out, (n, h_out, w_out, c_out))
    return cls.float_permute(out, (0, 3, 1, 2))
"""


def test_a_step_one_output_layout_slip_typed_into_a_cell_is_named():
    right = _from_cell(READER_STEP1, "conv2d", pad=build_conv2d.pad)
    assert build_conv2d.exercise(3, step=1).find_failure(right) is None
    source = READER_STEP1.replace(
        "    out = cls.float_reshape(out, (n, h_out, w_out, c_out))\n"
        "    return cls.float_permute(out, (0, 3, 1, 2))",
        "    return cls.float_reshape(out, (n, c_out, h_out, w_out))")
    verdict = build_conv2d.exercise(3, step=1).check(
        _from_cell(source, "conv2d", pad=build_conv2d.pad))
    assert verdict.kind == "check", verdict.render()
    assert "reads positions as channels" in verdict.text, verdict.text
    assert "Pad first" not in verdict.render()  # not the generic value hint


def test_step_two_names_what_a_step_one_conv2d_leaves_out():
    step1 = _from_cell(READER_STEP1, "conv2d", pad=build_conv2d.pad)
    verdict = build_conv2d.exercise(3).find_failure(step1)
    assert verdict is not None and verdict.kind == "check", verdict
    assert "with pad ends left out" in verdict.text, verdict.text
    # uneven pads and a stride: both named in one verdict
    ex = build_conv2d.exercise(3)
    case = build_conv2d._arrays(5, 1, 1, 1, 2, (2, 2), (2, 1), (1, 1), (0, 1, 1, 0), True)
    verdict = ex.verdict_for(step1, case)
    assert verdict.kind == "check", verdict
    assert "with pad ends and stride left out" in verdict.text, verdict.text
    verdict = ex.verdict_for(step1, dict(build_conv2d.EXAMPLES[3]))  # dilation only
    assert verdict.kind == "check" and "as with dilation 1" in verdict.text, verdict.text


def test_each_step_has_its_own_hints():
    one, two = build_conv2d.exercise(1, step=1), build_conv2d.exercise(1)
    assert any("at both ends" in h for h in one.hints)
    assert not any("dilation" in h for h in one.hints)
    assert any("padding_end" in h for h in two.hints)


@pytest.mark.parametrize("step", [1, 2])
def test_a_bias_broadcast_against_the_product_is_refused_as_burn_would(step):
    """A [c_out] bias added to the [rows, c_out] product: burn's backend ops take operands of
    the same rank (layer_norm's checker refuses the same broadcast of gamma)."""
    verdict = build_conv2d.exercise(0, step=step).find_failure(build_conv2d.bias_broadcast)
    assert verdict is not None and verdict.kind == "error", verdict
    assert "same rank" in verdict.text and "[1, c_out]" in verdict.text, verdict.text


READER_INTERLEAVED = READER_TRANSPOSED.replace(
    "cls.float_reshape(wg, (per_group, c_group * k1 * k2))",
    "cls.float_permute(wg, (2, 3, 1, 0))").replace(
    "cls.float_permute(wg, (1, 0))",
    "cls.float_reshape(wg, (k1 * k2 * c_group, per_group))").replace(
    "slice(g * per_group, (g + 1) * per_group)", "slice(g, c_out, groups)")


@pytest.mark.parametrize("max_examples", [0, 4])
def test_group_weight_rows_taken_interleaved_are_refused_and_named(max_examples):
    """slice(g, c_out, groups) is group g's block only when per_group is 1: a fixed case with
    two groups of two output channels refuses it whatever hypothesis draws (the chapter runs
    max_examples=4)."""
    assert any(c["options"].groups > 1 and c["weight"].shape[0] // c["options"].groups > 1
               for c in build_conv2d.EXAMPLES)
    wrong = _from_cell(READER_INTERLEAVED, "conv2d", pad=build_conv2d.pad)
    verdict = build_conv2d.exercise(max_examples).check(wrong)
    assert verdict.kind == "check", verdict.render()
    assert "slice(g, c_out, groups)" in verdict.text, verdict.text
    assert "Pad first" not in verdict.render()  # not the generic value hint


def test_seconds_times_a_solution_and_restores_the_backend_kernel():
    import numpy as np

    from minidl import Device, Tensor
    from minidl.backend.options import ConvOptions
    from minidl.dispatch.route import backend_for

    dev = Device.flex()
    backend = backend_for(dev)
    before = vars(backend).get("conv2d")
    rng = np.random.default_rng(0)
    x, w = (Tensor.from_numpy(rng.standard_normal(s).astype(np.float32), dev)
            for s in ((2, 1, 5, 5), (3, 1, 3, 3)))
    opts = ConvOptions(padding=(1, 1))
    assert build_conv2d.seconds(build_conv2d.conv2d, x, w, None, opts, repeats=1) > 0
    assert build_conv2d.seconds(None, x, w, None, opts, repeats=1) > 0
    assert vars(backend).get("conv2d") is before


def test_check_keeps_the_solution_that_passed():
    ex = build_conv2d.exercise(2)
    assert ex.passing is None
    ex.solution()  # the reference's own verification does not count as the reader's
    assert ex.passing is None
    assert ex.check(build_conv2d.conv2d).kind == "ok" and ex.passing is build_conv2d.conv2d
