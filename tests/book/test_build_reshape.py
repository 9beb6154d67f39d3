"""The tensors chapter's reshape build exercise: the strides of a reshape's view, or None for
a copy (NumPy's and PyTorch's rule), checked against NumPy's reshape(copy=False) on real Flex
views; burn-flex's stricter contiguous-only rule and two other slips refused in their words."""

from __future__ import annotations

import pytest

from minidl_book import build_reshape


def test_reference_passes():
    assert build_reshape.exercise(60).find_failure(build_reshape.reshape_strides) is None


def test_pytorchs_compute_stride_passes():
    """A port of PyTorch's computeStride: another way to write the same rule."""
    def compute_stride(shape, strides, new_shape):
        out = [0] * len(new_shape)
        view_d, base, t_numel, v_numel = len(new_shape) - 1, strides[-1], 1, 1
        for d in reversed(range(len(shape))):
            t_numel *= shape[d]
            if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != t_numel * base):
                while view_d >= 0 and (v_numel < t_numel or new_shape[view_d] == 1):
                    out[view_d] = v_numel * base
                    v_numel *= new_shape[view_d]
                    view_d -= 1
                if v_numel != t_numel:
                    return None
                if d > 0:
                    base, t_numel, v_numel = strides[d - 1], 1, 1
        return tuple(out) if view_d == -1 else None

    assert build_reshape.exercise(60).find_failure(compute_stride) is None


@pytest.mark.parametrize("planted", sorted(build_reshape.PLANTED))
def test_planted_slip_is_refused_with_its_own_words(planted):
    wrong, kind, phrase = build_reshape.PLANTED[planted]
    verdict = build_reshape.exercise(20).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert phrase in verdict.text, verdict.text


def test_the_cases_hold_views_copies_and_odd_strides():
    from hypothesis import given, settings

    seen = set()

    @settings(max_examples=150, database=None, deadline=None)
    @given(build_reshape._cases())
    def collect(case):  # make_case raises when NumPy and minidl's reshape disagree
        ref = build_reshape.reshape_strides(case["shape"], case["strides"], case["new_shape"])
        assert (ref is not None) == case["_view"], case
        seen.add("view" if case["_view"] else "copy")
        seen.update(k for k in ("zero", "negative") if any(
            (s == 0, s < 0)[k == "negative"] for n, s in zip(case["shape"], case["strides"])
            if n > 1))

    collect()
    assert seen == {"view", "copy", "zero", "negative"}


def test_the_chapters_grid():
    grid_t = ((4, 3), (1, 4))
    assert build_reshape.reshape_strides(*grid_t, (12,)) is None
    assert build_reshape.reshape_strides(*grid_t, (2, 2, 3)) == (2, 1, 4)
    assert build_reshape.reshape_strides((2, 1, 3), (3, 6, 1), (1, 6)) in {(6, 1), (0, 1)}


def test_the_size_one_hint_is_true():
    """The second hint's example: the size-1 dim a permute moved (stride 1) is left out, so
    [2, 3] is one run; that view flattens its first two dims without a copy."""
    hint = build_reshape.exercise(1).hints[1]
    assert "(12, 1, 4, 1)" in hint and "12 == 3 * 4" in hint
    assert build_reshape.reshape_strides((2, 1, 3, 2), (12, 1, 4, 1), (6, 2)) == (4, 1)
    assert build_reshape.reshape_strides((2, 1, 3, 2), (12, 1, 4, 1), (3, 4)) is None
