"""The intro's word checkers: right answers written as sentences pass, the wrong ones the
readers tried do not, and a sentence with no single name in it gets a request for the
name instead of a bare ✗."""

import pytest

from minidl_book.intro_answers import (
    NameExercise,
    box_hedged,
    box_unclear,
    skipped_box,
)

SKIPPED = "minidl.autodiff"


@pytest.mark.parametrize("answer", [
    "autodiff", "minidl.autodiff", "Autodiff[Flex]", "it skips minidl.autodiff",
    "minidl.autodiff is not crossed", "it doesn't cross minidl.autodiff",
    "it doesn’t cross minidl.autodiff", "minidl.autodiff is never reached",
    "skips autodiff and nothing else", "minidl.autodiff and nothing else",
    "it does not go through minidl.autodiff", "minidl.autodiff isn't crossed",
    "no graph is recorded, so minidl.autodiff is skipped", "only minidl.autodiff",
    "No, it skips minidl.autodiff", "no - autodiff is skipped", "No. minidl.autodiff",
    "no, minidl.autodiff", "No – autodiff", "No autodiff", "Nope: it skips autodiff",
    "minidl.autodiff; the default body still runs",
    # "isn't in the chain" names the box as skipped, as "isn't crossed" does
    "autodiff (Autodiff[Flex] isn't in the chain)", "minidl.autodiff is not in the path",
])
def test_the_skipped_box_named_in_a_sentence_passes(answer):
    assert skipped_box(answer, SKIPPED)
    assert not box_unclear(answer)


@pytest.mark.parametrize("answer", [
    "none", "minidl.backend", "dispatch", "all seven, autodiff records nothing",
    "not minidl.autodiff", "it still crosses minidl.autodiff",
    "none: it crosses all seven, autodiff included", "no, it skips nothing",
    "minidl.autodiff and minidl.backend", "it skips minidl.dispatch, not minidl.autodiff",
    "it doesn't skip autodiff", "it doesn't cross minidl.dispatch",
    "minidl.autodiff is not skipped", 7, None, "minidl.dispatch isn't in the chain",
    # "does it still cross all seven?": a yes says none is skipped, whatever follows
    "yes", "Yes: it skips minidl.autodiff", "yes, all seven, autodiff included",
    "no, it skips minidl.dispatch", "No - minidl.backend", "no, none",
    # on Device.flex() the default body still runs: it is not skipped too
    "minidl.autodiff, and the default body too", "autodiff and the protocol's default body",
])
def test_a_wrong_box_is_refused(answer):
    assert not skipped_box(answer, SKIPPED)


@pytest.mark.parametrize("answer", [
    "minidl.backends.flex is reached directly, skipping minidl.autodiff",
    "it goes straight to flex, bypassing autodiff",
    "minidl.autodiff — Dispatch calls Flex directly",
    "minidl.autodiff - dispatch calls flex directly",
])
def test_a_box_named_after_skipping_or_a_dash_passes(answer):
    """A reader's right sentence: Flex named first, the skipped box after "skipping"
    (it was read as "Flex"); a dash ends a clause as a comma does."""
    assert skipped_box(answer, SKIPPED) and not box_unclear(answer)


@pytest.mark.parametrize("answer", [
    "flex is reached directly, skipping minidl.dispatch",
    "skipping minidl.backends.flex, not autodiff",
    "minidl.backend — Dispatch calls Flex directly",
])
def test_the_wrong_box_after_skipping_is_refused(answer):
    assert not skipped_box(answer, SKIPPED)


def test_unclear_reads_only_sentences():
    assert box_unclear("it still crosses minidl.autodiff")
    assert box_unclear("Flex and autodiff")
    assert not box_unclear("none") and not box_unclear("minidl.backend")
    assert not box_unclear("it skips minidl.dispatch, not minidl.autodiff")  # clear, wrong


def test_a_sentence_without_one_name_is_asked_for_the_name(capsys):
    runs = []
    ex = NameExercise("Which box?", truth=lambda: runs.append(1) or SKIPPED,
                      compare=skipped_box, unclear=box_unclear, ask="Write just the name.",
                      hint="the hint")
    assert not ex.check("it still crosses minidl.autodiff")
    out = capsys.readouterr().out
    assert out.startswith("✗") and "Write just the name." in out and "the hint" not in out
    assert not runs  # no experiment for an answer it cannot read
    assert ex.check("it doesn't cross minidl.autodiff")
    assert not ex.check("minidl.backend")
    assert "the hint" in capsys.readouterr().out


def test_a_device_object_is_read_as_its_name():
    from minidl import Device

    ex = NameExercise("Where?", truth=lambda: "Device.flex()",
                      compare=lambda p, t: p == t, unclear=lambda p: False,
                      ask="Write just the name.", hint="the hint")
    assert ex.accepts(Device.flex(), "Device.flex()")
    assert not ex.accepts(Device.flex().autodiff(), "Device.flex()")


def test_an_answer_that_is_no_string_is_asked_for_a_string(capsys):
    runs = []
    ex = NameExercise("Which box?", truth=lambda: runs.append(1) or SKIPPED,
                      compare=skipped_box, unclear=box_unclear, ask="Write just the name.",
                      hint="the hint")
    assert not ex.check(["minidl.autodiff"])
    out = capsys.readouterr().out
    assert "not a string" in out and "the hint" not in out and not runs


@pytest.mark.parametrize("answer", ["minidl.autodiff, minidl.backend", "minidl.autodiff; minidl.backend",
                                    "autodiff, flex", "minidl.autodiff,minidl.nn"])
def test_a_list_of_boxes_is_not_the_one_skipped_box(answer):
    """A comma list names every box in it, not only the first (a reader's 'autodiff,
    backend' was read as 'autodiff')."""
    assert not skipped_box(answer, "minidl.autodiff")


@pytest.mark.parametrize("answer", ["autodiff, since it records nothing",
                                    "Autodiff[Flex], the recording backend"])
def test_a_clause_that_explains_is_not_a_list(answer):
    assert skipped_box(answer, "minidl.autodiff")


def test_a_bare_no_is_asked_for_the_box():
    # right so far, but which box? asked for the name, not judged
    assert box_unclear("No") and box_unclear("no.") and not skipped_box("No", SKIPPED)
    assert not box_unclear("Yes") and not box_unclear("yes: it skips minidl.autodiff")


@pytest.mark.parametrize("answer", [
    "it crosses all seven", "It crosses all 7 boxes", "every box", "it goes through all of them",
])
def test_all_seven_in_words_is_judged_wrong_not_asked_again(answer):
    """"It crosses all seven" answers the question (none skipped): ✗ and the hint, not a
    request for a name."""
    assert not box_unclear(answer)
    assert not skipped_box(answer, SKIPPED)


@pytest.mark.parametrize("answer", [
    "It crosses all boxes except minidl.autodiff",
    "It still crosses all of them except minidl.autodiff",
    "it still crosses 6, skipping minidl.autodiff", "It does not still cross minidl.autodiff",
    "it crosses every box except the autodiff one", "all boxes apart from minidl.autodiff",
    "every box other than autodiff", "It crosses all boxes except for minidl.autodiff",
])
def test_crossing_all_but_the_skipped_box_passes(answer):
    """Reader 4's refused phrasings: "crosses … except X" and a leading "it still crosses"
    were read as "none"; they name X as the one box skipped."""
    assert skipped_box(answer, SKIPPED) and not box_unclear(answer)


@pytest.mark.parametrize("answer", [
    "It crosses all boxes except minidl.dispatch", "it still crosses all seven",
    "it still crosses 6, skipping minidl.backend", "It does not still cross minidl.nn",
    "all boxes except minidl.autodiff and minidl.backend",
])
def test_crossing_all_but_another_box_is_refused(answer):
    assert not skipped_box(answer, SKIPPED)


@pytest.mark.parametrize("answer", [
    "skip: minidl.autodiff", "It skips Autodiff[Flex] and goes straight to Flex",
    "It goes Dispatch -> Flex directly", "nn -> tensor -> dispatch -> flex",
    "Dispatch → Flex", "skips autodiff, calls Flex",
])
def test_a_skip_said_with_a_colon_an_onward_call_or_a_route_passes(answer):
    assert skipped_box(answer, SKIPPED) and not box_unclear(answer)


@pytest.mark.parametrize("answer", [
    "Dispatch -> Autodiff -> Flex",  # a route that skips nothing
    "tensor -> flex directly",  # skips dispatch too
    "skip: minidl.dispatch", "It skips Dispatch and goes straight to Autodiff",
    "minidl.backend — Dispatch calls Flex directly",
])
def test_a_route_or_skip_of_the_wrong_boxes_is_refused(answer):
    assert not skipped_box(answer, SKIPPED)


@pytest.mark.parametrize("answer", [
    "minidl.autodiff (but I'm unsure, maybe none)", "minidl.autodiff or none",
    "minidl.autodiff or minidl.dispatch", "none? perhaps minidl.autodiff",
])
def test_a_hedge_giving_two_answers_is_refused(answer, capsys):
    assert box_hedged(answer) and not skipped_box(answer, SKIPPED)
    ex = NameExercise("Which box?", truth=lambda: SKIPPED, compare=skipped_box,
                      unclear=box_unclear, hedged=box_hedged, ask="Write just the name.",
                      hint="the hint")
    assert not ex.check(answer)
    out = capsys.readouterr().out
    assert out.startswith("✗ Two answers") and "the hint" not in out


def test_one_answer_with_a_doubt_is_no_hedge():
    assert not box_hedged("minidl.autodiff, but I'm unsure")
    assert skipped_box("minidl.autodiff, but I'm unsure", SKIPPED)


@pytest.mark.parametrize("answer", [
    "skips nothing but autodiff", "it skips nothing but minidl.autodiff",
    "none except minidl.autodiff",
])
def test_nothing_but_the_skipped_box_passes(answer):
    """Reader r3's "skips nothing but autodiff" was read as "none": it names one box."""
    assert skipped_box(answer, SKIPPED) and not box_unclear(answer)


@pytest.mark.parametrize("answer", ["skips nothing but minidl.nn", "nothing", "none"])
def test_nothing_but_another_box_or_nothing_is_refused(answer):
    assert not skipped_box(answer, SKIPPED)


# reader r4: the box named by its job ("the recording backend") is Autodiff's
@pytest.mark.parametrize("answer", [
    "the recording backend (Autodiff)", "it skips the recording backend",
    "the recording backend", "skips the recorder",
])
def test_the_skipped_box_named_by_its_job_passes(answer):
    assert skipped_box(answer, SKIPPED) and not box_unclear(answer)


@pytest.mark.parametrize("answer", [
    "the recording backend and minidl.nn", "none: the recording backend runs too",
    "it skips minidl.backend, the recording one stays",
])
def test_the_recording_backend_beside_another_box_or_none_is_refused(answer):
    assert not skipped_box(answer, SKIPPED)
