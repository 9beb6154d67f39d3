"""The autodiff chapter's ``your_engine``: the reader's record and walk inside Autodiff[Flex]."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, debug
from minidl import functional as F
from minidl.autodiff import engine
from minidl.autodiff.ops import arithmetic, base, math, reduce
from minidl_book import build_backward_walk, build_record
from minidl_book.autodiff_lab import data
from minidl_book.autodiff_plug import RECORDERS, your_engine

AD = Device.flex().autodiff()
LIBRARY_RECORD = base.record


def _loss():
    x = data((2, 4), AD, seed=1).require_grad()
    return x, F.layer_norm(x, None, None).exp().sum()


def _library_in_place() -> bool:
    return (all(m.record is LIBRARY_RECORD for m in RECORDERS)
            and base.record.__module__ == "minidl.autodiff.ops.base"
            and engine.backward.__module__ == "minidl.autodiff.engine")


def test_reference_runs_inside_and_matches_the_library():
    calls = {"record": 0, "walk": 0}

    def rec(step, *inputs):
        calls["record"] += 1
        return build_record.record(step, *inputs)

    def walk(root, root_grad, run_step):
        calls["walk"] += 1
        return build_backward_walk.backward_walk(root, root_grad, run_step)

    with your_engine(rec, walk, checked=False) as ran:
        x, y = _loss()
        assert debug.graph(y).ops[-2:] == ["Exp", "Sum"]  # the library's tools read it
        got = x.grad(y.backward())
    assert str(ran).startswith("record: yours, called for 9 ops")
    assert _library_in_place()
    assert ran.record_is_yours and ran.walk_is_yours
    assert calls == {"record": 9, "walk": 1} and ran.records == 9 and ran.walks == 1
    assert sorted(ran.steps) == sorted(set(ran.steps)) and len(ran.steps) == 9
    x2, y2 = _loss()
    np.testing.assert_allclose(got.to_numpy(), x2.grad(y2.backward()).to_numpy(),
                               rtol=1e-6, atol=1e-7)
    with pytest.raises(RuntimeError):  # the walk consumed the graph, as minidl's does
        y.backward()


def test_checked_reference_passes_and_a_stub_falls_back():
    with your_engine(build_record.record, build_backward_walk.backward_walk) as ran:
        pass
    assert ran.record_is_yours and ran.walk_is_yours

    def stub(step, *inputs):
        ...

    with your_engine(stub, None) as ran:
        x, y = _loss()
        assert x.grad(y.backward()) is not None
    assert not ran.record_is_yours and not ran.walk_is_yours and ran.records == 9
    assert "record: the book's (until yours passes)" in str(ran)


def test_restored_on_exception():
    with pytest.raises(ZeroDivisionError):
        with your_engine(build_record.record, build_backward_walk.backward_walk,
                         checked=False):
            assert arithmetic.record is not LIBRARY_RECORD and math.record is reduce.record
            raise ZeroDivisionError
    assert _library_in_place()


def test_other_backends_and_no_grad_keep_the_library_record():
    from minidl import no_grad

    with your_engine(None, None, checked=False) as ran:
        t = data((3,), Device.ndarray().autodiff()).require_grad()
        assert t.grad((t * t).sum().backward()) is not None
        with no_grad():
            (data((3,), AD).require_grad() * 2.0).sum()
    assert ran.records == 0 and ran.walks == 0
