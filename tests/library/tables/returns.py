"""Bad-input table of the time axis of :mod:`rlfound.returns` and :mod:`rlfound.advantages`.

The rest of these two modules' rows are in tests/library/test_bad_input.py; the rows here are
those of the ``axis`` argument of the single-trajectory functions, checked on the valid calls
of that file (rewards of shape (3,)).
"""

from __future__ import annotations

from rlfound import advantages, returns
from tests.library.tables.kinds import case

CASES = [
    case(
        function,
        "axis",
        f"axis must be an integer in [-1, 1) for arrays of shape (3,); got {axis!r}",
        axis=axis,
    )
    for function in (
        returns.discounted_returns,
        advantages.td_errors,
        advantages.k_step_advantages,
        advantages.gae_recursive,
        advantages.gae_explicit,
    )
    for axis in (1, -2, 0.5, True)
]
