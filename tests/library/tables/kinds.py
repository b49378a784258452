"""The row types of the convention and bad-input tables (see :mod:`tests.library.tables`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

# What a call returns: a Python float, a float64 array, another documented array dtype, an
# Episodes, a GradientCheck, or a tuple of these.
FLOAT, ARRAY, INT_ARRAY, BOOL_ARRAY = "float", "float64 array", "int64 array", "bool array"
EPISODES, GRADIENT_CHECK = "Episodes", "GradientCheck"
REPORT = "report"  # a pair of dicts: name -> Python float, name -> str (diagnostics.report)
FIGURE = "figure"  # a matplotlib Figure (diagnostics.plot_history)
BATCH = "batch"  # a dict of float64, int64 and bool ndarrays (the chapter-13 training batch)


@dataclasses.dataclass
class Example:
    """One valid call of a public function, and the kind of what it returns."""

    function: Callable[..., Any]
    kwargs: dict[str, Any]
    returns: Any  # one of the kinds above, or a tuple of them

    @property
    def id(self) -> str:
        return self.function.__name__


def case(function, argument, prefix, **changes):
    """One bad-input row: ``function`` called with its valid arguments updated by ``changes``
    must raise ``ValueError`` whose message starts with ``prefix`` (which names ``argument``)."""
    label = f"{function.__name__}-{argument}-{len(changes)}:" + ",".join(sorted(changes))
    return pytest.param(function, argument, changes, prefix, id=label)


def above_zero(function, argument: str, values: list[float]):
    """The bad-input row of a log-probability argument given ``values`` with an entry above 0:
    the message names the argument, the first such entry and its index."""
    index = next(i for i, value in enumerate(values) if value > 0)
    got = f"got {values[index]} at index ({index},)"
    return case(
        function,
        argument,
        f"{argument} must be log-probabilities (<= 0); {got}",
        **{argument: values},
    )
