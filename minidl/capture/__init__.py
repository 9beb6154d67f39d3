"""Capture and replay: a step recorded once as its backend program, replayed without the
Python stack above the kernels (burn's ``burn::tensor::capture`` / ``Graph``)."""

from __future__ import annotations

from minidl.capture.errors import CaptureError, ReplayMismatchError
from minidl.capture.graph import Graph, capture

__all__ = ["CaptureError", "Graph", "ReplayMismatchError", "capture"]
