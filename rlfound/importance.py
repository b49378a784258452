"""Importance sampling: estimating a target policy's value from actions logged by another.

Actions a_1, ..., a_N were drawn from a behavior policy μ over K actions; we want the
expected reward under a target policy π. Reweighting each sample by ρ_i = π(a_i) / μ(a_i)
turns an average under μ into an average under π,

    E_{a ~ π}[f(a)] = E_{a ~ μ}[(π(a) / μ(a)) f(a)],

provided μ(a) > 0 wherever π(a) f(a) ≠ 0 (the support condition).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    check_distribution,
    check_indices,
    check_last_axis,
    check_shape,
    check_support,
    check_weights,
)

__all__ = [
    "effective_sample_size",
    "importance_ratios",
    "importance_sampling_variance",
    "off_policy_value",
    "weighted_off_policy_value",
]


def _check_policies(
    target_probs: ArrayLike, behavior_probs: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Two 1-D probability vectors over the same K actions."""
    target_probs = check_distribution(
        as_float_array(target_probs, "target_probs", ndim=1), "target_probs"
    )
    behavior_probs = check_distribution(
        as_float_array(behavior_probs, "behavior_probs", ndim=1), "behavior_probs"
    )
    check_shape(behavior_probs, "behavior_probs", target_probs.shape, "the actions of target_probs")
    return target_probs, behavior_probs


def _check_logged_rewards(rewards: ArrayLike, ratios: np.ndarray) -> np.ndarray:
    """At least one logged action, and one finite reward for each."""
    check_last_axis(ratios, "actions", 1, "logged action")
    rewards = as_float_array(rewards, "rewards", ndim=1)
    return check_shape(rewards, "rewards", ratios.shape, "one entry per logged action")


def importance_ratios(
    actions: ArrayLike, target_probs: ArrayLike, behavior_probs: ArrayLike
) -> np.ndarray:
    """Importance ratio of every logged action.

        ρ_i = π(a_i) / μ(a_i).

    A logged action must have μ(a_i) > 0; otherwise the data could not contain it and the
    ratio is undefined, so that case is an error rather than an infinity.

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    actions : array_like of int, shape (N,)
        Logged actions a_i in [0, K), drawn from the behavior policy.
    target_probs : array_like, shape (K,)
        Target policy π, a probability vector.
    behavior_probs : array_like, shape (K,)
        Behavior policy μ that logged the actions, a probability vector.

    Returns
    -------
    numpy.ndarray, shape (N,)
        The ratios ρ_i.

    Raises
    ------
    ValueError
        If either policy is not a 1-D probability vector or they differ in length, an action
        is not an integer in [0, K), or a logged action has behavior probability 0.

    References
    ----------
    H. Kahn and A. W. Marshall, "Methods of reducing sample size in Monte Carlo
    computations", *Journal of the Operations Research Society of America* 1(5), 1953.
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, chapter 9.

    Examples
    --------
    >>> importance_ratios([0, 1, 1], target_probs=[0.25, 0.75], behavior_probs=[0.8, 0.2])
    array([0.3125, 3.75  , 3.75  ])
    """
    target_probs, behavior_probs = _check_policies(target_probs, behavior_probs)
    actions = check_indices(actions, "actions", len(target_probs), ndim=1)
    logged = np.isin(np.arange(len(behavior_probs)), actions)
    check_support(behavior_probs, "behavior_probs", "for every logged action", logged)

    return target_probs[actions] / behavior_probs[actions]


def off_policy_value(
    actions: ArrayLike, rewards: ArrayLike, target_probs: ArrayLike, behavior_probs: ArrayLike
) -> float:
    """Ordinary importance-sampling estimate of the target policy's expected reward.

        V̂_IS = (1/N) Σ_i ρ_i r_i,    ρ_i = π(a_i) / μ(a_i).

    Unbiased when μ(a) > 0 for every action with π(a) > 0, but its variance grows with how
    far π is from μ (see :func:`importance_sampling_variance`).

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    actions : array_like of int, shape (N,)
        Logged actions a_i in [0, K), N >= 1.
    rewards : array_like, shape (N,)
        Reward r_i observed for each logged action.
    target_probs : array_like, shape (K,)
        Target policy π.
    behavior_probs : array_like, shape (K,)
        Behavior policy μ.

    Returns
    -------
    float
        The estimate V̂_IS.

    Raises
    ------
    ValueError
        As :func:`importance_ratios`, and if ``actions`` is empty or ``rewards`` does not
        have one finite entry per action.

    References
    ----------
    H. Kahn and A. W. Marshall, "Methods of reducing sample size in Monte Carlo
    computations", *Journal of the Operations Research Society of America* 1(5), 1953.
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, chapter 9.
    D. Precup, R. S. Sutton and S. Singh, "Eligibility traces for off-policy policy
    evaluation", ICML, 2000.

    Examples
    --------
    >>> off_policy_value([0, 1], [1.0, 3.0], target_probs=[0.25, 0.75], behavior_probs=[0.5, 0.5])
    2.5
    """
    ratios = importance_ratios(actions, target_probs, behavior_probs)
    rewards = _check_logged_rewards(rewards, ratios)

    return float(np.mean(ratios * rewards))


def weighted_off_policy_value(
    actions: ArrayLike, rewards: ArrayLike, target_probs: ArrayLike, behavior_probs: ArrayLike
) -> float:
    """Self-normalized (weighted) importance-sampling estimate of the target's value.

        V̂_WIS = Σ_i ρ_i r_i / Σ_i ρ_i.

    Dividing by the realized sum of the ratios instead of N makes the estimate a convex
    combination of the observed rewards: slightly biased for finite N, consistent, and
    usually far less variable than :func:`off_policy_value`.

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    actions : array_like of int, shape (N,)
        Logged actions a_i in [0, K), N >= 1.
    rewards : array_like, shape (N,)
        Reward r_i observed for each logged action.
    target_probs : array_like, shape (K,)
        Target policy π.
    behavior_probs : array_like, shape (K,)
        Behavior policy μ.

    Returns
    -------
    float
        The estimate V̂_WIS.

    Raises
    ------
    ValueError
        As :func:`off_policy_value`, and if π gives probability 0 to every logged action
        (all ratios are 0 and the estimate is undefined).

    References
    ----------
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, section 9.2.
    D. Precup, R. S. Sutton and S. Singh, "Eligibility traces for off-policy policy
    evaluation", ICML, 2000.

    Examples
    --------
    >>> weighted_off_policy_value([0, 1, 1], [1.0, 3.0, 3.0], [0.25, 0.75], [0.5, 0.5])
    2.714285714285714
    """
    ratios = importance_ratios(actions, target_probs, behavior_probs)
    rewards = _check_logged_rewards(rewards, ratios)
    if ratios.sum() == 0.0:
        raise ValueError(
            "target_probs must give positive probability to at least one logged action "
            "for the self-normalized estimate; got 0 for all of them"
        )

    return float(np.sum(ratios * rewards) / np.sum(ratios))


def importance_sampling_variance(
    target_probs: ArrayLike, behavior_probs: ArrayLike, action_rewards: ArrayLike
) -> float:
    """Exact variance of the one-sample importance-sampling estimate ρ(a) q(a), a ~ μ.

        Var_μ[ρ q] = Σ_a π(a)² q(a)² / μ(a) - (Σ_a π(a) q(a))²,

    where the first sum runs over actions with μ(a) > 0. The variance of the N-sample
    average :func:`off_policy_value` is this divided by N. The 1/μ(a) factor shows why a
    behavior policy that rarely takes an action the target likes makes the estimate noisy.

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    target_probs : array_like, shape (K,)
        Target policy π.
    behavior_probs : array_like, shape (K,)
        Behavior policy μ.
    action_rewards : array_like, shape (K,)
        Deterministic reward q(a) of each action.

    Returns
    -------
    float
        The variance, >= 0.

    Raises
    ------
    ValueError
        If the policies are not 1-D probability vectors of equal length,
        ``action_rewards`` does not have one finite entry per action, or some action has
        μ(a) = 0 but π(a) q(a) ≠ 0 (the estimate is then biased, so its variance is beside
        the point).

    References
    ----------
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, section 9.1.
    H. Kahn and A. W. Marshall, "Methods of reducing sample size in Monte Carlo
    computations", *Journal of the Operations Research Society of America* 1(5), 1953.

    Examples
    --------
    >>> importance_sampling_variance([0.25, 0.75], [0.8, 0.2], action_rewards=[1.0, 3.0])
    19.140625
    >>> importance_sampling_variance([0.25, 0.75], [0.25, 0.75], action_rewards=[1.0, 3.0])
    0.75
    """
    target_probs, behavior_probs = _check_policies(target_probs, behavior_probs)
    action_rewards = as_float_array(action_rewards, "action_rewards", ndim=1)
    check_shape(action_rewards, "action_rewards", target_probs.shape, "one entry per action")
    weighted = target_probs * action_rewards  # π(a) q(a), the integrand of the target value
    check_support(behavior_probs, "behavior_probs", "wherever π(a) q(a) is non-zero", weighted != 0)
    supported = behavior_probs > 0.0

    second_moment = np.sum(weighted[supported] ** 2 / behavior_probs[supported])
    # Rounding can leave a tiny negative number when μ = π and q is constant.
    return float(max(second_moment - weighted.sum() ** 2, 0.0))


def effective_sample_size(weights: ArrayLike) -> float:
    """Kish/Kong effective sample size of a set of importance weights.

        ESS = (Σ_i w_i)² / Σ_i w_i².

    It equals N when all weights are equal and 1 when a single weight carries all the mass,
    so ESS / N says what fraction of the samples is really informing the estimate.

    Book: equation (eq-importance), chapter 1.

    Parameters
    ----------
    weights : array_like, shape (N,)
        Non-negative importance weights (for example the ratios ρ_i), not all zero.

    Returns
    -------
    float
        The effective sample size, in [1, N].

    Raises
    ------
    ValueError
        If ``weights`` is not a finite 1-D array, has a negative entry, or is all zero.

    References
    ----------
    A. Kong, "A note on importance sampling using standardized weights", Technical Report
    348, Department of Statistics, University of Chicago, 1992.
    A. B. Owen, *Monte Carlo theory, methods and examples*, 2013, section 9.3.

    Examples
    --------
    >>> effective_sample_size([1.0, 1.0, 1.0, 1.0])
    4.0
    >>> effective_sample_size([0.3125, 3.75, 3.75])
    2.1626
    """
    weights = check_weights(weights, "weights")

    # Scaling by the largest weight leaves the ratio unchanged and keeps w² from overflowing.
    scaled = weights / weights.max()
    return float(scaled.sum() ** 2 / np.sum(scaled**2))
