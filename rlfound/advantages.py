"""Advantage estimates from rewards and a value function: TD errors, k-step, and GAE.

Shapes follow one convention throughout: ``rewards`` has shape (..., T) and ``values`` has
shape (..., T + 1), time on the last axis and any leading axes a batch. ``values[..., t]`` is
V(s_t) and the extra last entry ``values[..., T]`` is the bootstrap value V(s_T) of the state
reached after the last reward (0 if the episode truly terminated there).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import check_positive_int, check_unit_interval, check_values_for_rewards

__all__ = ["gae_explicit", "gae_recursive", "k_step_advantages", "td_errors"]


def td_errors(rewards: ArrayLike, values: ArrayLike, gamma: float) -> np.ndarray:
    """One-step temporal-difference errors.

        δ_t = r_t + γ V(s_{t+1}) - V(s_t),    t = 0, ..., T - 1.

    δ_t is the one-step advantage estimate: what the step earned plus the discounted value
    of where it led, minus what was expected before taking it.

    Book: equation (eq-td-error), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t.
    values : array_like, shape (..., T + 1)
        Values V(s_0), ..., V(s_T); the last is the bootstrap value.
    gamma : float
        Discount factor γ in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The TD errors δ_t.

    Raises
    ------
    ValueError
        If the shapes do not agree (``values`` needs one more entry along the last axis and
        the same leading shape), an input is non-finite, or ``gamma`` is outside [0, 1].

    References
    ----------
    R. S. Sutton, "Learning to predict by the methods of temporal differences",
    *Machine Learning* 3, 9-44, 1988.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 6.1.

    Examples
    --------
    >>> td_errors([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9)
    array([ 0.95, -0.5 ])
    """
    rewards, values = check_values_for_rewards(rewards, values)
    gamma = check_unit_interval(gamma, "gamma")

    return rewards + gamma * values[..., 1:] - values[..., :-1]


def k_step_advantages(rewards: ArrayLike, values: ArrayLike, gamma: float, k: int) -> np.ndarray:
    """k-step advantage estimates: k rewards, then bootstrap from the value function.

        A_t^(k) = Σ_{l=0}^{n-1} γ^l r_{t+l} + γ^n V(s_{t+n}) - V(s_t),    n = min(k, T - t).

    Near the end of the array fewer than k rewards remain, so the estimate bootstraps from
    the last value V(s_T). k = 1 gives the TD errors; k >= T gives the Monte Carlo return
    (bootstrapped at T) minus V(s_t). Equivalently A_t^(k) = Σ_{l=0}^{n-1} γ^l δ_{t+l}.

    Book: equations (eq-k-step) and (eq-k-step-telescoping), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t.
    values : array_like, shape (..., T + 1)
        Values V(s_0), ..., V(s_T); the last is the bootstrap value.
    gamma : float
        Discount factor γ in [0, 1].
    k : int
        Number of rewards before bootstrapping, >= 1.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The advantages A_t^(k).

    Raises
    ------
    ValueError
        As :func:`td_errors`, and if ``k`` is not a positive integer.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 7.1.
    J. Schulman, P. Moritz, S. Levine, M. Jordan and P. Abbeel, "High-dimensional continuous
    control using generalized advantage estimation", ICLR, 2016.

    Examples
    --------
    >>> k_step_advantages([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9, k=1)
    array([ 0.95, -0.5 ])
    >>> k_step_advantages([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9, k=2)
    array([ 0.5, -0.5])
    """
    rewards, values = check_values_for_rewards(rewards, values)
    gamma = check_unit_interval(gamma, "gamma")
    k = check_positive_int(k, "k")

    horizon = rewards.shape[-1]
    advantages = np.empty_like(rewards)
    for t in range(horizon):
        n = min(k, horizon - t)
        discounts = gamma ** np.arange(n)  # γ^0 = 1 even when γ = 0
        advantages[..., t] = (
            rewards[..., t : t + n] @ discounts + gamma**n * values[..., t + n] - values[..., t]
        )
    return advantages


def gae_recursive(rewards: ArrayLike, values: ArrayLike, gamma: float, lam: float) -> np.ndarray:
    """Generalized advantage estimates by the backward recursion.

        A_t = δ_t + γ λ A_{t+1},    A_T = 0,

    with δ_t the TD errors. One pass from the end of the trajectory, linear in T; this is
    how GAE is computed in practice. λ = 0 gives the TD errors and λ = 1 the discounted
    return (bootstrapped at T) minus V(s_t).

    Book: equation (eq-gae-recursion), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t.
    values : array_like, shape (..., T + 1)
        Values V(s_0), ..., V(s_T); the last is the bootstrap value.
    gamma : float
        Discount factor γ in [0, 1].
    lam : float
        GAE parameter λ in [0, 1]: small trusts the value function, large the rewards.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The advantages A_t.

    Raises
    ------
    ValueError
        As :func:`td_errors`, and if ``lam`` is outside [0, 1].

    References
    ----------
    J. Schulman, P. Moritz, S. Levine, M. Jordan and P. Abbeel, "High-dimensional continuous
    control using generalized advantage estimation", ICLR, 2016.

    Examples
    --------
    >>> gae_recursive([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9, lam=0.5)
    array([ 0.725, -0.5  ])
    """
    rewards, values = check_values_for_rewards(rewards, values)
    gamma = check_unit_interval(gamma, "gamma")
    lam = check_unit_interval(lam, "lam")

    deltas = td_errors(rewards, values, gamma)
    advantages = np.zeros_like(deltas)
    future = np.zeros(deltas.shape[:-1])  # A_T = 0: no TD errors after the last step
    for t in reversed(range(deltas.shape[-1])):
        future = deltas[..., t] + gamma * lam * future
        advantages[..., t] = future
    return advantages


def gae_explicit(rewards: ArrayLike, values: ArrayLike, gamma: float, lam: float) -> np.ndarray:
    """Generalized advantage estimates by their definition, an explicit weighted sum.

        A_t = Σ_{l=0}^{T-1-t} (γ λ)^l δ_{t+l},

    written as A = W δ with the upper-triangular matrix W[t, s] = (γ λ)^(s - t) for s >= t.
    It costs O(T²), so it is the reference against which :func:`gae_recursive` is checked,
    not the form to use on long trajectories.

    Book: equation (eq-gae), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t.
    values : array_like, shape (..., T + 1)
        Values V(s_0), ..., V(s_T); the last is the bootstrap value.
    gamma : float
        Discount factor γ in [0, 1].
    lam : float
        GAE parameter λ in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The advantages A_t.

    Raises
    ------
    ValueError
        As :func:`td_errors`, and if ``lam`` is outside [0, 1].

    References
    ----------
    J. Schulman, P. Moritz, S. Levine, M. Jordan and P. Abbeel, "High-dimensional continuous
    control using generalized advantage estimation", ICLR, 2016.

    Examples
    --------
    >>> gae_explicit([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9, lam=0.5)
    array([ 0.725, -0.5  ])
    """
    rewards, values = check_values_for_rewards(rewards, values)
    gamma = check_unit_interval(gamma, "gamma")
    lam = check_unit_interval(lam, "lam")

    deltas = td_errors(rewards, values, gamma)
    horizon = deltas.shape[-1]
    lag = np.arange(horizon) - np.arange(horizon)[:, None]  # lag[t, s] = s - t
    # (γλ)^0 = 1 on the diagonal even when γλ = 0; below it the weight is 0.
    weights = np.where(lag >= 0, (gamma * lam) ** np.maximum(lag, 0), 0.0)
    return deltas @ weights.T
