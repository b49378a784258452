"""Discounted returns of reward sequences.

Time is the last axis; any leading axes index independent trajectories of equal length.
A batch collected from a running environment holds several episodes one after another along
time; the masks ``terminated`` and ``truncated`` mark where each one ends (see
:func:`batched_discounted_returns`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_episode_flags,
    check_unit_interval,
)

__all__ = ["batched_discounted_returns", "discounted_returns"]


def discounted_returns(rewards: ArrayLike, gamma: float) -> np.ndarray:
    """Discounted return from every time step of a reward sequence.

    The return is the discounted sum of the rewards still to come,

        G_t = Σ_{l=0}^{T-1-t} γ^l r_{t+l},

    computed from the end of the sequence with the recursion

        G_t = r_t + γ G_{t+1},    G_T = 0.

    The sequence is treated as finished after its last reward; to continue from a value
    estimate instead, see :func:`rlfound.advantages.k_step_advantages`.

    Book: equation (eq-return), chapter 1.

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

    returns = np.zeros_like(rewards)
    future = np.zeros(rewards.shape[:-1])  # G_T = 0: nothing is earned after the last step
    for t in reversed(range(rewards.shape[-1])):
        future = rewards[..., t] + gamma * future
        returns[..., t] = future
    return returns


def batched_discounted_returns(
    rewards: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: float,
    next_values: ArrayLike | None = None,
) -> np.ndarray:
    """Discounted returns of a batch that holds several episodes back to back along time.

        G_t = r_t + γ [(1 - done_t) G_{t+1} + truncated_t V_next,t],
        done_t = terminated_t or truncated_t.

    A return never runs past the end of its episode. At a true termination nothing follows
    (G_t = r_t). At a truncation by a time limit the episode would have gone on, so the
    return continues with the value estimate ``next_values[..., t]`` of the state reached.
    The last step of the array is a collector cut: unless it terminated, it is treated as
    truncated and bootstraps too. With ``next_values=None`` there is no bootstrap at all,
    and G_t is the plain reward-to-go within each episode segment.

    Book: equation (eq-gae-timeouts), chapter 4.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t; leading axes are a batch of independent streams.
    terminated : array_like of bool, shape (..., T)
        True where step t entered a true terminal state.
    truncated : array_like of bool, shape (..., T)
        True where the episode was cut by a time limit after step t.
    gamma : float
        Discount factor γ in [0, 1].
    next_values : array_like, shape (..., T), optional
        V of the state each step reached (at a truncated step, the final observation of the
        cut episode). Read only at truncated steps and at a non-terminated last step.
        Default: no bootstrap.

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
    end of the array and bootstraps from V = 10.

    >>> batched_discounted_returns([1.0, 1.0, 1.0, 1.0], terminated=[0, 1, 0, 0],
    ...                            truncated=[0, 0, 0, 0], gamma=0.5,
    ...                            next_values=[0.0, 0.0, 0.0, 10.0])
    array([1.5, 1. , 4. , 6. ])
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    terminated, truncated = check_episode_flags(terminated, truncated, rewards.shape)
    gamma = check_unit_interval(gamma, "gamma")
    if next_values is None:
        next_values = np.zeros_like(rewards)
    else:
        next_values = as_float_array_like(next_values, "next_values", rewards.shape, "rewards")

    bootstraps = truncated.copy()
    if rewards.shape[-1] > 0:
        # The array end cuts a still-running episode: treat it as a truncation.
        bootstraps[..., -1] |= ~terminated[..., -1]
    done = terminated | bootstraps

    returns = np.zeros_like(rewards)
    future = np.zeros(rewards.shape[:-1])
    for t in reversed(range(rewards.shape[-1])):
        # where(), not a product with (1 - done): the next episode's return must not leak in.
        following = np.where(done[..., t], 0.0, future)
        bootstrap = np.where(bootstraps[..., t], next_values[..., t], 0.0)
        future = rewards[..., t] + gamma * (following + bootstrap)
        returns[..., t] = future
    return returns
