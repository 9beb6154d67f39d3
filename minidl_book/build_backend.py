"""Build exercise of the tensors-and-backends chapter: complete a backend that lacks ``float_exp``.

:data:`ForgetfulNdArray` is NdArray with ``float_exp`` taken out (abstract, so it can be
subclassed; a concrete subclass without ``float_exp`` is refused at its ``class`` statement,
the way rustc refuses an ``impl`` that misses a required method). The reader writes the
missing op. The checker calls it, and also two protocol *defaults* (``sigmoid``,
``softmax``) that are written with ``cls.float_exp``: they must reach the reader's op, and
agree with PyTorch, in float32, shape for shape. Borrowing another backend's ``float_exp``
gives the right numbers and breaks a rule.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device
from minidl.backend import Backend, defining_class
from minidl.backends.ndarray import NdArray
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.harness import backend_run
from minidl_book.strategies import float32_arrays

__all__ = ["PLANTED", "ForgetfulNdArray", "exercise", "without_op"]

_SKIP = frozenset({"__dict__", "__weakref__", "__module__", "__doc__", "__qualname__", "abstract"})


def without_op(backend: type, op: str, name: str) -> type:
    """An abstract backend with every op of ``backend`` except ``op``: the bodies of its
    classes below the protocol, copied (later classes of the MRO first, so overrides win).
    It keeps ``backend``'s ``name``, which is also the kind of the devices it hands out."""
    protocols = set(Backend.__mro__)
    body: dict = {}
    for klass in reversed([k for k in backend.__mro__ if k not in protocols]):
        body.update({k: v for k, v in vars(klass).items() if k not in _SKIP})
    body.pop(op, None)
    body.update({"abstract": True, "__module__": __name__,
                 "__doc__": f"{backend.__name__} without {op} (abstract: a subclass must write it)."})
    return type(name, (Backend,), body)


ForgetfulNdArray = without_op(NdArray, "float_exp", "ForgetfulNdArray")


# ----- the reference solution and planted wrong ones -------------------------------------------
class Complete(ForgetfulNdArray):
    """NdArray again: ``float_exp`` in NumPy, float32 in, float32 out."""


    @classmethod
    def float_exp(cls, tensor):
        return np.exp(tensor)


class WrongValue(ForgetfulNdArray):

    @classmethod
    def float_exp(cls, tensor):
        return np.exp2(tensor)  # 2^x, not e^x


class Borrowed(ForgetfulNdArray):

    @classmethod
    def float_exp(cls, tensor):
        return NdArray.float_exp(tensor)  # right values, somebody else's op


class WrongDtype(ForgetfulNdArray):

    @classmethod
    def float_exp(cls, tensor):
        return np.exp(tensor.astype(np.float64))  # float64 out of a float32 backend op


class Flattened(ForgetfulNdArray):

    @classmethod
    def float_exp(cls, tensor):
        return np.exp(tensor).reshape(-1)  # the right numbers in the wrong shape


#: name → (wrong backend, the verdict kind it must get)
PLANTED = {
    "wrong value": (WrongValue, "value"),
    "borrowed op": (Borrowed, "rule"),
    "wrong dtype": (WrongDtype, "dtype"),
    "wrong shape": (Flattened, "shape"),
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(10)

    return st.lists(st.integers(1, 4), min_size=1, max_size=3).flatmap(
        lambda s: st.fixed_dictionaries({"x": arrays(s)}))


def _torch(case: dict) -> dict:
    x = torch.from_numpy(case["x"])
    return {"exp": torch.exp(x), "sigmoid": torch.sigmoid(x), "softmax": torch.softmax(x, -1)}


def _own_op(solution, case, outputs, trace) -> str | None:
    owner = defining_class(solution, "float_exp")
    if owner is not solution and (owner is None or owner.__module__ == __name__ or
                                  owner.__module__.startswith("minidl.backends")):
        where = "nothing" if owner is None else owner.__name__
        return f"{solution.__name__}.float_exp is inherited from {where}: write it in your class"
    return None


def _reaches_yours(solution, case, outputs, trace) -> str | None:
    """The protocol's sigmoid must call the reader's float_exp. Checked by wrapping the
    attribute, not by the trace's name for it: a ``classmethod(lambda cls, t: ...)`` or a
    ``classmethod(my_exp)`` is named after its function, not after the class."""
    calls = []
    mine = solution.float_exp

    def counted(cls, tensor):
        calls.append(1)
        return mine(tensor)

    spy = type(solution.__name__, (solution,), {"float_exp": classmethod(counted)})
    spy.sigmoid(spy.float_from_data(case["x"], Device.ndarray()))
    if not calls:
        return "the protocol's sigmoid never reached your float_exp"
    return None


#: the fixed case tried before the generated ones: 2-D (a flattened result is a wrong shape),
#: float32, values away from 0 (2^x is not e^x there). What hypothesis draws differs by context.
EXAMPLES = [{"x": np.array([[0.5, -1.0, 2.0], [0.0, 1.5, -3.0]], np.float32)}]


def exercise(max_examples: int = 15) -> BuildExercise:
    """The checker for the reader's subclass of :data:`ForgetfulNdArray`."""
    return BuildExercise(
        "float_exp for a backend that lacks it",
        cases=_cases(),
        run=backend_run,
        references=[Reference("PyTorch", _torch, rtol=1e-6, atol=1e-7, dtype=True)],
        rules=Rules(forbidden={r"^(NdArray|Flex)\w*\.float_exp$": "call another backend's float_exp "
                               "(write the op, do not borrow one)"},
                    must_reach={r"^(?!NdArray\.|Flex\.)\w+\.sigmoid$": "run the protocol's sigmoid "
                                "default on your backend"}),
        checks=[_own_op, _reaches_yours],
        hints=[
            "Primitives of this backend are NumPy arrays: the op gets one and returns one.",
            "The result keeps the input's dtype and shape: a float32 [2, 3] gives a float32 [2, 3].",
            "sigmoid and softmax have no body of their own here: the protocol's defaults call "
            "cls.float_exp, which is yours.",
        ],
        reference_solution=Complete,
        examples=EXAMPLES,
        max_examples=max_examples,
    )
