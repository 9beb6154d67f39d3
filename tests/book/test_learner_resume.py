"""The Learner-resume exercise: the live answer (weights and Adam's state restored; a
fresh process's epoch 4 repeats epoch 1's order), and a comparison that refuses plausible
wrong answers and accepts right ones written differently."""

from __future__ import annotations

import pytest

from minidl import Device
from minidl_book import learner_resume as lr
from minidl_book import training_run as tr
from minidl_book.exercises import Exercise

TRUTH = (frozenset({"weights", "Adam's state"}), 1)


def test_the_learner_restores_weights_and_adam_state():
    assert lr.learner_restores() == TRUTH[0]


def test_a_fresh_process_epoch_4_gets_epoch_1s_order():
    assert lr.learner_epoch_order(tr.datasets()[0], Device.flex().autodiff()) == 1


@pytest.mark.parametrize("said", [
    ({"weights", "Adam's state"}, 1), (["model", "optimizer"], 1),
    (("Adam state", "the weights"), 1.0), ({"weights", "adam"}, 1)])
def test_right_answers_written_differently_pass(said):
    ex = Exercise("q", truth=lambda: TRUTH, compare=lr.same_answer)
    assert ex.accepts(said, TRUTH)


@pytest.mark.parametrize("said", [
    ({"weights", "Adam's state"}, 4), ({"weights", "Adam's state"}, 3),
    ({"weights", "Adam's state", "data order"}, 1), ({"weights"}, 1),
    (set(lr.PIECES), 4), ({"weights", "Adam's state", "device seed"}, 1),
    ("weights and adam", 1), ({"weights", "Adam's state"}, True), (TRUTH[0],),
    ({"weights", "Adam's state", "everything"}, 1)])
def test_plausible_wrong_answers_are_refused(said):
    ex = Exercise("q", truth=lambda: TRUTH, compare=lr.same_answer)
    assert not ex.accepts(said, TRUTH)


MIRROR = "/work/.mirror/tracel-ai+burn/repo"
TRAIN = "crates/burn-train/src/learner/supervised/"
#: the chapter's cited lines at v0.22.0-pre.2: (file, line, text the line holds)
CITED = [
    (TRAIN + "strategies/base.rs", 128,
     "let starting_epoch = training_components.checkpoint.unwrap_or(0) + 1;"),
    (TRAIN + "strategies/single/strategy.rs", 54,
     "let dataloader_train = dataloader_train.to_device(&self.device);"),
    ("crates/burn-core/src/data/dataloader/batch.rs", 102, "fn to_device("),
    ("crates/burn-core/src/data/dataloader/batch.rs", 105, "rng.fork()"),
    (TRAIN + "paradigm.rs", 311, '"model"'),
    (TRAIN + "paradigm.rs", 312, '"optim"'),
    (TRAIN + "paradigm.rs", 313, '"scheduler"'),
]


def _show(path: str) -> str:
    import subprocess

    return subprocess.run(["git", "-C", MIRROR, "show", f"v0.22.0-pre.2:{path}"],
                          capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(not __import__("os").path.isdir(MIRROR), reason="no burn mirror")
@pytest.mark.parametrize(("path", "line", "text"), CITED)
def test_cited_burn_lines_hold(path, line, text):
    assert text in _show(path).splitlines()[line - 1]


@pytest.mark.skipif(not __import__("os").path.isdir(MIRROR), reason="no burn mirror")
def test_burn_train_makes_no_seed_call():
    import subprocess

    found = subprocess.run(["git", "-C", MIRROR, "grep", "-n", "seed", "v0.22.0-pre.2",
                            "--", "crates/burn-train/src"], capture_output=True, text=True)
    assert found.stdout == ""
