"""The fast form of the backward scan y_t = x_t + c_t y_{t+1}, along any axis.

Private to the library. :func:`rlfound.returns.discounted_cumsum` and the packed-stream
returns and GAE (:func:`rlfound.returns.packed_discounted_returns`,
:func:`rlfound.advantages.packed_gae`) ask :func:`form` once which form to run; for the fast
one they describe their terms (:class:`Terms`) and factors and hand them to :func:`scan`,
which builds the terms a block of steps at a time in its own layout and solves each block
in place (the banded solve of ``_stream``, or the row-wise reduction of ``_lanes``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from rlfound._scan import _lanes, _stream
from rlfound._scan._stream import within
from rlfound._validation import FiniteBlocks, check_axis, check_choice

# Steps per block: a block's sums (1 MiB) stay in cache while they are written and solved,
# so every input is read from memory once and nothing the size of the whole array is
# allocated but the result.
BLOCK = 2**17


def form(method: str, shape: tuple[int, ...], axis: int) -> str:
    """``method`` checked, with ``"auto"`` replaced by the faster form for arrays of ``shape``.

    The clear loop pays a few microseconds of Python per step and then works on all the
    streams of that step at once; the fast form pays a few nanoseconds per entry. Timed
    with ``benchmarks/scan_speed.py`` on a 2-core machine, the loop wins on a single step,
    and with time on the last axis on at most 4 steps of 2048 streams or more (there the
    fast form's bookkeeping per row costs more than the loop's few steps); with time on
    another axis the fast form halves the rows of steps as the loop would walk them, and
    wins from 2 steps on.

    Raises
    ------
    ValueError
        If ``method`` is not one of ``"auto"``, ``"loop"`` and ``"banded"``.
    """
    method = check_choice(method, "method", ("auto", "loop", "banded"))
    if method != "auto":
        return method
    horizon = shape[axis]
    streams = math.prod(shape) // horizon if horizon else 0
    time_last = axis == len(shape) - 1
    if horizon <= 1 or (time_last and horizon <= 4 and streams >= 2048):
        return "loop"
    return "banded"


class Terms(NamedTuple):
    """The terms x_t = first_t + weight second_t - third_t of a scan, in that order.

    ``second`` is read only at the steps of the boolean mask ``only`` (few), or everywhere
    but the steps of ``never``, where its product is 0; ``second`` and ``third`` may be
    None. Both masks mark stops of the scan (steps of ``stopped``, see :func:`scan`), so
    their steps are picked out of the stops' list, never searched for over the whole
    array. With ``open_ends``, ``second`` is also read at every stream's last step that is
    not a stop: a stream cut there by its own end (the return's bootstrap), which the scan
    stops at anyway, so the stops need not list it. The arithmetic is the clear forms', so
    the terms are theirs bit for bit.
    """

    first: np.ndarray
    second: np.ndarray | None = None
    weight: float = 1.0
    only: np.ndarray | None = None
    never: np.ndarray | None = None
    third: np.ndarray | None = None
    open_ends: bool = False


def scan(
    terms: Terms,
    factors: float | np.ndarray,
    stopped: np.ndarray | None = None,
    axis: int = -1,
) -> np.ndarray:
    """The sums y_t = x_t + c_t y_{t+1} along ``axis`` of the ``terms``, by the fast form.

    ``factors`` is an array of c_t of the terms' shape, or one number c for every step,
    with ``stopped`` (a boolean array of that shape, or None) marking the steps where c_t
    is 0 instead: the form of every return and GAE, where a sum stops at each episode's
    end. Every array is read in its own layout, one block of steps at a time: with time on
    the last axis every stream's steps are contiguous and all streams are solved as one
    stream (``_stream``); with time on another axis the streams of a step are contiguous
    and are solved together, a row per step (``_lanes``). No input is copied unless it is
    not C-contiguous. Inside a guarded call (``finite_output``) the sums are checked to
    be finite as each block is finished, and the guard does not read them again
    (:class:`rlfound._validation.FiniteBlocks`).
    """
    shape = terms.first.shape
    sums = np.empty(shape)
    if sums.size == 0:
        return sums
    axis = check_axis(axis, shape)
    horizon, lanes = shape[axis], math.prod(shape[axis + 1 :])
    flat_sums = sums.reshape(-1)
    constant = np.ndim(factors) == 0
    flat_factors = (
        float(factors) if constant else np.asarray(factors).reshape(-1)
    )
    # The stops are few: listed once, read by index from then on.
    stops = None if stopped is None else np.flatnonzero(stopped)
    write = _term_writer(terms, stops, horizon, lanes)
    checks = FiniteBlocks(sums)
    problem = _stream.Problem(
        flat_sums, write, flat_factors, stops, checks.add
    )
    if lanes == 1:
        _stream.solve_stream(problem, horizon, BLOCK)
    else:
        slab = horizon * lanes
        for start in range(0, flat_sums.size, slab):
            _lanes.solve_lanes(problem, start, lanes, slab, BLOCK)
    checks.check()
    return sums


def _term_writer(
    terms: Terms, stops: np.ndarray | None, horizon: int, lanes: int
):
    """``write(start, end, out)``: the terms of the flat steps ``start`` to ``end - 1``.

    ``stops`` lists the flat steps where the scan stops (or is None); the steps of
    ``terms.only`` and ``terms.never`` are among them. The streams have ``horizon`` steps
    along an axis followed by ``lanes`` entries (1 with time last).
    """
    first, second, third = (
        None if array is None else array.reshape(-1)
        for array in (terms.first, terms.second, terms.third)
    )
    weight = terms.weight
    only, never = (
        None if mask is None else _among(mask.reshape(-1), stops)
        for mask in (terms.only, terms.never)
    )
    # The stops among the streams' ends: those ends keep their terms (read with open ends
    # only, so not listed without them).
    slab = horizon * lanes
    closed = np.empty(0, dtype=int)
    if terms.open_ends and stops is not None:
        closed = stops[stops % slab >= slab - lanes]

    def write(start: int, end: int, out: np.ndarray) -> None:
        if second is None or only is not None:
            np.copyto(out, first[start:end])
        else:
            np.multiply(second[start:end], weight, out=out)
            if never is not None:
                out[within(never, start, end)] = 0.0
            np.add(first[start:end], out, out=out)
        if only is not None:
            steps = within(only, start, end)
            out[steps] += weight * second[steps + start]
        if terms.open_ends:
            _add_at_open_ends(
                out, start, end, second, weight, horizon, lanes, closed
            )
        if third is not None:
            np.subtract(out, third[start:end], out=out)

    return write


def _add_at_open_ends(
    out: np.ndarray,
    start: int,
    end: int,
    second: np.ndarray,
    weight: float,
    horizon: int,
    lanes: int,
    closed: np.ndarray,
) -> None:
    """x_t += weight second_t at each stream end among the flat steps ``start`` to ``end - 1``
    that is not among the ``closed`` ones (stops).

    With time last the ends are every horizon-th step; otherwise each is the last row of a
    (horizon, lanes) slab, a contiguous run. The stops' entries are zeroed before the
    product, so a value that is never read cannot raise a warning.
    """
    slab = horizon * lanes
    if lanes == 1:
        first = (horizon - 1 - start) % horizon
        runs = [(start + first, end, horizon)] if first < end - start else []
    else:
        runs = []
        for base in range(start - start % slab, end, slab):
            low, high = (
                max(base + slab - lanes, start),
                min(base + slab, end),
            )
            if low < high:
                runs.append((low, high, 1))
    for low, high, step in runs:
        added = second[low:high:step].copy()
        added[within(closed, low, high) // step] = 0.0
        added *= weight
        target = out[low - start : high - start : step]
        target += added


def _among(mask: np.ndarray, stops: np.ndarray | None) -> np.ndarray:
    """The flat steps where ``mask`` is True, looked up among the ``stops`` when given."""
    return np.flatnonzero(mask) if stops is None else stops[mask[stops]]
