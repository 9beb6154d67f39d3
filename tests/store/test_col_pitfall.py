"""The nn-modules chapter's ``LinearLayout.Col`` pitfall, both branches.

The shape check uses ``Param.lazy_shape()``: ``[d_output, d_input]`` for a Col weight not yet
initialized, ``[d_input, d_output]`` once it is. The PyTorch adapter hands over the
transposed PyTorch weight, ``[d_input, d_output]``. So:

- lazy Col param → ``Shape mismatch for 'fc.weight': expected [4, 2], found [2, 4]``;
- materialized Col param → the load "succeeds", the Col ``load_mapper`` transposes once more,
  and the next forward fails at ``assert_shape`` in ``Linear.forward``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.module import Module
from minidl.nn.linear import LinearConfig, LinearLayout
from minidl.store import ApplyFailed, PytorchStore, ShapeMismatch
from minidl.tensor import Tensor
from minidl.tensor.check import TensorCheckError

from .support import fingerprint

D_IN, D_OUT = 2, 4


class Net(Module):
    def __init__(self, device, layout):
        self.fc = LinearConfig(D_IN, D_OUT).with_layout(layout).init(device)

    def forward(self, x):
        return self.fc(x)


@pytest.fixture
def torch_file(tmp_path):
    torch.manual_seed(0)
    torch_net = torch.nn.Module()
    torch_net.fc = torch.nn.Linear(D_IN, D_OUT)
    path = tmp_path / "fc.pt"
    torch.save(torch_net.state_dict(), path)
    return torch_net, path


def test_lazy_col_param_reports_shape_mismatch_and_stays_lazy(torch_file, device):
    _, path = torch_file
    net = Net(device, LinearLayout.Col)
    before = fingerprint(net)
    assert net.fc.weight.lazy_shape() == (D_OUT, D_IN)

    with pytest.raises(ApplyFailed) as info:
        PytorchStore.from_file(path).load_into(net)

    assert "Shape mismatch for 'fc.weight': expected [4, 2], found [2, 4]" in str(info.value)
    assert info.value.result.errors == [ShapeMismatch("fc.weight", (4, 2), (2, 4))]
    assert fingerprint(net) == before
    assert not net.fc.weight.is_initialized()


@pytest.mark.parametrize("materialize", ["val", "forward"])
def test_materialized_col_param_loads_then_forward_fails_at_assert_shape(torch_file, device, materialize):
    torch_net, path = torch_file
    net = Net(device, LinearLayout.Col)
    x = Tensor.from_numpy(np.ones((3, D_IN), np.float32), device)
    if materialize == "val":
        net.fc.weight.val()
    else:
        net(x)
    assert net.fc.weight.lazy_shape() == (D_IN, D_OUT)

    loaded = PytorchStore.from_file(path).load_into(net)  # "succeeds"

    # the load_mapper transposed the (already transposed) weight back to PyTorch's layout
    weight = loaded.fc.weight.val().to_numpy()
    np.testing.assert_array_equal(weight, torch_net.fc.weight.detach().numpy())
    with pytest.raises(TensorCheckError, match="assert_shape") as info:
        loaded(x)
    frames = [(entry.path.name, entry.name) for entry in info.traceback]
    assert ("linear.py", "forward") in frames


def test_row_layout_loads_the_same_file_and_matches_torch(torch_file, device):
    torch_net, path = torch_file
    net = PytorchStore.from_file(path).load_into(Net(device, LinearLayout.Row))
    x = np.random.default_rng(0).standard_normal((3, D_IN)).astype(np.float32)
    got = net(Tensor.from_numpy(x, device)).to_numpy()
    want = torch_net.fc(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
