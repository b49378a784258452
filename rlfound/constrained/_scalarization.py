"""Scalarization, Pareto fronts and lexicographic choice among candidates."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_nonnegative_real,
    check_shape,
    finite_output,
)


@finite_output()
def scalarized_reward(
    rewards: ArrayLike,
    costs: ArrayLike,
    cost_weights: ArrayLike,
    reward_weight: float = 1.0,
) -> float | np.ndarray:
    """Weighted scalar reward: a reward minus weighted costs.

        r = w_R r - Σ_k w_k c_k,        every weight >= 0,

    for example r = w_s r^succ - w_c c^cost - w_v c^viol for success, resource cost and
    violations. The weights are exchange rates: w_v / w_s successes are worth one
    violation. Maximizing the expected weighted reward of a policy picks one point of the
    Pareto front (a vertex of it, for a policy over finitely many options), and which point
    depends on the weights, not on any limit the designer had in mind.

    Book: equation (eq-scalarized-reward), chapter 11.

    Parameters
    ----------
    rewards : array_like, shape (...)
        The reward term r (a scalar or any array).
    costs : array_like, shape (...) or (..., M)
        The cost terms: the shape of ``rewards`` for one cost, with a last axis of M
        costs for several.
    cost_weights : float or array_like, shape (M,)
        Non-negative weights w_k: a number for one cost, an array for M costs.
    reward_weight : float, optional
        Non-negative weight w_R of the reward.

    Returns
    -------
    float or numpy.ndarray, shape (...)
        The weighted reward; a float when ``rewards`` is a scalar.

    Raises
    ------
    ValueError
        If an input is not finite and real, a weight is negative (a negative cost weight
        would reward the cost), ``cost_weights`` is not a number or a 1-D array, or
        ``costs`` does not have the shape that ``rewards`` and ``cost_weights`` imply.

    References
    ----------
    D. M. Roijers, P. Vamplew, S. Whiteson and R. Dazeley, "A survey of multi-objective
    sequential decision-making", *Journal of Artificial Intelligence Research* 48, 67-113,
    2013.

    Examples
    --------
    A success worth 1, a cost of 0.3 at weight 0.5 and a violation at weight 2:

    >>> scalarized_reward(1.0, [0.3, 1.0], [0.5, 2.0])
    -1.15
    """
    rewards = as_float_array(rewards, "rewards")
    cost_weights = as_float_array(cost_weights, "cost_weights")
    if cost_weights.ndim > 1:
        raise ValueError(
            "cost_weights must be a number (one cost) or a 1-D array (one "
            f"weight per cost); got shape {cost_weights.shape}"
        )
    if (cost_weights < 0.0).any():
        raise ValueError(
            f"cost_weights must be non-negative; got {cost_weights.tolist()}"
        )
    costs = as_float_array(costs, "costs")
    if cost_weights.ndim == 0:
        check_shape(
            costs, "costs", rewards.shape, "the shape of rewards (one cost)"
        )
    else:
        check_shape(
            costs,
            "costs",
            rewards.shape + cost_weights.shape,
            "the shape of rewards + (M,)",
        )
    reward_weight = check_nonnegative_real(reward_weight, "reward_weight")

    weighted_costs = (
        costs * cost_weights
        if cost_weights.ndim == 0
        else costs @ cost_weights
    )
    total = reward_weight * rewards - weighted_costs
    return float(total) if total.ndim == 0 else total


@finite_output()
def pareto_mask(objectives: ArrayLike) -> np.ndarray:
    """Which candidates are Pareto optimal: not dominated by any other candidate.

    Candidate i is dominated when another candidate j is at least as good in every objective
    and strictly better in one:

        o_j >= o_i entrywise and o_j != o_i.

    Every objective counts as larger-is-better; pass the negative of a cost. Candidates with
    equal objectives do not dominate each other, so both are kept. Only the listed candidates
    are compared: a candidate can be Pareto optimal among them and still be dominated by a
    mixture of two others (a stochastic policy), which is why the front of all policies is
    the upper boundary of the convex hull of the deterministic ones.

    Book: equation (eq-pareto), chapter 11.

    Parameters
    ----------
    objectives : array_like, shape (N, M)
        Row i holds the M objectives of candidate i; N, M >= 1.

    Returns
    -------
    numpy.ndarray of bool, shape (N,)
        True for the candidates that no other candidate dominates.

    Raises
    ------
    ValueError
        If ``objectives`` is not a finite real 2-D array with at least one row and column.

    References
    ----------
    D. M. Roijers, P. Vamplew, S. Whiteson and R. Dazeley, "A survey of multi-objective
    sequential decision-making", *Journal of Artificial Intelligence Research* 48, 67-113,
    2013.

    Examples
    --------
    Utility against minus the violation rate: the third candidate is dominated by the second.

    >>> pareto_mask([[0.55, 0.0], [0.80, -0.04], [0.70, -0.05], [0.925, -0.20]])
    array([ True,  True, False,  True])
    """
    objectives = as_float_array(objectives, "objectives", ndim=2)
    if 0 in objectives.shape:
        raise ValueError(
            "objectives must have at least one candidate (row) and one "
            f"objective (column); got shape {objectives.shape}"
        )

    # at_least[i, j]: candidate j is >= candidate i everywhere; better[i, j]:
    # > somewhere.
    at_least = (objectives[None, :, :] >= objectives[:, None, :]).all(
        axis=-1
    )
    better = (objectives[None, :, :] > objectives[:, None, :]).any(axis=-1)
    return ~(at_least & better).any(axis=1)


@finite_output()
def lexicographic_mask(
    costs: ArrayLike, utilities: ArrayLike, tolerance: float = 0.0
) -> np.ndarray:
    """Lexicographic choice: first the safest candidates (within a tolerance), then the most useful.

        admissible = { i : c_i <= min_j c_j + ξ },
        chosen = argmax_{i ∈ admissible} u_i.

    No amount of utility buys a candidate whose cost is more than ξ above the best, however
    large the utility: unlike a weighted sum, the order of the objectives is absolute. The
    candidates lie on the last axis, so a (S, A) array of per-action costs selects actions
    state by state (an action filter). A candidate can be a deterministic policy or an
    action; the choice is among the listed candidates, not their mixtures.

    Book: equation (eq-lexicographic), chapter 11.

    Parameters
    ----------
    costs : array_like, shape (..., N)
        The first objective, smaller is better (a violation probability, an expected cost).
    utilities : array_like, shape (..., N)
        The second objective, larger is better, the shape of ``costs``.
    tolerance : float, optional
        ξ >= 0: how much more than the smallest cost still counts as safe.

    Returns
    -------
    numpy.ndarray of bool, shape (..., N)
        True for the chosen candidates: admissible and of the largest utility among the
        admissible ones (several, if they tie exactly).

    Raises
    ------
    ValueError
        If ``costs`` is not a finite real array with at least one candidate on its last
        axis, ``utilities`` does not have its shape or is not finite, or ``tolerance`` is
        negative or not finite.

    References
    ----------
    J. Skalse, L. Hammond, C. Griffin and A. Abate, "Lexicographic multi-objective
    reinforcement learning", IJCAI, 2022.

    Examples
    --------
    Violation rates and utilities of four actions: without tolerance only the two safe
    actions are admissible, with a tolerance of 0.05 the third one is too.

    >>> lexicographic_mask([0.0, 0.0, 0.04, 0.2], [0.3, 0.55, 0.8, 0.925])
    array([False,  True, False, False])
    >>> lexicographic_mask([0.0, 0.0, 0.04, 0.2], [0.3, 0.55, 0.8, 0.925], tolerance=0.05)
    array([False, False,  True, False])
    """
    costs = as_float_array(costs, "costs", min_ndim=1)
    if costs.shape[-1] == 0:
        raise ValueError(
            "costs must have at least one candidate on the last axis; got "
            f"shape {costs.shape}"
        )
    utilities = as_float_array_like(
        utilities, "utilities", costs.shape, "costs"
    )
    tolerance = check_nonnegative_real(tolerance, "tolerance")

    admissible = costs <= costs.min(axis=-1, keepdims=True) + tolerance
    best = np.where(admissible, utilities, -np.inf).max(
        axis=-1, keepdims=True
    )
    return admissible & (utilities == best)
