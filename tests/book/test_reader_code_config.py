"""A ``@config`` class's ``init`` is wrapped by the decorator: the reader's frames must still be
found through it (a forward of the module its ``init`` builds, written in the same cell)."""

from __future__ import annotations

import importlib.util

from minidl_book import build_layer
from minidl_book.reader_code import solution_files

NO_RESHAPE = '''
from minidl.module import Initializer, Module, config


@config
class RmsNormConfig:
    d_model: int
    epsilon: float = 1e-5

    def init(self, device):
        return RmsNorm(Initializer.Ones.init([self.d_model], device), self.epsilon)


class RmsNorm(Module):
    def __init__(self, gamma, epsilon):
        self.gamma, self.epsilon = gamma, epsilon

    def forward(self, x):
        rms = (x.square().mean_dim(x.rank - 1) + self.epsilon).sqrt()
        return x / rms * self.gamma.val()  # the PyTorch habit: gamma not reshaped
'''


def _load(tmp_path):
    path = tmp_path / "cell.py"
    path.write_text(NO_RESHAPE)
    spec = importlib.util.spec_from_file_location("cell", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RmsNormConfig, str(path)


def test_a_config_class_files_include_its_wrapped_init(tmp_path):
    solution, path = _load(tmp_path)
    assert path in solution_files(solution).values()


def test_the_unreshaped_gamma_is_blamed_on_the_readers_forward(tmp_path, capsys):
    solution, _ = _load(tmp_path)
    verdict = build_layer.exercise(max_examples=3).check(solution)
    assert verdict.kind == "error"
    assert "of forward: `return x / rms * self.gamma.val()" in verdict.text
    assert "not in a line of your code" not in verdict.text
    assert verdict.hints and "reshape" in verdict.hints[0]
