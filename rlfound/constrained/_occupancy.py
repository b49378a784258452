"""Exact references for tabular MDPs: values and policy gradients of a softmax
policy, and the constrained optimum as a linear program over occupancies.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from rlfound._validation import (
    as_float_array,
    check_dynamics,
    check_initial,
    check_mask,
    check_shape,
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

from ._common import _as_constraint_array


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

        J(θ) = Σ_s p_0(s) v_π(s),
        ∂J/∂θ_{s,a} = d_π(s) π(a | s) A_π(s, a),

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
            "budget must be at least the smallest expected cost any "
            "(allowed) policy achieves: the constrained problem is "
            f"infeasible; got {budget.tolist()}"
        )
    if result.status == 3:
        raise ValueError(
            "gamma must be < 1 unless no policy can collect reward forever "
            "without ending: the linear program is unbounded; got gamma = "
            f"{gamma!r}"
        )
    if (
        result.status != 0
    ):  # numerical trouble: e.g. rewards near the float64 limit
        raise ValueError(
            "overflow in the occupancy linear program: the solver failed "
            f"on these finite inputs ({result.message}); rescale reward and "
            "costs"
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
        subject to         Σ_{s,a} d(s, a) c̄_k(s, a) <= C_max,k
                                                         (every k)
                           Σ_a d(s', a) = p_0(s')
                               + γ Σ_{s,a} P(s' | s, a) d(s, a)
                                                         (live s')

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
    # Flow: Σ_a d(s', a) - γ Σ_{s,a} P(s' | s, a) d(s, a) = p_0(s') for every
    # live s'.
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
