"""The dispatch chapter's forwarder-generator build-it: the reference passes, and so does a
generator written another way; each planted wrong generator gets its verdict, which shows the
scenario and the generated source, never the random arrays; Dispatch is as it was after
every run, even a failing one."""

from __future__ import annotations

import pytest

from minidl.dispatch import Dispatch
from minidl.dispatch import route as route_module
from minidl_book import build_forwarder
from minidl_book.build_forwarder import args_text


def test_reference_generator_passes():
    assert build_forwarder.exercise().find_failure(build_forwarder.write_forwarder) is None


def via_locals(op, signature):
    """Another right generator: the body hands route its own locals, cls removed."""
    return (f"def {op}(cls, {str(signature)[1:-1]}):\n"
            f"    args = dict(locals())\n    del args['cls']\n    return route({op!r}, args)\n")


def test_a_generator_written_another_way_passes():
    assert build_forwarder.exercise().find_failure(via_locals) is None


@pytest.mark.parametrize("planted", sorted(build_forwarder.PLANTED))
def test_planted_wrong_generator_gets_its_verdict(planted):
    wrong, kind = build_forwarder.PLANTED[planted]
    verdict = build_forwarder.exercise().find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    text = verdict.render()
    assert "Traceback" not in text and "scenario = " in text
    assert "_x =" not in text and "_w =" not in text


def test_the_verdict_shows_the_generated_source():
    verdict = build_forwarder.exercise().find_failure(build_forwarder.op_name_unquoted)
    assert "route(linear, {" in verdict.text and "at its line 2" in verdict.text


def test_dispatch_and_listeners_are_restored():
    before = dict(vars(Dispatch))
    build_forwarder.exercise().find_failure(build_forwarder.op_name_unquoted)
    assert dict(vars(Dispatch)) == before and not route_module.ROUTE_LISTENERS


def forwarder_source(first: str | None = "cls", decorator: str = "@classmethod\n"):
    """A reader's forwarder as source: ``decorator`` above a def whose first parameter is
    ``first`` (none when ``None``), then the protocol op's own parameters, calling ``route``."""

    def write(op, signature):
        params = ", ".join(str(p) for p in signature.parameters.values())
        head = f"{first}, {params}" if first else params
        return (f"{decorator}def {op}({head}):\n"
                f"    return route({op!r}, {args_text(signature.parameters)})\n")

    return write


#: the shape of the page's own forwarder: `@classmethod` above the def
decorated = forwarder_source()


def test_a_decorated_def_passes():
    assert build_forwarder.exercise().find_failure(decorated) is None


def test_args_text_quotes_each_name():
    assert args_text(["x", "bias"]) == "{'x': x, 'bias': bias}"


def staticmethod_forwarder(op, signature):
    """`@staticmethod` above a def without cls: the verdict says so, not "no function"."""
    params = ", ".join(str(p) for p in signature.parameters.values())
    return (f"@staticmethod\ndef {op}({params}):\n"
            f"    return route({op!r}, {args_text(signature.parameters)})\n")


def test_a_staticmethod_is_told_it_gets_no_cls():
    verdict = build_forwarder.exercise().find_failure(staticmethod_forwarder)
    assert verdict is not None and verdict.kind == "check"
    assert "@staticmethod" in verdict.text and "no cls" in verdict.text
    assert "defines no function" not in verdict.text


#: the page's forwarder with its first parameter named `self`: a classmethod still
self_forwarder = forwarder_source(first="self")
#: no first parameter at all: the op's own arguments would land one place off
no_first_forwarder = forwarder_source(first=None, decorator="")


def test_any_name_for_the_first_parameter_passes():
    assert build_forwarder.exercise().find_failure(self_forwarder) is None


def test_a_forwarder_without_a_first_parameter_is_refused():
    verdict = build_forwarder.exercise().find_failure(no_first_forwarder)
    assert verdict is not None and "cls, then the protocol's" in verdict.text
