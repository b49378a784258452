"""Discounted returns of reward sequences, and the backward scan they are computed with.

Time is the last axis; any leading axes index independent trajectories of equal length.
A batch collected from a running environment often packs several episodes one after another
along time; the masks ``terminated`` and ``truncated`` mark where each one ends (see
:func:`packed_discounted_returns`).

Every backward recursion of the library, y_t = x_t + c_t y_{t+1} (returns, reward-to-go,
GAE, and their packed forms), is one call of :func:`discounted_cumsum`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_choice,
    check_episode_flags,
    check_shape,
    check_unit_interval,
    finite_output,
)

__all__ = ["discounted_cumsum", "discounted_returns", "packed_discounted_returns"]


@finite_output()
def discounted_cumsum(
    terms: ArrayLike, discounts: ArrayLike, *, method: str = "auto"
) -> np.ndarray:
    """Discounted sums from every step to the end: the backward scan.

        y_t = x_t + c_t y_{t+1},    y_T = 0,

    so that y_t = Σ_{k>=t} (Π_{t<=j<k} c_j) x_k. With a constant c = γ this is the discounted
    return; with c = γλ applied to TD errors it is GAE; a c_t of 0 stops the sum at step t,
    which is how an episode boundary inside a packed batch is respected.

    Book: equation (eq-return-recursion), chapter 1.

    Parameters
    ----------
    terms : array_like, shape (..., T)
        The x_t; leading axes are a batch.
    discounts : float or array_like, shape (..., T)
        The factor c_t that multiplies y_{t+1}: one number for every step, or one per step
        (no broadcasting of partial shapes). Any finite reals; the library passes γ, γλ or
        those times a 0/1 continuation mask.
    method : {"auto", "loop", "blocked"}, optional
        How to run the scan; every choice gives the same sums up to rounding. ``"loop"`` is
        the clear form below: one step of the recursion at a time, each step vectorized over
        the leading axes. It is fast when the leading axes are wide and T is short, but a
        single long stream costs a Python iteration per step. ``"blocked"`` cuts the stream
        into chunks and runs the same recursion across all chunks at once, so that each
        Python iteration does array-wide work whatever the shape; it never divides by a
        product of factors, so long streams do not underflow. ``"auto"`` (the default) takes
        ``"loop"`` for fewer than 4096 entries, a single step, or at most 2^19 entries over
        at most 128 steps (wide rows that stay in cache), and ``"blocked"`` otherwise;
        ``benchmarks/scan_speed.py`` compares the forms.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The sums y_t, float64.

    Raises
    ------
    ValueError
        If ``terms`` is a scalar or non-finite, ``discounts`` is non-finite or neither a
        scalar nor of the shape of ``terms``, or ``method`` is not one of the three names.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 3.3.

    Examples
    --------
    >>> discounted_cumsum([1.0, 0.0, 2.0], 0.5)
    array([1.5, 1. , 2. ])
    >>> discounted_cumsum([1.0, 1.0, 1.0], [0.5, 0.0, 0.5])  # the sum stops after step 1
    array([1.5, 1. , 1. ])
    """
    terms = as_float_array(terms, "terms", min_ndim=1)
    discounts = as_float_array(discounts, "discounts")
    if discounts.ndim > 0:
        check_shape(discounts, "discounts", terms.shape, "the shape of terms (or no axes)")
    discounts = np.broadcast_to(discounts, terms.shape)  # a scalar: the same c every step
    method = check_choice(method, "method", ("auto", "loop", "blocked"))
    if method == "auto":
        method = "blocked" if _blocked_is_faster(terms.shape) else "loop"
    if method == "blocked":
        return _blocked_discounted_cumsum(terms, discounts)

    sums = np.zeros_like(terms)
    following = np.zeros(terms.shape[:-1])  # y_T = 0: nothing after the last step
    for t in reversed(range(terms.shape[-1])):
        following = terms[..., t] + discounts[..., t] * following
        sums[..., t] = following
    return sums


def _blocked_is_faster(shape: tuple[int, ...]) -> bool:
    """The rule of ``method="auto"``, from timings on a 2-core machine.

    The loop pays a few microseconds of Python per step, the blocked scan a few copies of the
    array. Tiny arrays and single steps favor the loop; so do up to 128 steps of arrays that
    stay in cache, whose rows the loop reads quickly. Longer or bigger arrays favor the
    blocked scan: the loop's step count or its strided reads of columns then dominate.
    """
    size, horizon = math.prod(shape), shape[-1]
    if size < 4096 or horizon == 1:
        return False
    return size > 2**19 or horizon > 128


# Chunks longer than this gain little, and a product of 249 factors of at least 0.06 stays a
# normal float (slow subnormal arithmetic only starts below about 1e-308).
_LONGEST_CHUNK = 249


def _chunk_length(size: int) -> int:
    """About a quarter of sqrt(size), and odd.

    A few hundred Python steps, each over thousands of chunks. An odd length keeps the
    stride of the time-major copies off powers of two, where the cache maps a whole column
    to a few sets and the copy runs several times slower.
    """
    return min(_LONGEST_CHUNK, max(2, math.isqrt(size) // 4)) | 1


def _blocked_discounted_cumsum(terms: np.ndarray, discounts: np.ndarray) -> np.ndarray:
    """:func:`discounted_cumsum` of validated float64 arrays by a blocked (two-level) scan.

    Rows no longer than a chunk are the chunks themselves: the recursion runs over time
    once, vectorized across rows laid out time-major. Longer rows are read as one stream,
    with the factor at each row's last step taken as 0 so that no sum runs into the next
    row, and the stream is cut into chunks (see :func:`_blocked_stream_scan`).
    """
    shape = terms.shape
    if terms.size == 0:
        return np.zeros(shape)
    horizon = shape[-1]
    rows = terms.size // horizon
    if horizon <= _chunk_length(terms.size):
        terms_by_time = _time_major(terms.reshape(rows, horizon))
        factors_by_time = _time_major(discounts.reshape(rows, horizon))
        _scan_chunks_from(terms_by_time, factors_by_time, np.zeros(rows))
        return terms_by_time.T.copy().reshape(shape)
    row_length = horizon if rows > 1 else None
    stream = _blocked_stream_scan(terms.reshape(-1), discounts.reshape(-1), row_length)
    if stream is None:  # a product of factors overflowed: only the loop is safe then
        return discounted_cumsum(terms, discounts, method="loop")
    return stream.reshape(shape)


def _time_major(chunks: np.ndarray) -> np.ndarray:
    """``chunks.T`` as a new C-ordered array: time on axis 0, one column per chunk.

    Copied a band of about 2^17 entries (1 MiB) at a time: a band's rows stay in cache while
    it is transposed. On a 2-core machine this made the whole blocked scan 15-20% faster
    than one strided copy of the array (banding the copy back gained nothing).
    """
    count, length = chunks.shape
    by_time = np.empty((length, count))
    band = max(1, 2**17 // length)
    for start in range(0, count, band):
        by_time[:, start : start + band] = chunks[start : start + band].T
    return by_time


def _scan_chunks_from(terms_by_time: np.ndarray, factors_by_time: np.ndarray, after: np.ndarray):
    """y_j = x_j + c_j y_{j+1} down axis 0 of (L, K) arrays, starting every chunk k from
    ``after[k]``, the sum that follows it.

    The loop's own arithmetic, in place: the sums overwrite ``terms_by_time``, and one
    row-sized scratch array (small enough to stay in cache) holds each product.
    """
    product = np.empty_like(after)
    for j in range(terms_by_time.shape[0] - 1, -1, -1):
        np.multiply(factors_by_time[j], after, out=product)
        np.add(terms_by_time[j], product, out=terms_by_time[j])
        after = terms_by_time[j]


def _blocked_stream_scan(
    terms: np.ndarray, factors: np.ndarray, row_length: int | None = None
) -> np.ndarray | None:
    """The backward scan of one 1-D stream; ``factors[-1]`` multiplies the 0 after its end.

    With ``row_length`` the stream is rows of that length laid end to end, and the factor
    at the end of every row counts as 0 (the inputs are not modified).

    Cut the stream into K chunks of length L. Inside chunk k the sums depend on everything
    after the chunk only through the sum y_after that follows it:

        y_j = s_j + g_j y_after,    g_j = Π_{j<=i<end} c_i,

    where s is the chunk's own scan started from 0. The first pass runs over the L steps of
    every chunk at once and keeps only s and g at each chunk's first step (the heads and
    gains). The sums at the chunks' first steps obey the same recursion one level up,
    y_first(k) = head_k + gain_k y_first(k + 1), a stream of K entries scanned by this same
    function. The second pass runs the recursion again in every chunk, now started from the
    sum after it. No reverse cumulative sum is divided by a product of factors (it would
    underflow) and no carried part is subtracted (it would cancel); a gain that underflows
    to 0 only drops less than about 1e-308 times the sum after its chunk. Returns None if a
    gain or head overflows (possible only with factors above 1 in size), for the caller to
    fall back to the loop.
    """
    size = terms.size
    chunk = _chunk_length(size)
    chunks = size // chunk
    whole = chunks * chunk
    row_ends = None if row_length is None else np.arange(row_length - 1, size, row_length)
    if chunks < 2:
        whole = 0
    sums = np.empty(size)
    following = 0.0  # the sum after the last whole chunk, from the few steps left over
    if whole < size:
        leftover = factors[whole:].copy()
        if row_ends is not None:
            leftover[row_ends[row_ends >= whole] - whole] = 0.0
        sums[whole:] = discounted_cumsum(terms[whole:], leftover, method="loop")
        following = sums[whole]
    if whole == 0:
        return sums

    terms_by_time = _time_major(terms[:whole].reshape(chunks, chunk))
    factors_by_time = _time_major(factors[:whole].reshape(chunks, chunk))
    if row_ends is not None:
        inside = row_ends[row_ends < whole]
        factors_by_time[inside % chunk, inside // chunk] = 0.0
    heads = terms_by_time[-1].copy()
    gains = factors_by_time[-1].copy()
    with np.errstate(over="ignore", invalid="ignore"):  # checked just below
        for j in range(chunk - 2, -1, -1):
            heads *= factors_by_time[j]
            heads += terms_by_time[j]
            gains *= factors_by_time[j]
    if not (np.isfinite(heads).all() and np.isfinite(gains).all()):
        return None

    # One level up: the last chunk is followed by the leftover steps, the others by a chunk.
    heads[-1] += gains[-1] * following
    gains[-1] = 0.0
    firsts = _blocked_stream_scan(heads, gains)
    if firsts is None:
        return None
    after = np.empty(chunks)
    after[:-1] = firsts[1:]
    after[-1] = following
    _scan_chunks_from(terms_by_time, factors_by_time, after)
    sums[:whole].reshape(chunks, chunk)[...] = terms_by_time.T
    return sums


@finite_output()
def discounted_returns(rewards: ArrayLike, gamma: float) -> np.ndarray:
    """Discounted return from every time step of a reward sequence (the reward-to-go).

    The return is the discounted sum of the rewards still to come,

        G_t = Σ_{l=0}^{T-1-t} γ^l r_{t+l},

    computed from the end of the sequence with the recursion

        G_t = r_t + γ G_{t+1},    G_T = 0.

    The sequence is treated as finished after its last reward; to continue from a value
    estimate instead, see :func:`rlfound.advantages.k_step_advantages`.

    Book: equations (eq-return) and (eq-return-recursion), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_0, ..., r_{T-1} along the last axis; leading axes are a batch.
    gamma : float
        Discount factor γ in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The returns G_0, ..., G_{T-1}, float64.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or holds non-finite values, or ``gamma`` is outside [0, 1].

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 3.3.

    Examples
    --------
    >>> discounted_returns([1.0, 0.0, 2.0], gamma=0.5)
    array([1.5, 1. , 2. ])
    >>> discounted_returns([[0.0, 1.0], [1.0, 1.0]], gamma=0.9)
    array([[0.9, 1. ],
           [1.9, 1. ]])
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    gamma = check_unit_interval(gamma, "gamma")

    return discounted_cumsum(rewards, gamma)


@finite_output()
def packed_discounted_returns(
    rewards: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: float,
    *,
    method: str = "auto",
) -> np.ndarray:
    """Discounted returns of a stream that packs several episodes back to back along time.

        G_t = r_t + γ [(1 - done_t) G_{t+1} + cut_t V_next,t],
        done_t = terminated_t or cut_t,    cut_t = truncated_t, or t is the last step and
        not terminated_t.

    A return never runs past the end of its episode. At a true termination nothing follows
    (G_t = r_t). At a truncation by a time limit the episode would have gone on, so the
    return continues with the value estimate ``next_values[..., t]`` of the state reached.
    The last step of the stream is a cut by the collector: unless it terminated, it is
    treated as truncated and bootstraps too. With ``next_values`` all 0 (no critic) a cut
    episode simply stops, and G_t is the plain reward-to-go within each episode.

    Book: equation (eq-gae-timeouts), chapter 4.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t; leading axes are a batch of independent streams.
    next_values : array_like, shape (..., T)
        V of the state each step reached (at a truncated step, the final observation of the
        cut episode). Read only at truncated steps and at a non-terminated last step.
    terminated : array_like of bool or 0/1, shape (..., T)
        True where step t entered a true terminal state.
    truncated : array_like of bool or 0/1, shape (..., T)
        True where the episode was cut by a time limit after step t.
    gamma : float
        Discount factor γ in [0, 1].
    method : {"auto", "loop", "blocked"}, optional
        How the backward scan runs, as in :func:`discounted_cumsum`: the same returns up to
        rounding, and by default the faster form for the shape.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The returns G_t, float64.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or non-finite, a mask or ``next_values`` does not have
        the shape of ``rewards`` (or a mask is not 0/1), a step is both terminated and
        truncated (naming ``truncated``), ``gamma`` is outside [0, 1], or ``method`` is not
        one of the three names.

    References
    ----------
    F. Pardo, A. Tavakoli, V. Levdik and P. Kormushev, "Time limits in reinforcement
    learning", ICML, 2018.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 3.3.

    Examples
    --------
    Two episodes in one stream: the first terminates at step 1, the second is cut by the
    end of the stream and bootstraps from V = 10.

    >>> packed_discounted_returns([1.0, 1.0, 1.0, 1.0], next_values=[0.0, 0.0, 0.0, 10.0],
    ...                           terminated=[0, 1, 0, 0], truncated=[0, 0, 0, 0], gamma=0.5)
    array([1.5, 1. , 4. , 6. ])
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    next_values = as_float_array_like(next_values, "next_values", rewards.shape, "rewards")
    terminated, truncated = check_episode_flags(terminated, truncated, rewards.shape)
    gamma = check_unit_interval(gamma, "gamma")

    cut = truncated.copy()
    cut[..., -1:] |= ~terminated[..., -1:]  # the stream's end cuts a still-running episode
    # Only the cut steps read next_values: a value stored anywhere else cannot leak in.
    terms = rewards.copy()
    terms[cut] += gamma * next_values[cut]
    # The sum stops at the end of every episode: a factor of 0 there, γ elsewhere.
    discounts = np.where(terminated | cut, 0.0, gamma)
    return discounted_cumsum(terms, discounts, method=method)
