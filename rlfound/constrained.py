"""Several objectives: weighted sums, Pareto fronts, constraints, Lagrangians, lexicographic choice.

An agent is judged on more than one number: success, cost, safety violations. This module
holds the three ways of turning several objectives into decisions that the book compares:

- **Scalarization**: one weighted sum of the objectives (:func:`scalarized_reward`), and the
  Pareto front of a finite set of candidates (:func:`pareto_mask`).
- **Constraints**: maximize the expected reward J_R(θ) subject to an expected cost
  J_C(θ) <= C_max. Its Lagrangian J_ν(θ) = J_R(θ) - ν (J_C(θ) - C_max), ν >= 0
  (:func:`lagrangian`, :func:`lagrangian_gradients`), the projected multiplier update
  (:func:`multiplier_update`), one primal-dual step (:func:`primal_dual_step`) and a runner
  that returns every iterate (:func:`primal_dual`); the exact reference for a tabular MDP is a
  linear program over occupancy measures (:func:`occupancy_lp`), and the exact values and
  policy gradients of a tabular softmax policy come from :func:`value_and_gradient`.
- **Lexicographic choice**: keep the candidates whose cost is within a tolerance of the
  best, then take the most useful (:func:`lexicographic_mask`).

The book writes the Lagrange multiplier ν and the budget C_max (most papers and trainers call
them λ and d; the book keeps λ for GAE and d_π for occupancies). One constraint is given as
Python floats; M constraints as arrays of shape (M,) for ``cost_value``, ``multiplier`` and
``budget``, and then gradients of the costs carry a leading axis of length M.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from rlfound._validation import (
    MAX_ITERATIONS,
    as_float_array,
    as_float_array_like,
    check_bool,
    check_callable,
    check_choice,
    check_dynamics,
    check_initial,
    check_mask,
    check_nonnegative_int,
    check_nonnegative_real,
    check_real,
    check_shape,
    check_size,
    check_tabular_logits,
    check_unit_interval,
    finite_output,
    float_or_array,
)
from rlfound.distributions import softmax
from rlfound.mdp import (
    discounted_occupancy,
    evaluate_policy,
    policy_transition_and_reward,
)

__all__ = [
    "ORDERS",
    "PARAMETERIZATIONS",
    "ConstrainedSolution",
    "PrimalDualHistory",
    "lagrangian",
    "lagrangian_gradients",
    "lexicographic_mask",
    "multiplier_update",
    "occupancy_lp",
    "pareto_mask",
    "primal_dual",
    "primal_dual_step",
    "scalarized_reward",
    "value_and_gradient",
]

#: The update orders of :func:`primal_dual_step` and :func:`primal_dual`.
ORDERS = ("multiplier_first", "simultaneous")
#: How :func:`multiplier_update` keeps the multiplier non-negative.
PARAMETERIZATIONS = ("projected", "log")


# --- input checks shared by the functions of this module ---------------------------------------


def _as_constraint_array(x: Any, name: str) -> np.ndarray:
    """A finite real scalar (one constraint) or a 1-D array (one entry per constraint)."""
    array = as_float_array(x, name)
    if array.ndim > 1:
        raise ValueError(
            f"{name} must be a real number (one constraint) or a 1-D array (one entry per "
            f"constraint); got shape {array.shape}"
        )
    return array


def _check_constraints(
    cost_value: Any, multiplier: Any, budget: Any, *, positive: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """J_C, ν and C_max: three arrays of one shape, () or (M,), with ν >= 0 (> 0 if positive)."""
    cost_value = _as_constraint_array(cost_value, "cost_value")
    shape = cost_value.shape
    multiplier = as_float_array_like(
        multiplier, "multiplier", shape, "cost_value"
    )
    budget = as_float_array_like(budget, "budget", shape, "cost_value")
    bad = multiplier <= 0.0 if positive else multiplier < 0.0
    if bad.any():
        what = (
            "positive (the log parameterization)"
            if positive
            else "non-negative"
        )
        raise ValueError(
            f"multiplier must be {what}, a Lagrange multiplier of an inequality constraint; "
            f"got {float(multiplier[bad][0])!r}"
        )
    return cost_value, multiplier, budget


def _check_gradients(
    reward_gradient: Any, cost_gradient: Any, shape: tuple[int, ...]
):
    """∇J_R of any shape, and ∇J_C of that shape (one constraint) or (M,) + that shape."""
    reward_gradient = as_float_array(
        reward_gradient, "reward_gradient", min_ndim=1
    )
    expected = shape + reward_gradient.shape
    cost_gradient = as_float_array(cost_gradient, "cost_gradient")
    what = (
        "the shape of reward_gradient"
        if not shape
        else "(M,) + the shape of reward_gradient"
    )
    check_shape(cost_gradient, "cost_gradient", expected, what)
    return reward_gradient, cost_gradient


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
            "cost_weights must be a number (one cost) or a 1-D array (one weight per cost); "
            f"got shape {cost_weights.shape}"
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
            "objectives must have at least one candidate (row) and one objective (column); "
            f"got shape {objectives.shape}"
        )

    # at_least[i, j]: candidate j is >= candidate i everywhere; better[i, j]: > somewhere.
    at_least = (objectives[None, :, :] >= objectives[:, None, :]).all(
        axis=-1
    )
    better = (objectives[None, :, :] > objectives[:, None, :]).any(axis=-1)
    return ~(at_least & better).any(axis=1)


# --- the Lagrangian ---------------------------------------------------------------------------


@finite_output()
def lagrangian(
    reward_value: float,
    cost_value: ArrayLike,
    multiplier: ArrayLike,
    budget: ArrayLike,
) -> float:
    """The Lagrangian of a constrained objective.

        J_ν(θ) = J_R(θ) - Σ_k ν_k (J_{C_k}(θ) - C_max,k),        ν_k >= 0.

    For a fixed ν it is the expected reward of the scalarized reward r - Σ_k ν_k c_k (up to
    the constant Σ_k ν_k C_max,k): a multiplier is a weight that the algorithm chooses. For
    every feasible policy (J_C <= C_max) and every ν >= 0, J_ν >= J_R, so
    max_θ J_ν(θ) bounds the constrained optimum from above (weak duality).

    Book: equation (eq-lagrangian), chapter 11.

    Parameters
    ----------
    reward_value : float
        J_R(θ).
    cost_value : float or array_like, shape (M,)
        J_C(θ), one entry per constraint.
    multiplier : float or array_like, shape (M,)
        ν >= 0, the shape of ``cost_value``.
    budget : float or array_like, shape (M,)
        C_max, the shape of ``cost_value``.

    Returns
    -------
    float
        J_ν(θ), the Lagrangian.

    Raises
    ------
    ValueError
        If an input is not finite and real, ``cost_value`` has more than one dimension,
        ``multiplier`` or ``budget`` does not have its shape, or a multiplier is negative.

    References
    ----------
    E. Altman, *Constrained Markov Decision Processes*, Chapman & Hall/CRC, 1999,
    section 3.3.

    Examples
    --------
    >>> lagrangian(0.8, 0.04, 2.0, 0.01)
    0.74
    """
    reward_value = check_real(reward_value, "reward_value")
    cost_value, multiplier, budget = _check_constraints(
        cost_value, multiplier, budget
    )

    return float(reward_value - np.sum(multiplier * (cost_value - budget)))


@finite_output()
def lagrangian_gradients(
    reward_gradient: ArrayLike,
    cost_gradient: ArrayLike,
    cost_value: ArrayLike,
    multiplier: ArrayLike,
    budget: ArrayLike,
) -> tuple[np.ndarray, float | np.ndarray]:
    """The two partial derivatives of the Lagrangian.

        ∇_θ J_ν = ∇J_R - Σ_k ν_k ∇J_{C_k},        ∂J_ν/∂ν_k = -(J_{C_k} - C_max,k).

    The policy ascends J_ν in θ. The multiplier *descends* J_ν in ν: the step
    ν <- ν - η_ν ∂J_ν/∂ν = ν + η_ν (J_C - C_max) raises ν while the constraint is violated.
    In code that minimizes losses, the policy's loss is -J_ν (ν held fixed) and the
    multiplier's loss is +J_ν restricted to ν, i.e. -ν (J_C - C_max) with J_C held fixed; the
    second returned value is the gradient of that multiplier loss.

    Book: equations (eq-lagrangian-gradients) and (eq-loss-signs), chapter 11.

    Parameters
    ----------
    reward_gradient : array_like, shape (...)
        ∇_θ J_R, with the shape of the parameters θ.
    cost_gradient : array_like, shape (...) or (M, ...)
        ∇_θ J_C: the shape of ``reward_gradient`` for one constraint, with a leading axis of
        M for several.
    cost_value : float or array_like, shape (M,)
        J_C(θ).
    multiplier : float or array_like, shape (M,)
        ν >= 0.
    budget : float or array_like, shape (M,)
        C_max.

    Returns
    -------
    params_gradient : numpy.ndarray, shape (...)
        ∇_θ J_ν.
    multiplier_gradient : float or numpy.ndarray, shape (M,)
        ∂J_ν/∂ν = C_max - J_C.

    Raises
    ------
    ValueError
        As :func:`lagrangian`, and if ``reward_gradient`` is a scalar or ``cost_gradient``
        does not have the shape it implies.

    References
    ----------
    C. Tessler, D. J. Mankowitz and S. Mannor, "Reward constrained policy optimization",
    ICLR, 2019.

    Examples
    --------
    >>> grad_params, grad_multiplier = lagrangian_gradients(
    ...     [0.3, -0.3], [0.1, -0.1], cost_value=0.04, multiplier=2.0, budget=0.01)
    >>> grad_params, grad_multiplier
    (array([ 0.1, -0.1]), -0.03)
    """
    cost_value, multiplier, budget = _check_constraints(
        cost_value, multiplier, budget
    )
    reward_gradient, cost_gradient = _check_gradients(
        reward_gradient, cost_gradient, cost_value.shape
    )

    penalty = np.tensordot(
        multiplier, cost_gradient, axes=multiplier.ndim
    )  # Σ_k ν_k ∇J_Ck
    return reward_gradient - penalty, float_or_array(budget - cost_value)


@finite_output()
def multiplier_update(
    multiplier: ArrayLike,
    cost_value: ArrayLike,
    budget: ArrayLike,
    multiplier_lr: float,
    parameterization: str = "projected",
) -> float | np.ndarray:
    """One step of the multiplier: gradient descent on J_ν in ν, kept non-negative.

        projected:  ν <- max(0, ν + η_ν (J_C - C_max)),
        log:        log ν <- log ν + η_ν ν (J_C - C_max),  i.e.  ν <- ν exp(η_ν ν (J_C - C_max)).

    A violated constraint (J_C > C_max) raises the multiplier, a slack one lowers it. The
    projected form is gradient descent on J_ν in ν followed by the projection onto ν >= 0
    (OmniSafe's ``Lagrange`` minimizes the loss -ν (J_C - C_max) with a torch optimizer and
    clamps ν to [0, upper bound]). The log form is gradient descent on the same loss in the
    variable log ν (Safe RLHF's PPO-Lag trainer, with plain SGD on ``log_lambda``): ν stays
    positive without a projection and can only approach 0 geometrically, and its steps are
    scaled by ν.

    Book: equations (eq-primal-dual) and (eq-loss-signs), chapter 11.

    Parameters
    ----------
    multiplier : float or array_like, shape (M,)
        ν: >= 0 for ``"projected"``, > 0 for ``"log"``.
    cost_value : float or array_like, shape (M,)
        J_C(θ) of the current policy (estimated from its episodes).
    budget : float or array_like, shape (M,)
        C_max.
    multiplier_lr : float
        Step size η_ν >= 0 (0 freezes ν: a fixed penalty).
    parameterization : {"projected", "log"}, optional
        How ν is kept non-negative, as above.

    Returns
    -------
    float or numpy.ndarray, shape (M,)
        The new ν, >= 0.

    Raises
    ------
    ValueError
        As :func:`lagrangian` (a negative multiplier, or a zero one with ``"log"``), if
        ``multiplier_lr`` is negative or not finite, or if ``parameterization`` is unknown.

    Notes
    -----
    Checked in the trainers' code: OmniSafe, ``omnisafe/common/lagrange.py``
    (``Lagrange.compute_lambda_loss`` returns ``-lagrangian_multiplier * (mean_ep_cost -
    cost_limit)``; ``update_lagrange_multiplier`` steps the optimizer, then
    ``clamp_(0, upper_bound)``); Safe RLHF, ``safe_rlhf/algorithms/ppo_lag/trainer.py``
    (``PPOLagTrainer.rl_step``: ``lambda_loss = -(episode_cost - threshold) *
    log_lambda.exp()`` with ``torch.optim.SGD`` on ``log_lambda``, read in a copy of that
    file in the repository tcexeexe/SHTEC_RM_model).

    References
    ----------
    E. Altman, *Constrained Markov Decision Processes*, Chapman & Hall/CRC, 1999.
    J. Dai, X. Pan, R. Sun, J. Ji, X. Xu, M. Liu, Y. Wang and Y. Yang, "Safe RLHF: safe
    reinforcement learning from human feedback", ICLR, 2024.

    Examples
    --------
    The constraint is violated by 0.03, so the multiplier rises; a slack one would fall to 0.

    >>> multiplier_update(2.0, cost_value=0.04, budget=0.01, multiplier_lr=10.0)
    2.3
    >>> multiplier_update(0.1, cost_value=0.0, budget=0.01, multiplier_lr=100.0)
    0.0
    """
    parameterization = check_choice(
        parameterization, "parameterization", PARAMETERIZATIONS
    )
    cost_value, multiplier, budget = _check_constraints(
        cost_value, multiplier, budget, positive=parameterization == "log"
    )
    multiplier_lr = check_nonnegative_real(multiplier_lr, "multiplier_lr")

    violation = cost_value - budget  # = -∂J_ν/∂ν
    if parameterization == "projected":
        return float_or_array(
            np.maximum(0.0, multiplier + multiplier_lr * violation)
        )
    return float_or_array(
        multiplier * np.exp(multiplier_lr * multiplier * violation)
    )


@finite_output()
def primal_dual_step(
    params: ArrayLike,
    multiplier: ArrayLike,
    reward_gradient: ArrayLike,
    cost_gradient: ArrayLike,
    cost_value: ArrayLike,
    budget: ArrayLike,
    lr: float,
    multiplier_lr: float,
    order: str = "multiplier_first",
    normalize: bool = False,
    parameterization: str = "projected",
) -> tuple[np.ndarray, float | np.ndarray]:
    """One primal-dual step: policy ascent on J_ν, multiplier descent on J_ν.

        ν' = max(0, ν + η_ν (J_C(θ) - C_max)),
        θ' = θ + η (∇J_R(θ) - ν̃ ∇J_C(θ)) / s,

    with ν̃ = ν' (``order="multiplier_first"``) or ν̃ = ν (``"simultaneous"``), and
    s = 1 + Σ_k ν̃_k when ``normalize`` is True, else 1. Both orders use the gradients and
    the cost measured at θ, so one evaluation of the policy serves the whole step.

    The defaults follow the trainers: OmniSafe's ``PPOLag._update`` and Safe RLHF's
    ``PPOLagTrainer.rl_step`` first update the multiplier from the episode cost of the
    current policy and then take the policy step with the new multiplier
    (``"multiplier_first"``). Both divide the combined advantage by 1 + ν
    (``(adv_r - penalty * adv_c) / (1 + penalty)``; ``normalize=True``), which keeps the size
    of the policy step bounded as ν grows without changing its direction. ``"simultaneous"``
    is the textbook gradient descent-ascent; it oscillates more (chapter 11).

    Book: equation (eq-primal-dual), chapter 11.

    Parameters
    ----------
    params : array_like, shape (...)
        θ, the policy parameters (logits).
    multiplier : float or array_like, shape (M,)
        ν >= 0 (> 0 with ``parameterization="log"``).
    reward_gradient : array_like, shape (...)
        ∇J_R(θ), the shape of ``params``.
    cost_gradient : array_like, shape (...) or (M, ...)
        ∇J_C(θ).
    cost_value : float or array_like, shape (M,)
        J_C(θ).
    budget : float or array_like, shape (M,)
        C_max.
    lr : float
        Policy step size η >= 0.
    multiplier_lr : float
        Multiplier step size η_ν >= 0.
    order : {"multiplier_first", "simultaneous"}, optional
        Which multiplier the policy step uses, as above.
    normalize : bool, optional
        Divide the policy step by 1 + Σ_k ν̃_k.
    parameterization : {"projected", "log"}, optional
        The multiplier update of :func:`multiplier_update`.

    Returns
    -------
    params : numpy.ndarray, shape (...)
        θ'.
    multiplier : float or numpy.ndarray, shape (M,)
        ν'.

    Raises
    ------
    ValueError
        As :func:`lagrangian_gradients` and :func:`multiplier_update`, and if ``params``
        does not have the shape of ``reward_gradient``, ``lr`` is negative, ``order`` is
        unknown or ``normalize`` is not a bool.

    Notes
    -----
    Checked in the trainers' code: OmniSafe,
    ``omnisafe/algorithms/on_policy/naive_lagrange/ppo_lag.py`` (``PPOLag._update`` calls
    ``update_lagrange_multiplier(Jc)`` before ``super()._update()``;
    ``_compute_adv_surrogate`` returns ``(adv_r - penalty * adv_c) / (1 + penalty)``); Safe
    RLHF, ``safe_rlhf/algorithms/ppo_lag/trainer.py`` (``rl_step`` updates ``log_lambda``
    before the actor step; ``actor_loss_fn`` uses ``(reward_advantages - multiplier *
    cost_advantages) / (1.0 + multiplier)``).

    References
    ----------
    C. Tessler, D. J. Mankowitz and S. Mannor, "Reward constrained policy optimization",
    ICLR, 2019.
    A. Stooke, J. Achiam and P. Abbeel, "Responsive safety in reinforcement learning by PID
    Lagrangian methods", ICML, 2020.

    Examples
    --------
    >>> params, multiplier = primal_dual_step(
    ...     [0.0, 0.0], 1.0, reward_gradient=[0.1, -0.1], cost_gradient=[0.05, -0.05],
    ...     cost_value=0.5, budget=0.25, lr=1.0, multiplier_lr=2.0)
    >>> params, multiplier
    (array([ 0.025, -0.025]), 1.5)
    """
    order = check_choice(order, "order", ORDERS)
    normalize = check_bool(normalize, "normalize")
    new_multiplier = multiplier_update(
        multiplier, cost_value, budget, multiplier_lr, parameterization
    )
    cost_value, multiplier, budget = _check_constraints(
        cost_value, multiplier, budget
    )
    reward_gradient, cost_gradient = _check_gradients(
        reward_gradient, cost_gradient, cost_value.shape
    )
    params = as_float_array_like(
        params, "params", reward_gradient.shape, "reward_gradient"
    )
    lr = check_nonnegative_real(lr, "lr")

    used = (
        np.asarray(new_multiplier)
        if order == "multiplier_first"
        else multiplier
    )
    ascent, _ = lagrangian_gradients(
        reward_gradient, cost_gradient, cost_value, used, budget
    )
    scale = 1.0 + float(np.sum(used)) if normalize else 1.0
    return params + lr * ascent / scale, new_multiplier


class PrimalDualHistory(NamedTuple):
    """The iterates of :func:`primal_dual`; entry k belongs to iterate k (k = 0 is the start).

    Attributes
    ----------
    params : numpy.ndarray, shape (K + 1, ...)
        θ_0, ..., θ_K.
    multipliers : numpy.ndarray, shape (K + 1,) or (K + 1, M)
        ν_0, ..., ν_K.
    reward_values : numpy.ndarray, shape (K + 1,)
        J_R(θ_k).
    cost_values : numpy.ndarray, shape (K + 1,) or (K + 1, M)
        J_C(θ_k).
    """

    params: np.ndarray
    multipliers: np.ndarray
    reward_values: np.ndarray
    cost_values: np.ndarray


def _call_oracle(
    oracle: Callable, params: np.ndarray, constraints: tuple[int, ...]
):
    """(J_R, ∇J_R, J_C, ∇J_C) at ``params``, checked, with a message that names the oracle."""
    result = oracle(params.copy())
    if not isinstance(result, tuple) or len(result) != 4:
        raise ValueError(
            "oracle must return a tuple (reward_value, reward_gradient, cost_value, "
            f"cost_gradient); got {type(result).__name__}"
        )
    try:
        reward_value = check_real(result[0], "reward_value")
        cost_value = as_float_array_like(
            result[2], "cost_value", constraints, "multiplier"
        )
        reward_gradient, cost_gradient = _check_gradients(
            result[1], result[3], constraints
        )
        check_shape(
            reward_gradient,
            "reward_gradient",
            params.shape,
            "the shape of params",
        )
    except ValueError as error:
        raise ValueError(
            f"oracle must return valid values; got {error}"
        ) from None
    return reward_value, reward_gradient, cost_value, cost_gradient


@finite_output()
def primal_dual(
    oracle: Callable[[np.ndarray], tuple],
    params: ArrayLike,
    multiplier: ArrayLike,
    budget: ArrayLike,
    lr: float,
    multiplier_lr: float,
    num_steps: int,
    order: str = "multiplier_first",
    normalize: bool = False,
    parameterization: str = "projected",
) -> PrimalDualHistory:
    """Run :func:`primal_dual_step` for ``num_steps`` steps and return every iterate.

        for k = 0, ..., K - 1:  (J_R, ∇J_R, J_C, ∇J_C) = oracle(θ_k);
                                 (θ_{k+1}, ν_{k+1}) = primal_dual_step(θ_k, ν_k, ...).

    The oracle supplies the objectives and their gradients: exact ones
    (:func:`value_and_gradient`, :func:`rlfound.bandits.exact_bandit_gradient`) or estimates
    from sampled episodes (an oracle that draws from its own generator). With constant step
    sizes the last iterate of a constrained problem usually cycles around the saddle point;
    the average of the iterates' occupancy measures (the mixture of the iterates) is the
    quantity that approaches the constrained optimum.

    Book: equations (eq-primal-dual) and (eq-averaged-iterate), chapter 11.

    Parameters
    ----------
    oracle : callable
        ``oracle(params)`` returns ``(reward_value, reward_gradient, cost_value,
        cost_gradient)`` at ``params``, shaped as in :func:`primal_dual_step`.
    params : array_like, shape (...)
        θ_0.
    multiplier : float or array_like, shape (M,)
        ν_0 >= 0 (> 0 with ``parameterization="log"``).
    budget : float or array_like, shape (M,)
        C_max, the shape of ``multiplier``.
    lr, multiplier_lr : float
        Step sizes η, η_ν >= 0.
    num_steps : int
        K >= 0, the number of steps; the oracle is called K + 1 times.
    order, normalize, parameterization
        As in :func:`primal_dual_step`.

    Returns
    -------
    PrimalDualHistory
        θ_k, ν_k, J_R(θ_k) and J_C(θ_k) for k = 0, ..., K.

    Raises
    ------
    ValueError
        If ``oracle`` is not callable or returns malformed values (the message names the
        oracle), ``params`` is not a finite array, ``num_steps`` is not a non-negative
        integer, or another argument is invalid as in :func:`primal_dual_step`.

    References
    ----------
    C. Tessler, D. J. Mankowitz and S. Mannor, "Reward constrained policy optimization",
    ICLR, 2019.
    S. Paternain, L. F. O. Chamon, M. Calvo-Fullana and A. Ribeiro, "Constrained
    reinforcement learning has zero duality gap", NeurIPS, 2019.

    Examples
    --------
    A two-action bandit with rewards (0, 1) and costs (0, 1) under the budget 0.25:

    >>> from rlfound.bandits import bandit_objective, exact_bandit_gradient
    >>> def oracle(theta):
    ...     q, c = [0.0, 1.0], [0.0, 1.0]
    ...     return (bandit_objective(theta, q), exact_bandit_gradient(theta, q),
    ...             bandit_objective(theta, c), exact_bandit_gradient(theta, c))
    >>> history = primal_dual(oracle, [0.0, 0.0], 0.0, 0.25, lr=1.0, multiplier_lr=1.0,
    ...                       num_steps=2)
    >>> history.params.shape, np.round(history.multipliers, 4)
    ((3, 2), array([0.    , 0.25  , 0.5927]))
    """
    oracle = check_callable(oracle, "oracle")
    params = as_float_array(params, "params", min_ndim=1)
    order = check_choice(order, "order", ORDERS)
    normalize = check_bool(normalize, "normalize")
    parameterization = check_choice(
        parameterization, "parameterization", PARAMETERIZATIONS
    )
    multiplier = _as_constraint_array(multiplier, "multiplier")
    budget = as_float_array_like(
        budget, "budget", multiplier.shape, "multiplier"
    )
    # The multiplier's sign (and positivity for the log form), with the module's message.
    _check_constraints(
        budget, multiplier, budget, positive=parameterization == "log"
    )
    lr = check_nonnegative_real(lr, "lr")
    multiplier_lr = check_nonnegative_real(multiplier_lr, "multiplier_lr")
    num_steps = check_size(
        check_nonnegative_int(num_steps, "num_steps"),
        "num_steps",
        MAX_ITERATIONS,
        "steps",
    )

    thetas, multipliers, reward_values, cost_values = [], [], [], []
    for step in range(num_steps + 1):
        reward_value, reward_gradient, cost_value, cost_gradient = (
            _call_oracle(oracle, params, multiplier.shape)
        )
        thetas.append(params)
        multipliers.append(multiplier)
        reward_values.append(reward_value)
        cost_values.append(cost_value)
        if step == num_steps:
            break
        params, new_multiplier = primal_dual_step(
            params, multiplier, reward_gradient, cost_gradient, cost_value, budget, lr,
            multiplier_lr, order, normalize, parameterization,
        )  # fmt: skip
        multiplier = np.asarray(new_multiplier, dtype=np.float64)
    return PrimalDualHistory(
        np.array(thetas),
        np.array(multipliers),
        np.array(reward_values),
        np.array(cost_values),
    )


# --- exact references for tabular MDPs --------------------------------------------------------


@finite_output()
def value_and_gradient(
    logits: ArrayLike,
    transition: ArrayLike,
    reward: ArrayLike,
    initial: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> tuple[float, np.ndarray]:
    """Expected return of a tabular softmax policy and its exact gradient in the logits.

        J(θ) = Σ_s p_0(s) v_π(s),      ∂J/∂θ_{s,a} = d_π(s) π(a | s) A_π(s, a),

    with π(· | s) = softmax(θ_s), d_π the discounted occupancy and A_π = q_π - v_π
    (the policy-gradient theorem for a tabular softmax policy). Called once with the
    rewards and once with the costs, it gives the four quantities a primal-dual step needs:
    J_R, ∇J_R, J_C and ∇J_C.

    Book: equation (eq-cmdp-gradient), chapter 11.
    Book: equation (eq-pg-occupancy), chapter 4.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        θ, one row of logits per state (rows of terminal states are ignored).
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    reward : array_like, shape (S, A, S)
        reward[s, a, s'] = R(s, a, s'), or a cost C(s, a, s').
    initial : array_like, shape (S,)
        Start distribution p_0.
    gamma : float
        Discount factor in [0, 1]; γ = 1 needs every state to reach a terminal state.
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states. Default: none.

    Returns
    -------
    value : float
        J(θ).
    gradient : numpy.ndarray, shape (S, A)
        ∇_θ J; rows of terminal states are 0.

    Raises
    ------
    ValueError
        If ``logits`` does not have the (S, A) of ``transition``, or the MDP arrays,
        ``initial``, ``gamma`` or ``terminal`` are invalid (see
        :func:`rlfound.mdp.state_values`, whose tolerances and ``"overflow in the Bellman
        solve"`` error apply to both solves here).

    References
    ----------
    R. S. Sutton, D. McAllester, S. Singh and Y. Mansour, "Policy gradient methods for
    reinforcement learning with function approximation", NeurIPS, 2000.

    Examples
    --------
    One decision, then the end; action 1 pays 1:

    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> value, gradient = value_and_gradient(np.zeros((2, 2)), transition, reward,
    ...                                      [1.0, 0.0], 1.0, [False, True])
    >>> value, gradient
    (0.5, array([[-0.25,  0.25],
           [ 0.  ,  0.  ]]))
    """
    transition, terminal = check_dynamics(transition, terminal)
    logits = check_tabular_logits(logits, transition)
    initial = check_initial(initial, transition.shape[0])

    policy = softmax(logits)
    transition_pi, reward_pi = policy_transition_and_reward(
        transition, reward, policy, terminal
    )
    values = evaluate_policy(
        transition_pi, reward_pi, gamma, terminal
    )  # v_π (checks gamma)
    q_values = np.einsum(
        "sat,sat->sa", transition, np.asarray(reward) + gamma * values
    )
    occupancy = discounted_occupancy(
        transition, policy, initial, gamma, terminal
    )  # d_π
    gradient = occupancy[:, None] * policy * (q_values - values[:, None])
    gradient[terminal] = 0.0
    return float(initial @ values), gradient


class ConstrainedSolution(NamedTuple):
    """The optimum of a constrained tabular MDP, from :func:`occupancy_lp`.

    Attributes
    ----------
    policy : numpy.ndarray, shape (S, A)
        An optimal stationary policy π*(a | s) = d*(s, a) / Σ_a' d*(s, a'); uniform over the
        allowed actions in states the optimum never visits and in terminal states.
    occupancy : numpy.ndarray, shape (S, A)
        The optimal occupancy measure d*(s, a) = Σ_t γ^t Pr(s_t = s, a_t = a); 0 in
        terminal states.
    reward_value : float
        J_R of the optimum.
    cost_value : float or numpy.ndarray, shape (M,)
        J_C of the optimum, <= the budget.
    multiplier : float or numpy.ndarray, shape (M,)
        An optimal Lagrange multiplier ν* >= 0: the rate ∂J_R*/∂C_max at which the optimum
        improves when the budget grows (from the dual of the linear program).
    """

    policy: np.ndarray
    occupancy: np.ndarray
    reward_value: float
    cost_value: float | np.ndarray
    multiplier: float | np.ndarray


def _check_occupancy_lp(
    transition, reward, cost, initial, gamma, budget, terminal, allowed
):
    """The arguments of :func:`occupancy_lp`, checked and converted (``allowed`` filled in)."""
    transition, terminal = check_dynamics(transition, terminal)
    num_states, num_actions, _ = transition.shape
    reward = as_float_array(reward, "reward", ndim=3)
    check_shape(
        reward,
        "reward",
        transition.shape,
        "the shape of transition (S, A, S)",
    )
    initial = check_initial(initial, num_states)
    gamma = check_unit_interval(gamma, "gamma")
    budget = _as_constraint_array(budget, "budget")
    cost = as_float_array(cost, "cost")
    check_shape(
        cost,
        "cost",
        budget.shape + transition.shape,
        "(S, A, S), or (M, S, A, S) for M budgets",
    )
    allowed = (
        np.ones((num_states, num_actions), dtype=bool)
        if allowed is None
        else check_mask(allowed, "allowed", (num_states, num_actions))
    )
    stuck = ~terminal & ~allowed.any(axis=1)
    if stuck.any():
        raise ValueError(
            "allowed must leave at least one action in every live state; "
            f"got none in state {int(np.flatnonzero(stuck)[0])}"
        )
    return (
        transition,
        reward,
        cost,
        initial,
        gamma,
        budget,
        terminal,
        allowed,
    )


def _check_lp_status(
    result: optimize.OptimizeResult, budget: np.ndarray, gamma: float
) -> None:
    """Turn a linear program that did not solve into the error that names its cause."""
    if result.status == 2:
        raise ValueError(
            "budget must be at least the smallest expected cost any (allowed) policy achieves: "
            f"the constrained problem is infeasible; got {budget.tolist()}"
        )
    if result.status == 3:
        raise ValueError(
            "gamma must be < 1 unless no policy can collect reward forever without ending: the "
            f"linear program is unbounded; got gamma = {gamma!r}"
        )
    if (
        result.status != 0
    ):  # numerical trouble: e.g. rewards near the float64 limit
        raise ValueError(
            "overflow in the occupancy linear program: the solver failed on these finite "
            f"inputs ({result.message}); rescale reward and costs"
        )


def _policy_of_occupancy(
    occupancy: np.ndarray, allowed: np.ndarray, terminal: np.ndarray
) -> np.ndarray:
    """π(a | s) = d(s, a) / Σ_a d(s, a); uniform over the allowed actions of a state the
    occupancy never visits (and over all actions in a terminal state)."""
    num_actions = occupancy.shape[1]
    visits = occupancy.sum(axis=1, keepdims=True)
    uniform = allowed / allowed.sum(axis=1, keepdims=True).clip(min=1)
    uniform[terminal] = 1.0 / num_actions
    with np.errstate(invalid="ignore", divide="ignore"):
        policy = np.where(visits > 1e-12, occupancy / visits, uniform)
    return policy


@finite_output()
def occupancy_lp(
    transition: ArrayLike,
    reward: ArrayLike,
    cost: ArrayLike,
    initial: ArrayLike,
    gamma: float,
    budget: ArrayLike,
    terminal: ArrayLike | None = None,
    allowed: ArrayLike | None = None,
) -> ConstrainedSolution:
    """Solve a constrained tabular MDP exactly, as a linear program over occupancy measures.

        maximize_{d >= 0}  Σ_{s,a} d(s, a) r̄(s, a)
        subject to         Σ_{s,a} d(s, a) c̄_k(s, a) <= C_max,k            (every k)
                           Σ_a d(s', a) = p_0(s') + γ Σ_{s,a} P(s' | s, a) d(s, a)   (live s')

    with r̄(s, a) = Σ_s' P(s' | s, a) R(s, a, s') and c̄ likewise. Every policy has an
    occupancy measure d_π(s, a) = d_π(s) π(a | s) that satisfies the flow equations, and every
    non-negative solution of them is the occupancy measure of the policy d(s, a) / Σ_a' d(s, a');
    J_R and J_C are linear in it. So the constrained problem, which is not concave in the
    policy's parameters, is a linear program in d. Its optimum randomizes in at most M states
    (one per active constraint). ``allowed`` removes actions (an action filter): their
    occupancy is fixed at 0.

    Book: equation (eq-occupancy-lp), chapter 11.

    Parameters
    ----------
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    reward : array_like, shape (S, A, S)
        R(s, a, s').
    cost : array_like, shape (S, A, S) or (M, S, A, S)
        C(s, a, s'): one cost array, or M of them stacked on a leading axis.
    initial : array_like, shape (S,)
        Start distribution p_0.
    gamma : float
        Discount factor in [0, 1]. With γ = 1 the program must be bounded: no policy may
        collect reward forever without ending.
    budget : float or array_like, shape (M,)
        C_max: a float for one cost array, shape (M,) for M.
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states (no actions are taken there). Default: none.
    allowed : array_like of bool or 0/1, shape (S, A), optional
        The actions the policy may take; every live state needs at least one. Default: all.

    Returns
    -------
    ConstrainedSolution
        The optimal policy and occupancy, J_R, J_C and the multiplier.

    Raises
    ------
    ValueError
        If the MDP arrays are invalid (as in :func:`rlfound.mdp.state_values`), ``cost`` or
        ``budget`` has the wrong shape, ``allowed`` is not an (S, A) mask or leaves a live
        state without actions, the budget is below the smallest expected cost any policy
        achieves (naming ``budget``), or the program is unbounded (naming ``gamma``).

    References
    ----------
    E. Altman, *Constrained Markov Decision Processes*, Chapman & Hall/CRC, 1999, chapter 3
    (occupation measures, the linear program, and the number of randomizations).
    M. L. Puterman, *Markov Decision Processes: Discrete Stochastic Dynamic Programming*,
    Wiley, 1994 (the linear program of a discounted MDP).

    Examples
    --------
    A bandit (state 0, then the end) with rewards (0, 1) and costs (0, 1) under the budget
    0.25: the optimum takes the costly action a quarter of the time, and each unit of budget
    is worth one unit of reward.

    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> solution = occupancy_lp(transition, reward, reward, [1.0, 0.0], 1.0, 0.25,
    ...                         terminal=[False, True])
    >>> solution.policy[0], solution.reward_value, solution.multiplier
    (array([0.75, 0.25]), 0.25, 1.0)
    """
    transition, reward, cost, initial, gamma, budget, terminal, allowed = (
        _check_occupancy_lp(
            transition,
            reward,
            cost,
            initial,
            gamma,
            budget,
            terminal,
            allowed,
        )
    )
    num_states, num_actions, _ = transition.shape

    # One variable d(s, a) per live state and action, in C order.
    states = np.flatnonzero(~terminal)
    expected_reward = np.einsum("sat,sat->sa", transition, reward)[
        states
    ].ravel()
    costs = cost.reshape(
        (-1, *transition.shape)
    )  # (M, S, A, S), M = 1 for one budget
    expected_costs = np.einsum("sat,ksat->ksa", transition, costs)[
        :, states
    ].reshape(len(costs), -1)
    # Flow: Σ_a d(s', a) - γ Σ_{s,a} P(s' | s, a) d(s, a) = p_0(s') for every live s'.
    outflow = np.repeat(np.eye(len(states)), num_actions, axis=1)
    inflow = transition[states][:, :, states].reshape(-1, len(states)).T
    bounds = [
        (0.0, None) if ok else (0.0, 0.0) for ok in allowed[states].ravel()
    ]
    result = optimize.linprog(
        -expected_reward,
        A_ub=expected_costs,
        b_ub=budget.reshape(-1),
        A_eq=outflow - gamma * inflow,
        b_eq=initial[states],
        bounds=bounds,
        method="highs",
    )
    _check_lp_status(result, budget, gamma)

    occupancy = np.zeros((num_states, num_actions))
    occupancy[states] = np.maximum(result.x, 0.0).reshape(
        len(states), num_actions
    )
    policy = _policy_of_occupancy(
        occupancy, allowed, terminal
    )  # d(s, a) / Σ_a d(s, a)
    multiplier = np.maximum(
        -result.ineqlin.marginals, 0.0
    )  # ∂(-J_R*)/∂C_max <= 0
    cost_value = expected_costs @ occupancy[states].ravel()
    return ConstrainedSolution(
        policy=policy,
        occupancy=occupancy,
        reward_value=float(expected_reward @ occupancy[states].ravel()),
        cost_value=float_or_array(cost_value.reshape(budget.shape)),
        multiplier=float_or_array(multiplier.reshape(budget.shape)),
    )


# --- lexicographic choice ---------------------------------------------------------------------


@finite_output()
def lexicographic_mask(
    costs: ArrayLike, utilities: ArrayLike, tolerance: float = 0.0
) -> np.ndarray:
    """Lexicographic choice: first the safest candidates (within a tolerance), then the most useful.

        admissible = { i : c_i <= min_j c_j + ξ },      chosen = argmax_{i ∈ admissible} u_i.

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
            f"costs must have at least one candidate on the last axis; got shape {costs.shape}"
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
