"""The autodiff chapter's whole-engine listing: the reader's ``record``, ``Softplus`` and
``backward_walk`` wired by hand (``autodiff_lab.run_step``), and ``yours_or_reference``,
which puts the book's piece in for each of the reader's that does not pass its checker."""

from __future__ import annotations

import numpy as np
import torch

from minidl import Device, Tensor
from minidl.autodiff.node import Node, Requirement
from minidl.autodiff.ops.arithmetic import Add, Mul
from minidl.autodiff.ops.reduce import Sum
from minidl.autodiff.tensor import AutodiffTensor
from minidl.backends.flex import Flex
from minidl_book import autodiff_lab as lab
from minidl_book import build_backward_walk, build_record, build_softplus

REFERENCES = (build_record.record, build_softplus.Softplus,
              build_backward_walk.backward_walk)


def _leaf(values, tracked=True):
    t = Tensor.from_data(values, Device.flex().autodiff())
    return (t.require_grad() if tracked else t).primitive.backend_tensor


def _engine_grads(record, softplus, walk):
    x, w, c = _leaf([1.0, -2.0]), _leaf([0.5, 3.0]), _leaf([1.0, 1.0], tracked=False)
    y = record(Sum(), record(softplus(), record(Add(), record(Mul(), x, w), c)))
    grads = walk(y.node, np.ones(1, np.float32), lab.run_step)
    return grads, x.node.id, w.node.id


def test_the_listing_with_the_books_pieces_matches_pytorch():
    grads, x_id, w_id = _engine_grads(*REFERENCES)
    tx, tw = (torch.tensor(v, requires_grad=True) for v in ([1.0, -2.0], [0.5, 3.0]))
    torch.nn.functional.softplus(tx * tw + 1.0).sum().backward()
    assert set(grads) == {x_id, w_id}
    np.testing.assert_allclose(grads[x_id], tx.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(grads[w_id], tw.grad.numpy(), rtol=1e-5)


def test_unfinished_pieces_fall_back_to_the_books(capsys):
    def record(step, *inputs):
        ...

    class Softplus:
        pass

    def backward_walk(root, root_grad, run_step):
        ...

    assert lab.yours_or_reference(record, Softplus, backward_walk) == REFERENCES
    assert lab.yours_or_reference(None, None, None) == REFERENCES
    assert capsys.readouterr().out.count("using the reference") == 6


def test_wrong_pieces_fall_back_and_right_ones_written_differently_are_kept(capsys):
    wrong_record = build_record.PLANTED[next(iter(build_record.PLANTED))][0]
    wrong_step = build_softplus.PLANTED["wrong gradient"][0]
    wrong_walk = build_backward_walk.PLANTED["depth first, step per path"][0]
    assert lab.yours_or_reference(wrong_record, wrong_step, wrong_walk) == REFERENCES

    class KeepsOutput(build_softplus.Softplus):  # sigma(x) = 1 - e^(-y)
        saves = ("out",)

        def backward(self, B, grad, state):
            e = B.float_exp(B.float_neg(state["out"]))
            return (B.float_mul(grad, B.float_add_scalar(B.float_neg(e), 1.0)),)

    def record(step, *inputs):  # right, written another way round
        step.tracked = tuple(t.node.requirement is not Requirement.NONE for t in inputs)
        out = step.forward(Flex, *(t.inner for t in inputs))
        if True not in step.tracked:
            return AutodiffTensor(out, Node(Requirement.NONE))
        step.shapes = tuple(t.inner.shape for t in inputs)
        arrays = dict(zip(step.input_names(len(inputs)), (t.inner for t in inputs)))
        arrays["out"] = out
        step.saved = {}
        for name in step.keeps(step.tracked):
            step.saved[name] = arrays[name]
        parents = tuple(t.node for t, k in zip(inputs, step.tracked) if k)
        return AutodiffTensor(out, Node(Requirement.GRAD_IN_BACKWARD, parents, step))

    chosen = lab.yours_or_reference(record, KeepsOutput, build_backward_walk.backward_walk)
    assert chosen[0] is record and chosen[1] is KeepsOutput
    grads, x_id, w_id = _engine_grads(*chosen)
    ref, rx, rw = _engine_grads(*REFERENCES)
    np.testing.assert_allclose(grads[x_id], ref[rx], rtol=1e-5)
    np.testing.assert_allclose(grads[w_id], ref[rw], rtol=1e-5)
    out = capsys.readouterr().out
    assert "using your record" in out and "using your Softplus" in out
