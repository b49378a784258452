"""Discounted returns of reward sequences.

Time is the last axis; any leading axes index independent trajectories of equal length.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import as_float_array, check_unit_interval

__all__ = ["discounted_returns"]


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
