"""Time on a leading axis: the streams of one step are a contiguous row, solved together.

A time-major buffer (T, B), as Stable-Baselines3 stores its rollouts, holds B streams side
by side: step t of every stream is row t. The loop over rows is the clear form's; its cost
is a few microseconds of Python per row. So a block of rows is first halved, as the banded
solve halves a stream (see ``_stream``): at every even row i, the recursion taken twice,

    y_i = (x_i + c_i x_{i+1}) + c_i c_{i+1} y_{i+2},

is again a scan, over the even rows, with one NumPy operation over all of them at once.
Halved until a few rows are left, the loop runs over those, and each level's odd rows follow
from the even ones after them, y_{i+1} = x_{i+1} + c_{i+1} y_{i+2}, again all at once. One
factor c for every step (every return and GAE) stays one number (rows of ROW_AXPY streams or
more are then added one BLAS ``daxpy`` per row, which passes over them once where NumPy's
product and sum pass twice), and the few entries where a sum stops are put back by index
after each operation; per-step factors are kept as an array (0 where a sum stops). Products
of factors are formed only when every |c_t| <= 1 and no product of 2^levels of them leaves
the normal floats, so they neither overflow nor underflow.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas

import rlfound._scan._stream as _stream
from rlfound._scan._stream import TINY, Problem, within

ROWS = 4  # rows left to the loop once a block is halved
# Fewer streams side by side than this make rows too short for NumPy to work on at full
# speed: such a block is copied stream by stream and solved as streams are (``_stream``).
NARROW = 64
# Rows at least this long are halved one BLAS call per row (see _add_next_rows): below, the
# call's fixed cost outweighs the pass it saves (timed with benchmarks/scan_speed.py on a
# 2-core machine: 1.0 to 1.6 passes of np.add fewer at 1024 and 2048 streams, none at 256,
# a loss below).
ROW_AXPY = 512
# Entries (24 KiB) of a narrow block turned stream by stream in one NumPy call: NumPy walks a
# transposed copy one stream at a time, striding through the rows; a piece of rows that stays
# in the L1 cache (32 KiB or more) is then read from memory once instead of once per pair of
# streams (timed on a 2-core machine at 16 streams: 0.76 ms for 10^6 entries in pieces of
# this size, 1.3 ms in one call). The copy back, contiguous in what it writes, is one call.
TRANSPOSE = 3072


def solve_lanes(
    problem: Problem, start: int, lanes: int, slab: int, block: int
) -> None:
    """Fill ``sums[start:start + slab]``, a time-major (T, lanes) array, by blocks of rows."""
    if lanes < NARROW:
        _solve_narrow(problem, start, lanes, slab, block)
        return
    sums, write, factors, _, done = problem
    horizon = slab // lanes
    rows = max(1, block // lanes)
    scratch = np.empty((min(rows, horizon) + 1) // 2 * lanes)
    if isinstance(factors, float):
        _solve_constant(problem, start, lanes, horizon, rows, scratch)
        return
    buffer = np.empty(min(rows, horizon) * lanes)
    for first, last, low, high in _blocks(start, lanes, horizon, rows):
        write(low, high, sums[low:high])
        x = sums[low:high].reshape(last - first, lanes)
        f = buffer[: high - low].reshape(x.shape)
        np.copyto(f, factors[low:high].reshape(x.shape))
        if (
            last < horizon
        ):  # the sums after the block, added as the loop adds them
            products = scratch[:lanes]
            np.multiply(f[-1], sums[high : high + lanes], out=products)
            np.add(x[-1], products, out=x[-1])
        f[-1] = 0.0
        _reduce(x, f, scratch, _safe_levels(f, None, x.shape[0]))
        done(low, high)


def _solve_constant(
    problem: Problem,
    start: int,
    lanes: int,
    horizon: int,
    rows: int,
    scratch: np.ndarray,
) -> None:
    """:func:`solve_lanes` with one factor c, 0 at the few ``stops`` only.

    No array of factors is built: each halving is x_i += c x_{i+1} over all the even rows
    at once, and the entries of the stops are then put back as they were (their sum does
    not reach the next row), as the banded solve of a stream does (see
    ``rlfound._scan._stream._solve_constant``); a pair of rows has the factor c^2, 0 where
    either row stops, so a stop in row r is a stop in row r // 2 of the halved block.
    """
    sums, write, factor, stops, done = problem
    no_stops = np.empty(0, dtype=int)
    for first, last, low, high in _blocks(start, lanes, horizon, rows):
        write(low, high, sums[low:high])
        if factor == 0.0:
            done(low, high)
            continue  # every sum is its own term
        x = sums[low:high].reshape(last - first, lanes)
        zeros = no_stops if stops is None else within(stops, low, high)
        if last < horizon:  # the sums after the block, as the loop adds them
            products = scratch[:lanes]
            np.multiply(sums[high : high + lanes], factor, out=products)
            products[zeros[zeros >= high - low - lanes] % lanes] = 0.0
            np.add(x[-1], products, out=x[-1])
        # The last row has no row after it in the block: its factor is 0 at every level.
        levels = _safe_levels(None, factor, x.shape[0])
        _reduce_constant(
            x, factor, *np.divmod(zeros, lanes), scratch, levels
        )
        done(low, high)


def _reduce_constant(
    x: np.ndarray,
    c: float,
    row: np.ndarray,
    lane: np.ndarray,
    scratch: np.ndarray,
    levels: int,
) -> None:
    """Solve the rows of ``x`` in place with the factor ``c``, 0 at (``row``, ``lane``)."""
    lanes = x.shape[1]
    block = x.reshape(-1)  # the rows of every level are views of it
    # Where each stop sits in the block at every level (a stop in row r is in row r >> k of
    # level k, the block's row (r >> k) << k), found for all levels at once: entries are
    # then read and put back by flat index, several times cheaper than by (row, lane).
    shifts = np.arange(levels)[:, np.newaxis]
    at_level = ((row >> shifts) << shifts) * lanes + lane
    halved = []
    for level in range(levels):
        stops = at_level[level]
        kept = block.take(stops)
        # x_i + c x_{i+1} at the even rows with a row after them
        _add_next_rows(x, block, c, 0, x.shape[0] // 2, scratch)
        block[stops] = kept
        halved.append((x, c, stops))
        x, c, row = x[0::2], c * c, row >> 1
    products = scratch[:lanes]
    for t in range(
        x.shape[0] - 2, -1, -1
    ):  # the rows left, one after the other
        np.multiply(x[t + 1], c, out=products)
        products[lane[row == t]] = 0.0
        np.add(x[t], products, out=x[t])  # x_t + c y_{t+1}
    for x, c, stops in reversed(halved):
        kept = block.take(stops)
        # The odd rows with an even row after them: x_{i+1} + c y_{i+2}.
        _add_next_rows(x, block, c, 1, (x.shape[0] - 1) // 2, scratch)
        block[stops] = kept


def _add_next_rows(
    x: np.ndarray,
    block: np.ndarray,
    c: float,
    first: int,
    count: int,
    scratch: np.ndarray,
) -> None:
    """x[first + 2k] += c x[first + 2k + 1] for k < ``count``, in place.

    ``x`` is a view of the flat ``block`` whose rows are evenly spaced in it. Rows of at
    least ROW_AXPY entries are added one BLAS ``daxpy`` per row, which reads each pair of
    rows once; NumPy's product into ``scratch`` and sum, over all rows at once, pass over
    the rows twice. Rows longer than an axpy piece stay with NumPy: OpenBLAS would hand
    each call to several threads (see ``_stream._axpy``, whose positional call this is).
    """
    lanes = x.shape[1]
    if ROW_AXPY <= lanes <= _stream.AXPY_PIECE:
        # Entries from one row of x to the next.
        step, daxpy = x.strides[0] // x.itemsize, blas.daxpy
        for offset in range(
            first * step, (first + 2 * count) * step, 2 * step
        ):
            daxpy(block, block, lanes, c, offset + step, 1, offset, 1)
        return
    targets = x[first : first + 2 * count : 2]
    products = scratch[: count * lanes].reshape(targets.shape)
    np.multiply(x[first + 1 : first + 2 * count + 1 : 2], c, out=products)
    np.add(targets, products, out=targets)


def _blocks(start: int, lanes: int, horizon: int, rows: int):
    """(first row, end row, first entry, end entry) of each block of ``rows`` rows, last first."""
    for first in range((horizon - 1) // rows * rows, -1, -rows):
        last = min(first + rows, horizon)
        yield first, last, start + first * lanes, start + last * lanes


def _safe_levels(
    f: np.ndarray | None, factor: float | None, rows: int
) -> int:
    """How many times the rows can be halved with every product of factors a normal float.

    ``factor`` is the one factor of every row, or None for the factors ``f``.
    """
    if factor is not None:
        largest = smallest = abs(factor)
    else:
        magnitudes = np.abs(f)
        largest = float(magnitudes.max())
        smallest = float(
            np.min(magnitudes, where=magnitudes > 0.0, initial=1.0)
        )
    levels = 0
    if largest <= 1.0 and smallest > 0.0:
        while rows >> levels > ROWS and smallest**2 ** (levels + 1) >= TINY:
            levels += 1
    return levels


def _reduce(
    x: np.ndarray, f: np.ndarray, scratch: np.ndarray, levels: int
) -> None:
    """Solve the rows of ``x`` in place, row t with factor ``f[t]`` (0 at the last row)."""
    halved = []
    for _ in range(levels):
        even, odd = x[0::2], x[1::2]
        pairs = odd.shape[0]
        products = scratch[: pairs * x.shape[1]].reshape(odd.shape)
        np.multiply(f[0::2][:pairs], odd, out=products)
        np.add(even[:pairs], products, out=even[:pairs])  # x_i + c_i x_{i+1}
        np.multiply(
            f[0::2][:pairs], f[1::2], out=f[0::2][:pairs]
        )  # c_i c_{i+1}
        halved.append((x, f))
        x, f = even, f[0::2]
    products = scratch[: x.shape[1]]
    for row in range(
        x.shape[0] - 2, -1, -1
    ):  # the rows left, one after the other
        np.multiply(f[row], x[row + 1], out=products)
        np.add(x[row], products, out=x[row])  # x_t + c_t y_{t+1}
    for x, f in reversed(halved):
        even, odd = x[0::2], x[1::2]
        count = (
            x.shape[0] - 1
        ) // 2  # the odd rows with an even row after them
        products = scratch[: count * x.shape[1]].reshape(count, x.shape[1])
        np.multiply(f[1::2][:count], even[1 : count + 1], out=products)
        np.add(
            odd[:count], products, out=odd[:count]
        )  # y_{i+1} = x_{i+1} + c y_{i+2}


def _solve_narrow(
    problem: Problem, start: int, lanes: int, slab: int, block: int
) -> None:
    """:func:`solve_lanes` for a few streams: each block turned stream by stream, solved, and
    turned back.

    A block's rows hold a multiple of 2^LEVELS steps where they can, so that its streams'
    ends stay in place through the halving (see :func:`rlfound._scan._stream.solve_stream`).
    """
    sums, write, factors, stops, done = problem
    horizon = slab // lanes
    aligned = 2**_stream.LEVELS
    rows = max(1, block // lanes)
    rows = rows - rows % aligned if rows >= aligned else rows
    # An odd number of aligned runs of rows. With a power of two (8192 rows of 16 streams)
    # the streams in the buffer lie 64 KiB apart, so step t of every stream falls in the
    # same set of the L1 cache (64 sets of 8 to 12 lines): the copy back, which reads step
    # t of each stream in turn, misses on almost every read. An odd multiple of 2^LEVELS
    # steps (256 bytes) apart, 16 streams fall in 16 different sets and no set holds more
    # than 4 of fewer than NARROW (timed on a 2-core AMD EPYC, 32 KiB L1: the copy back 2.3
    # times faster; GAE with time first 6.7 passes of np.add instead of 8.6 at 32 streams,
    # 6.5 instead of 6.9 at 16).
    if rows >= 2 * aligned and rows // aligned % 2 == 0:
        rows -= aligned
    streams = np.empty(min(rows, horizon) * lanes)
    band = np.empty((streams.size + 1, 2))
    filled = [
        None,
        0,
    ]  # what the band holds (see rlfound._scan._stream._solve_constant)
    constant = isinstance(factors, float)
    # Rows copied stream by stream in one call (see TRANSPOSE).
    piece = max(1, TRANSPOSE // lanes)
    for first, last, low, high in _blocks(start, lanes, horizon, rows):
        write(low, high, sums[low:high])
        steps = last - first
        by_step = sums[low:high].reshape(steps, lanes)
        flat = streams[: high - low]
        by_stream = flat.reshape(lanes, steps)
        for row in range(0, steps, piece):
            np.copyto(
                by_stream[:, row : row + piece], by_step[row : row + piece].T
            )
        if constant:
            if (
                last < horizon and factors != 0.0
            ):  # each stream adds c times its next sum
                carry = factors * sums[high : high + lanes]
                if stops is not None:
                    carry[within(stops, high - lanes, high)] = 0.0
                by_stream[:, -1] += carry
            zeros = np.empty(0, dtype=int)
            in_place = steps % aligned == 0
            if stops is not None:
                # Found in the block as it is, then renumbered by stream; with the streams'
                # ends in place the halved solve takes them in any order (otherwise they
                # are sorted below, with the ends).
                step, stream = np.divmod(within(stops, low, high), lanes)
                zeros = stream * steps + step
            if (
                not in_place
            ):  # each stream's last step is listed with the zeros
                zeros = np.union1d(
                    zeros, np.arange(steps - 1, flat.size, steps)
                )
            row_end = steps - 1 if in_place else None
            _stream._solve_constant(
                flat,
                None,
                factors,
                zeros,
                row_end,
                steps,
                band,
                filled,
                _stream.LEVELS,
            )
        else:
            by_stream_factors = factors[low:high].reshape(steps, lanes).T
            if last < horizon:
                by_stream[:, -1] += (
                    by_stream_factors[:, -1] * sums[high : high + lanes]
                )
            flat_factors = np.ascontiguousarray(by_stream_factors).reshape(
                -1
            )
            _stream._solve_general(flat, None, flat_factors, 0, steps, band)
        np.copyto(by_step, by_stream.T)
        done(low, high)
