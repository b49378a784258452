"""Finite-difference gradient checks.

Used by the tests, the chapters and the grader to confirm that an analytic gradient (for
example :func:`rlfound.bandits.exact_bandit_gradient`) matches the derivative of
the function it claims to differentiate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    check_callable,
    check_nonnegative_real,
    check_positive_real,
    check_shape,
    finite_output,
)

__all__ = [
    "GradientCheck",
    "check_gradient",
    "numerical_gradient",
    "relative_error",
]


class GradientCheck(NamedTuple):
    """Outcome of :func:`check_gradient`.

    Attributes
    ----------
    passed : bool
        True if every entry satisfies |analytic - numerical| <= atol + rtol |numerical|.
    max_abs_error : float
        Largest |analytic - numerical| over all entries.
    max_rel_error : float
        Largest :func:`relative_error` between the two gradients over all entries.
    worst_index : tuple of int
        Index of the entry that exceeds its tolerance by the most (or, if all pass, comes
        closest to it).
    numerical : numpy.ndarray
        Central-difference gradient, with the shape of ``x``.
    analytic : numpy.ndarray
        The gradient being checked, with the shape of ``x``.
    """

    passed: bool
    max_abs_error: float
    max_rel_error: float
    worst_index: tuple[int, ...]
    numerical: np.ndarray
    analytic: np.ndarray


def _scalar_value(
    f: Callable[[np.ndarray], Any], point: np.ndarray
) -> float:
    """f(point) as a Python float, insisting on a finite real scalar."""
    value = np.asarray(f(point))
    if value.ndim != 0 or value.dtype.kind not in "iuf":
        raise ValueError(
            f"f must return a real scalar; got dtype {value.dtype} and shape {value.shape}"
        )
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(
            f"f must return finite values; got {value!r} near x = {point!r}"
        )
    return value


@finite_output()
def numerical_gradient(
    f: Callable[[np.ndarray], Any], x: ArrayLike, eps: float = 1e-6
) -> np.ndarray:
    r"""Gradient of a scalar function by central finite differences.

        ∂f/∂x_i ≈ (f(x + ε e_i) - f(x - ε e_i)) / (2 ε),

    whose truncation error is O(ε²), against O(ε) for a one-sided difference. Each entry
    costs two evaluations of ``f``, so this is for checking, not for training.

    Parameters
    ----------
    f : callable
        Function of a float64 array with the shape of ``x``, returning a real scalar.
    x : array_like, any shape
        Point at which to differentiate.
    eps : float, optional
        Step ε > 0. Around 1e-6 balances truncation and rounding error in float64.

    Returns
    -------
    numpy.ndarray
        The estimated gradient, with the shape of ``x``.

    Raises
    ------
    ValueError
        If ``f`` is not callable or returns anything but a finite real scalar, ``x`` is not
        a finite real array, ``eps`` is not positive and finite, or ``eps`` is too small to
        change an entry of ``x`` (x + eps and x - eps round to the same number, which would
        give a zero gradient whatever ``f`` is); and, starting ``"overflow in"``, if a
        difference overflows the float64 range.

    Notes
    -----
    .. math::

       \frac{\partial f}{\partial x_i} \approx
       \frac{f(x + \varepsilon \mathbf{e}_i) - f(x - \varepsilon \mathbf{e}_i)}{2 \varepsilon}

    References
    ----------
    J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer, 2006,
    section 8.1.

    Examples
    --------
    >>> numerical_gradient(lambda x: np.sum(x**2), [1.0, -2.0])
    array([ 2., -4.])
    """
    f = check_callable(f, "f")
    x = as_float_array(x, "x")
    eps = check_positive_real(eps, "eps")

    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        forward, backward = x + step, x - step
        if forward[index] == backward[index]:
            # x ± eps rounds back to x: the difference would be 0 whatever f is.
            raise ValueError(
                f"eps must be large enough to change x (x + eps != x - eps); got eps = {eps!r}"
                f" and x = {float(x[index])!r}{f' at index {index}' if index else ''}"
            )
        gradient[index] = (
            _scalar_value(f, forward) - _scalar_value(f, backward)
        ) / (2 * eps)
    return gradient


@finite_output()
def relative_error(
    a: ArrayLike, b: ArrayLike, floor: float = 1e-8
) -> np.ndarray:
    r"""Elementwise relative difference between two arrays of the same shape.

        err_i = |a_i - b_i| / max(|a_i|, |b_i|, floor).

    Symmetric in ``a`` and ``b``; the floor keeps entries where both are (nearly) zero from
    dividing by zero, so there the error reads as an absolute difference scaled by 1/floor.

    Parameters
    ----------
    a, b : array_like, same shape
        The arrays to compare (no broadcasting).
    floor : float, optional
        Smallest denominator, > 0.

    Returns
    -------
    numpy.ndarray
        The relative errors, with the shape of ``a``.

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not a finite real array, their shapes differ, or ``floor`` is
        not positive and finite.

    Notes
    -----
    .. math::

       \mathrm{err}_i = \frac{|a_i - b_i|}{\max(|a_i|, |b_i|, \mathrm{floor})}

    Examples
    --------
    >>> relative_error([1.0, 0.0, 100.0], [1.1, 0.0, 100.0])
    array([0.09090909, 0.        , 0.        ])
    """
    a = as_float_array(a, "a")
    b = as_float_array(b, "b")
    check_shape(b, "b", a.shape, "the shape of a")
    floor = check_positive_real(floor, "floor")

    return np.abs(a - b) / np.maximum(
        np.maximum(np.abs(a), np.abs(b)), floor
    )


@finite_output()
def check_gradient(
    f: Callable[[np.ndarray], Any],
    grad: Callable[[np.ndarray], Any] | ArrayLike,
    x: ArrayLike,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> GradientCheck:
    r"""Compare an analytic gradient with central finite differences of ``f``.

    The check passes when, for every entry i,

        |g_i - ĝ_i| <= atol + rtol |ĝ_i|,

    where g is the analytic gradient and ĝ = :func:`numerical_gradient` (the same rule as
    ``numpy.isclose(g, ĝ)``, with the numerical gradient as the reference).

    Parameters
    ----------
    f : callable
        Scalar function of an array with the shape of ``x``.
    grad : callable or array_like
        The analytic gradient: a function returning it at ``x``, or its value at ``x``.
    x : array_like, any shape with at least one entry
        Point at which to compare.
    eps : float, optional
        Finite-difference step, > 0.
    rtol, atol : float, optional
        Relative and absolute tolerances, >= 0.

    Returns
    -------
    GradientCheck
        ``(passed, max_abs_error, max_rel_error, worst_index, numerical, analytic)``.

    Raises
    ------
    ValueError
        As :func:`numerical_gradient`; and if ``x`` is empty, the analytic gradient is not a
        finite real array with the shape of ``x``, or a tolerance is negative or non-finite.

    Notes
    -----
    .. math::

       |g_i - \hat g_i| \le \mathrm{atol} + \mathrm{rtol}\, |\hat g_i| \quad \text{for every } i

    References
    ----------
    J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer, 2006,
    section 8.1.

    Examples
    --------
    >>> result = check_gradient(lambda x: np.sum(x**3), lambda x: 3 * x**2, [1.0, -2.0])
    >>> result.passed
    True
    >>> check_gradient(lambda x: np.sum(x**3), [3.0, 13.0], [1.0, -2.0]).worst_index
    (1,)
    """
    x = as_float_array(x, "x")
    if x.size == 0:
        raise ValueError(
            f"x must have at least one entry; got shape {x.shape}"
        )
    rtol = check_nonnegative_real(rtol, "rtol")
    atol = check_nonnegative_real(atol, "atol")
    analytic = as_float_array(
        grad(x.copy()) if callable(grad) else grad, "grad"
    )
    check_shape(analytic, "grad", x.shape, "the shape of x")

    numerical = numerical_gradient(f, x, eps)
    abs_error = np.abs(analytic - numerical)
    # Margin by which each entry exceeds its tolerance; positive means it fails.
    excess = abs_error - (atol + rtol * np.abs(numerical))
    worst_index = tuple(
        int(i) for i in np.unravel_index(np.argmax(excess), x.shape)
    )
    return GradientCheck(
        passed=bool(np.all(excess <= 0.0)),
        max_abs_error=float(abs_error.max()),
        max_rel_error=float(relative_error(analytic, numerical).max()),
        worst_index=worst_index,
        numerical=numerical,
        analytic=analytic,
    )
