"""The two walks the reader builds: autodiff's backward walk and a module's parameter walk.

Each reference solution passes, and each planted wrong one gets the verdict kind it must.
"""

from __future__ import annotations

import pytest

from minidl_book import build_backward_walk, build_param_walk

WALKS = {"backward": (build_backward_walk, build_backward_walk.backward_walk),
         "params": (build_param_walk, build_param_walk.named_params)}


@pytest.mark.parametrize("name", sorted(WALKS))
def test_reference_solution_passes(name):
    module, reference = WALKS[name]
    assert module.exercise(max_examples=5).find_failure(reference) is None


@pytest.mark.parametrize(("name", "planted"), [
    (name, planted) for name, (module, _) in sorted(WALKS.items()) for planted in module.PLANTED
])
def test_planted_solution_gets_its_verdict(name, planted):
    module, _ = WALKS[name]
    wrong, kind = module.PLANTED[planted]
    verdict = module.exercise(max_examples=5).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict and verdict.text
