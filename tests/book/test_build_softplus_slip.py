"""The softplus build-it names the ``saves = ("tensor")`` slip (a string, not a tuple)."""

from minidl_book import build_softplus


def test_saves_written_as_a_string_is_named():
    verdict = build_softplus.exercise(3).find_failure(build_softplus.SoftplusSavesString)
    assert verdict.kind == "check"
    assert "is the string 'tensor', not a tuple" in verdict.text
    assert "('tensor',)" in verdict.text


def test_a_tuple_still_passes():
    assert build_softplus.exercise(3).find_failure(build_softplus.Softplus) is None
