"""What burn-train's ``Learner`` brings back on a resume, measured on minidl's mirror.

burn (v0.22.0-pre.2): ``Learner`` starts at ``checkpoint + 1``
(``learner/supervised/strategies/base.rs:128``), loading ``model-`` and ``optim-``;
``fit`` iterates ``dataloader_train.to_device(..)`` (``single/strategy.rs:54``), and a
``BatchDataLoader``'s ``to_device`` hands the copy ``rng.fork()`` of its generator
(burn-core ``data/dataloader/batch.rs:102-105``); burn-train makes no ``seed`` call.
minidl's ``BatchDataLoader.to_device`` forks the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minidl import Device
from minidl_book import training_run as tr

#: the four pieces of an exact resume, as the chapter's timeline names its lanes
PIECES = ("weights", "Adam's state", "data order", "device seed")
_LEFT_OUT_KEY = {"Adam's state": "adam_state", "data order": "order",
                 "device seed": "masks"}
LEARNER = "order and seed (burn's Learner)"


def learner_restores() -> frozenset[str]:
    """The pieces the ablation's ``Learner`` resume keeps (burn restores ``model-`` and
    ``optim-``, paradigm.rs:311-313; nothing reseeds, nothing skips the loader)."""
    left_out = tr.LEFT_OUT[LEARNER]
    return frozenset(p for p in PIECES
                     if left_out.get(_LEFT_OUT_KEY.get(p, ""), True))


def _orders(loader: Any, epochs: int) -> list[np.ndarray]:
    """Each epoch's first batch (its targets), one ``iter`` per epoch as ``fit`` does."""
    return [next(iter(loader)).targets.to_numpy() for _ in range(epochs)]


def learner_epoch_order(dataset: Any, device: Device, seed: int = tr.SEED,
                        epochs: int = 6, resumed_epoch: int = 4) -> int:
    """Which epoch of an uninterrupted ``Learner`` run gives its order to a fresh
    process's epoch ``resumed_epoch``: both call ``to_device`` once per ``fit`` on a
    loader built with ``seed``, and the fresh one's first pass is its resumed epoch."""
    run = _orders(tr.loader(dataset, device, seed).to_device(device), epochs)
    fresh = _orders(tr.loader(dataset, device, seed).to_device(device), 1)[0]
    same = [k for k, order in enumerate(run, 1) if np.array_equal(order, fresh)]
    assert len(same) == 1 and resumed_epoch <= epochs, same
    return same[0]


def _piece(word: Any) -> str | None:
    said = str(word).casefold().replace("'", "").replace("’", "")
    for piece, words in (("weights", ("weight", "model")),
                         ("Adam's state", ("adam", "optim", "moment")),
                         ("data order", ("order", "loader", "shuffl")),
                         ("device seed", ("seed", "mask", "random"))):
        if any(w in said for w in words):
            return piece
    return None


def same_answer(said: Any, truth: Any) -> bool:
    """``(restored pieces, epoch)``: the pieces as a collection of names in any order and
    wording (``{"weights", "adam"}``), the epoch a number; both must match."""
    if not isinstance(said, tuple | list) or len(said) != 2:
        return False
    pieces, epoch = said
    if isinstance(pieces, str) or not isinstance(pieces, tuple | list | set | frozenset):
        return False
    named = [_piece(p) for p in pieces]
    if None in named or isinstance(epoch, bool) or not isinstance(epoch, int | float):
        return False
    return set(named) == set(truth[0]) and epoch == truth[1]
