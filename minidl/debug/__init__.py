"""Seeing inside minidl: the lldb and nm of this book (see DESIGN.md §4).

``minidl.debug.flowchart`` draws call paths and decision diagrams as SVG, in pure Python.
"""
