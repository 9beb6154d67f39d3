"""Property: a random graph of element-wise ops and reductions, run fused on ``Device.fusion()``,
gives what the same ops give one by one on NumPy (float32, ~1e-5 relative)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from .helpers import last_plan, on

# each op: (name, arity, minidl form, NumPy form); inputs stay in a tame range
OPS = [
    ("add", 2, lambda a, b: a + b, lambda a, b: a + b),
    ("sub", 2, lambda a, b: a - b, lambda a, b: a - b),
    ("mul", 2, lambda a, b: a * b, lambda a, b: a * b),
    ("div", 2, lambda a, b: a / (b.abs() + 1.0), lambda a, b: a / (np.abs(b) + 1)),
    ("relu", 1, lambda a: a.relu(), lambda a: np.maximum(a, 0)),
    ("tanh", 1, lambda a: a.tanh(), np.tanh),
    ("neg", 1, lambda a: -a, lambda a: -a),
    ("sin", 1, lambda a: a.sin(), np.sin),
    ("sqrt_abs", 1, lambda a: a.abs().sqrt(), lambda a: np.sqrt(np.abs(a))),
    ("scale", 1, lambda a: a * 0.5 + 0.25, lambda a: a * np.float32(0.5) + np.float32(0.25)),
    ("where", 2, lambda a, b: b.mask_where(a.greater(b), a), lambda a, b: np.where(a > b, a, b)),
    ("clamp", 1, lambda a: a.clamp(-0.5, 0.75), lambda a: np.clip(a, -0.5, 0.75)),
    ("fill", 1, lambda a: a.mask_fill(a.lower_elem(0.1), 0.3), lambda a: np.where(a < 0.1, 0.3, a)),
]

graphs = st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 99), st.integers(0, 99)),
                  min_size=2, max_size=7)


@settings(deadline=None, max_examples=10, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=5), graph=graphs,
       seed=st.integers(0, 2**16), reduce=st.sampled_from([None, "last", "all"]))
def test_random_fused_graphs_match_numpy(shapes, graph, seed, reduce):
    rng = np.random.default_rng(seed)
    rank = len(shapes.result_shape)  # minidl, like burn, broadcasts tensors of one rank
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes.input_shapes]
    arrays = [rng.uniform(-2, 2, s).astype(np.float32) for s in padded]
    ours, theirs = [on(a) for a in arrays], list(arrays)
    for index, i, j in graph:
        _, arity, fn, ref = OPS[index]
        picks = [i % len(ours), j % len(ours)][:arity]
        ours.append(fn(*[ours[p] for p in picks]))
        theirs.append(ref(*[theirs[p] for p in picks]).astype(np.float32))
    out, want = ours[-1], theirs[-1]
    if reduce == "last":
        out, want = out.sum_dim(out.rank - 1) * 0.5, want.sum(-1, keepdims=True) * 0.5
    elif reduce == "all":
        out, want = out.sum(), np.array([want.sum()])
    got = out.to_numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * (1 + np.abs(want).max()) * max(want.size, 1))
    assert all(blk.fuser is not None for blk in last_plan().blocks if len(blk.kinds) > 1)
