"""Discounted returns of reward sequences, and the backward scan they are computed with.

Time is the last axis; any leading axes index independent trajectories of equal length.
A batch collected from a running environment often packs several episodes one after another
along time; the masks ``terminated`` and ``truncated`` mark where each one ends (see
:func:`packed_discounted_returns`).

Every backward recursion of the library, y_t = x_t + c_t y_{t+1} (returns, reward-to-go,
GAE, and their packed forms), is the scan of :func:`discounted_cumsum`: its clear loop, or
its fast form, a banded triangular solve.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound import _scan
from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_axis,
    check_episode_flags,
    check_shape,
    check_unit_interval,
    finite_output,
)

__all__ = [
    "discounted_cumsum",
    "discounted_returns",
    "packed_discounted_returns",
]


@finite_output()
def discounted_cumsum(
    terms: ArrayLike,
    discounts: ArrayLike,
    *,
    axis: int = -1,
    method: str = "auto",
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
        The x_t; leading axes are a batch (time on ``axis``).
    discounts : float or array_like, shape (..., T)
        The factor c_t that multiplies y_{t+1}: one number for every step, or one per step
        (no broadcasting of partial shapes). Any finite reals; the library passes γ, γλ or
        those times a 0/1 continuation mask.
    axis : int, optional
        The time axis, the last by default. A time-major buffer of shape (T, B), as
        Stable-Baselines3 stores its rollouts (``buffer_size`` by ``n_envs``), is scanned
        with ``axis=0`` as it is, without a transposed copy.
    method : {"auto", "loop", "banded"}, optional
        How to run the scan; every choice gives the same sums up to rounding. ``"loop"`` is
        the clear form below: one step of the recursion at a time, each step vectorized over
        the other axes. It is fast when there are many streams and T is short, but a single
        long stream costs a Python iteration per step. ``"banded"`` is the fast form: with
        time on the last axis it reads the scan as the triangular system
        y_t - c_t y_{t+1} = x_t and hands it to the compiled BLAS back substitution
        (``dtbsv``), which runs the same recursion; with one ``discounts`` number it first
        halves the system five times, so that the serial part runs on every 32nd step.
        With time on another axis it halves the rows of steps the same way, each halving
        one NumPy operation over all streams, until a few rows are left to the loop.
        Neither divides by a product of factors, so long streams do not underflow.
        ``"auto"`` (the default) takes ``"loop"`` for a single step and, with time on the
        last axis, for at most 4 steps of 2048 streams or more, and ``"banded"`` otherwise;
        ``benchmarks/scan_speed.py`` compares the forms.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The sums y_t, float64.

    Raises
    ------
    ValueError
        If ``terms`` is a scalar or non-finite, ``discounts`` is non-finite or neither a
        scalar nor of the shape of ``terms``, ``axis`` is not an axis of ``terms``, or
        ``method`` is not one of the three names.

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
    >>> discounted_cumsum([[1.0, 1.0], [0.5, 2.0]], 0.5, axis=0)  # (T, B): time-major
    array([[1.25, 2.  ],
           [0.5 , 2.  ]])
    """
    terms = as_float_array(terms, "terms", min_ndim=1)
    discounts = as_float_array(discounts, "discounts")
    if discounts.ndim > 0:
        check_shape(
            discounts,
            "discounts",
            terms.shape,
            "the shape of terms (or no axes)",
        )
    axis = check_axis(axis, terms.shape)
    if _scan.form(method, terms.shape, axis) == "banded":  # fast path
        return _scan.scan(_scan.Terms(terms), discounts, axis=axis)
    discounts = np.broadcast_to(
        discounts, terms.shape
    )  # a scalar: the same c every step
    # Time on the last axis, as views: no data moves.
    terms, discounts = (
        np.moveaxis(terms, axis, -1),
        np.moveaxis(discounts, axis, -1),
    )

    sums = np.zeros_like(terms)
    following = np.zeros(
        terms.shape[:-1]
    )  # y_T = 0: nothing after the last step
    for t in reversed(range(terms.shape[-1])):
        following = terms[..., t] + discounts[..., t] * following
        sums[..., t] = following
    return np.moveaxis(sums, -1, axis)


@finite_output()
def discounted_returns(
    rewards: ArrayLike, gamma: float, *, axis: int = -1
) -> np.ndarray:
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
    axis : int, optional
        The time axis, the last by default; ``axis=0`` scans a time-major (T, B) batch, as
        Stable-Baselines3 stores its rollouts, as it is (see :func:`discounted_cumsum`).

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The returns G_0, ..., G_{T-1}, float64, time on ``axis``.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or holds non-finite values, ``gamma`` is outside [0, 1],
        or ``axis`` is not an axis of ``rewards``.

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
    axis = check_axis(axis, rewards.shape)

    return discounted_cumsum(rewards, gamma, axis=axis)


@finite_output(inputs=("rewards", "next_values"))
def packed_discounted_returns(
    rewards: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: float,
    *,
    axis: int = -1,
    method: str = "auto",
) -> np.ndarray:
    """Discounted returns of a stream that packs several episodes back to back along time.

        G_t = r_t + γ [(1 - done_t) G_{t+1} + cut_t V_next,t],
        done_t = terminated_t or cut_t,
        cut_t = truncated_t, or t is the last step and not terminated_t.

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
        cut episode). Read only at truncated steps and at a non-terminated last step;
        elsewhere it may hold anything, NaN included.
    terminated : array_like of bool or 0/1, shape (..., T)
        True where step t entered a true terminal state.
    truncated : array_like of bool or 0/1, shape (..., T)
        True where the episode was cut by a time limit after step t.
    gamma : float
        Discount factor γ in [0, 1].
    axis : int, optional
        The time axis, the last by default; ``axis=0`` takes a time-major (T, B) buffer as
        Stable-Baselines3 stores it, with no transposed copy (see :func:`discounted_cumsum`).
    method : {"auto", "loop", "banded"}, optional
        How the backward scan runs, as in :func:`discounted_cumsum`: the same returns up to
        rounding, and by default the faster form for the shape.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The returns G_t, float64.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar, a mask or ``next_values`` does not have the shape of
        ``rewards`` (or a mask is not 0/1), a step is both terminated and truncated (naming
        ``truncated``), ``gamma`` is outside [0, 1], ``axis`` is not an axis of
        ``rewards``, ``method`` is not one of the three names, or ``rewards`` or
        ``next_values`` holds an inf or NaN where it is read (naming the first such
        argument and its first non-finite entry).

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
    # inf and NaN are looked for only if the result has one (see
    # finite_output).
    rewards = as_float_array(
        rewards, "rewards", min_ndim=1, check_finite=False
    )
    next_values = as_float_array_like(
        next_values,
        "next_values",
        rewards.shape,
        "rewards",
        check_finite=False,
    )
    terminated, truncated = check_episode_flags(
        terminated, truncated, rewards.shape
    )
    gamma = check_unit_interval(gamma, "gamma")
    axis = check_axis(axis, rewards.shape)

    if _scan.form(method, rewards.shape, axis) == "banded":  # fast path
        # The scan stops at every stream's end by itself: only the episodes'
        # own ends are listed, and a still-running episode's bootstrap at
        # the stream's end is read as an open end.
        return _scan.scan(
            _scan.Terms(
                rewards, next_values, gamma, only=truncated, open_ends=True
            ),
            gamma,
            terminated | truncated,
            axis,
        )
    cut = truncated.copy()
    last = (slice(None),) * axis + (-1,)  # the last step of every stream
    cut[last] |= ~terminated[
        last
    ]  # the stream's end cuts a still-running episode
    ends = terminated | cut
    # Only the cut steps read next_values: a value stored anywhere else
    # cannot leak in.
    terms = rewards.copy()
    terms[cut] += gamma * next_values[cut]
    # The sum stops at the end of every episode: a factor of 0 there, γ
    # elsewhere.
    discounts = np.where(ends, 0.0, gamma)
    return discounted_cumsum(terms, discounts, axis=axis, method="loop")
