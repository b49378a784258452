"""Discounted returns of reward sequences, and the backward scan they are computed with.

Time is the last axis; any leading axes index independent trajectories of equal length.
A batch collected from a running environment often packs several episodes one after another
along time; the masks ``terminated`` and ``truncated`` mark where each one ends (see
:func:`packed_discounted_returns`).

Every backward recursion of the library, y_t = x_t + c_t y_{t+1} (returns, reward-to-go,
GAE, and their packed forms), is one call of :func:`discounted_cumsum`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_episode_flags,
    check_shape,
    check_unit_interval,
    finite_output,
)

__all__ = ["discounted_cumsum", "discounted_returns", "packed_discounted_returns"]


@finite_output()
def discounted_cumsum(terms: ArrayLike, discounts: ArrayLike) -> np.ndarray:
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

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The sums y_t, float64.

    Raises
    ------
    ValueError
        If ``terms`` is a scalar or non-finite, or ``discounts`` is non-finite or neither a
        scalar nor of the shape of ``terms``.

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

    sums = np.zeros_like(terms)
    following = np.zeros(terms.shape[:-1])  # y_T = 0: nothing after the last step
    for t in reversed(range(terms.shape[-1])):
        following = terms[..., t] + discounts[..., t] * following
        sums[..., t] = following
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

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The returns G_t, float64.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or non-finite, a mask or ``next_values`` does not have
        the shape of ``rewards`` (or a mask is not 0/1), a step is both terminated and
        truncated (naming ``truncated``), or ``gamma`` is outside [0, 1].

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
    done = terminated | cut
    # where(), not a product: a value at a step that does not bootstrap must not leak in.
    bootstrap = np.where(cut, next_values, 0.0)
    return discounted_cumsum(rewards + gamma * bootstrap, gamma * ~done)
