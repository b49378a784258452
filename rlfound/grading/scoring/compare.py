"""Compare a student's answer with the expected one, in the grader's own process.

Order of the rules: shape first (an answer of the wrong shape fails even if it would
broadcast), then finiteness, then a tolerance scaled to the expected value,
``|got - expected| <= atol + rtol * |expected|`` elementwise. The message names what a student
needs to fix: the shapes, or the largest absolute and relative errors and where they occur.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlfound.gradcheck import numerical_gradient

__all__ = ["Verdict", "compare", "numerical_gradient"]


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Whether an answer matches, and a message for the student."""

    passed: bool
    message: str


def _index(index: tuple) -> str:
    return "(" + ", ".join(str(int(i)) for i in index) + (",)" if len(index) == 1 else ")")


def _number(x: float) -> str:
    return f"{x:.6g}"


def compare(got: np.ndarray, expected: np.ndarray, *, rtol: float, atol: float) -> Verdict:
    """Compare two float64 arrays (the student's answer first) without broadcasting.

    Parameters
    ----------
    got : numpy.ndarray
        The student's answer, already coerced to float64.
    expected : numpy.ndarray
        The reference answer, float64.
    rtol, atol : float
        Tolerances: entry ``i`` passes when ``|got_i - expected_i| <= atol + rtol |expected_i|``.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> compare(np.array([1.0]), np.array(1.0), rtol=1e-7, atol=0.0).message
    'expected shape (), got shape (1,)'
    >>> compare(np.array([1.0, 2.5]), np.array([1.0, 2.0]), rtol=1e-7, atol=0.0).message
    'max abs error 0.5, max rel error 0.2; worst at index (1,): expected 2, got 2.5'
    """
    if got.shape != expected.shape:
        return Verdict(False, f"expected shape {expected.shape}, got shape {got.shape}")
    bad = ~np.isfinite(got) & np.isfinite(expected)
    if bad.any():
        index = tuple(np.argwhere(bad)[0])
        where = f" at index {_index(index)}" if got.ndim else ""
        return Verdict(False, f"got a non-finite value {float(got[index])}{where}")
    if got.size == 0:
        return Verdict(True, "both are empty")
    # Infinite expected values and huge errors are legitimate here, not numerical accidents.
    with np.errstate(all="ignore"):
        error = np.abs(got - expected)
        error = np.where(np.isfinite(expected), error, np.where(got == expected, 0.0, np.inf))
        allowed = atol + rtol * np.abs(np.where(np.isfinite(expected), expected, 0.0))
        scale = np.maximum(np.maximum(np.abs(expected), np.abs(got)), np.finfo(float).tiny)
        relative = np.where(error > 0, error / np.where(np.isfinite(scale), scale, np.inf), 0.0)
        relative = np.where(np.isinf(error), np.inf, relative)
        worst = np.unravel_index(np.argmax(error - allowed), error.shape)
        summary = (
            f"max abs error {_number(error.max())}, max rel error {_number(relative.max())}; "
            + (f"worst at index {_index(worst)}: " if got.ndim else "")
            + f"expected {_number(expected[worst])}, got {_number(got[worst])}"
        )
    if np.all(error <= allowed):
        return Verdict(True, summary)
    return Verdict(False, summary)
