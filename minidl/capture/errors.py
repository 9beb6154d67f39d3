"""The two errors of capture: refused at capture time, and a replay that does not fit."""

from __future__ import annotations


class CaptureError(RuntimeError):
    """The step cannot be captured as it is; the message names the op and says why."""


class ReplayMismatchError(ValueError):
    """A replay's inputs differ from the capture's (shape, dtype, device, a branch taken):
    refused, as tinygrad's TinyJit refuses mismatched args, rather than recaptured."""
