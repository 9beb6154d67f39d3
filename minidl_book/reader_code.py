"""The reader's code, as the checker sees it: its files, its frames, its lines, its NumPy.

A verdict points at the reader's own line and never further. To do that the checker needs
to know which code is the reader's (the function, or the methods of the class, nested
functions included; code the library wrote does not count even when a base class copied it)
and where in it a call or an exception happened.
"""

from __future__ import annotations

import inspect
import linecache
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from minidl.debug.names import display_path

__trace_hide__ = True

__all__ = ["numpy_uses", "reader_codes", "reader_frame", "show_source", "site", "solution_files",
           "yours_or_reference"]


def show_source(source: str) -> None:
    """Show a reference solution's source: in a notebook as a code block of its own (the page's
    copy button then copies the code and nothing else, not the verdict printed after it);
    elsewhere printed."""
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:
        get_ipython = None  # noqa: N806 - no IPython: printed below
    if get_ipython is not None and get_ipython() is not None:
        display(Markdown(f"```python\n{source}\n```"))
    else:
        print(source)


def solution_files(solution: Any) -> dict[str, str]:
    """The files of the reader's code (display path → file name): the function's, or every
    method's of a class. Frames in these files are "the reader's frames"."""
    return {display_path(code.co_filename): code.co_filename for code, _ in _codes(solution)}


def reader_codes(solution: Any) -> set:
    """The code objects of the reader's solution (nested functions included): its frames are
    the reader's wherever its file is (a planted solution kept in the book's own files)."""
    return {code for code, _ in _codes(solution)}


def _codes(solution: Any) -> list:
    """The code objects of the reader's function, or of the methods of the reader's class and
    of its bases written outside the library (nested functions included). Code copied from
    the library's own files (a base made of NdArray's ops, say) is not the reader's."""
    roots = []
    if inspect.isclass(solution):
        for klass in solution.__mro__:
            if klass is not solution and (klass.__module__.startswith("minidl.") or klass is object):
                continue
            for value in vars(klass).values():
                # a decorator's wrapper (``@config`` wraps ``init``) leads to the reader's own
                fn = inspect.unwrap(getattr(value, "__func__", value))
                if hasattr(fn, "__code__"):
                    roots.append((fn.__code__, fn.__globals__))
    else:
        fn = getattr(solution, "__func__", solution)
        if not hasattr(fn, "__code__"):
            fn = type(solution).__call__
        if hasattr(fn, "__code__"):
            roots.append((fn.__code__, fn.__globals__))
    out, stack = [], [r for r in roots if not _library_file(r[0].co_filename)]
    while stack:
        code, glob = stack.pop()
        out.append((code, glob))
        stack += [(c, glob) for c in code.co_consts if hasattr(c, "co_code")]
    return out


def _library_file(filename: str) -> bool:
    path = display_path(filename).replace("\\", "/")
    return path.startswith("minidl/") and not path.startswith("minidl_book/")


def numpy_uses(solution: Any) -> list[tuple[str, str]]:
    """``[("np.exp", "at line 7 of forward: `...`")]``: NumPy names the reader's code loads."""
    import dis
    import types

    found = []
    for code, glob in _codes(solution):
        line = code.co_firstlineno
        instructions = list(dis.get_instructions(code))
        for k, ins in enumerate(instructions):
            if ins.starts_line:
                line = ins.starts_line
            if ins.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
                continue
            value = glob.get(ins.argval)
            module = value.__name__ if isinstance(value, types.ModuleType) else \
                getattr(value, "__module__", None) or ""
            if module == "numpy" or module.startswith("numpy."):
                text = linecache.getline(code.co_filename, line).strip()
                name = ins.argval
                after = instructions[k + 1] if k + 1 < len(instructions) else None
                if after is not None and after.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                    name = f"{name}.{after.argval}"
                found.append((f"{name} (NumPy)",
                              f"at line {line} of {code.co_name}" + (f": `{text}`" if text else "")))
    return found


def reader_frame(tb, files: Mapping[str, str]):
    """The innermost traceback entry in the reader's code, or ``None``: the solution's files,
    or any notebook cell (a reader's module class may sit in another cell than the config
    the checker was given)."""
    found = None
    for entry in traceback.extract_tb(tb):
        if display_path(entry.filename) in files or _is_cell(entry.filename):
            found = entry
    return found


def _is_cell(filename: str) -> bool:
    """A file IPython made for a notebook cell (``/tmp/ipykernel_<pid>/<hash>.py``)."""
    return "/ipykernel_" in filename or filename.startswith("<ipython-input-")


def site(frame, files: Mapping[str, str]) -> str:
    """``at line 4 of outer: `return a * b```: where the reader's code made a call."""
    text = linecache.getline(files.get(frame.path, frame.path), frame.line).strip()
    name = frame.name.rsplit(".", 1)[-1]
    return f"at line {frame.line} of {name}" + (f": `{text}`" if text else "")


def yours_or_reference(yours: Any, reference: Any, name: str, right: Callable[[Any], bool]) -> Any:
    """The reader's ``yours`` when it is defined and ``right(yours)`` holds (a chapter's own
    example), else ``reference``; prints which. A chapter runs what it returns on top of a
    build-it, so an unfinished or wrong answer (one that raises, too) falls back quietly."""
    try:
        if yours is not None and right(yours):
            print(f"using your {name}")
            return yours
    except Exception:  # noqa: BLE001 - an unfinished answer falls back to the reference
        pass
    print(f"using the reference {name} (until yours passes)")
    return reference
