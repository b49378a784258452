"""The fast form of the backward scan y_t = x_t + c_t y_{t+1}: a banded triangular solve.

Private to the library: :func:`rlfound.returns.discounted_cumsum` and the packed-stream
returns and GAE (:func:`rlfound.returns.packed_discounted_returns`,
:func:`rlfound.advantages.packed_gae`) hand it their terms a block at a time and their
factors, and choose between it and their clear loop with :func:`scan_method`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.linalg import blas

from rlfound._validation import check_choice


def scan_method(method: str, shape: tuple[int, ...]) -> str:
    """``method`` checked, with ``"auto"`` replaced by the faster form for arrays of ``shape``.

    The rule, from timings on a 2-core machine: the loop pays a few microseconds of Python
    per step and then works on whole columns, fast while they stay in cache; the banded
    solve pays about two nanoseconds per entry. So the loop wins on a single step, on at most
    2 steps of 256 rows or more, and on at most 8 steps of 256 rows or more within 2^18
    entries; everywhere else the solve does.

    Raises
    ------
    ValueError
        If ``method`` is not one of ``"auto"``, ``"loop"`` and ``"banded"``.
    """
    method = check_choice(method, "method", ("auto", "loop", "banded"))
    if method != "auto":
        return method
    size, horizon = math.prod(shape), shape[-1]
    rows = size // horizon if horizon else 0
    if horizon <= 1:
        return "loop"
    wide = rows >= 256 and (horizon <= 2 or (horizon <= 8 and size <= 2**18))
    return "loop" if wide else "banded"


# Steps per block of the banded solve. A block's sums (1 MiB) stay in cache while they are
# written and solved, so every input is read from memory once and nothing the size of the
# whole array is allocated but the result.
BLOCK = 2**17

# Times a block with one constant factor is halved before its serial solve (see
# :func:`_solve_constant`), so that the solve runs over every eighth step; halving is
# bookkeeping at every step whose factor is 0, so it is done only where at most one step in
# SPARSE has one. Measured per step on a 2-core machine: 4.3 ns unhalved, 2.1 ns halved
# three times (benchmarks/scan_speed.py times the whole functions).
LEVELS = 3
SPARSE = 64
AXPY_PIECE = 8192  # entries per BLAS axpy call (see _axpy)

#: ``write_terms(start, end, terms)`` writes x_t of the flattened steps ``start`` to
#: ``end - 1`` into ``terms``, a float array of length ``end - start``.
TermWriter = Callable[[int, int, np.ndarray], None]


def banded_scan(
    shape: tuple[int, ...],
    write_terms: TermWriter,
    factors: float | np.ndarray,
    stopped: np.ndarray | None = None,
) -> np.ndarray:
    """The sums y_t = x_t + c_t y_{t+1} of arrays of ``shape``, by compiled triangular solves.

    Read as a linear system, the scan y_t - c_t y_{t+1} = x_t is (I - C S) y = x with S the
    shift to the next step: upper triangular with one superdiagonal, -c_t in row t. BLAS
    ``dtbsv`` back-substitutes such a banded system in compiled code, and its back
    substitution is the loop's recursion, y_t = x_t - (-c_t) y_{t+1} = x_t + c_t y_{t+1},
    with the same rounding up to a fused multiply-add: no division by a product of factors
    (it would underflow on long streams) and no subtraction of a carried sum (it would
    cancel).

    ``factors`` is either an array of c_t, one per step, or one number c for every step,
    with ``stopped`` (a boolean array of ``shape``, or None) marking the steps where c_t is
    0 instead: the form of every return and GAE, where a sum stops at each episode's end.
    With one number the system is first halved (see :func:`_solve_constant`), so that the
    serial solve runs on an eighth of the steps; the rounding then differs from the loop's
    by a few more operations per step, still without division or subtraction.

    All rows are one stream, built and solved a block of steps at a time from the end by
    ``write_terms`` (see :data:`TermWriter`); the terms are written where their sums will
    be. The factor is 0 at each row's last step, so no sum runs from one row into the next,
    and the sum after a block enters it as the loop would add it, x_t + c_t y_{t+1} at the
    block's last step, before the block is solved.

    References
    ----------
    J. J. Dongarra, J. Du Croz, S. Hammarling and R. J. Hanson, "An extended set of FORTRAN
    basic linear algebra subprograms", ACM Transactions on Mathematical Software 14(1),
    1988 (the routines ``dtbsv`` and ``daxpy``).
    """
    size, horizon = math.prod(shape), shape[-1]
    sums = np.empty(size)
    if size == 0:
        return sums.reshape(shape)
    # Column j of the band holds A[j-1, j] = -c_{j-1} on top of the diagonal A[j, j]. BLAS
    # reads it as a Fortran-ordered (2, n) array: a C-ordered (n, 2) array transposed. The
    # diagonal is 1 and diag=1 says so, so BLAS never reads it (left unset).
    band = np.empty((min(size, BLOCK) + 1, 2))
    constant = np.ndim(factors) == 0
    if constant:
        factor = float(factors)
        # The steps where the sum stops: the marked ones and each row's last step.
        stops = np.zeros(size, dtype=bool) if stopped is None else stopped.reshape(-1).copy()
        stops[horizon - 1 :: horizon] = True
        stop_steps = np.flatnonzero(stops)
    else:
        flat_factors = np.asarray(factors).reshape(-1)
    for end in range(size, 0, -BLOCK):
        start = max(0, end - BLOCK)
        terms = sums[start:end]
        write_terms(start, end, terms)
        # The sum after the block, which its last step adds unless that step ends a row.
        following = sums[end] if end < size and end % horizon else None
        if constant:
            first, last = np.searchsorted(stop_steps, (start, end))
            zeros = stop_steps[first:last] - start  # the block's steps with a factor of 0
            _solve_constant(terms, following, factor, zeros, band)
        else:
            _solve_general(
                terms, following, flat_factors[start:end], -start % horizon, horizon, band
            )
    return sums.reshape(shape)


def _solve_general(
    terms: np.ndarray,
    following: float | None,
    factors: np.ndarray,
    first_row_start: int,
    horizon: int,
    band: np.ndarray,
) -> None:
    """Solve one block in place, with one factor per step (0 before each row start).

    ``following`` is the sum after the block, or None if none follows its last step.
    """
    if following is not None and factors[-1] != 0.0:
        terms[-1] += factors[-1] * following  # x_t + c_t y_{t+1}, as the loop adds it
    length = terms.size
    above = band[: length + 1, 0]
    np.negative(factors, out=above[1:])
    above[first_row_start::horizon] = 0.0
    _dtbsv(band[:length], terms, 1)


def _solve_constant(
    terms: np.ndarray, following: float | None, factor: float, zeros: np.ndarray, band: np.ndarray
) -> None:
    """Solve one block in place, with the factor c at every step but ``zeros``, where it is 0.

    ``following`` is the sum after the block, or None if none follows its last step.

    BLAS back substitution costs a few nanoseconds a step, one step after the other, while
    a strided ``daxpy`` over all steps costs a fraction of a nanosecond each. So the block is
    first halved: at every even step i, the recursion taken twice,

        y_i = (x_i + c_i x_{i+1}) + c_i c_{i+1} y_{i+2},

    is again a scan, over the even steps, with terms x_i + c x_{i+1} and factor c^2 (0 where
    either factor is 0). Halved ``LEVELS`` times, the solve runs on every 2^LEVELS-th step;
    then each level's odd steps follow from the even ones after them,
    y_{i+1} = x_{i+1} + c y_{i+2}. Every operation is still a multiply and an add of a sum
    of the loop's own terms: no division and no subtraction. Where a factor is 0 the
    ``daxpy`` would add a term from across a stop, so the term is put back as it was.
    Products of factors are formed only when |c| <= 1 and c^(2^LEVELS) is a normal float,
    so they can neither overflow nor underflow; otherwise the block is solved unhalved.

    References
    ----------
    R. W. Hockney, "A fast direct solution of Poisson's equation using Fourier analysis",
    Journal of the ACM 12(1), 1965 (odd-even, or cyclic, reduction).
    """
    if zeros.size == 0 or zeros[-1] != terms.size - 1:  # the last step's sum goes on
        if following is not None and factor != 0.0:
            terms[-1] += factor * following  # x_t + c y_{t+1}, as the loop adds it
        zeros = np.append(zeros, terms.size - 1)  # and now stops there
    levels = 0
    # Halving pays for its bookkeeping at the zeros only where they are sparse.
    if 0.0 < abs(factor) <= 1.0 and zeros.size * SPARSE <= terms.size:
        while levels < LEVELS and abs(factor) ** 2 ** (levels + 1) >= np.finfo(float).tiny:
            levels += 1
    halved = []
    stride = 1
    for _ in range(levels):
        count = -(-terms.size // stride)  # the steps at this level: every stride-th
        if count < 2:
            break
        kept = terms[zeros * stride]
        even = zeros % 2 == 0
        # x_i += c x_{i+1} at every even i, then the terms before a stop put back.
        _axpy(terms, count // 2, factor, source=stride, target=0, step=2 * stride)
        terms[zeros[even] * stride] = kept[even]
        halved.append((stride, factor, count, zeros[~even] * stride, kept[~even]))
        zeros = zeros // 2  # a step listed twice is harmless: it is put back twice
        factor, stride = factor * factor, 2 * stride
    count = -(-terms.size // stride)
    above = band[:count, 0]
    above[1:] = -factor
    above[zeros[zeros < count - 1] + 1] = 0.0
    _dtbsv(band[:count], terms, stride)
    for stride, factor, count, odd_stops, kept in reversed(halved):
        if count > 2:  # y_{i+1} = x_{i+1} + c y_{i+2} at every odd i + 1 with a step after it
            _axpy(
                terms, (count - 1) // 2, factor, source=2 * stride, target=stride, step=2 * stride
            )
        terms[odd_stops] = kept


def _axpy(terms: np.ndarray, count: int, factor: float, source: int, target: int, step: int):
    """terms[target + k step] += factor terms[source + k step] for k < count, by BLAS ``daxpy``.

    In pieces of at most ``AXPY_PIECE`` entries: OpenBLAS hands an axpy of more than 10,000
    entries to several threads, which then spin idle for milliseconds, costing far more CPU
    time than the axpy itself.
    """
    for first in range(0, count, AXPY_PIECE):
        offset = first * step
        blas.daxpy(
            terms,
            terms,
            n=min(AXPY_PIECE, count - first),
            a=factor,
            offx=source + offset,
            incx=step,
            offy=target + offset,
            incy=step,
        )


def _dtbsv(band: np.ndarray, terms: np.ndarray, stride: int) -> None:
    """Back-substitute the unit upper bidiagonal ``band`` over every stride-th term, in place."""
    solved = blas.dtbsv(1, band.T, terms, incx=stride, diag=1, overwrite_x=1)
    if not np.may_share_memory(solved, terms):
        terms[...] = solved
