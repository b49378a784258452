"""The late policy: how many days late a submission is, and what that costs.

``late_days = ceil((submitted - due - grace - extension) / 1 day)``, 0 when that is not
positive; the score is multiplied by ``max(0, 1 - late_penalty_per_day * late_days)``, and is
0 when ``late_days`` exceeds ``max_late_days``. Times are compared as instants, so a due date
in New York and a submission time in Berlin compare correctly. The arithmetic is in whole
microseconds, so a submission exactly on a day boundary is never pushed over it by rounding.
"""

from __future__ import annotations

import datetime as dt

from rlfound.grading.course.assignment import Assignment

__all__ = ["late_days", "multiplier"]

_DAY = dt.timedelta(days=1)
_MICROSECONDS_PER_DAY = 86_400 * 10**6


def late_days(assignment: Assignment, submitted: dt.datetime, extension_days: float = 0.0) -> int:
    """Days late (0 when on time), as the ceiling of the time past due, grace and extension.

    Examples
    --------
    >>> import datetime as dt
    >>> from rlfound.grading.course.assignment import Assignment
    >>> due = dt.datetime(2026, 3, 2, 23, 59, tzinfo=dt.timezone.utc)
    >>> hw = Assignment("hw", (), due, grace_minutes=10)
    >>> late_days(hw, due + dt.timedelta(minutes=10))
    0
    >>> late_days(hw, due + dt.timedelta(minutes=10, seconds=1))
    1
    >>> late_days(hw, due + dt.timedelta(days=2, minutes=10, seconds=1), extension_days=1)
    2
    """
    past = submitted - assignment.due - dt.timedelta(minutes=assignment.grace_minutes)
    past -= dt.timedelta(days=extension_days)
    microseconds = past // dt.timedelta(microseconds=1)
    if microseconds <= 0:
        return 0
    return -(-microseconds // _MICROSECONDS_PER_DAY)


def multiplier(assignment: Assignment, days: int) -> float:
    """The fraction of the score kept after ``days`` late days.

    Examples
    --------
    >>> import datetime as dt
    >>> from rlfound.grading.course.assignment import Assignment
    >>> due = dt.datetime(2026, 3, 2, tzinfo=dt.timezone.utc)
    >>> hw = Assignment("hw", (), due, late_penalty_per_day=0.25, max_late_days=2)
    >>> [multiplier(hw, d) for d in range(5)]
    [1.0, 0.75, 0.5, 0.0, 0.0]
    """
    if assignment.max_late_days is not None and days > assignment.max_late_days:
        return 0.0
    return max(0.0, 1.0 - assignment.late_penalty_per_day * days)
