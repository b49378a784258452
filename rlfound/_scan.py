"""The fast form of the backward scan y_t = x_t + c_t y_{t+1}: a banded triangular solve.

Private to the library: :func:`rlfound.returns.discounted_cumsum` and the packed-stream
returns and GAE (:func:`rlfound.returns.packed_discounted_returns`,
:func:`rlfound.advantages.packed_gae`) hand it their terms and factors a block at a time and
choose between it and their clear loop with :func:`scan_method`.
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
    per step and then works on whole columns; the banded solve pays a few nanoseconds per
    entry, one entry after the other. So the loop wins on a single step, on at most 8
    steps of 256 rows or more, and on at most 64 steps of 1024 rows or more within 2^19
    entries (wide arrays that stay in cache); everywhere else the solve does.

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
    if horizon <= 1 or (rows >= 256 and horizon <= 8):
        return "loop"
    return "loop" if rows >= 1024 and horizon <= 64 and size <= 2**19 else "banded"


# Steps per block of the banded solve. A block's sums and band (24 bytes a step, 1.5 MiB)
# stay in cache while they are written and solved, so every input is read from memory once
# and nothing the size of the whole array is allocated but the result.
BLOCK = 2**16

#: ``write_block(start, end, terms, negated_factors)`` writes x_t and -c_t of the flattened
#: steps ``start`` to ``end - 1`` into two float arrays of length ``end - start``; the
#: second is a strided view into the band of the triangular system, which holds -c_t.
BlockWriter = Callable[[int, int, np.ndarray, np.ndarray], None]


def banded_scan(shape: tuple[int, ...], write_block: BlockWriter) -> np.ndarray:
    """The sums y_t = x_t + c_t y_{t+1} of arrays of ``shape``, by compiled triangular solves.

    Read as a linear system, the scan y_t - c_t y_{t+1} = x_t is (I - C S) y = x with S the
    shift to the next step: upper triangular with one superdiagonal, -c_t in row t. BLAS
    ``dtbsv`` back-substitutes such a banded system in compiled code, and its back
    substitution is the loop's recursion, y_t = x_t - (-c_t) y_{t+1} = x_t + c_t y_{t+1},
    with the same rounding up to a fused multiply-add: no division by a product of factors
    (it would underflow on long streams) and no subtraction of a carried sum (it would
    cancel).

    All rows are one stream, built and solved a block of steps at a time from the end by
    ``write_block`` (see :data:`BlockWriter`); the terms are written where their sums will
    be. The superdiagonal is 0 wherever a row starts, so no sum runs from one row into the
    row before it, and the sum after a block enters it as the loop would add it,
    x_t + c_t y_{t+1} at the block's last step, before the block is solved.

    References
    ----------
    J. J. Dongarra, J. Du Croz, S. Hammarling and R. J. Hanson, "An extended set of FORTRAN
    basic linear algebra subprograms", ACM Transactions on Mathematical Software 14(1),
    1988 (the routine ``dtbsv``).
    """
    size, horizon = math.prod(shape), shape[-1]
    sums = np.empty(size)
    # Column j of the band holds A[j-1, j] = -c_{j-1} on top of the diagonal A[j, j]. BLAS
    # reads it as a Fortran-ordered (2, n) array: a C-ordered (n, 2) array transposed. The
    # diagonal is 1 and diag=1 says so, so BLAS never reads it (left unset). One column
    # more than a block holds -c of the block's last step, which only the carry reads.
    band = np.empty((min(size, BLOCK) + 1, 2))
    above = band[:, 0]
    for end in range(size, 0, -BLOCK):
        start = max(0, end - BLOCK)
        length = end - start
        terms = sums[start:end]
        write_block(start, end, terms, above[1 : length + 1])
        above[-start % horizon : length : horizon] = 0.0  # where a row starts
        if end < size and end % horizon:  # the block's last step is followed by the next block
            terms[-1] -= above[length] * sums[end]
        solved = blas.dtbsv(1, band[:length].T, terms, diag=1, overwrite_x=1)
        if not np.may_share_memory(solved, terms):
            terms[...] = solved
    return sums.reshape(shape)
