"""Build exercise of the storing-and-loading chapter: import a pretrained body under a new head.

The checkpoint is what a PyTorch training script leaves behind:
``torch.save({"epoch": 12, "state_dict": model.state_dict(), "optimizer": opt.state_dict()})``.
Its model names its body by position inside nested ``nn.Sequential``s (``features.0.0``,
``features.1.0``, ``features.1.1``), carries an auxiliary head (``aux``) used only in
training, and a ``classifier`` for more classes than the minidl model's. The reader writes
``import_pretrained(store, model)``, returning ``(model, left_out)``: the module with the
body loaded and the head left at its init, and the names of the module's tensors the load
left out (read from the ``ApplyResult``). The checker's ``Classifier`` names its head
``classifier``, ``head`` or ``out`` (:data:`HEADS`): a ``left_out`` typed in as
``["classifier.weight", "classifier.bias"]`` fails on the others.

The checker draws the target's params before the load (so "left at its init" is a byte
comparison), compares the body's output with PyTorch's, and gives each slip its own hint:
the top-level key not picked, no renaming, a renaming whose new store was thrown away, a
rule missing for one layer (named by the file keys no rule renamed),
``allow_partial`` missing (the aux head), ``validate(False)`` missing (the head's shape),
``left_out`` read from one list of the result only, rules that send a layer's tensors to
another layer (a bias fits either Linear, so it loads there without complaint).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device, Tensor, functional
from minidl.module import Module
from minidl.nn import LayerNormConfig, LinearConfig
from minidl.store import PytorchStore
from minidl_book.build_check import BuildExercise, Reference
from minidl_book.cause_hints import CauseHints
from minidl_book.strategies import float32_arrays

__all__ = ["HEADS", "PLANTED", "Classifier", "TorchClassifier", "exercise",
           "import_pretrained", "checkpoint"]

#: the names the checker gives the minidl model's head (the file's is always ``classifier``)
HEADS = ("classifier", "head", "out")
#: the minidl body layer → the PyTorch layer whose tensors it should hold
BODY = {"fc1": "features.0.0", "fc2": "features.1.0", "norm": "features.1.1"}


class TorchClassifier(torch.nn.Module):
    """The PyTorch side: a body of nested Sequentials, a classifier and an auxiliary head."""

    def __init__(self, d_input: int, d_hidden: int, classes: int):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Sequential(torch.nn.Linear(d_input, d_hidden), torch.nn.ReLU()),
            torch.nn.Sequential(torch.nn.Linear(d_hidden, d_hidden),
                                torch.nn.LayerNorm(d_hidden), torch.nn.ReLU()))
        self.classifier = torch.nn.Linear(d_hidden, classes)
        self.aux = torch.nn.Linear(d_hidden, classes)  # an auxiliary loss's head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class Classifier(Module):
    """The minidl side: ``fc1`` → relu → ``fc2`` → ``norm`` → relu, then the head, the field
    whose name ``head`` gives (``"classifier"`` by default)."""

    def __init__(self, device: Device, d_input: int, d_hidden: int, classes: int,
                 head: str = "classifier"):
        self.fc1 = LinearConfig(d_input, d_hidden).init(device)
        self.fc2 = LinearConfig(d_hidden, d_hidden).init(device)
        self.norm = LayerNormConfig(d_hidden).init(device)
        setattr(self, head, LinearConfig(d_hidden, classes).init(device))
        self._head = head  # a constant, not a field: "_" names are left out

    def features(self, x: Tensor) -> Tensor:
        return functional.relu(self.norm(self.fc2(functional.relu(self.fc1(x)))))

    def forward(self, x: Tensor) -> Tensor:
        return getattr(self, self._head)(self.features(x))


def checkpoint(d_input: int = 3, d_hidden: int = 4, classes: int = 10,
               seed: int = 0) -> tuple[TorchClassifier, dict]:
    """A PyTorch model after one Adam step, and the checkpoint a training script saves."""
    torch.manual_seed(seed)
    model = TorchClassifier(d_input, d_hidden, classes)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    x = torch.randn(4, d_input)
    hidden = model.features(x)
    loss = model.classifier(hidden).square().mean() + model.aux(hidden).square().mean()
    loss.backward()
    opt.step()
    return model, {"epoch": 12, "state_dict": model.state_dict(), "optimizer": opt.state_dict()}


def import_pretrained(store, model):
    store = (store.with_top_level_key("state_dict")
             .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
             .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
             .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
             .allow_partial(True)  # aux.* has no slot
             .validate(False))  # classifier.*: another number of classes
    model, result = store.apply_to(model)
    left_out = result.missing + [error.path for error in result.errors]
    return model, left_out


# ----- planted slips --------------------------------------------------------------------------
def no_top_level_key(store, model):
    store = (store.with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
             .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
             .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
             .allow_partial(True).validate(False))
    model, result = store.apply_to(model)
    return model, result.missing + [error.path for error in result.errors]


def no_remap(store, model):
    store = store.with_top_level_key("state_dict").allow_partial(True).validate(False)
    model, result = store.apply_to(model)
    return model, result.missing + [error.path for error in result.errors]


def store_dropped(store, model):
    store = store.with_top_level_key("state_dict")
    store.with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
    store.with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
    store.with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
    store = store.allow_partial(True).validate(False)
    model, result = store.apply_to(model)
    return model, result.missing + [error.path for error in result.errors]


def rule_missing(store, model):
    store = (store.with_top_level_key("state_dict")
             .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
             .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
             .allow_partial(True).validate(False))  # no rule for features.1.1 (norm)
    model, result = store.apply_to(model)
    return model, result.missing + [error.path for error in result.errors]


def no_allow_partial(store, model):
    store = (store.with_top_level_key("state_dict")
             .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
             .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
             .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
             .validate(False))
    model, result = store.apply_to(model)
    return model, result.missing + [error.path for error in result.errors]


def no_validate_false(store, model):
    """The head is tried with the file's shape (the load refuses it)."""
    store = (store.with_top_level_key("state_dict")
             .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
             .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
             .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
             .allow_partial(True))
    model, result = store.apply_to(model)
    return model, result.missing + [error.path for error in result.errors]


def rules_swapped(store, model):
    """fc1's and fc2's rules crossed: the biases (one shape) load into the wrong layers."""
    store = (store.with_top_level_key("state_dict")
             .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc2.$1")
             .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc1.$1")
             .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
             .allow_partial(True).validate(False))
    model, result = store.apply_to(model)
    return model, result.missing + [error.path for error in result.errors]


def module_discarded(store, model):
    """The PyTorch in-place habit: the loaded module apply_to returns is thrown away."""
    store = (store.with_top_level_key("state_dict")
             .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
             .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
             .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
             .allow_partial(True).validate(False))
    _, result = store.apply_to(model)
    return model, result.missing + [error.path for error in result.errors]


def missing_only(store, model):
    store = (store.with_top_level_key("state_dict")
             .with_key_remapping(r"^features\.0\.0\.(.*)$", "fc1.$1")
             .with_key_remapping(r"^features\.1\.0\.(.*)$", "fc2.$1")
             .with_key_remapping(r"^features\.1\.1\.(.*)$", "norm.$1")
             .allow_partial(True).validate(False))
    model, result = store.apply_to(model)
    return model, result.missing


#: name → (slip, the verdict kind it gets, the cause whose hint it opens)
PLANTED = {
    "top-level key not picked": (no_top_level_key, "check", "top-level key"),
    "no renaming": (no_remap, "check", "no renaming"),
    "returned store dropped": (store_dropped, "check", "renaming took no effect"),
    "one layer's rule missing": (rule_missing, "check", "rule missing"),
    "allow_partial missing": (no_allow_partial, "error", "unexpected keys"),
    "head loaded with the file's shape": (no_validate_false, "error", "head shape"),
    "left_out from result.missing only": (missing_only, "check", "left_out"),
    "fc1 and fc2 rules swapped": (rules_swapped, "check", "wrong layers"),
    "returned module discarded": (module_discarded, "check", "returned module discarded"),
}


# ----- the checker ----------------------------------------------------------------------------
def _about(d_in: int, d_hidden: int, classes: int, extra: int, seed: int, head: str) -> str:
    return (f"checkpoint of TorchClassifier({d_in}, {d_hidden}, {classes + extra}) after one "
            f"Adam step (torch.manual_seed({seed})); target Classifier({d_in}, {d_hidden}, "
            f"{classes}, head={head!r})")


def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(3)

    def case(n, d_in, d_hidden, classes, extra, seed, head):
        torch_model, saved = checkpoint(d_in, d_hidden, classes + extra, seed)
        about = _about(d_in, d_hidden, classes, extra, seed, head)
        return st.fixed_dictionaries({
            "model": st.just(about), "x": arrays(n, d_in), "_torch": st.just(torch_model),
            "_saved": st.just(saved), "_dims": st.just((d_in, d_hidden, classes)),
            "_head": st.just(head)})

    dims = st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(2, 4), st.integers(2, 4),
                     st.integers(1, 3), st.integers(0, 1000), st.sampled_from(HEADS))
    return dims.flatmap(lambda d: case(*d))


def _fixed_case(head: str = "classifier") -> dict:
    """A case always tried first: every planted slip fails on the first whatever hypothesis
    draws; a head not named like the file's fails a ``left_out`` typed in."""
    d_in, d_hidden, classes, extra, seed = 3, 4, 3, 2, 0
    torch_model, saved = checkpoint(d_in, d_hidden, classes + extra, seed)
    x = np.random.default_rng(0).normal(size=(2, d_in)).astype(np.float32)
    return {"model": _about(d_in, d_hidden, classes, extra, seed, head), "x": x,
            "_torch": torch_model, "_saved": saved, "_dims": (d_in, d_hidden, classes),
            "_head": head}


def _head(case: dict) -> tuple[str, str]:
    """The target's head tensors: ``(f"{head}.bias", f"{head}.weight")``."""
    return (f"{case['_head']}.bias", f"{case['_head']}.weight")


def _arrays(module: Module) -> dict[str, np.ndarray]:
    return {path: p.val().to_numpy().copy() for path, p in module.parameters().items()}


def import_run(solution, case: dict) -> dict:
    """Save the case's checkpoint with ``torch.save``, draw a ``Classifier`` (its values are
    its init), hand both to the solution, and run the returned module's body."""
    dev = Device.flex()
    dev.seed(0)
    target = Classifier(dev, *case["_dims"], head=case["_head"])
    before = _arrays(target)  # reading draws: "at its init" is now a byte comparison
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "checkpoint.pt"
        torch.save(case["_saved"], path)
        got = solution(PytorchStore.from_file(path), target)
    file = {k: v.detach().numpy().copy() for k, v in case["_saved"]["state_dict"].items()}
    out = {"_returned": got, "_before": before, "_file": file}
    if isinstance(got, tuple | list) and len(got) == 2 and isinstance(got[0], Classifier):
        model, left_out = got
        out["_after"] = _arrays(model)
        out["_left_out"] = left_out
        out["_discarded"] = model is target  # the module handed in, not the load's result
        out["body"] = model.features(Tensor.from_numpy(case["x"], dev))
    return out


def _called(watch, method: str) -> bool:
    return any(call.name.rsplit(".", 1)[-1] == method for call in watch.calls)


def _returns_pair(solution, case, outputs, watch) -> str | None:
    if "_after" in outputs:
        return None
    got = outputs["_returned"]
    return (f"import_pretrained returned {type(got).__name__}; it returns a pair "
            "(model, left_out): the loaded module (apply_to's first value) and the names "
            "of the module's tensors the load left out")


def _holds(value: np.ndarray, file: dict[str, np.ndarray]) -> str | None:
    """The file tensor ``value`` is (a Linear weight transposed), or None."""
    for key, array in file.items():
        for candidate in (array, array.T if array.ndim == 2 else None):
            if candidate is not None and candidate.shape == value.shape and np.array_equal(
                    candidate, value):
                return key
    return None


def _wrong_layers(solution, case, outputs, watch) -> str | None:
    """A body tensor that changed holds a tensor of another layer of the file."""
    before, after, file = outputs["_before"], outputs["_after"], outputs["_file"]
    wrong = []
    for path, value in after.items():
        layer = path.split(".", 1)[0]
        if layer not in BODY or np.array_equal(before[path], value):
            continue
        key = _holds(value, file)
        if key is not None and key.rpartition(".")[0] != BODY[layer]:
            wrong.append(f"{path} got the file's {key}")
    if not wrong:
        return None
    return ("Tensors loaded into the wrong layers: " + "; ".join(wrong) + ". Your rules "
            "rename the file's layers into other layers of the module; where the shapes "
            "agree (a bias of d_hidden values fits fc1 and fc2 alike) the load takes them "
            "without complaint, and validate(False) skips only those whose shapes differ.")


def _body_loaded(solution, case, outputs, watch) -> str | None:
    before, after = outputs["_before"], outputs["_after"]
    kept = [p for p in before if not p.startswith(case["_head"] + ".")
            and np.array_equal(before[p], after[p])]
    if not kept:
        return None
    text = (f"The body was not loaded: {', '.join(kept)} still hold their init values. "
            "With allow_partial(True) and validate(False) a load that applies nothing "
            "still succeeds.")
    if outputs.get("_discarded"):
        return text + (" Your code returned the module it was given: the load's module, "
                       "the one holding the file's tensors, was thrown away.")
    if not (_called(watch, "with_top_level_key") or _called(watch, "from_file")):
        return text + (" Your code never picked the checkpoint's 'state_dict' entry, so the "
                       "file's names start with 'state_dict.' and 'optimizer.'.")
    if not _called(watch, "with_key_remapping"):
        return text + " Your code renamed nothing: the file says features.0.0.weight."
    layers = {p.split(".", 1)[0] for p in kept}
    if len(layers) < len(BODY):  # some layers loaded: the renaming worked, a rule is missing
        unmatched = sorted(k for k in outputs["_file"]
                           if any(k.startswith(BODY[layer] + ".") for layer in layers))
        return text + (" Your renaming worked for the other layers, but no rule sent the "
                       f"file's {', '.join(unmatched)} to {', '.join(sorted(layers))}: "
                       "they reached no slot (allow_partial(True) lists them in "
                       "result.unused instead of failing).")
    return text + (" Your code called with_key_remapping, yet the body's names did not "
                   "change.")


def _head_kept(solution, case, outputs, watch) -> str | None:
    before, after = outputs["_before"], outputs["_after"]
    changed = [p for p in _head(case) if not np.array_equal(before[p], after[p])]
    if changed:
        return (f"The head was loaded: {', '.join(changed)} changed. The new task's "
                "classifier must keep its init.")
    return None


def _left_out_named(solution, case, outputs, watch) -> str | None:
    left_out = outputs["_left_out"]
    try:
        names = sorted(str(n) for n in left_out)
    except TypeError:
        names = None
    if names == sorted(_head(case)) and not isinstance(left_out, str):
        return None
    return (f"left_out is {left_out!r}; the load left {list(_head(case))} at their init (the "
            "module's tensors the file did not fill), and nothing else.")


def _cause(*needles: str, absent: tuple[str, ...] = ()):
    def test(verdict) -> bool:
        return (all(n in verdict.text for n in needles)
                and not any(a in verdict.text for a in absent))
    return test


#: cause → its hints, the first opened first
HINTS = {
    "top-level key": [
        "print(store.keys()): the file holds a whole training checkpoint (epoch, "
        "state_dict, optimizer), and the model's tensors sit under 'state_dict'.",
        "store.with_top_level_key('state_dict') reads only that entry.",
    ],
    "no renaming": [
        "The file names the body by position: features.0.0 is fc1, features.1.0 is fc2, "
        "features.1.1 is norm. with_key_remapping(pattern, replacement) renames.",
        "One rule per layer: r'^features\\.0\\.0\\.(.*)$' → 'fc1.$1' (the group carries "
        "weight or bias across).",
    ],
    "renaming took no effect": [
        "Each with_key_remapping call returns a NEW store and leaves the one it was called "
        "on as it was: reassign (store = store.with_key_remapping(...)) or chain the calls.",
        "Check each pattern against print(store.with_top_level_key('state_dict').keys()): "
        "a dot is \\. in a regex.",
    ],
    "rule missing": [
        "Each body layer needs a rule of its own. print(store.keys()) after your rules: "
        "the keys still starting with 'features.' are the ones no rule renamed.",
        "features.1.1 is the LayerNorm: r'^features\\.1\\.1\\.(.*)$' → 'norm.$1' "
        "(norm.weight is then found for norm.gamma).",
    ],
    "unexpected keys": [
        "aux.weight and aux.bias are the auxiliary head: the new model has no slot for "
        "them. Which switch forgives a key problem?",
        "store.allow_partial(True): missing and unexpected keys are listed in the result "
        "instead of failing the load.",
    ],
    "head shape": [
        "classifier.* match by name but not by shape: the file's head has more classes. "
        "A shape problem is not a key problem; allow_partial does not forgive it.",
        "store.validate(False): a tensor whose shape does not fit is skipped (listed in "
        "result.errors) and the module keeps its own value there.",
    ],
    "wrong layers": [
        "Line the file's body up with the module's, in forward order: which PyTorch layer "
        "takes d_input features, which one d_hidden? print(store.keys()) after your rules "
        "shows where each tensor now goes.",
        "features.0.0 is the first Linear (fc1), features.1.0 the second (fc2), "
        "features.1.1 the LayerNorm (norm).",
    ],
    "returned module discarded": [
        "apply_to/load_into returns a NEW module and leaves the one it was given as it "
        "was (no in-place load_state_dict): return that one, model, result = "
        "store.apply_to(model).",
    ],
    "left_out": [
        "apply_to returns (module, result). A skipped shape mismatch is in result.errors "
        "(each error has .path), a slot the file lacks in result.missing.",
    ],
}

_CAUSES = [
    ("top-level key", _cause("'state_dict")),
    ("top-level key", _cause("top-level key")),
    ("no renaming", _cause("renamed nothing")),
    ("no renaming", _cause("Unexpected keys", "'features.")),
    ("wrong layers", _cause("Tensors loaded into the wrong layers")),
    ("returned module discarded", _cause("Your code returned the module it was given")),
    ("rule missing", _cause("but no rule sent the file's")),
    ("renaming took no effect", _cause("yet the body's names did not change")),
    ("head shape", _cause("Shape mismatch for 'classifier.")),
    ("unexpected keys", _cause("Unexpected keys", "'aux.")),
    ("left_out", _cause("left_out is")),
]


def _torch_body(case: dict) -> dict:
    with torch.no_grad():
        return {"body": case["_torch"].features(torch.from_numpy(case["x"]))}


def exercise(max_examples: int = 6) -> BuildExercise:
    """The checker for the reader's ``import_pretrained(store, model) -> (model, left_out)``."""
    return CauseHints(
        "import a pretrained body under a new head",
        cases=_cases(),
        run=import_run,
        references=[Reference("PyTorch", _torch_body, rtol=1e-5, atol=1e-5)],
        checks=[_returns_pair, _wrong_layers, _body_loaded, _head_kept, _left_out_named],
        hints=["print(store.keys()) shows the file's names; the module's are fc1.weight, "
               "fc1.bias, fc2.*, norm.gamma, norm.beta and the head's (classifier.* here)."],
        causes=[(name, test, HINTS[name]) for name, test in _CAUSES],
        reference_solution=import_pretrained,
        examples=[_fixed_case(), _fixed_case("out")],
        max_examples=max_examples,
        order=("model", "x"),
    )
