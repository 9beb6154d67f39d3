"""The nn-modules chapter's build-it: conv2d from cls ops (pad, im2col, matmul)."""

import pytest

from minidl_book import build_conv2d


def test_reference_conv2d_passes_on_flex_autodiff_and_wgpu():
    assert build_conv2d.exercise(3).find_failure(build_conv2d.conv2d) is None


@pytest.mark.parametrize("planted", sorted(build_conv2d.PLANTED))
def test_planted_wrong_conv2d_is_refused(planted):
    verdict = build_conv2d.exercise(3).find_failure(build_conv2d.PLANTED[planted])
    assert verdict is not None and verdict.kind == "value", verdict
    assert "Traceback" not in verdict.render()


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
    build_conv2d.exercise(2).find_failure(build_conv2d.PLANTED["pads swapped top/bottom"])
    after = {label: vars(backend_for(make())).get("conv2d")
             for label, make in build_conv2d.DEVICES.items()}
    assert after == before


def test_without_an_adapter_the_wgpu_case_is_left_out_not_failed(monkeypatch):
    monkeypatch.setattr(build_conv2d, "_GPU", [False])
    assert "Wgpu" not in build_conv2d.devices()
    assert build_conv2d.exercise(1).find_failure(build_conv2d.conv2d) is None
