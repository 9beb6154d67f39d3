"""Every build-it's fixed cases (its examples, then its probes) catch every planted slip, with no
generated case: what hypothesis draws under one seed has differed between a test run and a
chapter's kernel (a 1-D input with a bias was never drawn there, and a linear that dropped that
bias passed in the chapter), so a slip the book plants must not depend on a lucky draw. The
reference passes the same fixed cases."""

from __future__ import annotations

import pytest

from minidl_book import (
    build_apply,
    build_backend,
    build_backward_walk,
    build_batch_norm,
    build_broadcast,
    build_codegen,
    build_conv2d,
    build_conv2d_backward,
    build_default_op,
    build_explorer,
    build_forwarder,
    build_guard,
    build_import,
    build_layer,
    build_layer_norm,
    build_linear,
    build_matmul_step,
    build_param_walk,
    build_record,
    build_reduce,
    build_reshape,
    build_route,
    build_softplus,
    build_view,
    build_zip,
)

#: ``name: (exercise factory, planted slips)``; build_resume is left out (its checker replays
#: a training run, with no generated cases).
EXERCISES = {
    module.__name__.rsplit(".", 1)[1]: (module.exercise, module.PLANTED)
    for module in (build_apply, build_backend, build_backward_walk, build_batch_norm, build_broadcast,
                   build_codegen, build_conv2d, build_conv2d_backward, build_default_op, build_explorer, build_forwarder,
                   build_guard, build_import, build_layer, build_layer_norm, build_linear, build_matmul_step,
                   build_param_walk, build_record, build_reduce, build_reshape, build_route, build_softplus, build_view,
                   build_zip)
}
EXERCISES["guard classify"] = (build_guard.classify_exercise, build_guard.CLASSIFY_PLANTED)

SLIPS = [(name, slip) for name, (_, planted) in sorted(EXERCISES.items()) for slip in planted]


def fixed_only(name):
    """The exercise with generation off (``max_examples=0``: examples and probes only)."""
    return EXERCISES[name][0](0)


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_reference_passes_the_fixed_cases(name):
    ex = fixed_only(name)
    assert ex.examples or ex.probes, f"{name}: no fixed cases"
    assert ex.find_failure(ex.reference_solution) is None


@pytest.mark.parametrize(("name", "slip"), SLIPS)
def test_every_planted_slip_fails_on_the_fixed_cases_alone(name, slip):
    wrong = EXERCISES[name][1][slip][0]
    verdict = fixed_only(name).find_failure(wrong)
    assert verdict is not None and not verdict.ok, f"{name}: {slip!r} passes the fixed cases"
