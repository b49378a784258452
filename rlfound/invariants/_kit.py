"""The kit's shared parts: the invariants, what a check returns or raises, the case
record that names a failing case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from rlfound._validation import (
    MAX_ITERATIONS,
    check_positive_int,
    check_rng,
    check_size,
)

#: The ten invariants (chapter 13; section 19 of the source), invariant k at index k - 1.
INVARIANTS = (
    "a constant reward gives a zero baseline-centered update",
    "adding a constant to a group's rewards leaves its advantages unchanged",
    "masked tokens contribute exactly zero loss and gradient",
    "behavior log-probabilities are never rebuilt from re-tokenized text",
    "at theta = theta_old every valid importance ratio is 1",
    "padding or repacking leaves the globally normalized loss unchanged",
    "a terminal state never bootstraps and a truncation follows the configured rule",
    "the distributed reduction equals the loss of the concatenated batch",
    "a step's ratios use the stored old log-probabilities, unchanged and tagged with their "
    "policy version",
    "the batch reconstructs the episode's events in order",
)

#: The layout changes of :func:`check_padding_invariance`, and what each does.
PADDING_CHANGES = {
    "pad": "padding every row with more masked columns",
    "empty-rows": "adding rows without tokens",
    "reorder": "reordering the rows",
    "shift": "moving every sequence to the right end of its row (left padding)",
    "pack": "packing all sequences back to back into one row",
}

#: The vocabulary of the generated episodes: token id i is ``TOY_VOCABULARY[i]``. Text
#: decoded from sampled tokens such as ("a", "b") re-tokenizes as the single token "ab".
TOY_VOCABULARY = ("a", "b", "ab", "c", ".", " ", "?", "!")


class InvariantViolation(AssertionError):
    """The function under test breaks an invariant.

    Attributes
    ----------
    invariant : int
        Which invariant, 1 to 10 (its statement is ``INVARIANTS[invariant - 1]``).
    """

    def __init__(self, invariant: int, message: str):
        super().__init__(message)
        self.invariant = invariant


class InvariantCheck(NamedTuple):
    """What a passing check measured.

    Attributes
    ----------
    max_error : float
        The largest deviation from the invariant over all cases, in the units of the
        quantity compared (0.0 for the exact checks).
    errors : numpy.ndarray of float64, shape (num_cases,)
        The largest deviation of every case.
    sizes : numpy.ndarray of int64, shape (num_cases,)
        How many entries (rewards, tokens, steps) every case checked.
    """

    max_error: float
    errors: np.ndarray
    sizes: np.ndarray


# --- reporting ----------------------------------------------------------------------------------


class _Case:
    """Formats the message of a failure on one case."""

    def __init__(self, invariant: int, index: int, total: int, label: str):
        self.invariant, self.index, self.total, self.label = (
            invariant,
            index,
            total,
            label,
        )

    def fail(self, detail: str) -> InvariantViolation:
        where = (
            f"case {self.index + 1} of {self.total}"
            if self.index < self.total
            else "the given batch"
        )
        return InvariantViolation(
            self.invariant,
            f"invariant {self.invariant} ({INVARIANTS[self.invariant - 1]}) fails on {where} "
            f"({self.label}): {detail}",
        )

    def call(self, function: Callable, name: str, *args: Any) -> Any:
        """``function(*args)``; whatever it raises is a failure of the function under test."""
        try:
            return function(*args)
        except InvariantViolation:
            raise
        except (
            Exception
        ) as error:  # the function under test failed on valid input
            raise self.fail(
                f"{name} raised {type(error).__name__}: {error}"
            ) from error

    def scalar(self, value: Any, name: str) -> float:
        array = np.asarray(value)
        if (
            array.ndim != 0
            or array.dtype.kind not in "iuf"
            or not np.isfinite(array)
        ):
            raise self.fail(
                f"{name} returned {value!r}; a finite real number was expected"
            )
        return float(array)

    def array(
        self, value: Any, name: str, shape: tuple[int, ...], what: str
    ) -> np.ndarray:
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise self.fail(
                f"{name} returned {value!r}; an array of numbers was expected"
            ) from None
        if array.shape != shape:
            raise self.fail(
                f"{name} returned shape {array.shape}; expected {shape} ({what})"
            )
        return array


def _plain(value: Any) -> str:
    """A NumPy scalar as its Python value, for messages."""
    return repr(np.asarray(value).item())


def _result(errors: list[float], sizes: list[int]) -> InvariantCheck:
    errors_array = np.asarray(errors, dtype=np.float64)
    return InvariantCheck(
        max_error=float(errors_array.max(initial=0.0)),
        errors=errors_array,
        sizes=np.asarray(sizes, dtype=np.int64),
    )


def _check_common(
    rng: Any, num_cases: Any
) -> tuple[np.random.Generator, int]:
    num_cases = check_positive_int(num_cases, "num_cases")
    return check_rng(rng), check_size(
        num_cases, "num_cases", MAX_ITERATIONS, "cases"
    )
