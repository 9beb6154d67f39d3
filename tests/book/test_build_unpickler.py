"""The storing-and-loading chapter's build-it (a safe unpickler for .pt files): the reference
passes, typed into a cell too; right answers written differently pass; each planted slip gets
its verdict kind and the first hint of its own cause, on the fixed cases alone; the truth is
minidl's own reader, which refuses the payload file."""

from __future__ import annotations

import collections
import importlib
import inspect
import io
import pickle
import sys
import textwrap
from collections import OrderedDict
from pickle import Unpickler, UnpicklingError

import numpy as np
import pytest
import torch

from minidl.store.errors import CorruptFileError, UnsafeFileError
from minidl.store.torch_pickle import STORAGE_DTYPES
from minidl.store.torch_reader import read_torch_file
from minidl_book import build_unpickler as bu


def test_reference_passes():
    assert bu.exercise(4).find_failure(bu.SafeUnpickler) is None


def test_reference_typed_into_a_cell_passes(tmp_path):
    """The watch treats minidl_book's code as the checker's: the page's reader types the
    class into a cell, so the reference is run from a file of its own."""
    source = textwrap.dedent(inspect.getsource(bu.SafeUnpickler))
    path = tmp_path / "cell.py"
    path.write_text(source, encoding="utf-8")
    namespace = {"Unpickler": Unpickler, "OrderedDict": OrderedDict, "np": np,
                 "STORAGE_DTYPES": STORAGE_DTYPES, "UnsafeFileError": UnsafeFileError,
                 "__name__": "__main__"}
    exec(compile(source, str(path), "exec"), namespace)
    assert bu.exercise(4).find_failure(namespace["SafeUnpickler"]) is None


@pytest.mark.parametrize("name", sorted(bu.PLANTED))
def test_planted_slip_gets_its_kind_and_its_own_hint(name):
    slip, kind, cause = bu.PLANTED[name]
    ex = bu.exercise(4)
    verdict = ex.check(slip)
    assert verdict.kind == kind and ex.cause == cause, (verdict.render(), ex.cause)
    assert verdict.hints == [bu.HINTS[cause][0]]
    assert "Traceback" not in verdict.render()


@pytest.mark.parametrize("name", sorted(bu.PLANTED))
def test_every_planted_slip_fails_on_the_fixed_cases_alone(name):
    verdict = bu.exercise(0).find_failure(bu.PLANTED[name][0])
    assert verdict is not None and not verdict.ok


# ----- right answers, written otherwise ----------------------------------------------------------
class Forbidden(UnsafeFileError):
    """The reader's own kind of UnsafeFileError: still the error the exercise asks for."""


class DictAllowList(Unpickler):
    """A table of answers, a subclass of the asked error; as_strided with byte strides,
    after a bounds check of its own (a ValueError)."""

    def find_class(self, module, name):
        allowed = {("collections", "OrderedDict"): OrderedDict,
                   ("torch._utils", "_rebuild_tensor_v2"): self.rebuild_tensor}
        allowed.update({("torch", n): np.dtype(d) for n, d in STORAGE_DTYPES.items()
                        if d != "bfloat16"})
        allowed["torch", "BFloat16Storage"] = "bf16"  # widened in rebuild_tensor
        if (module, name) not in allowed:
            raise Forbidden(f"global '{module}.{name}' is forbidden")
        return allowed[(module, name)]

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        if storage.dtype == "bf16":
            flat = (np.frombuffer(storage.data, "<u2").astype("<u4") << 16).view("<f4")
        else:
            flat = np.frombuffer(storage.data, dtype=storage.dtype)
        reach = [(n - 1) * s for n, s in zip(size, stride)]
        if 0 not in size and storage_offset + sum(reach) >= flat.size:
            raise ValueError("the view reaches past its storage")
        view = np.lib.stride_tricks.as_strided(
            flat[storage_offset:], shape=size,
            strides=[s * flat.itemsize for s in stride])
        return view.copy()


class LoopOverIndices(Unpickler):
    """An element at a time over np.ndindex; answers storage types with NumPy types."""

    def find_class(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return OrderedDict
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return self.rebuild_tensor
        if (module, name) == ("torch", "BFloat16Storage"):
            return None  # no NumPy type: widened below
        if module == "torch" and name.endswith("Storage") and name in STORAGE_DTYPES:
            return np.dtype(STORAGE_DTYPES[name]).type  # np.float32, np.bool_, ...
        raise UnsafeFileError(f"refusing {module}.{name}")

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        if storage.dtype is None:  # bfloat16: a float32 whose low 16 bits are zero
            flat = (np.frombuffer(storage.data, np.uint16).astype(np.uint32)
                    * 65536).view(np.float32)
        else:
            flat = np.frombuffer(storage.data, storage.dtype)
        out = np.empty(size, flat.dtype)
        for index in np.ndindex(*size):
            out[index] = flat[storage_offset + sum(i * s for i, s in zip(index, stride))]
        return out


@pytest.mark.parametrize("solution", [DictAllowList, LoopOverIndices])
def test_right_answers_written_otherwise_pass(solution):
    assert bu.exercise(4).find_failure(solution) is None


# ----- other wrong answers -------------------------------------------------------------------------
class NoCopyUnchecked(bu.AsStridedUnchecked):
    """The reader's version: as_strided over the storage, no bounds check, no copy."""

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        if storage.dtype == "bfloat16":
            return super().rebuild_tensor(storage, storage_offset, size, stride)
        flat = np.frombuffer(storage.data, storage.dtype)
        return np.lib.stride_tricks.as_strided(
            flat[storage_offset:], size, [s * flat.itemsize for s in stride])


@pytest.mark.parametrize("solution", [bu.AsStridedUnchecked, NoCopyUnchecked])
def test_as_strided_without_a_bounds_check_is_refused_naming_the_check(solution):
    """Right on every file torch.save writes; the crafted view reaches past its storage."""
    assert bu.exercise(0).find_failure(solution).text.startswith("Your rebuild_tensor")
    ex = bu.exercise(4)
    verdict = ex.check(solution)
    assert verdict.kind == "check" and ex.cause == "bounds"
    assert "reaches past its storage" in verdict.text and "bounds check" in verdict.text


def test_the_crafted_view_reaches_past_and_the_reference_and_minidl_refuse_it(tmp_path):
    path = tmp_path / "crafted.pt"
    torch.save(bu._state_dict(bu.bounds_case(), tmp_path / "marker"), path)
    numel, offset, size, stride = bu.BOUNDS_VIEW
    storage, *view = bu.views_of(path)["fc.weight"]
    assert view == [offset, size, stride] and len(storage.data) == 4 * numel
    assert offset + sum((n - 1) * s for n, s in zip(size, stride)) >= numel
    with pytest.raises(CorruptFileError, match="reaches element 7"):
        read_torch_file(path)
    with pytest.raises(IndexError):
        bu.unpickle(bu.SafeUnpickler, path)


class StubForTheRest(bu.SafeUnpickler):
    """Answers any other name with a harmless stub: the payload never runs, but the file is
    not refused."""

    def find_class(self, module, name):
        try:
            return super().find_class(module, name)
        except UnsafeFileError:
            return lambda *args: None


class ByteswappedHalf(bu.SafeUnpickler):
    """Every dtype right but float16, read as int16: a wrong dtype on the second case."""

    def find_class(self, module, name):
        if (module, name) == ("torch", "HalfStorage"):
            return "int16"
        return super().find_class(module, name)


def test_a_stub_for_other_names_is_refused():
    ex = bu.exercise(0)
    verdict = ex.find_failure(StubForTheRest)
    assert verdict is not None and ex.cause == "any global", verdict.render()
    assert "instead of refusing it" in verdict.text


class PickleInAMethod(bu.SafeUnpickler):
    def find_class(self, module, name):
        if module == "io":
            raise pickle.UnpicklingError(f"{module}.{name}")
        return super().find_class(module, name)


class ImportPickleInAMethod(bu.SafeUnpickler):
    """The reader's reasonable ``import pickle`` inside the method."""

    def find_class(self, module, name):
        import pickle

        try:
            return super().find_class(module, name)
        except UnsafeFileError:
            raise pickle.UnpicklingError(f"{module}.{name}") from None


@pytest.mark.parametrize("solution", [PickleInAMethod, ImportPickleInAMethod])
def test_the_pickle_module_in_a_method_gets_its_own_hint(solution):
    """The watch keeps interpreter modules (pickle among them) out of the reader's methods,
    ``import pickle`` too: the verdict's hint says why (the module holds the unsafe loader)
    and how to do without it."""
    ex = bu.exercise(0)
    verdict = ex.check(solution)
    assert verdict.kind == "rule" and ex.cause == "pickle module", verdict.render()
    assert verdict.hints == [bu.HINTS["pickle module"][0]]
    assert "unsafe loader" in verdict.hints[0] and "UnsafeFileError" in verdict.hints[0]


# ----- the refusal's type, and a lookup before the refusal -----------------------------------------
def _refusing_with(error: type) -> type:
    class Refuses(bu.SafeUnpickler):
        def find_class(self, module, name):
            if (module, name) in (("collections", "OrderedDict"),
                                  ("torch._utils", "_rebuild_tensor_v2")) or (
                    module == "torch" and name in STORAGE_DTYPES):
                return super().find_class(module, name)
            raise error(f"{module}.{name} is not allowed")

    return Refuses


@pytest.mark.parametrize("error", [UnpicklingError, ValueError, KeyError, RuntimeError])
def test_a_refusal_by_another_error_is_named(error):
    """The exercise asks for UnsafeFileError: another error (pickle's own, or the
    ValueError UnsafeFileError subclasses) is refused with the error-type hint."""
    ex = bu.exercise(0)
    verdict = ex.check(_refusing_with(error))
    assert verdict.kind == "check" and ex.cause == "error type", verdict.render()
    assert f"refused io.open with {error.__name__}" in verdict.text
    assert verdict.hints == [bu.HINTS["error type"][0]]


class LookUpThenCheckTheObject(Unpickler):
    """Looks every name up with pickle's own find_class, then keeps the allowed objects: the
    lookup imports the module the file names before anything is refused."""

    def find_class(self, module, name):
        found = super().find_class(module, name)
        if found is OrderedDict:
            return found
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return self.rebuild_tensor
        if module == "torch" and name in STORAGE_DTYPES:
            return STORAGE_DTYPES[name]
        raise UnsafeFileError(f"{module}.{name}")

    rebuild_tensor = bu.SafeUnpickler.rebuild_tensor


@pytest.mark.parametrize("solution", [LookUpThenCheckTheObject, bu.LookedUpFirst])
def test_a_lookup_before_the_refusal_is_named(solution):
    """The io.open payload cannot tell (io is imported already); the planted module's flag
    does, and the module and the import path are left as they were."""
    path = list(sys.path)
    ex = bu.exercise(0)
    verdict = ex.check(solution)
    assert verdict.kind == "check" and ex.cause == "imported first", verdict.render()
    assert "before refusing planted_" in verdict.text and "Rule broken" not in verdict.text
    assert verdict.hints == [bu.HINTS["imported first"][0]]
    assert sys.path == path and not {m for m in sys.modules if m.startswith("planted_")}


def test_the_planted_module_runs_code_when_imported():
    """The check is real: pickle's own lookup (AnyGlobal hands it every other name) imports
    the planted module (its flag is set), the reference never does."""
    case = bu.planted_import_case()
    assert bu.unpickle_run(bu.SafeUnpickler, case)["_imported"] is False
    out = bu.unpickle_run(bu.AnyGlobal, case)
    assert out["_imported"] is True and out["_ran"] is True  # it imported, then called it
    assert out["_global"].startswith("planted_") and out["_global"].endswith(".opened")


def test_a_wrong_storage_dtype_is_named():
    ex = bu.exercise(0)
    verdict = ex.find_failure(ByteswappedHalf)
    assert verdict is not None and ex.cause == "dtype", verdict.render()
    assert "emb.weight came back as int16" in verdict.text and "HalfStorage" in verdict.text


# ----- the truth -----------------------------------------------------------------------------------
def test_the_truth_is_minidls_reader_and_it_refuses_the_payload(tmp_path):
    case = bu.payload_case()
    path, marker = tmp_path / "evil.pt", tmp_path / "ran.txt"
    torch.save(bu._state_dict(case, marker), path)
    with pytest.raises(UnsafeFileError, match="io.open"):
        read_torch_file(path)
    with pytest.raises(UnsafeFileError):
        bu.unpickle(bu.SafeUnpickler, path)
    assert not marker.exists()


def test_the_fixed_views_are_what_the_names_say(tmp_path):
    """A transposed weight's stride, a slice's storage_offset, as torch.save writes them."""
    path = tmp_path / "views.pt"
    torch.save(bu._state_dict(bu.fixed_cases()[0], tmp_path / "m"), path)
    views = bu.views_of(path)
    assert views["fc.weight"][1:] == (0, (3, 4), (1, 3))
    assert views["k.weight"][1:] == (4, (2, 4), (4, 1))
    assert views["bn.num_batches_tracked"][2:] == ((), ())
    got = bu.unpickle(bu.SafeUnpickler, path)
    want = read_torch_file(path)
    assert all(np.array_equal(got[k], want[k]) and got[k].dtype == want[k].dtype
               for k in want)


def test_the_harness_gives_one_storage_object_per_key():
    with io.BytesIO() as buffer:
        base = torch.arange(6.0)
        torch.save({"a": base[:3], "b": base[3:]}, buffer)
        data = buffer.getvalue()
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "shared.pt"
        path.write_bytes(data)
        views = bu.views_of(path)
    assert views["a"][0] is views["b"][0] and views["b"][1] == 3


# ----- a lookup by a name from the file: getattr after the allow-list passes -----------------
_ALLOWED = {("collections", "OrderedDict")}


class GetattrAllowList(bu.SafeUnpickler):
    """The Python docs' "Restricting Globals" pattern: the allow-list, then the object
    fetched by the file's name from the module (``getattr(builtins, name)`` there)."""

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return getattr(collections, name)
        return super().find_class(module, name)


class GetattrNamesList(bu.SafeUnpickler):
    """The docs' pattern as written there: a module test and a set of safe names."""

    def find_class(self, module, name):
        if module == "collections" and name in {"OrderedDict"} and hasattr(collections, name):
            return getattr(collections, name, None)
        return super().find_class(module, name)


class GetattrByModule(bu.SafeUnpickler):
    """An allow-list by module alone: ``collections._sys`` (the module sys) gets through."""

    def find_class(self, module, name):
        if module == "collections":
            return getattr(collections, name)
        return super().find_class(module, name)


class ImportlibAfterAllowList(bu.SafeUnpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return getattr(importlib.import_module(module), name)
        return super().find_class(module, name)


class ImportlibBeforeAllowList(bu.SafeUnpickler):
    """Imports the module the file names, then checks: refused at the first file, before the
    planted module's could run, by the same rule."""

    def find_class(self, module, name):
        importlib.import_module(module)
        return super().find_class(module, name)


@pytest.mark.parametrize("solution", [GetattrAllowList, GetattrNamesList])
def test_getattr_after_the_allow_list_passes(solution):
    """A reader's report: the Python docs' "Restricting Globals" allow-list, then
    ``getattr(collections, name)``, was refused by the watch's rule; it is safe and right.
    In the class's methods getattr is the guarded one, which reaches only a state dict's
    names."""
    ex = bu.exercise(2)
    verdict = ex.check(solution)
    assert verdict.kind == "ok", verdict.render()


def test_getattr_by_module_alone_is_refused_with_the_name_it_reached():
    ex = bu.exercise(0)
    verdict = ex.check(GetattrByModule)
    assert verdict.kind == "check" and ex.cause == "lookup off the list", verdict.render()
    assert "collections._sys" in verdict.text and "(module, name)" in verdict.text
    assert verdict.hints == [bu.HINTS["lookup off the list"][0]]


def test_the_guard_gives_a_state_dicts_names_only():
    assert bu.guarded_getattr(collections, "OrderedDict") is collections.OrderedDict
    assert bu.guarded_getattr(torch, "HalfStorage") is torch.HalfStorage
    for owner, name in ((collections, "_sys"), (torch, "load"), (object(), "__class__")):
        with pytest.raises(bu.LookupOffList):
            bu.guarded_getattr(owner, name)
    assert not bu.guarded_hasattr(collections, "_sys")
    assert bu.guarded_hasattr(collections, "OrderedDict")


@pytest.mark.parametrize("solution", [ImportlibAfterAllowList, ImportlibBeforeAllowList])
def test_a_lookup_the_watch_cannot_follow_says_why_and_what_to_write(solution):
    """A reader's report: the watch's "reads importlib" baffled a reader whose allow-list
    came first. The rule stays for importlib (it imports, running the module's code), but
    the verdict says so, and the hint says what to write instead."""
    ex = bu.exercise(0)
    verdict = ex.check(solution)
    text = verdict.render()
    assert verdict.kind == "rule" and ex.cause == "lookup by name", text
    assert "a name from the file" in verdict.text and "collections._sys is sys" in text
    assert "cannot read" in verdict.text and "importlib imports" in verdict.text
    assert "getattr(collections, name) in find_class" in verdict.text
    assert "at line" in verdict.text and "find_class" in verdict.text  # the reader's line
    assert verdict.hints == [bu.HINTS["lookup by name"][0]]
    assert "return OrderedDict" in verdict.hints[0]


def test_the_lookup_text_is_only_for_lookups():
    assert bu._lookup_text("Rule broken: your code uses the module pickle") is None
    assert bu._lookup_text("Rule broken: your code called getattr with a name the checker "
                           "cannot read (write the attribute out: x.name)") is not None


# ----- a name inside torch: trusting the package is refused, exact pairs pass -----------------
class TrustsTorchPackage(Unpickler):
    """A reader's report: the allow-list, then any ``torch`` / ``torch.*`` name handed to
    pickle's own lookup ("trust the torch package"). torch.save ran through it."""

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return self.rebuild_tensor
        if module == "torch" and name in STORAGE_DTYPES:
            return STORAGE_DTYPES[name]
        if module == "torch" or module.startswith("torch."):
            return super().find_class(module, name)
        raise UnsafeFileError(f"{module}.{name}")

    rebuild_tensor = bu.SafeUnpickler.rebuild_tensor


class ExactPairs(Unpickler):
    """Right, written differently: one dict of the exact pairs, storage types included."""

    ANSWERS = {("collections", "OrderedDict"): OrderedDict,
               **{("torch", n): d for n, d in STORAGE_DTYPES.items()}}

    def find_class(self, module, name):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return self.rebuild_tensor
        if (module, name) in self.ANSWERS:
            return self.ANSWERS[module, name]
        raise UnsafeFileError(f"{module}.{name} is not a state dict's name")

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        if storage.dtype == "bfloat16":
            wide = np.zeros(len(storage.data) // 2, "<u4")
            wide.view("<u2")[1::2] = np.frombuffer(storage.data, "<u2")  # the top halves
            flat = wide.view("<f4")
        else:
            flat = np.frombuffer(storage.data, storage.dtype)
        itemsize = flat.itemsize
        last = storage_offset + np.dot(np.subtract(size, 1), stride) if size else 0
        if last >= flat.size:
            raise UnsafeFileError(f"view ends at element {last}, past the storage")
        view = np.lib.stride_tricks.as_strided(
            flat[storage_offset:], size, [s * itemsize for s in stride])
        return view.copy()


def test_trusting_the_torch_package_is_refused_naming_what_it_reached():
    ex = bu.exercise(0)
    verdict = ex.check(TrustsTorchPackage)
    assert verdict.kind == "check" and ex.cause == "torch package", verdict.render()
    assert "torch.serialization.save" in verdict.text and "wrote a file" in verdict.text
    assert verdict.hints == [bu.HINTS["torch package"][0]]


@pytest.mark.parametrize("name", ["torch.serialization.save", "torch.save"])
def test_the_torch_payload_runs_through_the_package_and_not_through_the_reference(name):
    case = bu.torch_case(name)
    assert bu.unpickle_run(bu.SafeUnpickler, case)["_ran"] is False
    out = bu.unpickle_run(TrustsTorchPackage, case)
    assert out["_ran"] is True and out["_global"] == name


def test_exact_pairs_written_differently_pass():
    assert bu.exercise(4).find_failure(ExactPairs) is None


def test_a_bfloat16_storage_read_with_numpy_is_named_and_the_reference_widens_it(tmp_path):
    """read3-store: NumPy cannot read bf16. The exercise says to widen it to float32 (what
    minidl's reader does, exactly); np.frombuffer(data, "bfloat16") gets the bfloat16 hint."""
    w = torch.arange(6.0, dtype=torch.bfloat16).reshape(2, 3).t()
    torch.save({"w": w}, tmp_path / "bf16.pt")
    got = bu.unpickle(bu.SafeUnpickler, tmp_path / "bf16.pt")["w"]
    assert got.dtype == np.float32 and np.array_equal(got, w.float().numpy())
    ex = bu.exercise(0)
    verdict = ex.check(bu.BFloat16Unread)
    assert ex.cause == "bfloat16" and "bfloat16" in verdict.text, verdict.render()
