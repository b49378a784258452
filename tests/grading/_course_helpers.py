"""What the course tests share: the two-exercise assignment they grade."""

from __future__ import annotations


def hw1_toml(*, penalty: float, max_late_days: int, grace_minutes: float | None = None) -> str:
    """The text of ``hw1.toml``: gae-recursion and group-advantages, due 2026-03-02 23:59 in
    New York (UTC-5), with the given late policy."""
    text = (
        'name = "Homework 1"\n'
        'exercises = ["gae-recursion", "group-advantages"]\n'
        "due = 2026-03-02T23:59:00-05:00\n"
        f"late_penalty_per_day = {penalty}\n"
        f"max_late_days = {max_late_days}\n"
    )
    if grace_minutes is not None:
        text += f"grace_minutes = {grace_minutes:g}\n"
    return text
