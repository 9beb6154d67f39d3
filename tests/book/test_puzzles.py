"""The Puzzles appendix: every reference solution passes its checker; planted wrong solutions
get the verdict a reader should see."""

from __future__ import annotations

import pytest

from minidl import Tensor
from minidl_book.puzzle_examples import DEMO, DEMO_ATTEMPTS, EXAMPLES, example, spec_failure
from minidl_book.puzzles import BASE, PLANTED, PUZZLES


def test_all_21_puzzles_each_with_a_hint_and_an_example():
    assert len(PUZZLES) == 21
    assert all(p.hints for p in PUZZLES.values())
    assert set(EXAMPLES) == set(PUZZLES)
    for name, case in EXAMPLES.items():
        assert set(case) == set(PUZZLES[name].params), name


def test_a_wrong_loop_spec_is_caught():
    def cumsum_spec(a):  # forgets the element itself: an exclusive running sum
        out, total = [0.0] * len(a), 0.0
        for i in range(len(a)):
            out[i] = total
            total += a[i]
        return out

    assert spec_failure("cumsum", cumsum_spec) is not None
    with pytest.raises(AssertionError, match="cumsum_spec disagrees"):
        example("cumsum", cumsum_spec)


def test_a_right_loop_spec_passes():
    def flatten_spec(a):
        return [x for row in a for x in row]

    assert example("flatten", flatten_spec) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_the_demo_puzzle_is_none_of_the_readers():
    assert DEMO.name not in PUZZLES
    assert DEMO.exercise(8).find_failure(DEMO.solution) is None


@pytest.mark.parametrize("attempt", sorted(DEMO_ATTEMPTS))
def test_each_demo_attempt_gets_its_verdict(attempt):
    wrong, kind = DEMO_ATTEMPTS[attempt]
    verdict = DEMO.exercise(10).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict


def test_flatten_takes_reshape_away():
    assert "reshape" not in PUZZLES["flatten"].allowed
    verdict = PUZZLES["flatten"].exercise(5).find_failure(lambda a: a.reshape([a.shape[0] * a.shape[1]]))
    assert verdict.kind == "rule" and "reshape is not an allowed op" in verdict.text


@pytest.mark.parametrize("name", sorted(PUZZLES))
def test_reference_solution_passes(name):
    puzzle = PUZZLES[name]
    assert puzzle.exercise(max_examples=8).find_failure(puzzle.solution) is None


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_wrong_solution_gets_its_verdict(name):
    puzzle, wrong, kind = PLANTED[name]
    verdict = PUZZLES[puzzle].exercise(max_examples=15).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert bool(verdict.inputs) == (kind != "rule")  # a failing case, except for a broken rule
    assert "Traceback" not in verdict.render()
    if kind == "value":
        assert verdict.index is not None and "expected" in verdict.text and "found" in verdict.text
    if kind == "rule":
        assert verdict.call and wrong.__name__ in verdict.call  # the reader's line that broke it


def test_forbidden_op_is_named_with_the_line():
    verdict = PUZZLES["cumsum"].exercise(5).find_failure(PLANTED["cumsum_forbidden"][1])
    assert "sum_dim is not an allowed op" in verdict.text
    assert ".sum_dim(0)" in verdict.call


def test_pulling_values_out_breaks_the_no_data_rule():
    verdict = PUZZLES["flip"].exercise(5).find_failure(PLANTED["flip_data_out"][1])
    assert verdict.rule == "no data out" and "tolist" in verdict.text


def test_base_ops_are_enough_for_the_base_only_puzzles():
    for name in ("outer", "eye", "triu", "vstack", "heaviside", "repeat", "sequence_mask"):
        assert PUZZLES[name].allowed == BASE


def test_a_functional_or_backend_op_called_directly_is_not_allowed():
    from minidl import functional
    from minidl_book.puzzles import checker

    def ones(a):
        return functional.relu(a * 0 + 1)  # relu is not a puzzle op

    verdict = checker("ones").find_failure(ones)
    assert verdict.kind == "rule" and "relu is not an allowed op" in verdict.text
    assert "functional.relu(a * 0 + 1)" in verdict.call


def test_the_pages_stubs_have_the_types_of_the_signatures():
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "chapters" / "puzzles.md").read_text()
    for name, puzzle in PUZZLES.items():
        found = re.search(rf"^def {name}\((.*?)\) -> Tensor:", page, re.M)
        params = re.findall(r"(\w+): (\[[^\]]*\](?: bool)?|int)", puzzle.signature.split("->")[0])
        want = ", ".join(f"{n}: {'int' if t == 'int' else 'Tensor'}" for n, t in params)
        assert found and found.group(1) == want, (name, found and found.group(1), want)


def test_the_page_order_is_the_order_earlier_puzzles_follow():
    import re
    from pathlib import Path

    from minidl_book.puzzles import ORDER

    page = (Path(__file__).resolve().parents[2] / "chapters" / "puzzles.md").read_text()
    stubs = [m for m in re.findall(r"^def (\w+)\(.*\) -> Tensor:", page, re.M) if m in PUZZLES]
    assert tuple(stubs) == ORDER


def test_a_rule_verdict_prints_no_failing_case_and_no_value_hint(capsys):
    from minidl_book.puzzle_examples import DEMO_ATTEMPTS

    ex = DEMO.exercise(5)
    verdict = ex.check(DEMO_ATTEMPTS["forbidden op"][0])
    out = capsys.readouterr().out
    assert verdict.kind == "rule" and "Failing case" not in out and "Hint" not in out
    verdict = ex.check(DEMO_ATTEMPTS["wrong value"][0])  # a value verdict opens the first hint
    assert "Hint 1 of 2" in capsys.readouterr().out


def test_compress_hints_use_only_what_comes_before_it():
    from minidl_book.puzzles import ORDER

    later = ORDER[ORDER.index("compress") + 1:]
    assert not [n for n in later for h in PUZZLES["compress"].hints if n in h]


def test_a_call_to_an_earlier_puzzle_still_a_stub_gets_a_plain_verdict(capsys):
    import linecache

    from minidl_book import puzzles

    source = ("def cumsum(a):\n    ...\n\n"  # the page's unsolved cell, then a later one
              "def compress(g, v):\n    return cumsum(g.float()) * v\n")
    filename = "/tmp/ipykernel_0/stub.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - as a notebook cell does
    verdict = puzzles.check(namespace["compress"])
    assert verdict.kind == "todo" and "from minidl_book.puzzles import cumsum_sol" in verdict.text
    assert "TypeError" not in capsys.readouterr().out


def test_the_one_line_challenge_is_a_note():
    from minidl_book.puzzles import one_line_note

    def ones(a):
        return (a * 0 + 1).float()

    assert one_line_note(ones).startswith("★")
    assert "2 lines" in one_line_note(PUZZLES["sum"].solution)


def test_a_later_puzzles_solution_is_named_as_later():
    from minidl_book.puzzles import diag_sol

    def sum(a):  # noqa: A001 - the puzzle's name
        return diag_sol(a.unsqueeze_dim(0) * a.unsqueeze_dim(1))

    verdict = PUZZLES["sum"].exercise(3).find_failure(sum)
    assert verdict.kind == "rule" and "diag comes after sum" in verdict.text
    assert "checker's objects" not in verdict.text and "diag_sol(" in verdict.call


def test_a_long_single_line_is_one_line_in_the_note():
    from minidl_book.puzzles import one_line_note

    def ones(a):
        return (Tensor.arange(0, a.shape[0], device=a.device) * 0 + 1 + 0 * 0 + 0 * 0).float()

    note = one_line_note(ones)
    assert "one line of" in note and "1 lines" not in note


def test_two_int_tensor_indices_get_a_puzzle_message_not_gather_select():
    from minidl import Tensor

    def diag(a):
        i = Tensor.arange(0, a.shape[0], device=a.device)
        return a[i, i]

    def flatten(a):
        k = Tensor.arange(0, a.shape[0] * a.shape[1], device=a.device)
        return a[k / a.shape[1], k % a.shape[1]]

    verdict = PUZZLES["diag"].exercise(5).find_failure(diag)
    assert verdict.kind == "error" and "gather/select" not in verdict.text
    assert "not one of diag's ops" in verdict.text and "line" in verdict.text
    verdict = PUZZLES["flatten"].exercise(5).find_failure(flatten)
    assert verdict.kind == "error" and "gather/select" not in verdict.text
    assert "one int-tensor index per indexing" in verdict.text


def test_a_shape_verdict_opens_the_shape_hint_a_value_verdict_the_puzzles_own(capsys):
    from minidl_book.puzzles import SHAPE_HINT

    def diag_no_reshape(a):  # right values, shape [i, 1]
        i = Tensor.arange(0, a.shape[0], device=a.device)
        off = i.unsqueeze_dim(1) != i.unsqueeze_dim(0)
        return a.mask_fill(off, 0.0).sum_dim(1)

    ex = PUZZLES["diag"].exercise(5)
    assert ex.check(diag_no_reshape).kind == "shape"
    assert SHAPE_HINT in capsys.readouterr().out
    ex = PUZZLES["diag"].exercise(5)
    assert ex.check(lambda a: a.sum_dim(1).reshape([a.shape[0]])).kind == "value"  # row sums
    out = capsys.readouterr().out
    assert SHAPE_HINT not in out and PUZZLES["diag"].hints[0] in out


def test_the_shape_hint_says_what_was_measured_and_names_sum_dim_only_when_used(capsys):
    from minidl_book.puzzles import SHAPE_HINT

    def triu_square(a):  # the column index from a.shape[0]: [i, i] where [i, j] is wanted
        n = a.shape[0]
        r = Tensor.arange(0, n, device=a.device).unsqueeze_dim(1)
        c = Tensor.arange(0, n, device=a.device).unsqueeze_dim(0)
        return a * (r <= c).float()

    verdict = PUZZLES["triu"].exercise(10).check(triu_square)
    out = capsys.readouterr().out
    assert verdict.kind == "shape"
    assert f"Yours is {verdict.found} where {verdict.expected} is wanted" in out
    assert "dim 1 differs" in out and SHAPE_HINT not in out and "sum_dim" not in out


def test_a_body_on_the_def_line_is_one_line_not_zero(tmp_path):
    import importlib.util

    from minidl_book.puzzles import one_line_note

    src = ("def ones(a): return a * 0 + 1\n\n"
           "def long(a): return (a * 0 + 1 + 0 * 0 + 0 * 0 + 0 * 0 + 0 * 0 + 0 * 0 + 0 * 0 + 0 * 0 + 0 * 0)\n\n"
           "def documented(a):\n    \"\"\"A docstring is not code.\"\"\"\n    # nor a comment\n"
           "    return a * 0 + 1\n\n"
           "def two(a):\n    b = a * 0\n    return b + 1\n")
    path = tmp_path / "one_liners.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("one_liners", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert one_line_note(mod.ones).startswith("★")
    assert "0 lines" not in one_line_note(mod.long) and "one line of" in one_line_note(mod.long)
    assert one_line_note(mod.documented).startswith("★")
    assert "2 lines" in one_line_note(mod.two)
