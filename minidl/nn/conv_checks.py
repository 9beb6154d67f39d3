"""Checks the conv configs share (burn-nn ``conv/checks.rs``)."""

from __future__ import annotations


def check_channels_div_groups(owner: str, channels_in: int, channels_out: int, groups: int) -> None:
    """burn's ``checks_channels_div_groups``: both channel counts must be divisible by groups."""
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"{owner}: groups must be a positive integer, got {groups!r}")
    if channels_in % groups != 0 or channels_out % groups != 0:
        raise ValueError(
            "Both channels must be divisible by the number of groups. "
            f"Got channels_in={channels_in}, channels_out={channels_out}, groups={groups}"
        )
