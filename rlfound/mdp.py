"""Exact values of a fixed policy in small Markov decision processes.

A fixed policy π turns an MDP into a Markov reward process: a transition matrix
``transition_pi`` with P_π[s, s'] = Σ_a π(a | s) P(s' | s, a) and an expected immediate reward
``reward_pi`` r_π[s]. :func:`evaluate_policy` takes that pair and solves the Bellman equation
for the state values exactly; :func:`state_values`, :func:`action_values` and
:func:`advantage_values` do the averaging first and give v_π, q_π and A_π of a tabular MDP;
:func:`value_iteration` finds the optimal values q*, v* and a greedy policy.

The tabular format: ``transition`` of shape (S, A, S) with transition[s, a, s'] =
P(s' | s, a); ``reward`` of shape (S, A, S) with reward[s, a, s'] = R(s, a, s'); ``policy`` of
shape (S, A) with rows π(· | s); an optional ``terminal`` mask of shape (S,) (bool or 0/1),
whose states are worth 0, never bootstrap, and whose outgoing rows (of ``transition``,
``reward`` and ``policy``) are ignored. Episodes of these MDPs are sampled and enumerated in
:mod:`rlfound.episodes`; beliefs over hidden states are in :mod:`rlfound.pomdp`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ITERATIONS,
    as_float_array,
    check_dynamics,
    check_initial,
    check_positive_int,
    check_positive_real,
    check_reward_process,
    check_shape,
    check_size,
    check_state_function,
    check_tabular_mdp,
    check_unit_interval,
    finite_output,
    renamed_keywords,
)

__all__ = [
    "action_values",
    "advantage_values",
    "bellman_residual",
    "discounted_occupancy",
    "evaluate_policy",
    "policy_transition_and_reward",
    "state_values",
    "tiny_chain",
    "tiny_chain_model",
    "value_iteration",
]


@finite_output("the Bellman solve")
def evaluate_policy(
    transition_pi: ArrayLike,
    reward_pi: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> np.ndarray:
    """State values of a fixed policy, by solving the Bellman equation exactly.

    The value of a state is the expected return from it, and it satisfies

        v(s) = r_π(s) + γ Σ_{s'} P_π(s, s') v(s'),

    one linear equation per state; in matrix form v = r_π + γ P_π v. A terminal state is
    worth 0 and never bootstraps: its equation is replaced by v(s) = 0, which removes it from
    the system, so only the live (non-terminal) states L are solved for,

        v_L = (I - γ P_LL)^{-1} r_L,

    with P_LL the live-to-live block of P_π. For γ < 1 this block system is always solvable.
    For γ = 1 the full matrix I - P_π is singular for every row-stochastic P_π (P_π 1 = 1);
    what is invertible is the live block I - P_LL, and it is exactly when every live state
    reaches a terminal state with positive probability.

    Book: equations (eq-bellman-v) and (eq-bellman-matrix), chapter 1.

    Parameters
    ----------
    transition_pi : array_like, shape (S, S)
        Row-stochastic matrix P_π[s, s'] of the policy-averaged dynamics.
    reward_pi : array_like, shape (S,)
        Expected immediate reward r_π(s) received in each state under the policy.
    gamma : float
        Discount factor γ in [0, 1]. γ = 1 needs a terminal state reachable from every state.
    terminal : array_like of bool or 0/1, shape (S,), optional
        Mask of terminal states (their reward must be 0). Default: no terminal states.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The state values v, float64, with v(s) = 0 in terminal states.

    Raises
    ------
    ValueError
        If ``transition_pi`` is not square or a row is not a probability distribution,
        ``reward_pi`` or ``terminal`` does not have one entry per state, a terminal state
        has a non-zero reward, any input is non-finite, ``gamma`` is outside [0, 1], or
        ``gamma`` is 1 and some state never reaches a terminal state (the live block is then
        singular).
        The conditions for a finite solution are checked with tolerances (see Notes).
        Starting ``"overflow in the Bellman solve"``: if the values exceed the float64 range
        or the live block is singular in floating point.

    Notes
    -----
    The solve is refused (naming ``transition_pi``) when a live row has
    γ·(row sum) > 1 + ``ROW_SUM_TOLERANCE`` (1e-12): rows are accepted as distributions
    within 1e-8, but a discounted row above 1 makes the series Σ_t (γ P)^t diverge. It is
    refused (naming ``gamma``) unless every live state reaches, through transitions above
    ``SUPPORT_TOLERANCE`` (about 2.2e-308), a terminal state or (γ < 1) a state whose
    discounted continuation γ·Σ_{s' live} P(s, s') is below 1 - 1e-12. An exit of 1e-17
    next to a self-loop of probability 1 does not count: it vanishes from 1 - 1e-17.
    References
    ----------
    R. Bellman, *Dynamic Programming*, Princeton University Press, 1957.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, sections 3.5 and 4.1.

    Examples
    --------
    A two-state loop that pays 1 in state 0 and 0 in state 1:

    >>> evaluate_policy([[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0], gamma=0.5)
    array([1.33333333, 0.66666667])
    """
    transition_pi, reward_pi, gamma, terminal = check_reward_process(
        transition_pi, reward_pi, gamma, terminal
    )

    # v = 0 in terminal states, so their columns drop out of the live states'
    # equations.
    live = ~terminal
    values = np.zeros(len(terminal))
    system = (
        np.eye(int(live.sum())) - gamma * transition_pi[np.ix_(live, live)]
    )
    values[live] = np.linalg.solve(system, reward_pi[live])
    return values


@finite_output()
def tiny_chain_model() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three-state chain 0 -> 1 -> 2 used in chapter 1.

    State 0 moves to state 1, state 1 pays reward 1 and moves to state 2, and state 2 is
    terminal and absorbing. New arrays are returned on every call, so callers may modify
    them freely.

    Returns
    -------
    transition_pi : numpy.ndarray, shape (3, 3)
        Row-stochastic transition matrix (there is one action, so it is already averaged).
    reward_pi : numpy.ndarray, shape (3,)
        ``[0, 1, 0]``.
    terminal : numpy.ndarray of bool, shape (3,)
        ``[False, False, True]``.

    Examples
    --------
    >>> transition_pi, reward_pi, terminal = tiny_chain_model()
    >>> transition_pi
    array([[0., 1., 0.],
           [0., 0., 1.],
           [0., 0., 1.]])
    >>> reward_pi, terminal
    (array([0., 1., 0.]), array([False, False,  True]))
    """
    transition_pi = np.array(
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    )
    reward_pi = np.array([0.0, 1.0, 0.0])
    terminal = np.array([False, False, True])
    return transition_pi, reward_pi, terminal


@finite_output()
def tiny_chain(gamma: float) -> np.ndarray:
    """Exact state values of the three-state chain of :func:`tiny_chain_model`.

    State 1 earns 1 and then the episode ends, and state 0 earns nothing but reaches state 1
    one step later, so v = [γ, 1, 0]. Because state 2 is marked terminal, γ = 1 is allowed.

    Book: equation (eq-bellman-matrix), chapter 1.

    Parameters
    ----------
    gamma : float
        Discount factor γ in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (3,)
        ``[gamma, 1, 0]``.

    Raises
    ------
    ValueError
        If ``gamma`` is outside [0, 1].

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 4.1.

    Examples
    --------
    >>> tiny_chain(0.9)
    array([0.9, 1. , 0. ])
    >>> tiny_chain(1.0)
    array([1., 1., 0.])
    """
    transition_pi, reward_pi, terminal = tiny_chain_model()
    return evaluate_policy(
        transition_pi, reward_pi, gamma, terminal=terminal
    )


@finite_output()
def bellman_residual(
    values: ArrayLike,
    transition_pi: ArrayLike,
    reward_pi: ArrayLike,
    gamma: float,
) -> np.ndarray:
    """How far a value vector is from satisfying the Bellman equation, state by state.

        residual(s) = r_π(s) + γ Σ_{s'} P_π(s, s') v(s') - v(s).

    The residual is zero in every state exactly when ``values`` solves v = r_π + γ P_π v.
    A terminal state that is absorbing with v = 0 and r = 0 has residual 0 automatically.

    Book: equation (eq-bellman-matrix), chapter 1.

    Parameters
    ----------
    values : array_like, shape (S,)
        Candidate state values v.
    transition_pi : array_like, shape (S, S)
        Row-stochastic transition matrix P_π.
    reward_pi : array_like, shape (S,)
        Expected immediate reward r_π(s) in each state.
    gamma : float
        Discount factor γ in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (S,)
        r_π + γ P_π v - v, float64.

    Raises
    ------
    ValueError
        If ``transition_pi`` is not square and row-stochastic, ``values`` or ``reward_pi``
        does not have one entry per state, any input is non-finite, or ``gamma`` is outside
        [0, 1].

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 3.5.

    Examples
    --------
    >>> transition_pi, reward_pi, _ = tiny_chain_model()
    >>> bellman_residual(tiny_chain(0.9), transition_pi, reward_pi, gamma=0.9)
    array([0., 0., 0.])
    >>> bellman_residual([0.0, 0.0, 0.0], transition_pi, reward_pi, gamma=0.9)
    array([0., 1., 0.])
    """
    transition_pi, reward_pi, gamma, _ = check_reward_process(
        transition_pi, reward_pi, gamma, solve=False
    )
    values = check_state_function(values, "values", len(reward_pi))

    return reward_pi + gamma * transition_pi @ values - values


@finite_output()
def policy_transition_and_reward(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    terminal: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Average an MDP over a policy: the Markov reward process (P_π, r_π) it induces.

        P_π[s, s'] = Σ_a π(a | s) P(s' | s, a),
        r_π[s]     = Σ_a π(a | s) Σ_{s'} P(s' | s, a) R(s, a, s').

    r_π(s) is the expected reward of the next step from s; with these two arrays the
    Bellman equation of a policy becomes the linear system solved by :func:`evaluate_policy`.
    A terminal state's rows are ignored (they may be anything, even all zeros): it becomes
    absorbing and unrewarded, P_π[s, s] = 1 and r_π[s] = 0, so it is worth 0.

    Book: equation (eq-bellman-v-mdp), chapter 3.

    Parameters
    ----------
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a); every [s, a] row a distribution.
    reward : array_like, shape (S, A, S)
        reward[s, a, s'] = R(s, a, s').
    policy : array_like, shape (S, A)
        policy[s, a] = π(a | s); every row a distribution.
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states, whose rows are ignored. Default: none.

    Returns
    -------
    transition_pi : numpy.ndarray, shape (S, S)
        P_π, row-stochastic.
    reward_pi : numpy.ndarray, shape (S,)
        r_π.

    Raises
    ------
    ValueError
        If ``transition`` is not (S, A, S) with distribution rows (in non-terminal states),
        ``reward`` does not have its shape, ``policy`` is not (S, A) with distribution rows
        (in non-terminal states), ``terminal`` is not a bool or 0/1 mask of shape (S,), or
        an input is non-finite.

    References
    ----------
    M. L. Puterman, *Markov Decision Processes: Discrete Stochastic Dynamic Programming*,
    Wiley, 1994, section 2.1.

    Examples
    --------
    >>> transition = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> reward = np.zeros((2, 2, 2))
    >>> reward[0, 1, 1] = 1.0  # action 1 in state 0 moves to state 1 and pays 1
    >>> P_pi, r_pi = policy_transition_and_reward(transition, reward, [[0.5, 0.5], [1.0, 0.0]])
    >>> P_pi
    array([[0.5, 0.5],
           [0. , 1. ]])
    >>> r_pi
    array([0.5, 0. ])
    """
    transition, reward, policy, terminal = check_tabular_mdp(
        transition, reward, policy, terminal
    )

    transition_pi = np.einsum("sa,sat->st", policy, transition)
    reward_pi = np.einsum("sa,sat,sat->s", policy, transition, reward)
    ends = np.flatnonzero(terminal)
    transition_pi[ends] = 0.0
    transition_pi[ends, ends] = (
        1.0  # absorbing and unrewarded: a terminal state is worth 0
    )
    reward_pi[ends] = 0.0
    return transition_pi, reward_pi


@finite_output()
def state_values(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> np.ndarray:
    """State values v_π of a policy in a tabular MDP, exactly.

    v_π solves the Bellman expectation equation

        v(s) = Σ_a π(a | s) Σ_{s'} P(s' | s, a) [R(s, a, s') + γ v(s')],

    with v(s) = 0 in terminal states. Averaging over the policy first turns it into
    v = r_π + γ P_π v (:func:`policy_transition_and_reward`), which :func:`evaluate_policy`
    solves.

    Book: equation (eq-bellman-v-mdp), chapter 3.

    Parameters
    ----------
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    reward : array_like, shape (S, A, S)
        reward[s, a, s'] = R(s, a, s') (a reward for entering a terminal state counts).
    policy : array_like, shape (S, A)
        policy[s, a] = π(a | s).
    gamma : float
        Discount factor γ in [0, 1]; γ = 1 needs a terminal state reachable from every
        state under π.
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states: worth 0; their rows of ``transition``, ``reward`` and ``policy``
        are ignored. Default: none.

    Returns
    -------
    numpy.ndarray, shape (S,)
        v_π, float64.

    Raises
    ------
    ValueError
        If the arrays do not follow the tabular format (shapes, distribution rows in
        non-terminal states, finiteness), ``terminal`` is not a bool or 0/1 (S,) mask,
        ``gamma`` is outside [0, 1], or ``gamma`` is 1 and some state never terminates;
        with the tolerances, and the ``"overflow in the Bellman solve"`` error, of
        :func:`evaluate_policy` (see its Notes).

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, sections 3.5 and 4.1.

    Examples
    --------
    One decision, then the end: action 1 pays 1, action 0 pays 0; π picks each half the time.

    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> state_values(transition, reward, np.full((2, 2), 0.5), gamma=1.0,
    ...              terminal=np.array([False, True]))
    array([0.5, 0. ])
    """
    transition_pi, reward_pi = policy_transition_and_reward(
        transition, reward, policy, terminal
    )
    return evaluate_policy(
        transition_pi, reward_pi, gamma, terminal=terminal
    )


@finite_output()
def action_values(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> np.ndarray:
    """Action values q_π of a policy in a tabular MDP, exactly.

        q(s, a) = Σ_{s'} P(s' | s, a) [R(s, a, s') + γ v(s')],
        v(terminal) = 0,

    one step of the dynamics followed by the state values of :func:`state_values`.
    Equivalently q solves its own Bellman expectation equation
    q(s, a) = Σ_{s'} P(s' | s, a) [R(s, a, s') + γ Σ_{a'} π(a' | s') q(s', a')], and
    Σ_a π(a | s) q(s, a) = v(s). Rows of terminal states are 0.

    Book: equation (eq-bellman-q-mdp), chapter 3.

    Parameters
    ----------
    transition, reward, policy, gamma, terminal
        As in :func:`state_values`.

    Returns
    -------
    numpy.ndarray, shape (S, A)
        q_π, float64.

    Raises
    ------
    ValueError
        As :func:`state_values`.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 3.5.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> action_values(transition, reward, np.full((2, 2), 0.5), gamma=1.0,
    ...               terminal=np.array([False, True]))
    array([[0., 1.],
           [0., 0.]])
    """
    transition, reward, policy, terminal = check_tabular_mdp(
        transition, reward, policy, terminal
    )
    values = state_values(
        transition, reward, policy, gamma, terminal=terminal
    )
    # One step of the dynamics, then v; v(terminal) = 0, so entering one ends
    # the sum.
    q_values = np.einsum("sat,sat->sa", transition, reward + gamma * values)
    q_values[terminal] = 0.0
    return q_values


@finite_output()
def advantage_values(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> np.ndarray:
    """Advantages A_π(s, a) = q_π(s, a) - v_π(s) of a policy in a tabular MDP, exactly.

    How much better action a is than the policy's own average in state s; its
    policy-weighted mean Σ_a π(a | s) A(s, a) is 0 in every state. Rows of terminal states
    are 0.

    Book: equation (eq-bellman-q-mdp), chapter 3.

    Parameters
    ----------
    transition, reward, policy, gamma, terminal
        As in :func:`state_values`.

    Returns
    -------
    numpy.ndarray, shape (S, A)
        A_π, float64.

    Raises
    ------
    ValueError
        As :func:`state_values`.

    References
    ----------
    L. C. Baird III, "Advantage updating", Technical Report WL-TR-93-1146, Wright-Patterson
    Air Force Base, 1993.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 13.4.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> advantage_values(transition, reward, np.full((2, 2), 0.5), gamma=1.0,
    ...                  terminal=np.array([False, True]))
    array([[-0.5,  0.5],
           [ 0. ,  0. ]])
    """
    q_values = action_values(
        transition, reward, policy, gamma, terminal=terminal
    )
    values = state_values(
        transition, reward, policy, gamma, terminal=terminal
    )
    return q_values - values[:, None]  # terminal rows: 0 - 0


@finite_output("the Bellman solve")
def discounted_occupancy(
    transition: ArrayLike,
    policy: ArrayLike,
    initial: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> np.ndarray:
    """Discounted state occupancy d_π: the expected discounted number of visits to each state.

        d_π(s) = Σ_{t >= 0} γ^t Pr(s_t = s),
        d_L^T = p_{0,L}^T (I - γ P_LL)^{-1},

    over the live states L, with d_π = 0 in terminal states (an episode that enters one has
    ended). It is not normalized: Σ_s d_π(s) is the expected discounted length of an episode
    (1 / (1 - γ) when nothing terminates). With it, an expected discounted sum over the
    steps of an episode becomes a sum over states, Σ_s d_π(s) f(s), which is how the
    performance-difference lemma and the policy-gradient theorem are written state by state.

    Book: equation (eq-occupancy), chapter 5.

    Parameters
    ----------
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    policy : array_like, shape (S, A)
        policy[s, a] = π(a | s).
    initial : array_like, shape (S,)
        Start distribution p_0.
    gamma : float
        Discount factor γ in [0, 1]; γ = 1 needs a terminal state reachable from every
        state under π.
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states (their rows are ignored). Default: none.

    Returns
    -------
    numpy.ndarray, shape (S,)
        d_π, float64, >= 0, and 0 in terminal states.

    Raises
    ------
    ValueError
        As :func:`state_values` for ``transition``, ``policy``, ``gamma`` and ``terminal``;
        and if ``initial`` is not a probability vector with one entry per state.

    References
    ----------
    S. Kakade and J. Langford, "Approximately optimal approximate reinforcement learning",
    ICML, 2002.
    R. S. Sutton, D. McAllester, S. Singh and Y. Mansour, "Policy gradient methods for
    reinforcement learning with function approximation", NeurIPS, 2000.

    Examples
    --------
    One state that loops on itself forever: 1 + γ + γ² + ... = 1 / (1 - γ) visits.

    >>> transition = np.ones((1, 1, 1))
    >>> discounted_occupancy(transition, [[1.0]], [1.0], gamma=0.9)
    array([10.])
    """
    transition, terminal = check_dynamics(transition, terminal)
    initial = check_initial(initial, transition.shape[0])
    # The occupancy does not depend on the rewards: average the dynamics with
    # zero rewards.
    transition_pi, _ = policy_transition_and_reward(
        transition, np.zeros(transition.shape), policy, terminal
    )
    transition_pi, _, gamma, terminal = check_reward_process(
        transition_pi, np.zeros(len(initial)), gamma, terminal
    )
    # d = 0 in terminal states; over the live ones d_L solves (I - γ P_LL)^T
    # d_L = p_{0,L}.
    live = ~terminal
    occupancy = np.zeros(len(terminal))
    system = (
        np.eye(int(live.sum())) - gamma * transition_pi[np.ix_(live, live)]
    )
    occupancy[live] = np.linalg.solve(system.T, initial[live])
    return occupancy


def _check_value_iteration(
    transition: Any,
    reward: Any,
    gamma: Any,
    terminal: Any,
    tolerance: Any,
    max_iterations: Any,
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, float, int]:
    """The arguments of :func:`value_iteration`, checked and converted."""
    transition, terminal = check_dynamics(transition, terminal)
    reward = as_float_array(reward, "reward", ndim=3)
    check_shape(
        reward,
        "reward",
        transition.shape,
        "the shape of transition (S, A, S)",
    )
    gamma = check_unit_interval(gamma, "gamma")
    tolerance = check_positive_real(tolerance, "tolerance")
    max_iterations = check_size(
        check_positive_int(max_iterations, "max_iterations"),
        "max_iterations",
        MAX_ITERATIONS,
        "iterations",
    )
    return transition, reward, gamma, terminal, tolerance, max_iterations


@finite_output()
@renamed_keywords(tol="tolerance", since="0.1.0")
def value_iteration(
    transition: ArrayLike,
    reward: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
    tolerance: float = 1e-10,
    max_iterations: int = 100_000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Optimal values of a tabular MDP by value iteration, and a greedy (optimal) policy.

    The optimal action values solve the Bellman optimality equation

        q*(s, a) = Σ_{s'} P(s' | s, a) [R(s, a, s') + γ max_{a'} q*(s', a')],

    with q* = 0 in terminal states (nothing is earned after the end). Value iteration applies
    the right-hand side to q = 0 until no entry changes by more than ``tolerance``; then
    v*(s) = max_a q*(s, a), and a policy is optimal exactly when it puts all its probability on
    actions that attain the maximum. The returned policy splits its probability evenly among
    the actions within ``10 * tolerance`` of the maximum (ties), so equally good actions are all
    visible in it.

    For γ < 1 the update is a contraction and the iteration converges from any start. For
    γ = 1 it converges when every policy reaches a terminal state with probability 1, and
    more generally when no cycle of live states has positive total reward; otherwise the
    optimal values are infinite and the iteration stops at ``max_iterations`` with an error.

    Book: equation (eq-bellman-optimality), chapter 9.

    Parameters
    ----------
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    reward : array_like, shape (S, A, S)
        reward[s, a, s'] = R(s, a, s').
    gamma : float
        Discount factor γ in [0, 1].
    terminal : array_like of bool or 0/1, shape (S,), optional
        Terminal states: worth 0, their rows ignored. Default: none.
    tolerance : float, optional
        Stop when an update changes no action value by more than ``tolerance`` (> 0). (Its
        old name ``tol`` still works, with a ``DeprecationWarning``, until rlfound 0.3.0.)
    max_iterations : int, optional
        Largest number of updates before giving up (>= 1).

    Returns
    -------
    values : numpy.ndarray, shape (S,)
        v*, 0 in terminal states.
    action_values : numpy.ndarray, shape (S, A)
        q*, rows of terminal states 0.
    policy : numpy.ndarray, shape (S, A)
        A greedy policy: each row uniform over the maximizing actions (terminal rows uniform
        over all actions; they are never used).

    Raises
    ------
    ValueError
        If the arrays do not follow the tabular format (shapes, distribution rows in
        non-terminal states, finiteness), ``terminal`` is not a bool or 0/1 mask of shape (S,),
        ``gamma`` is outside [0, 1], ``tolerance`` is not positive, ``max_iterations`` is not a
        positive integer, or the iteration has not converged after ``max_iterations`` updates
        (naming ``max_iterations``; with γ = 1 a cycle of positive reward has no finite value).

    References
    ----------
    R. Bellman, *Dynamic Programming*, Princeton University Press, 1957.
    M. L. Puterman, *Markov Decision Processes: Discrete Stochastic Dynamic Programming*,
    Wiley, 1994, section 6.3.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 4.4.

    Examples
    --------
    From state 0, action 0 ends the episode with reward 1 and action 1 waits a step in state 1,
    from where the only action ends it with reward 2. With γ = 0.9, waiting is worth 1.8.

    >>> transition = np.zeros((3, 2, 3))
    >>> transition[0, 0, 2] = transition[0, 1, 1] = transition[1, :, 2] = 1.0
    >>> reward = np.zeros((3, 2, 3))
    >>> reward[0, 0, 2], reward[1, :, 2] = 1.0, 2.0
    >>> values, q, policy = value_iteration(transition, reward, 0.9, terminal=[0, 0, 1])
    >>> values, q[0], policy[0]
    (array([1.8, 2. , 0. ]), array([1. , 1.8]), array([0., 1.]))
    """
    transition, reward, gamma, terminal, tolerance, max_iterations = (
        _check_value_iteration(
            transition, reward, gamma, terminal, tolerance, max_iterations
        )
    )

    live = ~terminal
    # Expected immediate reward of each (s, a); terminal rows are never used.
    expected_reward = np.einsum("sat,sat->sa", transition, reward)
    q_values = np.zeros(transition.shape[:2])
    change = np.inf
    for _ in range(max_iterations):
        values = np.where(live, q_values.max(axis=1), 0.0)  # v(terminal) = 0
        updated = expected_reward + gamma * transition @ values
        updated[terminal] = 0.0
        change = float(np.max(np.abs(updated - q_values)))
        q_values = updated
        if change <= tolerance:
            break
    else:
        raise ValueError(
            "max_iterations must be enough for value iteration to converge "
            f"to tolerance = {tolerance}; got {max_iterations} iterations "
            f"and a last change of {change:.3g} (with gamma = 1, a cycle of "
            "live states with positive reward has no finite optimal value)"
        )

    values = np.where(live, q_values.max(axis=1), 0.0)
    best = q_values >= q_values.max(axis=1, keepdims=True) - 10.0 * tolerance
    policy = best / best.sum(axis=1, keepdims=True)
    return values, q_values, policy
