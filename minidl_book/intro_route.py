"""The intro's route exercise: the boxes a ``Linear`` forward crosses, in order.

``conv2d`` has a forwarder in ``Dispatch`` (burn-dispatch's ``conv2d``,
``crates/burn-dispatch/src/ops/module.rs``), ``linear`` has none: so a ``Conv2d`` goes
straight down by device (the rule, drawn first) where ``Linear`` takes the protocol's
default body, run with ``B = Dispatch`` (the detour, which the reader predicts).

- :func:`route_of`: the boxes of the map one backtrace crosses, outermost first, read from
  the files of its frames (:func:`minidl_book.tour_path.package_of`; a ``Dispatch.`` method
  is Dispatch's wherever it is written), each stay in a box once: ``Linear``'s is nn, tensor, dispatch, backend, dispatch, autodiff, flex.
- :func:`conv_route`: the straight route, :func:`route_of` a traced ``Conv2d`` forward.
- :func:`linear_route`: the truth, :func:`route_of` a traced ``Linear`` forward.
- :func:`route_read`, :func:`same_route`, :func:`route_unclear`: how the checker reads an
  ordered route, as a list of names or a string (``"nn → tensor → …"``,
  ``"minidl.nn, minidl.tensor, …"``, ``"burn-nn > burn-tensor > …"``); the detour's
  loop (back up to ``Dispatch`` and down) written out once per call is the same route;
  "default body" names the protocol's box, and boxes may be written apart by spaces only.
- :class:`RouteExercise`: the exercise, a list of names read as the string it spells.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from minidl import Device, Tensor, debug
from minidl.debug.frames import Hit
from minidl.nn import Conv2dConfig, LinearConfig
from minidl_book.exercises import _shown
from minidl_book.intro_answers import NameExercise
from minidl_book.tour_path import package_of
from minidl_book.verdict import WRONG

#: A package (:func:`package_of`) → its box on the map.
BOX_OF_PACKAGE = {"nn": "nn", "module": "module", "tensor": "tensor",
                  "dispatch": "dispatch", "autodiff": "autodiff", "backend": "backend",
                  "backends.flex": "flex", "backends.flex.kernels": "flex"}
#: The map's box ids → the package names it prints.
PACKAGE_OF_BOX = {"nn": "minidl.nn", "module": "minidl.module", "tensor": "minidl.tensor",
                  "dispatch": "minidl.dispatch", "autodiff": "minidl.autodiff",
                  "flex": "minidl.backends.flex", "backend": "minidl.backend"}


def route_of(hit: Hit) -> tuple[str, ...]:
    """The boxes ``hit``'s backtrace crosses, from the layer's ``forward`` (``minidl.nn``)
    down to its first ``Flex`` frame, each stay in a box once."""
    frames = [f for f in reversed(hit.frames) if f.library]  # outermost first
    start = next(i for i, f in enumerate(frames) if package_of(f.path) == "nn")
    route: list[str] = []
    for frame in frames[start:]:
        box = BOX_OF_PACKAGE.get(package_of(frame.path))
        if frame.name.startswith("Dispatch."):  # Dispatch.linear, inherited from the
            box = "dispatch"  # protocol's file, runs as Dispatch's: the map's box
        if box is not None and (not route or route[-1] != box):
            route.append(box)
        if box == "flex":
            break
    return tuple(route)


def conv_route(device: Device | None = None) -> tuple[str, ...]:
    """The boxes a 3×3 ``Conv2d`` forward crosses on ``device``
    (``Device.flex().autodiff()``), read from a trace stopped at its ``Flex`` op."""
    device = device or Device.flex().autodiff()
    conv = Conv2dConfig((1, 2), (3, 3)).init(device)
    image = Tensor.from_numpy(np.zeros((1, 1, 5, 5), np.float32), device)
    conv(image)  # draw the params first: the trace below sees the forward only
    return route_of(debug.trace(lambda: conv(image), breakpoints=r"^Flex\.",
                                echo=False).first())


def linear_route(device: Device | None = None) -> tuple[str, ...]:
    """The boxes a ``Linear(4, 2)`` forward crosses on ``device``
    (``Device.flex().autodiff()``) down to its first ``Flex`` op, read from a trace: in
    burn's and minidl's ``Dispatch``, ``linear`` has no forwarder."""
    device = device or Device.flex().autodiff()
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.zeros((3, 4), np.float32), device)
    layer(x)  # draw the params first: the trace below sees the forward only
    return route_of(debug.trace(lambda: layer(x), breakpoints=r"^Flex\.",
                                echo=False).first())


#: A word → the box it names; "backend" names its own box unless it qualifies the name
#: right before it ("the autodiff backend" is autodiff, "minidl.backend" the protocol's
#: box, "dispatch backend dispatch" three boxes); the default body is the protocol's.
WORDS = {"nn": "nn", "module": "module", "core": "module", "tensor": "tensor",
         "tensors": "tensor", "dispatch": "dispatch", "autodiff": "autodiff",
         "flex": "flex", "backends": "flex", "kernel": "flex", "kernels": "flex",
         "backend": "backend", "protocol": "backend", "body": "backend"}
#: Between two boxes: a comma, an arrow, "then", "to", "and", a new line.
SEPARATOR = re.compile(r"[,;|\n]|→|⇒|->|=>|>|\b(?:then|to|and|into)\b")
#: Words that deny or skip: a route is a list of boxes, not a sentence about them.
DENIES = re.compile(r"\b(?:not|no|never|skips?|skipped|except|without|bypass\w*)\b|n't")


def _qualifies(words: Sequence[str], k: int) -> bool:
    """Whether ``words[k]`` is a "backend" that qualifies the box named right before it
    ("the autodiff backend"), not a box of its own: no box named right after it either
    ("nn tensor dispatch backend dispatch …" names the protocol's box)."""
    return (words[k] == "backend" and k > 0 and words[k - 1] in WORDS
            and (k + 1 == len(words) or words[k + 1] not in WORDS))


def route_read(prediction: Any) -> tuple[str, ...] | None:
    """The boxes a written route names, in order (each stay once; ``minidl.module`` right
    after ``minidl.nn``, the parameter read the map draws beside it, left out); ``None``
    when it is not a route: not a string or a list of strings, or a sentence that denies."""
    if isinstance(prediction, list | tuple) and all(isinstance(p, str) for p in prediction):
        prediction = " → ".join(prediction)
    if not isinstance(prediction, str):
        return None
    text = re.sub(r"autodiff\s*\[\s*\w*\s*\]", "autodiff", prediction.casefold())
    if DENIES.search(text):
        return None
    route: list[str] = []
    for item in SEPARATOR.split(text):
        words = re.findall(r"[a-z0-9]+", item)
        boxes = [WORDS[w] for k, w in enumerate(words) if w in WORDS
                 and not _qualifies(words, k)]
        for box in boxes:
            if not route or route[-1] != box:
                route.append(box)
    if "module" in route and route.index("module") > 0 and \
            route[route.index("module") - 1] == "nn":
        route.remove("module")
    return tuple(route) or None


def without_repeats(route: Sequence[str]) -> tuple[str, ...]:
    """``route`` with its last loop back to ``backend`` dropped while the route repeats it:
    "…, backend, dispatch, autodiff, flex, backend, dispatch, autodiff, flex" (the detour
    written out once per call the default body makes) is the route of one call."""
    route = tuple(route)
    while route.count("backend") > 1:
        at = len(route) - 1 - route[::-1].index("backend")
        loop = route[at:]
        if route[at - len(loop):at] != loop:
            break
        route = route[:at]
    return route


def same_route(prediction: Any, truth: Sequence[str]) -> bool:
    """Right when the route written is the measured one, box for box, in order (the
    detour's loop may be written once per call)."""
    read = route_read(prediction)
    return read is not None and without_repeats(read) == tuple(truth)


def route_unclear(prediction: Any) -> bool:
    """A string in which no route can be read (no box named, or a sentence that denies):
    the checker asks for the route as a list."""
    return isinstance(prediction, str) and route_read(prediction) is None


class RouteExercise(NameExercise):
    """The route exercise: a route written as a list of names (``["nn", "tensor", …]``) is
    read as the string it spells; other answers as :class:`NameExercise` reads them."""

    def check(self, prediction: Any = ...) -> bool:
        if isinstance(prediction, list | tuple):
            if not all(isinstance(p, str) for p in prediction):
                print(f"{WRONG} Not read: {_shown(prediction)} holds something other "
                      f"than names.\n  {self.ask}")
                return False
            prediction = " → ".join(prediction)
        return super().check(prediction)
