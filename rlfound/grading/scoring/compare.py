"""Compare a student's answer with the expected one, in the grader's own process.

Order of the rules: shape first (an answer of the wrong shape fails even if it would
broadcast), then finiteness, then a tolerance scaled to the expected value,
``|got - expected| <= atol + rtol * |expected|`` elementwise. The message names what a student
needs to fix: the shapes, or the largest absolute and relative errors and where they occur,
and says so when the answer is right to float32 precision only (:data:`FLOAT32_HINT`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlfound.gradcheck import numerical_gradient

__all__ = ["FLOAT32_HINT", "Verdict", "compare", "float32_only", "numerical_gradient"]

#: The line a failed comparison adds when the answer is right to float32 precision only.
FLOAT32_HINT = "your result matches only to float32 precision: compute in float64 (np.float64)"
_FLOAT32_EPS = float(np.finfo(np.float32).eps)
#: Error, in float32 epsilons of the largest expected magnitude, of an answer whose inputs or
#: result were rounded to float32 (one that would pass against the expected values rounded to
#: float32 is among them).
_FLOAT32_ROUNDINGS = 8
#: The same for an answer made of float32 numbers: what float32 arithmetic may pile up (a sum
#: or a recursion over a thousand steps). A wrong formula is off by far more.
_FLOAT32_STEPS = 1024


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Whether an answer matches, a message for the student, and whether the answer (failed)
    is right to float32 precision only."""

    passed: bool
    message: str
    float32: bool = False


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
    if float32_only(got, expected, rtol=rtol, atol=atol):
        return Verdict(False, f"{summary}\n{FLOAT32_HINT}", float32=True)
    return Verdict(False, summary)


def _within(got: np.ndarray, expected: np.ndarray, allowed) -> bool:
    """Whether every entry of ``got`` is within ``allowed`` of ``expected`` (equal where the
    expected value is not finite)."""
    finite = np.isfinite(expected)
    if not np.array_equal(got[~finite], expected[~finite], equal_nan=True):
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(got[finite] - expected[finite]) <= allowed[finite]))


def float32_only(got: np.ndarray, expected: np.ndarray, *, rtol: float, atol: float) -> bool:
    """Whether an answer that fails the tolerance is right to float32 precision.

    That is, beyond the tolerance, it is off by no more than a few float32 roundings (8
    float32 epsilons of the largest expected magnitude: it would pass against the expected
    values rounded to float32, or was computed from inputs rounded to float32); or its values
    are all float32 numbers (the student's arrays were float32 or float16, which the wire
    format carries exactly) and off by no more than float32 arithmetic may pile up, 1024
    epsilons. A float64 answer that is off, or a float32 one whose formula is wrong, is not.

    Parameters
    ----------
    got, expected : numpy.ndarray
        The student's answer and the reference, float64 arrays.
    rtol, atol : float
        The check's tolerances.

    Examples
    --------
    >>> expected = np.array([0.1, 0.2, 0.3]) / 3
    >>> float32_only(expected.astype(np.float32).astype(float), expected, rtol=1e-9, atol=0)
    True
    >>> float32_only(expected + 1e-3, expected, rtol=1e-9, atol=0)
    False
    """
    if got.shape != expected.shape or got.size == 0:
        return False
    finite = np.isfinite(expected)
    with np.errstate(all="ignore"):
        scale = float(np.max(np.abs(expected[finite]), initial=0.0))
        allowed = atol + rtol * np.abs(np.where(finite, expected, 0.0))
        if _within(got, expected, allowed + _FLOAT32_ROUNDINGS * _FLOAT32_EPS * scale):
            return True
        numbers = got[np.isfinite(got)]
        if not np.array_equal(numbers.astype(np.float32), numbers):
            return False
        return _within(got, expected, allowed + _FLOAT32_STEPS * _FLOAT32_EPS * scale)
