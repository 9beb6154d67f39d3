"""Checkers a reader cannot fool (issue 37): every cheat is a planted answer that must get ✗
with the rule named, and the honest answers beside them still get ✓."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Tensor
from minidl_book import build_backend, build_linear, puzzles
from minidl_book.exercises import Exercise
from minidl_book.puzzles import PUZZLES


def _cell(source: str, name: str, glob: dict | None = None, filename: str = "/tmp/ipykernel_0/cell.py"):
    """A function defined the way a notebook cell defines it (a file outside the package)."""
    import linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # as IPython does
    namespace = {"Tensor": Tensor, "np": np, "puzzles": puzzles, **(glob or {})}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the reader's cell
    return namespace[name]


def _verdict(name: str, solution, n: int = 4):
    return PUZZLES[name].exercise(max_examples=n).find_failure(solution)


def _refused(verdict, rule_part: str, text_part: str = ""):
    assert verdict is not None and not verdict.ok, "the cheat passed"
    assert verdict.kind == "rule", verdict.text
    assert rule_part in (verdict.rule or ""), (verdict.rule, verdict.text)
    assert text_part in verdict.text, verdict.text
    assert "Traceback" not in verdict.render()


# ----- think-about-it: Exercise.check ---------------------------------------------------------
class AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class ReadsTheTruth:
    """An array-like whose __array__ reads the checker's frame for the answer."""

    def __array__(self, dtype=None, copy=None):
        import sys

        frame = sys._getframe(1)
        while frame is not None and "truth" not in frame.f_locals:
            frame = frame.f_back
        return np.asarray(frame.f_locals["truth"] if frame else 0.0)


@pytest.mark.parametrize("cheat", [AlwaysEqual(), (AlwaysEqual(),), [AlwaysEqual(), 2],
                                   np.array([AlwaysEqual()], dtype=object)])
def test_an_object_that_says_it_is_equal_is_not_an_answer(cheat, capsys):
    ex = Exercise("how many?", truth=lambda: (4, 2))
    assert ex.check(cheat) is False
    assert "write a number, a word, True/False or a tuple of them" in capsys.readouterr().out
    assert ex.check((4, 2)) and ex.check([4, 2])


def test_an_array_like_reading_the_checkers_frame_is_not_an_answer(capsys):
    ex = Exercise("the bound?", truth=lambda: 0.0625, compare="close", rtol=1e-3)
    assert ex.check(ReadsTheTruth()) is False
    out = capsys.readouterr().out
    assert "write a number" in out and "ReadsTheTruth object" in out
    assert ex.check(0.0625) and "within rtol 0.001" in capsys.readouterr().out


def test_an_int_subclass_with_its_own_eq_is_not_an_answer():
    class Sly(int):
        def __eq__(self, other):
            return True

    assert Exercise("n?", truth=lambda: 5).check(Sly(3)) is False


def test_words_compare_case_and_space_insensitively():
    ex = Exercise("what does it raise?", truth=lambda: "Error")
    assert ex.check("error") and ex.check("  ERROR ") and ex.check("an error")
    assert not ex.check("no error")
    assert Exercise("same or more?", truth=lambda: "same").check("the same")
    assert Exercise("same or more?", truth=lambda: "same", synonyms={"same": ["equal"]}).check("Equal")
    many = Exercise("same number of, or more?", truth=lambda: "the same number of")
    assert many.check("same") and many.check("about the same") and many.check("Same number")
    assert not many.check("more") and not many.check("not the same") and not many.check("of")


def test_which_of_compares_as_a_set():
    ex = Exercise("Which of (a), (b), (c) raise?", truth=lambda: ["b", "c"])
    assert ex.check(["c", "b"]) and ex.check(("b", "c")) and ex.check({"c", "b"}) and ex.check("(b), (c)")
    assert not ex.check(["b"]) and not ex.check(["a", "b", "c"])
    assert Exercise("order", truth=lambda: ["b", "c"], compare="set").check(["c", "b"])
    assert not Exercise("order", truth=lambda: ["b", "c"]).check(["c", "b"])  # order matters here
    assert ex.check("bc") and ex.check("cb") and not ex.check("abc") and not ex.check("b")


def test_an_answer_that_names_one_offered_word_is_that_word():
    ex = Exercise('Is it `"memory"`-bound or `"compute"`-bound?', truth=lambda: "memory")
    assert ex.check("bound by memory") and ex.check("memory bound on DRAM")
    assert not ex.check("not memory") and not ex.check("memory or compute")
    assert not ex.check("compute") and not ex.check("neither memory")
    plain = Exercise("Is it memory-bound or compute-bound?", truth=lambda: "memory")
    assert not plain.check("bound by memory")  # no offered words: only the gist compares


def test_a_2d_array_answers_a_nested_tuple():
    ex = Exercise("the result?", truth=lambda: ((4, 1, 4),))
    assert ex.check(np.array([[4, 1, 4]])) and ex.check([[4, 1, 4]])
    assert not ex.check(np.array([[4, 1, 3]])) and not ex.check(np.array([4, 1, 4]))


def test_one_and_zero_are_true_and_false():
    ex = Exercise("does it resolve, and how many?", truth=lambda: (True, 0))
    assert ex.check((1, 0)) and ex.check(("yes", 0)) and ex.check((True, "0"))
    assert not ex.check((2, 0)) and not ex.check((0, 0)) and not ex.check((1.5, 0))


def test_a_comparison_that_raises_is_a_verdict_with_the_reason(capsys):
    ex = Exercise("pairs?", truth=lambda: [1, 2], compare=lambda p, t: p[5] == t)
    assert ex.check((1, 2)) is False
    assert "could not be compared (IndexError" in capsys.readouterr().out


def test_assert_solution_uses_the_same_comparison():
    ex = Exercise("which?", truth=lambda: "Flex")
    ex.assert_solution("flex")
    with pytest.raises(AssertionError, match="the experiment gives"):
        ex.assert_solution("ndarray")


# ----- puzzles: the rules hold for every frame of the reader's ---------------------------------
def test_a_forbidden_op_in_a_helper_from_an_earlier_cell_is_named():
    helper = _cell("def total(x):\n    return x.sum_dim(0)\n", "total")
    cumsum = _cell("def cumsum(a):\n"
                   "    i = Tensor.arange(0, a.shape[0], device=a.device)\n"
                   "    upper = (i.unsqueeze_dim(1) <= i.unsqueeze_dim(0)).float()\n"
                   "    return total(a.unsqueeze_dim(1) * upper).reshape([a.shape[0]])\n",
                   "cumsum", {"total": helper}, "/tmp/ipykernel_0/cell2.py")
    verdict = _verdict("cumsum", cumsum)
    _refused(verdict, "allowed ops (not sum_dim)", "return x.sum_dim(0)")


def test_trace_hide_in_the_readers_globals_hides_nothing():
    cumsum = _cell("__trace_hide__ = True\n"
                   "def cumsum(a):\n"
                   "    i = Tensor.arange(0, a.shape[0], device=a.device)\n"
                   "    upper = (i.unsqueeze_dim(1) <= i.unsqueeze_dim(0)).float()\n"
                   "    return (a.unsqueeze_dim(1) * upper).sum_dim(0).reshape([a.shape[0]])\n", "cumsum")
    _refused(_verdict("cumsum", cumsum), "allowed ops (not sum_dim)")


def test_storage_read_and_numpy_imported_by_call_are_refused():
    cumsum = _cell("def cumsum(a):\n"
                   "    numpy = __import__('numpy')\n"
                   "    values = numpy.cumsum(a.primitive.backend_tensor)\n"
                   "    return a * 0 + Tensor.from_numpy(values, a.device)\n", "cumsum", {"np": None})
    verdict = _verdict("cumsum", cumsum)
    assert verdict.kind == "rule" and verdict.rule in ("no reaching into storage", "no reaching outside your code")
    assert "cumsum" in verdict.call


@pytest.mark.parametrize("source", [
    "def cumsum(a):\n    return a * 0 + Tensor(a.primitive)\n",
    "def cumsum(a):\n    p = object.__getattribute__(a, 'prim' + 'itive')\n    return a * 0\n",
    "def cumsum(a):\n    p = getattr(a, ''.join(['prim', 'itive']))\n    return a * 0\n",
])
def test_every_way_into_a_tensors_storage_is_refused(source):
    verdict = _verdict("cumsum", _cell(source, "cumsum"))
    assert verdict.kind == "rule" and verdict.rule in ("no reaching into storage", "no reaching outside your code")


def test_numpy_under_any_name_is_refused():
    import numpy

    cumsum = _cell("def cumsum(a):\n    out = a * 0\n    crunch.cumsum([1.0, 2.0])\n    return out\n",
                   "cumsum", {"crunch": numpy})
    _refused(_verdict("cumsum", cumsum), "no NumPy")


def test_walking_up_the_frames_to_the_case_is_refused():
    cumsum = _cell("import sys\n"
                   "def cumsum(a):\n"
                   "    f = sys._getframe(1)\n"
                   "    while 'case' not in f.f_locals:\n"
                   "        f = f.f_back\n"
                   "    import torch\n"
                   "    want = torch.cumsum(torch.from_numpy(f.f_locals['case']['a']), 0)\n"
                   "    return Tensor.from_data(want.tolist(), a.device)\n", "cumsum")
    _refused(_verdict("cumsum", cumsum), "no reaching outside your code")


@pytest.mark.parametrize("source", [
    "import inspect\ndef ones(a):\n    inspect.currentframe()\n    return (a * 0 + 1).float()\n",
    "def ones(a):\n    grab()\n    return (a * 0 + 1).float()\n",
    "def ones(a):\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n"
    "        e.__traceback__.tb_frame\n    return (a * 0 + 1).float()\n",
])
def test_frames_by_inspect_or_tracebacks_are_refused(source):
    import inspect

    _refused(_verdict("ones", _cell(source, "ones", {"grab": inspect.stack})),
             "no reaching outside your code")


@pytest.mark.parametrize("how", ["rules.allowed = None",
                                 "object.__setattr__(rules, 'allowed', None)",
                                 "object.__setattr__(rules, 'allowed', None); ex.rules = None"])
def test_the_solution_cannot_switch_its_own_rules_off(how):
    checker = puzzles.checker("cumsum")
    cumsum = _cell("def cumsum(a):\n"
                   "    rules = ex.rules\n"
                   "    try:\n"
                   f"        {how}\n"
                   "    except Exception:\n"
                   "        pass\n"
                   "    return (a.unsqueeze_dim(1) * 1.0).sum_dim(0).reshape([a.shape[0]])\n", "cumsum",
                   {"ex": checker})
    allowed = tuple(checker.rules.allowed)
    verdict = checker.find_failure(cumsum)
    assert verdict.kind == "rule" and verdict.rule in (
        "the checker is not yours to change", "the checker is not yours to call",
        "allowed ops (not sum_dim)"), verdict.text
    assert tuple(checker.rules.allowed) == allowed  # put back


def test_changing_the_checker_or_builtins_is_found_and_put_back():
    import builtins

    from minidl_book import build_check

    real = build_check.compare_outputs
    patch = _cell("def ones(a):\n"
                  "    target.compare_outputs = lambda *args, **kw: None\n"
                  "    return a * 0\n", "ones", {"target": build_check})
    _refused(_verdict("ones", patch), "")
    assert build_check.compare_outputs is real
    real_isinstance = builtins.isinstance
    tamper = _cell("def ones(a):\n    b.isinstance = lambda *x: True\n    return a * 0\n", "ones", {"b": builtins})
    verdict = _verdict("ones", tamper)
    assert verdict.kind == "rule" and builtins.isinstance is real_isinstance


def test_the_garbage_collector_and_the_profiler_are_out_of_reach():
    import gc
    import sys

    for source, glob in [("def ones(a):\n    objs()\n    return a * 0\n", {"objs": gc.get_objects}),
                         ("def ones(a):\n    off(None)\n    return (a * 0 + 1).float()\n", {"off": sys.setprofile}),
                         ("def ones(a):\n    off(None)\n    return (a * 0 + 1).float()\n", {"off": sys.settrace})]:
        _refused(_verdict("ones", _cell(source, "ones", glob)), "no reaching outside your code")


def test_the_reference_and_the_hidden_solution_are_not_for_calling():
    cumsum = _cell("def cumsum(a):\n    return ref(a)\n", "cumsum", {"ref": puzzles.cumsum_sol})
    _refused(_verdict("cumsum", cumsum), "the checker is not yours to call")
    via_torch = _cell("def cumsum(a):\n    answer = ref(a)\n    return a * 0\n", "cumsum",
                      {"ref": PUZZLES["cumsum"].torch_ref})
    verdict = _verdict("cumsum", via_torch)
    assert verdict.kind == "rule"


def test_the_result_must_be_a_tensor_made_in_the_run():
    class Cheat(Tensor):
        __slots__ = ()

        def to_numpy(self):
            return np.zeros(3, np.float32)

    ones = _cell("def ones(a):\n    return a\n", "ones")
    verdict = _verdict("ones", ones)
    assert verdict is not None and not verdict.ok  # the input handed back: a wrong value at least
    subclass = _cell("def ones(a):\n    t = (a * 0 + 1).float()\n    t.__class__ = Cheat\n    return t\n",
                     "ones", {"Cheat": Cheat})
    _refused(_verdict("ones", subclass), "")


def test_an_object_array_of_always_equal_items_is_a_verdict_not_a_crash():
    from tests.book.test_build_check import _square_exercise

    cheat = _cell("def square(a):\n    return arr([eq] * a.shape[0], dtype=object)\n", "square",
                  {"arr": np.array, "eq": AlwaysEqual()})
    verdict = _square_exercise().find_failure(cheat)
    assert verdict is not None and verdict.kind == "rule" and "object" in verdict.text


def test_an_exception_whose_str_reads_frames_is_refused():
    bad = _cell("import sys\n"
                "class Sly(Exception):\n"
                "    def __str__(self):\n"
                "        sys._getframe(1)\n"
                "        return 'sly'\n"
                "def ones(a):\n    raise Sly()\n", "ones")
    _refused(_verdict("ones", bad), "no reaching outside your code")


def test_named_aliases_of_allowed_ops_are_allowed():
    outer = _cell("def outer(a, b):\n    return a.unsqueeze_dim(1).mul(b.unsqueeze_dim(0))\n", "outer")
    assert _verdict("outer", outer) is None
    ones = _cell("def ones(a):\n    return Tensor.arange(0, a.shape[0], device=a.device).mul_scalar(0)"
                 ".add_scalar(1).float()\n", "ones")
    assert _verdict("ones", ones) is None


def test_honest_solutions_from_a_cell_still_pass():
    outer = _cell("def outer(a, b):\n    return a.unsqueeze_dim(1) * b.unsqueeze_dim(0)\n", "outer")
    assert _verdict("outer", outer) is None
    helper = _cell("def column(x):\n    return x.unsqueeze_dim(1)\n", "column")
    outer2 = _cell("def outer(a, b):\n    return column(a) * b.unsqueeze_dim(0)\n", "outer",
                   {"column": helper}, "/tmp/ipykernel_0/cell3.py")
    assert _verdict("outer", outer2) is None


# ----- build-it: forbidden ops by the function they run -----------------------------------------
def test_a_borrowed_backend_op_under_the_readers_class_is_refused():
    from minidl.backends.ndarray import NdArray

    class Sneaky(build_backend.ForgetfulNdArray):
        float_exp = classmethod(NdArray.float_exp.__func__)

    verdict = build_backend.exercise(3).find_failure(Sneaky)
    assert verdict.kind == "rule" and "float_exp" in verdict.text and "another backend" in verdict.rule


def test_the_libraries_linear_under_another_name_is_refused():
    from minidl.dispatch import Dispatch

    def linear(input, weight, bias):
        return Tensor(Dispatch.linear(input.primitive, weight.primitive,
                                      None if bias is None else bias.primitive))

    def linear2(input, weight, bias):
        from minidl import functional
        return functional.linear(input, weight, bias)

    for cheat in (linear, linear2):
        verdict = build_linear.exercise(5).find_failure(cheat)
        assert verdict.kind == "rule", verdict.text


def test_an_execd_helper_is_the_readers_code_too():
    helper = _cell("def crunch():\n    return np.cumsum([1.0, 2.0])\n", "crunch", filename="<string>")
    cumsum = _cell("def cumsum(a):\n    crunch()\n    return a * 0\n", "cumsum", {"crunch": helper})
    _refused(_verdict("cumsum", cumsum), "no NumPy")


def test_a_step_computing_with_numpy_reached_through_a_library_module_is_refused():
    import minidl.backends.flex.float_ops as lib
    from minidl.autodiff import Step
    from minidl_book import build_softplus

    assert hasattr(lib, "np")

    class Sly(Step):
        saves = ("tensor",)

        def forward(self, B, tensor):
            return lib.np.log1p(lib.np.exp(tensor))  # no NumPy name of its own

        def backward(self, B, grad, state):
            return (B.float_mul(grad, B.sigmoid(state["tensor"])),)

    verdict = build_softplus.exercise(3).find_failure(Sly)
    assert verdict.kind == "rule" and "backend's ops" in verdict.text
    assert build_softplus.exercise(3).find_failure(build_softplus.Softplus) is None


def test_a_module_reached_as_an_attribute_is_refused():
    import minidl.tensor.base as base

    ones = _cell("def ones(a):\n    base.sys.modules\n    return (a * 0 + 1).float()\n", "ones", {"base": base})
    _refused(_verdict("ones", ones), "no reaching outside your code")


def test_an_earlier_puzzle_may_be_called_and_a_later_one_may_not():
    compress = _cell("def compress(g, v):\n"
                     "    i = Tensor.arange(0, v.shape[0], device=v.device)\n"
                     "    position = cumsum(g.float()) - 1\n"
                     "    target = (position.unsqueeze_dim(1) == i.float().unsqueeze_dim(0)) & g.unsqueeze_dim(1)\n"
                     "    return (v.unsqueeze_dim(0) @ target.float()).reshape([v.shape[0]])\n",
                     "compress", {"cumsum": puzzles.cumsum_sol})
    assert _verdict("compress", compress) is None
    ones = _cell("def ones(a):\n    return cumsum(a * 0 + 1) * 0 + 1\n", "ones", {"cumsum": puzzles.cumsum_sol})
    _refused(_verdict("ones", ones), "the checker is not yours to call")


def test_the_readers_own_earlier_solution_counts_once_it_passed(capsys):
    mine = _cell("def cumsum(a):\n"
                 "    i = Tensor.arange(0, a.shape[0], device=a.device)\n"
                 "    upper = (i.unsqueeze_dim(1) <= i.unsqueeze_dim(0)).float()\n"
                 "    return (a.unsqueeze_dim(0) @ upper).reshape([a.shape[0]])\n", "cumsum")
    fake = _cell("def cumsum(a):\n    return a.sum_dim(0)\n", "cumsum", filename="/tmp/ipykernel_0/fake.py")
    puzzles.SOLVED["cumsum"] = fake  # put there by hand: checked again, not trusted
    assert fake not in puzzles.earlier("sequence_mask")
    assert puzzles.check(mine).ok and puzzles.SOLVED["cumsum"] is mine
    assert mine in puzzles.earlier("sequence_mask") and mine not in puzzles.earlier("cumsum")
    puzzles.SOLVED.clear()


def test_a_slot_getter_grabbed_in_an_earlier_cell_is_refused():
    from minidl.tensor.base import TensorBase

    get = TensorBase.__dict__["primitive"].__get__  # the cell before the solution
    as_global = _cell("def ones(a):\n    get(a)\n    return (a * 0 + 1).float()\n", "ones", {"get": get})
    _refused(_verdict("ones", as_global), "no reaching outside your code")
    as_default = _cell("def ones(a, get=get):\n    get(a)\n    return (a * 0 + 1).float()\n", "ones", {"get": get})
    _refused(_verdict("ones", as_default), "no reaching outside your code")


# ----- loops over elements: the op count grows with the input ---------------------------------
LOOPS = {
    "flip": "def flip(a):\n"
            "    n = a.shape[0]\n"
            "    out, i = a * 0, Tensor.arange(0, n, device=a.device)\n"
            "    for k in range(n):\n"
            "        out = out + (i == k).float() * a[n - 1 - k:n - k]\n"
            "    return out\n",
    "cumsum": "def cumsum(a):\n"
              "    n = a.shape[0]\n"
              "    out, i = a * 0, Tensor.arange(0, n, device=a.device)\n"
              "    for k in range(n):\n"
              "        s = a.unsqueeze_dim(0) @ (i <= k).float().unsqueeze_dim(1)\n"
              "        out = out + s.reshape([1]) * (i == k).float()\n"
              "    return out\n",
    "eye": "def eye(a):\n"
           "    i = Tensor.arange(0, a.shape[0], device=a.device)\n"
           "    m = (i.unsqueeze_dim(1) * 0 + i.unsqueeze_dim(0) * 0).float()\n"
           "    for k in range(a.shape[0]):\n"
           "        m = m.mask_fill((i.unsqueeze_dim(1) == k) & (i.unsqueeze_dim(0) == k), 1.0)\n"
           "    return m\n",
}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_a_python_loop_over_elements_is_refused(name):
    verdict = _verdict(name, _cell(LOOPS[name], name))
    _refused(verdict, "no loops", "the number of ops grows with the input")
    assert "for k in range" not in verdict.call and "k" in verdict.call  # the loop's body line


def test_a_solved_puzzle_with_an_extra_parameter_is_no_trap_door():
    ones = _cell("def ones(a, _x=None, _shape=None):\n"
                 "    if _x is not None:\n"
                 "        return _x.reshape(_shape)\n"
                 "    return (Tensor.arange(0, a.shape[0], device=a.device) * 0 + 1).float()\n",
                 "ones", filename="/tmp/ipykernel_0/ones.py")
    assert _verdict("ones", ones) is None  # it passes its own puzzle...
    puzzles.SOLVED["ones"] = ones
    try:
        assert ones not in puzzles.earlier("flatten")  # ...but is no helper of a later one
        flatten = _cell("def flatten(a):\n    return ones(a, a, [a.shape[0] * a.shape[1]])\n",
                        "flatten", {"ones": ones})
        _refused(_verdict("flatten", flatten), "allowed ops (not reshape)")
    finally:
        puzzles.SOLVED.clear()


def test_a_solved_puzzle_that_does_other_work_on_other_inputs_is_refused():
    ones = _cell("def ones(a):\n"
                 "    if len(a.shape) == 2:\n"
                 "        return a.reshape([a.shape[0] * a.shape[1]])\n"
                 "    return (Tensor.arange(0, a.shape[0], device=a.device) * 0 + 1).float()\n",
                 "ones", filename="/tmp/ipykernel_0/ones2.py")
    puzzles.SOLVED["ones"] = ones
    try:
        assert ones in puzzles.earlier("flatten")  # the right parameters, and it passes ones
        flatten = _cell("def flatten(a):\n    return ones(a)\n", "flatten", {"ones": ones})
        verdict = _verdict("flatten", flatten)
        _refused(verdict, "earlier puzzles as stated", "a = [")
        assert "line 2 of flatten" in verdict.call
        compress = _cell("def compress(g, v):\n"  # an honest call of the reader's own ones
                         "    i = Tensor.arange(0, v.shape[0], device=v.device)\n"
                         "    upper = (i.unsqueeze_dim(1) <= i.unsqueeze_dim(0)).float()\n"
                         "    n = [v.shape[0]]\n"
                         "    position = (g.float().unsqueeze_dim(0) @ upper).reshape(n) - ones(v)\n"
                         "    target = (position.unsqueeze_dim(1) == i.float().unsqueeze_dim(0))"
                         " & g.unsqueeze_dim(1)\n"
                         "    return (v.unsqueeze_dim(0) @ target.float()).reshape(n)\n",
                         "compress", {"ones": ones})
        assert _verdict("compress", compress) is None
    finally:
        puzzles.SOLVED.clear()


# ----- the values printed, and a forbidden op run inside an allowed one -----------------------
@pytest.mark.parametrize("how", ["repr(a)", "str(a)", "f'{a}'", "format(a, '')"])
def test_printing_a_tensor_is_reading_its_values(how):
    # repr writes the data out: a sum could parse it back and build its answer from the text
    source = ("def ones(a):\n"
              f"    text = {how}\n"
              "    return (a * 0 + 1).float()\n")
    _refused(_verdict("ones", _cell(source, "ones")), "no data out", "Tensor.__repr__")


def test_a_negative_step_is_a_flip_and_flip_is_no_puzzle_op():
    # minidl runs a[::-1] as a positive-step slice then Tensor.flip (indexing.py)
    flip = _cell("def flip(a):\n    return a[::-1]\n", "flip")
    _refused(_verdict("flip", flip, 8), "use flip", "a[::-1]")
    roll = _cell("def roll(a):\n    return a[::-1][::-1][1:] * 0 + a[1:]\n", "roll")
    _refused(_verdict("roll", roll, 8), "use flip", "[::-1]")


def test_a_log_step_loop_is_named_a_loop_of_steps():
    # Hillis-Steele: log2(n) whole-tensor steps, so the count grows, but not once per element
    cumsum = _cell("def cumsum(a):\n"
                   "    n, d = a.shape[0], 1\n"
                   "    i = Tensor.arange(0, n, device=a.device)\n"
                   "    while d < n:\n"
                   "        shift = (i.unsqueeze_dim(1) + d == i.unsqueeze_dim(0)).float()\n"
                   "        a = a + (a.unsqueeze_dim(0) @ shift).reshape([n])\n"
                   "        d = d * 2\n"
                   "    return a\n", "cumsum")
    verdict = _verdict("cumsum", cumsum, 8)
    _refused(verdict, "no loops", "grows with the input's size (a loop over elements or steps)")
    assert "once per element" not in verdict.text
