"""The burn names the dispatch chapter's kinds-or-devices figure draws: each is cited at a
line of burn-dispatch v0.22.0-pre.2 that holds it (checked in the mirror when it is on the
machine, else the constant list below documents them), a shifted line or a changed name
is caught, and burn's column draws only cited names, with the mixed pair's arm a panic."""

from __future__ import annotations

import re

import pytest

from minidl_book import burn_dispatch_kinds as kinds
from minidl_book.burn_dispatch_kinds import SOURCE, Cited, burn_column, missing

#: The figure's burn names (what the test documents when the mirror is absent).
DOCUMENTED = ["DispatchTensor", "checkpointing", "DispatchTensorKind", "Flex", "NdArray",
              "Autodiff", "BackendTensor::Float", "BackendTensor::Autodiff",
              "autodiff float", "arm (Autodiff, Autodiff)", "arm (Backend, Backend)",
              "arm (lhs, rhs): panic"]

needs_mirror = pytest.mark.skipif(not kinds.mirror_present(),
                                  reason="burn's mirror is not on this machine")


def test_the_cited_names_are_the_documented_list():
    assert list(SOURCE) == DOCUMENTED
    assert all(c.file in ("src/tensor.rs", "src/macros.rs") for c in SOURCE.values())


@needs_mirror
def test_every_cited_line_holds_its_text_at_the_tag():
    assert missing() == []


@needs_mirror
@pytest.mark.parametrize("name", ["Autodiff", "Flex", "arm (lhs, rhs): panic"])
def test_a_shifted_line_is_caught(name):
    cited = SOURCE[name]
    shifted = {name: cited._replace(line=cited.line + 1)}
    assert missing(shifted) == [name]


@needs_mirror
def test_a_changed_name_is_caught():
    wrong = {"Autodiff": SOURCE["Autodiff"]._replace(text="Autodiff(Arc<DispatchTensorKind>)"),
             "Flex": SOURCE["Flex"]._replace(text="Flex(FlexTensor),")}
    assert missing(wrong) == ["Autodiff", "Flex"]


def test_missing_reads_a_line_however_indented():
    source = {"a": Cited("a", "f.rs", 2, "Flex(BackendTensor<Flex>),"),
              "b": Cited("b", "f.rs", 3, "pub enum X {"),
              "c": Cited("c", "f.rs", 9, "anything")}
    text = "x\n\t\t   Flex(BackendTensor<Flex>),   // ok\npub enum Y {\n"
    assert missing(source, read=lambda file: text) == ["b", "c"]


def test_burns_column_draws_only_cited_names_and_panics_on_the_mixed_pair():
    inputs, arms = burn_column("x_plain", "y_ad")
    cited = {part for n in SOURCE for part in n.split("::")}
    words = {w for _, layers in inputs for layer in layers
             for w in re.findall(r"[A-Z]\w+", layer)}
    assert words <= cited | {"Box", "None", "Some"}, words - cited
    (plain, _), (tracked, _) = inputs
    assert plain == "x_plain (plain)" and tracked == "y_ad (autodiff)"
    assert [layer.split("\n")[0] for layer in inputs[1][1]][1:3] == [
        "kind: Autodiff(Box)", "Flex(..)"]  # an autodiff float: Autodiff(Box(Flex(..)))
    taken = [(text, outcome) for text, outcome, on in arms if on]
    assert taken[-1][1] == "error" and "panic!" in taken[-1][0]
    assert "(Flex, Autodiff)" in taken[-1][0]
    assert sum(outcome == "error" for _, outcome, _ in arms) == 1


def test_the_figure_draws_both_columns():
    import matplotlib

    matplotlib.use("Agg")
    from minidl_book.dispatch_figures import kinds_and_devices

    inputs, arms = burn_column()
    fig = kinds_and_devices([("burn", inputs, arms, False),
                             ("minidl", [("x", ["DispatchTensor", "ndarray"])],
                              [("route", "", True), ("Flex", "plain", True)], True)])
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert fig.axes[0].get_title() == "burn" and fig.axes[1].get_title() == "minidl"
    assert any("panic!" in t for t in texts) and "route" in texts
