"""Time on the last axis: every row is a stream of contiguous steps, solved by BLAS.

All rows are one stream, built and solved a block of steps at a time from the end: the
factor is 0 at each row's last step, so no sum runs from one row into the next. Read as a
linear system, the scan y_t - c_t y_{t+1} = x_t is (I - C S) y = x with S the shift to the
next step: upper triangular with one superdiagonal, -c_t in row t. BLAS ``dtbsv``
back-substitutes such a banded system in compiled code, and its back substitution is the
loop's recursion, y_t = x_t - (-c_t) y_{t+1}, with the same rounding up to a fused
multiply-add: no division by a product of factors (it would underflow on long streams) and
no subtraction of a carried sum (it would cancel).

References
----------
J. J. Dongarra, J. Du Croz, S. Hammarling and R. J. Hanson, "An extended set of FORTRAN
basic linear algebra subprograms", ACM Transactions on Mathematical Software 14(1), 1988
(the routines ``dtbsv`` and ``daxpy``).
R. W. Hockney, "A fast direct solution of Poisson's equation using Fourier analysis",
Journal of the ACM 12(1), 1965 (odd-even, or cyclic, reduction).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.linalg import blas

# Times a block with one constant factor is halved before its serial solve (see
# _solve_constant), so that the solve runs over every 32nd step: BLAS's back substitution
# costs several nanoseconds a step, a strided axpy a fraction of one, and past five levels
# the halvings' own calls cost more than the steps they take from the serial solve.
# Halving is bookkeeping at every step whose factor is 0, so it is done only where at most
# one step in SPARSE has one (the rows' own ends do not count when every level keeps them
# in place, see solve_stream).
LEVELS = 5
SPARSE = 64
# Fewest steps a block needs to be halved: below, the serial solve of all of them costs less
# than the halvings' fixed cost of a dozen BLAS and NumPy calls.
HALVING_MIN = 4096
AXPY_PIECE = 8192  # entries per BLAS axpy call (see _axpy)
TINY = float(np.finfo(np.float64).tiny)

#: ``write(start, end, out)`` writes x_t of the flat steps ``start`` to ``end - 1`` into ``out``.
Writer = Callable[[int, int, np.ndarray], None]


class Problem(NamedTuple):
    """A scan to solve, flat in C order: ``sums`` to fill with the terms ``write`` gives.

    ``factors`` is one number c (with ``stops``, the sorted flat steps where it is 0, or
    None) or a flat array of c_t. ``done(start, end)`` is called once the sums of the flat
    steps ``start`` to ``end - 1`` are final, while they are still in cache.
    """

    sums: np.ndarray
    write: Writer
    factors: float | np.ndarray
    stops: np.ndarray | None
    done: Callable[[int, int], None]


def within(steps: np.ndarray, start: int, end: int) -> np.ndarray:
    """The sorted ``steps`` in [start, end), counted from ``start``."""
    if start == 0 and (steps.size == 0 or steps[-1] < end):
        return steps  # all of them: a small array's one block
    low, high = np.searchsorted(steps, (start, end))
    return steps[low:high] - start


def solve_stream(problem: Problem, horizon: int, block: int) -> None:
    """Fill the flat sums of rows of ``horizon`` steps, a block of steps at a time.

    Blocks start at multiples of ``block``; the sum after a block enters it as the loop
    would add it, x_t + c_t y_{t+1} at the block's last step, before the block is solved.
    """
    sums, write, factors, stops, done = problem
    size = sums.size
    band = np.empty((min(size, block) + 1, 2))
    filled = [None, 0]  # what the band holds (see _solve_constant)
    constant = isinstance(factors, float)
    # Each halving keeps a row's end at an odd position of the halved stream when the rows
    # and the blocks have a multiple of 2^levels steps: then a strided slice puts them back,
    # and only the episodes' own ends are listed one by one. Rows too short for their ends
    # to be listed (so many zeros would stop the halving) are halved in place as often as
    # their length allows: 3 times for rows of 8 steps, never for an odd length.
    most = LEVELS
    in_place = horizon % 2**most == 0 and block % 2**most == 0
    if not in_place and horizon < SPARSE:
        most = min(most, _twos(horizon), _twos(block))
        in_place = True
    if constant:
        stop_steps = np.empty(0, int) if stops is None else stops
        if in_place and size >= HALVING_MIN:
            # A stop at a row's end is that row's end: not listed.
            stop_steps = stop_steps[(stop_steps + 1) % horizon != 0]
        elif not in_place:
            listed = np.zeros(size, dtype=bool)
            listed[stop_steps] = True
            listed[horizon - 1 :: horizon] = True
            stop_steps = np.flatnonzero(listed)
    for start in range((size - 1) // block * block, -1, -block):
        end = min(start + block, size)
        terms = sums[start:end]
        write(start, end, terms)
        # The sum after the block, which its last step adds unless that step ends a row.
        following = sums[end] if end < size and end % horizon else None
        if constant:
            # The block's steps with a factor of 0.
            zeros = (
                within(stop_steps, start, end)
                if size > block
                else stop_steps
            )
            row_end = (horizon - 1 - start) % horizon if in_place else None
            _solve_constant(
                terms,
                following,
                factors,
                zeros,
                row_end,
                horizon,
                band,
                filled,
                most,
            )
        else:
            _solve_general(
                terms,
                following,
                factors[start:end],
                -start % horizon,
                horizon,
                band,
            )
        done(start, end)


def _twos(count: int) -> int:
    """How many times 2 divides ``count`` (> 0)."""
    return (count & -count).bit_length() - 1


def _solve_general(
    terms: np.ndarray,
    following: float | None,
    factors: np.ndarray,
    first_row_start: int,
    horizon: int,
    band: np.ndarray,
) -> None:
    """Solve one block in place, with one factor per step (0 before each row start)."""
    if following is not None and factors[-1] != 0.0:
        terms[-1] += (
            factors[-1] * following
        )  # x_t + c_t y_{t+1}, as the loop adds it
    length = terms.size
    # Column j of the band holds A[j-1, j] = -c_{j-1} on top of the diagonal A[j, j]. BLAS
    # reads it as a Fortran-ordered (2, n) array: a C-ordered (n, 2) array transposed. The
    # diagonal is 1 and diag=1 says so, so BLAS never reads it (left unset).
    above = band[: length + 1, 0]
    np.negative(factors, out=above[1:])
    above[first_row_start::horizon] = 0.0
    _dtbsv(band[:length], terms, 1)


def _solve_constant(
    terms: np.ndarray,
    following: float | None,
    factor: float,
    zeros: np.ndarray,
    row_end: int | None,
    horizon: int,
    band: np.ndarray,
    filled: list,
    most: int,
) -> None:
    """Solve one block in place, with the factor c at every step but ``zeros``, where it is 0.

    ``row_end`` is the block's first step that ends a row when the rows' ends are kept in
    place (see :func:`solve_stream`), or None when ``zeros`` lists them. ``filled`` is [c, n]
    when ``band`` holds -c in its first n rows from the block before, [None, 0] at first.
    The block is halved at most ``most`` times (``LEVELS``, or fewer for short rows kept in
    place). ``zeros`` is sorted, or in any order (repeats allowed) when there is no
    ``following`` sum and the rows' ends are in place: only the last zero is ever looked
    at, to tell whether the block's last step is one.

    BLAS back substitution costs a few nanoseconds a step, one step after the other, while
    a strided ``daxpy`` over all steps costs a fraction of a nanosecond each. So the block is
    first halved: at every even step i, the recursion taken twice,

        y_i = (x_i + c_i x_{i+1}) + c_i c_{i+1} y_{i+2},

    is again a scan, over the even steps, with terms x_i + c x_{i+1} and factor c^2 (0 where
    either factor is 0). Halved ``most`` times, the solve runs on every 2^most-th step;
    then each level's odd steps follow from the even ones after them,
    y_{i+1} = x_{i+1} + c y_{i+2}. Every operation is still a multiply and an add of a sum
    of the loop's own terms: no division and no subtraction. Where a factor is 0 the
    ``daxpy`` would add a term from across a stop, so the term is put back as it was.
    Products of factors are formed only when |c| <= 1 and c^(2^most) is a normal float,
    so they can neither overflow nor underflow; otherwise the block is solved unhalved.
    """
    length = terms.size
    levels = 0
    # Halving pays for its bookkeeping at the zeros only where they are sparse.
    if (
        0.0 < abs(factor) <= 1.0
        and (zeros.size + 1) * SPARSE <= length >= HALVING_MIN
    ):
        while levels < most and abs(factor) ** 2 ** (levels + 1) >= TINY:
            levels += 1
    if (
        following is not None
        and factor != 0.0
        and (zeros.size == 0 or zeros[-1] != length - 1)
    ):
        terms[-1] += (
            factor * following
        )  # x_t + c y_{t+1}, as the loop adds it
    # The block's last step has no step after it. When the block has a multiple of
    # 2^levels steps it stays the last, odd, step of every level, which no axpy writes;
    # otherwise it is listed with the zeros.
    if length % 2**levels and (zeros.size == 0 or zeros[-1] != length - 1):
        zeros = np.append(zeros, length - 1)
    halved = []
    for level in range(levels):
        stride = 1 << level
        count = -(
            -length // stride
        )  # the steps at this level: every stride-th
        if count < 2:
            levels = level
            break
        stops = zeros << level  # where the zeros are in the block
        kept = terms[stops]
        # x_i += c x_{i+1} at every even i, then the terms before a stop put back (the odd
        # ones are not written: putting them back too costs less than telling them apart).
        _axpy(
            terms,
            count // 2,
            factor,
            source=stride,
            target=0,
            step=2 * stride,
        )
        terms[stops] = kept
        # The rows' ends at this level: odd steps, one every `horizon` steps of the block.
        ends = (
            None
            if row_end is None
            else slice(row_end + 1 - stride, None, horizon)
        )
        halved.append((stride, factor, count, stops, ends))
        zeros = (
            zeros >> 1
        )  # a step listed twice is harmless: it is put back twice
        factor = factor * factor
    stride = 1 << levels
    # Rows kept in place and halved down to one step each (rows of 32 steps, or 8 halved
    # three times) leave nothing to solve: every step of the last level starts a row and
    # ends it, so its sum is its term. Likewise a level whose rows have two steps has only
    # the rows' ends as odd steps, which keep their terms: the rows' (and blocks') starts
    # line up with the levels' grids here, since the rows' length divides the block's.
    if row_end is None or horizon != stride:
        count = -(-length // stride)
        above = band[:count, 0]
        # The band keeps -c (of the last level) from block to block: only the zeros
        # change.
        if filled[0] != factor or filled[1] < count:
            above[1:] = -factor
            filled[:] = factor, count
        cuts = zeros[zeros < count - 1] + 1
        starts = (
            slice(0, 0)
            if row_end is None
            else slice((row_end + 1) // stride, None, horizon // stride)
        )
        above[cuts] = above[starts] = (
            0.0  # each stop's successor, and each row's first step
        )
        _dtbsv(band[:count], terms, stride)
        above[cuts] = above[starts] = -factor
    for stride, factor, count, stops, ends in reversed(halved):
        if ends is not None and horizon == 2 * stride:
            continue  # every odd step ends its row
        if (
            count > 2
        ):  # y_{i+1} = x_{i+1} + c y_{i+2} at every odd i + 1 with a step after it
            # The axpy writes only odd steps: the solved even ones are put back unchanged.
            kept = terms[stops]
            row_ends = None if ends is None else terms[ends].copy()
            _axpy(
                terms,
                (count - 1) // 2,
                factor,
                source=2 * stride,
                target=stride,
                step=2 * stride,
            )
            terms[stops] = kept
            if row_ends is not None:
                terms[ends] = row_ends


def _axpy(
    terms: np.ndarray,
    count: int,
    factor: float,
    source: int,
    target: int,
    step: int,
):
    """terms[target + k step] += factor terms[source + k step] for k < count, by BLAS ``daxpy``.

    In pieces of at most ``AXPY_PIECE`` entries: OpenBLAS hands an axpy of more than 10,000
    entries to several threads, which then spin idle for milliseconds, costing far more CPU
    time than the axpy itself.
    """
    # The arguments are x, y, n, a, offx, incx, offy, incy, passed by position: f2py parses
    # keywords several times slower, a cost paid at every call.
    daxpy = blas.daxpy
    for first in range(0, count, AXPY_PIECE):
        offset = first * step
        n = min(AXPY_PIECE, count - first)
        daxpy(
            terms,
            terms,
            n,
            factor,
            source + offset,
            step,
            target + offset,
            step,
        )


def _dtbsv(band: np.ndarray, terms: np.ndarray, stride: int) -> None:
    """Back-substitute the unit upper bidiagonal ``band`` over every stride-th term, in place."""
    solved = blas.dtbsv(1, band.T, terms, incx=stride, diag=1, overwrite_x=1)
    if not np.may_share_memory(solved, terms):
        terms[...] = solved
