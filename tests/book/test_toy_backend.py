"""The tensors chapter's closing assembly: a backend whose engine is the reader's five
build-its (read_view, reshape_strides, broadcast_strides, zip_op, reduce_dim, a
log_softmax default)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from minidl.backend import Backend, defines, is_required, op_names
from minidl_book import toy_backend

REFS = [ref for ref, _ in toy_backend.REFERENCES.values()]


def _mine(**yours):
    pieces = dict(zip(toy_backend.REFERENCES, REFS, strict=True)) | yours
    return toy_backend.assembled(*pieces.values())


def test_the_assembled_backend_computes_as_pytorch_does():
    Mine = _mine()
    a = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    bias = np.array([[[0.0, 1.0, 2.0]]], np.float32)
    x = Mine.float_from_data(a)
    blocks = Mine.float_reshape(Mine.float_permute(x, [1, 0]), [2, 2, 3])
    assert blocks.buffer is x.buffer and blocks.strides == (2, 1, 4)  # a view
    flat = Mine.float_reshape(Mine.float_permute(x, [1, 0]), [12])
    assert flat.buffer is not x.buffer and flat.strides == (1,)  # a copy
    y = Mine.log_softmax(Mine.float_add(blocks, Mine.float_from_data(bias)), 2)
    expected = torch.log_softmax(torch.from_numpy(a).T.reshape(2, 2, 3)
                                 + torch.from_numpy(bias), 2).numpy()
    np.testing.assert_allclose(Mine.float_into_data(y).array, expected, atol=1e-6)
    mean = Mine.float_into_data(Mine.float_mean_dim(blocks, 2)).array  # a protocol default
    np.testing.assert_allclose(mean, a.T.reshape(2, 2, 3).mean(2, keepdims=True), rtol=1e-6)


def test_the_burn_broadcasting_rule_holds():
    Mine = _mine()
    x = Mine.float_from_data(np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="ranks differ"):
        Mine.float_add(x, Mine.float_from_data(np.ones(3, np.float32)))
    row = Mine.float_from_data(np.arange(3, dtype=np.float32)[None])
    assert Mine.float_expand(row, (4, 3)).strides == (0, 1)


def test_it_is_abstract_with_fifteen_required_ops():
    Mine = _mine()
    required = [op for op in op_names(Backend) if is_required(Backend, op)]
    assert sum(defines(Mine, op) for op in required) == 15
    with pytest.raises(TypeError, match="does not implement required op"):
        type("Complete", (Mine,), {"abstract": False})


def _read_view(buffer, offset, strides, shape):
    return [buffer[offset + sum(i * s for i, s in zip(idx, strides, strict=True))]
            for idx in itertools.product(*map(range, shape))]


def _stub(*args):
    ...


def test_yours_or_reference_takes_the_readers_right_functions(capsys):
    chosen = toy_backend.yours_or_reference({"read_view": _read_view,
                                             "reshape_strides": _stub})
    assert chosen[0] is _read_view and chosen[1:] == tuple(REFS[1:])
    line = capsys.readouterr().out
    assert "yours: read_view;" in line and "the reference reshape_strides" in line


def test_a_default_using_an_op_the_toy_lacks_runs_on_the_ndarray_fallback(capsys):
    def uses_abs(cls, tensor, dim):  # right on every real backend: the log-sum is >= 0
        shifted = cls.float_sub(tensor, cls.float_max_dim(tensor, dim))
        log_sum = cls.float_log(cls.float_sum_dim(cls.float_exp(shifted), dim))
        return cls.float_sub(shifted, cls.float_abs(log_sum))

    from minidl_book import build_default_op

    assert build_default_op.exercise(max_examples=5).find_failure(uses_abs) is None
    chosen = toy_backend.yours_or_reference({"my_log_softmax": uses_abs})
    assert chosen[5] is uses_abs  # float_abs: NdArray's, through with_fallback
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("Your engine: yours: my_log_softmax; the reference read_view")


def _compute_stride(shape, strides, new_shape):  # a port of PyTorch's computeStride
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


def _stretch(shape, strides, out_shape):
    if len(shape) != len(out_shape) or any(n not in (1, m) for n, m in zip(shape, out_shape)):
        raise ValueError(f"{shape} does not broadcast to {out_shape}")
    return tuple(0 if n != m else s for n, s, m in zip(shape, strides, out_shape))


def _default(cls, tensor, dim):
    top = cls.float_max_dim(tensor, dim)
    total = cls.float_sum_dim(cls.float_exp(cls.float_sub(tensor, top)), dim)
    return cls.float_sub(tensor, cls.float_add(top, cls.float_log(total)))


def _zip(fn, a, b):  # a reader's zip_op: pairs the operands read as one shape
    if len(a.shape) != len(b.shape):
        raise ValueError("ranks differ")
    shape = [max(n, m) for n, m in zip(a.shape, b.shape)]
    pairs = zip(*(_read_view(t.buffer, t.offset, _stretch(t.shape, t.strides, shape), shape)
                  for t in (a, b)))
    return shape, [fn(x, y) for x, y in pairs]


def _reduce(fn, view, dim):  # a reader's reduce_dim: an index loop per output element
    shape = list(view.shape)
    shape[dim] = 1
    out = []
    for idx in itertools.product(*map(range, shape)):
        run = [view.buffer[view.offset + sum(
            (k if d == dim else i) * s for d, (i, s) in enumerate(zip(idx, view.strides)))]
            for k in range(view.shape[dim])]
        out.append(fn(run))
    return shape, out


def test_all_six_of_yours(capsys):
    chosen = toy_backend.yours_or_reference({
        "read_view": _read_view, "reshape_strides": _compute_stride,
        "broadcast_strides": _stretch, "zip_op": _zip, "reduce_dim": _reduce,
        "my_log_softmax": _default})
    assert chosen == (_read_view, _compute_stride, _stretch, _zip, _reduce, _default)
    assert "all six of your functions" in capsys.readouterr().out
    Mine = toy_backend.assembled(*chosen)
    x = Mine.float_from_data(np.arange(12, dtype=np.float32).reshape(3, 4))
    blocks = Mine.float_reshape(Mine.float_permute(x, [1, 0]), [2, 2, 3])
    assert blocks.buffer is x.buffer and blocks.strides == (2, 1, 4)
    row = Mine.float_from_data(np.array([[1.0, 2.0, 3.0]], np.float32))
    flipped = toy_backend.Strided(x.buffer, 3, (3, 4), (4, -1))  # each row reversed
    got = Mine.float_into_data(Mine.float_mul(row, row)).array
    np.testing.assert_array_equal(got, [[1.0, 4.0, 9.0]])
    diff = Mine.float_into_data(Mine.float_sub(flipped, x)).array
    grid = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(diff, grid[:, ::-1] - grid)


def test_strides_returned_as_lists_are_stored_as_tuples(capsys):
    """A reshape_strides / broadcast_strides returning a list passes its checker (a right
    answer in another form); the assembled backend must still hold tuples, so the page's
    hidden checks (strides == (2, 1, 4), (0, 0, 1)) hold for it."""

    def as_list_reshape(shape, strides, new_shape):
        out = _compute_stride(shape, strides, new_shape)
        return None if out is None else list(out)

    def as_list_broadcast(shape, strides, out_shape):
        return list(_stretch(shape, strides, out_shape))

    chosen = toy_backend.yours_or_reference({
        "read_view": _read_view, "reshape_strides": as_list_reshape,
        "broadcast_strides": as_list_broadcast, "my_log_softmax": _default})
    assert chosen[1] is as_list_reshape and chosen[2] is as_list_broadcast
    Mine = toy_backend.assembled(*chosen)
    x = Mine.float_from_data(np.arange(12, dtype=np.float32).reshape(3, 4))
    blocks = Mine.float_reshape(Mine.float_permute(x, [1, 0]), [2, 2, 3])
    assert blocks.strides == (2, 1, 4) and type(blocks.strides) is tuple
    bias = Mine.float_from_data(np.zeros((1, 1, 3), np.float32))
    assert Mine.float_expand(bias, [2, 2, 3]).strides == (0, 0, 1)
    assert Mine.float_expand(bias, [2, 2, 3]).shape == (2, 2, 3)
    added = Mine.float_add(blocks, bias)
    np.testing.assert_array_equal(Mine.float_into_data(added).array,
                                  np.arange(12, dtype=np.float32).reshape(3, 4).T
                                  .reshape(2, 2, 3))


def test_mine_behind_a_tensor_runs_its_own_ops_and_falls_back_for_the_rest():
    from minidl import Tensor
    from minidl.backends.ndarray import NdArray
    from minidl.dispatch.register import register_backend

    backend = toy_backend.with_fallback(_mine(), NdArray)
    assert not backend.abstract and backend.where["float_add"] == "yours (zip_op)"
    assert backend.where["float_sqrt"] == "NdArray fallback"
    assert backend.where["float_mean_dim"] == "protocol default"
    assert backend.where["float_sum_dim"] == "yours (reduce_dim)"
    assert backend.where["float_max_dim"] == "yours (reduce_dim)"
    mine = register_backend("mine_test", backend, toy_backend.Strided)
    a = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    x = Tensor.from_data(a, mine)
    centred = x.T - x.T.mean_dim(1)
    normed = centred / (centred * centred).mean_dim(1).sqrt()
    t = torch.from_numpy(a).T
    tc = t - t.mean(1, keepdim=True)
    np.testing.assert_allclose(normed.to_numpy(), (tc / (tc * tc).mean(1, keepdim=True)
                                                    .sqrt()).numpy(), atol=1e-5)
    assert type(normed.primitive.backend_tensor) is toy_backend.Strided
    lines = toy_backend.ran_summary(mine).splitlines()
    by_where = {line.split(":")[0]: line for line in lines}
    assert "sub" in by_where["yours (zip_op)"]
    assert "sum_dim" in by_where["yours (reduce_dim)"]
    assert lines[-1].split() == ["NdArray", "fallback:", "sqrt"]
    assert toy_backend.ran_summary(backend) == ""  # the log was emptied
    assert x.T.primitive.backend_tensor.buffer is x.primitive.backend_tensor.buffer


def test_assemble_wires_the_six_functions_in_page_order_and_completes_the_backend(capsys):
    """The page's one shown assembly cell: assemble(read_view, ..., my_log_softmax)."""

    def unfinished(*args):  # the page's stub cell, never filled in
        return None

    Mine = toy_backend.assemble(_read_view, unfinished, _stretch, _zip, _reduce, _default)
    assert "the reference reshape_strides" in capsys.readouterr().out
    assert not Mine.abstract and Mine.engine.abstract
    assert Mine.engine.__name__ == "Mine"
    # a slot that fell back runs the reference: its ops are not labelled the reader's
    assert Mine.where["float_reshape"] == "reference (reshape_strides)"
    assert Mine.where["float_add"] == "yours (zip_op)"
    assert Mine.where["float_sqrt"] == "NdArray fallback"
    x = Mine.float_from_data(np.arange(12, dtype=np.float32).reshape(3, 4))
    blocks = Mine.float_reshape(Mine.float_permute(x, [1, 0]), [2, 2, 3])
    assert blocks.buffer is x.buffer and blocks.strides == (2, 1, 4)  # the reference's view
    got = Mine.float_into_data(Mine.log_softmax(blocks, 2)).array
    expected = torch.log_softmax(torch.arange(12.0).reshape(3, 4).T.reshape(2, 2, 3), 2)
    np.testing.assert_allclose(got, expected.numpy(), atol=1e-6)


def test_a_slot_holding_the_reference_is_named_given(capsys):
    """The page hands over reshape_strides (no build-it): it is the book's, not the
    reader's, and not a reference standing in for an unfinished answer."""
    given = toy_backend.REFERENCES["reshape_strides"][0]
    chosen = toy_backend.yours_or_reference({
        "read_view": _read_view, "reshape_strides": given,
        "broadcast_strides": _stretch, "zip_op": _zip, "reduce_dim": _reduce,
        "my_log_softmax": _default})
    assert chosen == (_read_view, given, _stretch, _zip, _reduce, _default)
    out = " ".join(capsys.readouterr().out.split())
    assert "all 5 of your functions" in out and "The book's reshape_strides is given" in out
    toy_backend.yours_or_reference({"reshape_strides": given})
    out = " ".join(capsys.readouterr().out.split())
    assert "the reference read_view" in out and "reshape_strides (not" not in out
    assert "The book's reshape_strides is given" in out


def test_ran_counts_sums_the_log_per_place_in_one_line():
    """The payoff cell's one line: ×n counts n calls, a wrapped line continues its place, the
    six functions' lines (yours, given or reference) count together."""
    nb = "\u00a0"
    summary = (f"reference (zip_op):   div{nb}×3, sub{nb}×3, mul\n"
               f"yours (reduce_dim):   sum_dim{nb}×3, max_dim\n"
               f"StridedBase:          from_data{nb}×6, swap_dims,\n"
               "                      permute, exp, log\n"
               "NdArray fallback:     sqrt")
    assert toy_backend.ran_counts(summary) == (
        "op calls: the six functions 11, StridedBase 10, NdArray fallback 1")
    assert toy_backend.ran_counts("") == "op calls: "
