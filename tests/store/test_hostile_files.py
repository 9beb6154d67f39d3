"""Crafted PyTorch files that would make a naive reader hang, recurse, or allocate gigabytes.

Each is refused quickly, before the work it asks for, with an error that says why, and the
module it was meant for is left exactly as it was. The bounds are checked before work starts,
so every case here finishes in well under a second; the timeout only turns a regression (a
hang, a 14 GB allocation) into a failure instead of a stuck run.
"""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest
import torch

from minidl.store import CorruptFileError, PytorchStore, UnsafeFileError
from minidl.store.torch_reader import MAX_NESTING, read_torch_file

from .support import Small, craft_torch_file, fingerprint

pytestmark = pytest.mark.timeout(60)


def _archive(path, data_pkl: bytes, members: dict[str, bytes] | None = None, compress: bool = False):
    """A zip laid out like torch.save's, with the given data.pkl and extra members."""
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        archive.writestr("archive/data.pkl", data_pkl)
        archive.writestr("archive/byteorder", "little")
        for name, data in (members or {}).items():
            archive.writestr(name, data)
    return path


def _refused_and_module_unchanged(path, error, match, plain):
    module = Small(plain)
    before = fingerprint(module)
    with pytest.raises(error, match=match):
        PytorchStore.from_file(path).load_into(module)
    assert fingerprint(module) == before


def test_lists_sharing_each_other_as_a_dag_are_refused_not_walked_two_to_the_forty(tmp_path, plain):
    node: list = []
    for _ in range(40):
        node = [node, node]  # pickle memoizes: 40 levels, a few hundred bytes
    data = pickle.dumps({"w": node}, protocol=2)
    assert len(data) < 2000
    path = _archive(tmp_path / "dag.pt", data)
    _refused_and_module_unchanged(path, CorruptFileError, "entries to walk", plain)


def _nested_dicts_pickle(depth: int) -> bytes:
    # built opcode by opcode: pickle.dumps itself would recurse too deep
    key = b"X" + (1).to_bytes(4, "little") + b"k"
    return b"\x80\x02" + (b"}" + key) * depth + b"}" + b"s" * depth + b"."


def test_dicts_nested_twenty_thousand_deep_are_a_clear_error_not_a_recursion_error(tmp_path, plain):
    path = _archive(tmp_path / "deep.pt", _nested_dicts_pickle(20_000))
    _refused_and_module_unchanged(path, CorruptFileError, f"nested deeper than {MAX_NESTING}", plain)


def test_a_list_containing_itself_is_refused(tmp_path):
    loop: list = []
    loop.append(loop)
    path = _archive(tmp_path / "loop.pt", pickle.dumps({"w": loop}, protocol=2))
    with pytest.raises(CorruptFileError, match="containing\\s+themselves"):
        read_torch_file(path)


def test_a_compressed_data_pkl_that_expands_a_thousandfold_is_refused_unread(tmp_path, plain):
    # a valid pickle padded with a 70 MB string compresses to about 70 KB (a 2.5 MB member of
    # this kind would expand to gigabytes): refused from the zip header, before decompressing
    payload = b"\x80\x02X" + (70 << 20).to_bytes(4, "little") + b"a" * (70 << 20) + b"0}."
    path = _archive(tmp_path / "bomb.pt", payload, compress=True)
    assert path.stat().st_size < (1 << 20)
    _refused_and_module_unchanged(path, CorruptFileError, "zip bomb|more than", plain)


def test_an_oversized_stored_data_pkl_is_refused(tmp_path):
    payload = b"\x80\x02X" + (70 << 20).to_bytes(4, "little") + b"a" * (70 << 20) + b"0}."
    path = _archive(tmp_path / "big.pt", payload)
    with pytest.raises(CorruptFileError, match="data.pkl is .* bytes, more than"):
        read_torch_file(path)


def test_one_element_viewed_with_stride_zero_as_60000_by_60000_is_refused(tmp_path, plain):
    path = craft_torch_file(tmp_path / "expand.pt", (60000, 60000), (0, 0), 1, np.float32(1).tobytes())
    _refused_and_module_unchanged(path, CorruptFileError, "repeat the storage", plain)


def test_a_small_expanded_tensor_is_still_read_like_torch_load(tmp_path):
    path = tmp_path / "small_expand.pt"
    torch.save({"w": torch.arange(3.0).expand(4, 3)}, path)
    np.testing.assert_array_equal(read_torch_file(path)["w"], torch.load(path)["w"].numpy())


def test_many_full_views_of_one_storage_are_refused_past_the_file_budget(tmp_path):
    from .support import _Crafter, _FakeTensor

    n = 1 << 20  # a 4 MiB storage viewed 40 times: 160 MiB out of 4
    buf = io.BytesIO()
    _Crafter(buf, n).dump({f"w{i}": _FakeTensor((n,), (1,)) for i in range(40)})
    path = _archive(tmp_path / "views.pt", buf.getvalue(), {"archive/data/0": bytes(4 * n)})
    with pytest.raises(CorruptFileError, match="far more than its storages hold"):
        read_torch_file(path)


def test_a_storage_member_that_disagrees_with_its_announced_size_is_refused_unread(tmp_path):
    path = craft_torch_file(tmp_path / "short.pt", (4,), (1,), 1 << 30, np.zeros(4, np.float32).tobytes())
    with pytest.raises(CorruptFileError, match="expected 1073741824 float32 elements"):
        read_torch_file(path)


@pytest.mark.parametrize("name", ["../evil", "archive/../../evil", "/etc/evil", "C:\\evil", "a\\..\\evil"])
def test_zip_members_pointing_outside_the_archive_are_refused(tmp_path, name, plain):
    good = io.BytesIO()
    torch.save({"fc.weight": torch.zeros(2, 4)}, good)
    path = tmp_path / "escape.pt"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
        dst.writestr(name, b"x")
    _refused_and_module_unchanged(path, UnsafeFileError, "points outside the archive", plain)


@pytest.mark.parametrize("view", [("a", (1,)), ((1,), ("x",)), ((2**70,), (1,))])
def test_view_arguments_that_are_not_integers_are_a_corrupt_file(tmp_path, view):
    size, stride = view
    path = craft_torch_file(tmp_path / "bad_view.pt", size, stride, 1, np.float32(1).tobytes())
    with pytest.raises(CorruptFileError):
        read_torch_file(path)
