"""Exact policy evaluation, episodes and beliefs in small Markov decision processes.

A fixed policy π turns an MDP into a Markov reward process: a transition matrix
P_π[s, s'] = Σ_a π(a | s) p(s' | s, a) and an expected immediate reward r_π[s]. The first
functions here take that pair and solve the Bellman equation for the state values exactly.

The tabular MDP functions use one format: ``transition`` of shape (S, A, S) with
transition[s, a, s'] = P(s' | s, a); ``reward`` of shape (S, A, S) with
reward[s, a, s'] = R(s, a, s'); ``policy`` of shape (S, A) with rows π(· | s); an optional
boolean ``terminal`` mask of shape (S,), whose states are worth 0, never bootstrap, and whose
outgoing rows (of ``transition``, ``reward`` and ``policy``) are ignored; and ``initial`` of
shape (S,), the start distribution ρ0. A POMDP adds ``observation_model`` of shape (S, O)
with rows O(· | s).
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    check_actions,
    check_distribution,
    check_nonnegative_int,
    check_positive_int,
    check_unit_interval,
)

__all__ = [
    "action_values",
    "advantage_values",
    "belief_by_enumeration",
    "belief_filter",
    "belief_update",
    "bellman_residual",
    "enumerate_episodes",
    "evaluate_policy",
    "policy_transition_and_reward",
    "sample_episodes",
    "state_values",
    "tiny_chain",
    "tiny_chain_model",
]

#: Largest enumeration (episodes, or state sequences) the brute-force references accept.
MAX_ENUMERATION = 1_000_000


def _check_reward_process(
    transition: ArrayLike, reward: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (P, r) pair: P square and row-stochastic, r one entry per state."""
    transition = as_float_array(transition, "transition", ndim=2)
    if transition.shape[0] != transition.shape[1]:
        raise ValueError(f"transition must be a square (S, S) matrix; got shape {transition.shape}")
    transition = check_distribution(transition, "transition")
    num_states = transition.shape[0]
    reward = as_float_array(reward, "reward", ndim=1)
    if reward.shape != (num_states,):
        raise ValueError(
            f"reward must have one entry per state, shape ({num_states},); got shape {reward.shape}"
        )
    return transition, reward


def _check_terminal(terminal: ArrayLike | None, reward: np.ndarray) -> np.ndarray:
    """Validate the terminal mask; a terminal state must carry no reward."""
    num_states = reward.shape[0]
    if terminal is None:
        return np.zeros(num_states, dtype=bool)
    terminal = np.asarray(terminal)
    if terminal.dtype != np.bool_ or terminal.shape != (num_states,):
        raise ValueError(
            f"terminal must be a boolean mask of shape ({num_states},); "
            f"got dtype {terminal.dtype} and shape {terminal.shape}"
        )
    rewarded = terminal & (reward != 0.0)
    if rewarded.any():
        state = int(np.flatnonzero(rewarded)[0])
        raise ValueError(
            f"reward must be 0 in terminal states (a terminal state is worth 0); "
            f"got {float(reward[state])!r} in terminal state {state}"
        )
    return terminal


def _check_episodes_end(transition: np.ndarray, terminal: np.ndarray) -> None:
    """With γ = 1 the Bellman system is solvable only if every state can reach a terminal one.

    The undiscounted values are finite exactly when no set of non-terminal states traps the
    process forever, i.e. when a terminal state is reachable from every state.
    """
    reaches_end = terminal.copy()
    while True:
        # A state reaches the end if it moves with positive probability to one that does.
        grown = reaches_end | (transition[:, reaches_end].sum(axis=1) > 0.0)
        if np.array_equal(grown, reaches_end):
            break
        reaches_end = grown
    if not reaches_end.all():
        state = int(np.flatnonzero(~reaches_end)[0])
        raise ValueError(
            "gamma must be < 1 unless every state can reach a terminal state; "
            f"got gamma = 1.0 and state {state} never terminates"
        )


def _check_policy_evaluation(
    transition: ArrayLike, reward: ArrayLike, gamma: float, terminal: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """All the checks of :func:`evaluate_policy`, including solvability when γ = 1."""
    transition, reward = _check_reward_process(transition, reward)
    gamma = check_unit_interval(gamma, "gamma")
    terminal = _check_terminal(terminal, reward)
    if gamma == 1.0:
        _check_episodes_end(transition, terminal)
    return transition, reward, gamma, terminal


def evaluate_policy(
    transition: ArrayLike, reward: ArrayLike, gamma: float, terminal: ArrayLike | None = None
) -> np.ndarray:
    """State values of a fixed policy, by solving the Bellman equation exactly.

    The value of a state is the expected return from it, and it satisfies

        v(s) = r(s) + γ Σ_{s'} P(s, s') v(s'),

    one linear equation per state; in matrix form v = r + γ P v, so v = (I - γ P)^{-1} r.
    A terminal state is worth 0 and never bootstraps: its equation is replaced by v(s) = 0,
    which removes it from the system, so only the live (non-terminal) states are solved for.

    Book: equations (eq-bellman-v) and (eq-bellman-matrix), chapter 1.

    Parameters
    ----------
    transition : array_like, shape (S, S)
        Row-stochastic matrix P[s, s'] of the policy-averaged dynamics.
    reward : array_like, shape (S,)
        Expected immediate reward r(s) received in each state under the policy.
    gamma : float
        Discount factor γ in [0, 1]. γ = 1 needs a terminal state reachable from every state.
    terminal : array_like of bool, shape (S,), optional
        Mask of terminal states (their reward must be 0). Default: no terminal states.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The state values v, float64, with v(s) = 0 in terminal states.

    Raises
    ------
    ValueError
        If ``transition`` is not square or a row is not a probability distribution,
        ``reward`` or ``terminal`` does not have one entry per state, a terminal state has a
        non-zero reward, any input is non-finite, ``gamma`` is outside [0, 1], or ``gamma``
        is 1 and some state never reaches a terminal state (the system is then singular).

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
    transition, reward, gamma, terminal = _check_policy_evaluation(
        transition, reward, gamma, terminal
    )

    live = ~terminal
    values = np.zeros_like(reward)
    # v = 0 in terminal states, so their columns drop out of the live states' equations.
    system = np.eye(live.sum()) - gamma * transition[np.ix_(live, live)]
    values[live] = np.linalg.solve(system, reward[live])
    return values


def tiny_chain_model() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three-state chain 0 -> 1 -> 2 used in chapter 1.

    State 0 moves to state 1, state 1 pays reward 1 and moves to state 2, and state 2 is
    terminal and absorbing. New arrays are returned on every call, so callers may modify
    them freely.

    Returns
    -------
    transition : numpy.ndarray, shape (3, 3)
        Row-stochastic transition matrix.
    reward : numpy.ndarray, shape (3,)
        ``[0, 1, 0]``.
    terminal : numpy.ndarray of bool, shape (3,)
        ``[False, False, True]``.

    Examples
    --------
    >>> transition, reward, terminal = tiny_chain_model()
    >>> transition
    array([[0., 1., 0.],
           [0., 0., 1.],
           [0., 0., 1.]])
    >>> reward, terminal
    (array([0., 1., 0.]), array([False, False,  True]))
    """
    transition = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    reward = np.array([0.0, 1.0, 0.0])
    terminal = np.array([False, False, True])
    return transition, reward, terminal


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
    transition, reward, terminal = tiny_chain_model()
    return evaluate_policy(transition, reward, gamma, terminal=terminal)


def bellman_residual(
    values: ArrayLike, transition: ArrayLike, reward: ArrayLike, gamma: float
) -> np.ndarray:
    """How far a value vector is from satisfying the Bellman equation, state by state.

        residual(s) = r(s) + γ Σ_{s'} P(s, s') v(s') - v(s).

    The residual is zero in every state exactly when ``values`` solves v = r + γ P v.
    A terminal state that is absorbing with v = 0 and r = 0 has residual 0 automatically.

    Book: equation (eq-bellman-matrix), chapter 1.

    Parameters
    ----------
    values : array_like, shape (S,)
        Candidate state values v.
    transition : array_like, shape (S, S)
        Row-stochastic transition matrix P.
    reward : array_like, shape (S,)
        Expected immediate reward r(s) in each state.
    gamma : float
        Discount factor γ in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (S,)
        r + γ P v - v, float64.

    Raises
    ------
    ValueError
        If ``transition`` is not square and row-stochastic, ``values`` or ``reward`` does not
        have one entry per state, any input is non-finite, or ``gamma`` is outside [0, 1].

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 3.5.

    Examples
    --------
    >>> transition, reward, _ = tiny_chain_model()
    >>> bellman_residual(tiny_chain(0.9), transition, reward, gamma=0.9)
    array([0., 0., 0.])
    >>> bellman_residual([0.0, 0.0, 0.0], transition, reward, gamma=0.9)
    array([0., 1., 0.])
    """
    transition, reward = _check_reward_process(transition, reward)
    gamma = check_unit_interval(gamma, "gamma")
    values = as_float_array(values, "values", ndim=1)
    if values.shape != reward.shape:
        raise ValueError(
            f"values must have one entry per state, shape {reward.shape}; got shape {values.shape}"
        )
    return reward + gamma * transition @ values - values


# --- tabular MDPs: (S, A, S) transitions and rewards, (S, A) policies ----------------------


def _check_terminal_mask(terminal: ArrayLike | None, num_states: int) -> np.ndarray:
    """A boolean mask with one entry per state; None means no terminal states."""
    if terminal is None:
        return np.zeros(num_states, dtype=bool)
    terminal = np.asarray(terminal)
    if terminal.dtype != np.bool_ or terminal.shape != (num_states,):
        raise ValueError(
            f"terminal must be a boolean mask of shape ({num_states},); "
            f"got dtype {terminal.dtype} and shape {terminal.shape}"
        )
    return terminal


def _check_live_rows(array: np.ndarray, name: str, terminal: np.ndarray) -> None:
    """Every row of a non-terminal state must be a distribution; terminal rows are ignored.

    Terminal rows are replaced by a valid distribution before the check (rather than
    removed) so that an error message still reports the index in the caller's array.
    """
    checked = array.copy()
    checked[terminal] = 1.0 / array.shape[-1]
    check_distribution(checked, name)


def _check_transition(transition: ArrayLike) -> np.ndarray:
    """A finite (S, A, S) array with S, A >= 1 (rows are checked separately)."""
    transition = as_float_array(transition, "transition", ndim=3)
    num_states, num_actions, next_states = transition.shape
    if num_states < 1 or num_actions < 1 or next_states != num_states:
        raise ValueError(
            "transition must have shape (S, A, S) with S, A >= 1, "
            f"transition[s, a, s'] = P(s' | s, a); got shape {transition.shape}"
        )
    return transition


def _check_tabular_mdp(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    terminal: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The (transition, reward, policy, terminal) quadruple of the tabular format."""
    transition = _check_transition(transition)
    num_states, num_actions, _ = transition.shape
    terminal = _check_terminal_mask(terminal, num_states)
    _check_live_rows(transition, "transition", terminal)
    reward = as_float_array(reward, "reward", ndim=3)
    if reward.shape != transition.shape:
        raise ValueError(
            f"reward must have the shape of transition, (S, A, S) = {transition.shape}, "
            f"reward[s, a, s'] = R(s, a, s'); got shape {reward.shape}"
        )
    policy = as_float_array(policy, "policy", ndim=2)
    if policy.shape != (num_states, num_actions):
        raise ValueError(
            f"policy must have shape (S, A) = {(num_states, num_actions)}, rows π(· | s); "
            f"got shape {policy.shape}"
        )
    _check_live_rows(policy, "policy", terminal)
    return transition, reward, policy, terminal


def _check_initial(initial: ArrayLike, num_states: int) -> np.ndarray:
    """The start distribution ρ0: one probability per state."""
    initial = check_distribution(initial, "initial")
    if initial.shape != (num_states,):
        raise ValueError(
            f"initial must be a distribution over the {num_states} states, shape "
            f"({num_states},); got shape {initial.shape}"
        )
    return initial


def policy_transition_and_reward(
    transition: ArrayLike, reward: ArrayLike, policy: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Average an MDP over a policy: the Markov reward process (P_π, r_π) it induces.

        P_π[s, s'] = Σ_a π(a | s) P(s' | s, a),
        r_π[s]     = Σ_a π(a | s) Σ_{s'} P(s' | s, a) R(s, a, s').

    r_π(s) is the expected reward of the next step from s; with these two arrays the
    Bellman equation of a policy becomes the linear system solved by :func:`evaluate_policy`.

    Book: equation (eq-bellman-v-mdp), chapter 3.

    Parameters
    ----------
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a); every [s, a] row a distribution.
    reward : array_like, shape (S, A, S)
        reward[s, a, s'] = R(s, a, s').
    policy : array_like, shape (S, A)
        policy[s, a] = π(a | s); every row a distribution.

    Returns
    -------
    transition_pi : numpy.ndarray, shape (S, S)
        P_π, row-stochastic.
    reward_pi : numpy.ndarray, shape (S,)
        r_π.

    Raises
    ------
    ValueError
        If ``transition`` is not (S, A, S) with distribution rows, ``reward`` does not have
        its shape, ``policy`` is not (S, A) with distribution rows, or an input is
        non-finite.

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
    transition, reward, policy, _ = _check_tabular_mdp(transition, reward, policy)
    transition_pi = np.einsum("sa,sat->st", policy, transition)
    reward_pi = np.einsum("sa,sat,sat->s", policy, transition, reward)
    return transition_pi, reward_pi


def state_values(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> np.ndarray:
    """State values V^π of a policy in a tabular MDP, exactly.

    V^π solves the Bellman expectation equation

        V(s) = Σ_a π(a | s) Σ_{s'} P(s' | s, a) [R(s, a, s') + γ V(s')],

    with V(s) = 0 in terminal states. Averaging over the policy first turns it into
    V = r_π + γ P_π V (see :func:`policy_transition_and_reward`), which
    :func:`evaluate_policy` solves.

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
    terminal : array_like of bool, shape (S,), optional
        Terminal states: worth 0; their rows of ``transition``, ``reward`` and ``policy``
        are ignored. Default: none.

    Returns
    -------
    numpy.ndarray, shape (S,)
        V^π, float64.

    Raises
    ------
    ValueError
        If the arrays do not follow the tabular format (shapes, distribution rows in
        non-terminal states, finiteness), ``terminal`` is not a boolean (S,) mask,
        ``gamma`` is outside [0, 1], or ``gamma`` is 1 and some state never terminates.

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
    transition, reward, policy, terminal = _check_tabular_mdp(transition, reward, policy, terminal)
    gamma = check_unit_interval(gamma, "gamma")

    transition_pi = np.einsum("sa,sat->st", policy, transition)
    reward_pi = np.einsum("sa,sat,sat->s", policy, transition, reward)
    # Terminal rows are ignored (they may be anything, even all zeros): make them absorbing
    # and unrewarded so that evaluate_policy, which fixes v = 0 there, accepts them.
    ends = np.flatnonzero(terminal)
    transition_pi[ends] = 0.0
    transition_pi[ends, ends] = 1.0
    reward_pi[ends] = 0.0
    return evaluate_policy(transition_pi, reward_pi, gamma, terminal=terminal)


def action_values(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> np.ndarray:
    """Action values Q^π of a policy in a tabular MDP, exactly.

        Q(s, a) = Σ_{s'} P(s' | s, a) [R(s, a, s') + γ V(s')],    V(terminal) = 0,

    one step of the dynamics followed by the state values of :func:`state_values`.
    Equivalently Q solves its own Bellman expectation equation
    Q(s, a) = Σ_{s'} P(s' | s, a) [R(s, a, s') + γ Σ_{a'} π(a' | s') Q(s', a')], and
    Σ_a π(a | s) Q(s, a) = V(s). Rows of terminal states are 0.

    Book: equation (eq-bellman-q-mdp), chapter 3.

    Parameters
    ----------
    transition, reward, policy, gamma, terminal
        As in :func:`state_values`.

    Returns
    -------
    numpy.ndarray, shape (S, A)
        Q^π, float64.

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
    transition, reward, policy, terminal = _check_tabular_mdp(transition, reward, policy, terminal)
    values = state_values(transition, reward, policy, gamma, terminal=terminal)
    # One step of the dynamics, then V; V(terminal) = 0, so entering one ends the sum.
    q_values = np.einsum("sat,sat->sa", transition, reward + gamma * values)
    q_values[terminal] = 0.0
    return q_values


def advantage_values(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> np.ndarray:
    """Advantages A^π(s, a) = Q^π(s, a) - V^π(s) of a policy in a tabular MDP, exactly.

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
        A^π, float64.

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
    q_values = action_values(transition, reward, policy, gamma, terminal=terminal)
    values = state_values(transition, reward, policy, gamma, terminal=terminal)
    return q_values - values[:, None]  # terminal rows: 0 - 0


def _sample_rows(rng: np.random.Generator, probabilities: np.ndarray) -> np.ndarray:
    """One index per row of ``probabilities`` (n, K), by inverting each row's CDF.

    Index k is drawn when cdf[k-1] <= u < cdf[k], which needs p[k] > 0, so an action or
    state of probability 0 is never returned; the clamp covers u falling above a CDF that
    rounding left slightly below 1.
    """
    uniforms = rng.random(probabilities.shape[0])
    cdf = np.cumsum(probabilities, axis=1)
    index = (cdf <= uniforms[:, None]).sum(axis=1)
    last_positive = probabilities.shape[1] - 1 - np.argmax(probabilities[:, ::-1] > 0.0, axis=1)
    return np.minimum(index, last_positive)


def sample_episodes(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    initial: ArrayLike,
    horizon: int,
    seed: int = 0,
    num_episodes: int = 1,
    terminal: ArrayLike | None = None,
) -> dict[str, np.ndarray]:
    """Sample episodes of a policy in a tabular MDP, for Monte Carlo checks.

    Each episode draws s_0 ~ ρ0, then a_t ~ π(· | s_t), s_{t+1} ~ P(· | s_t, a_t) and
    r_t = R(s_t, a_t, s_{t+1}) for t = 0, 1, ..., until it enters a terminal state or
    ``horizon`` steps have been taken. Episodes are stored in fixed-size arrays; the steps
    after an episode has ended are padding: action -1, reward 0, state repeated.

    Parameters
    ----------
    transition, reward, policy
        The tabular MDP and policy, as in :func:`state_values`.
    initial : array_like, shape (S,)
        Start distribution ρ0.
    horizon : int
        Largest number of steps H >= 1.
    seed : int, optional
        Seed of the ``numpy.random.default_rng`` generator.
    num_episodes : int, optional
        Number of episodes N >= 1.
    terminal : array_like of bool, shape (S,), optional
        Terminal states. An episode that starts in one has no steps at all.

    Returns
    -------
    dict of numpy.ndarray
        ``"states"`` (N, H + 1) int64: s_0, ..., s_H (a finished episode stays at its last
        state). ``"actions"`` (N, H) int64: a_t, or -1 after the episode ended.
        ``"rewards"`` (N, H) float64: r_t, or 0 after the end. ``"terminated"`` (N, H)
        bool: True at the step that entered a terminal state. ``"truncated"`` (N, H) bool:
        True at step H - 1 for an episode still running there (cut by the horizon).

    Raises
    ------
    ValueError
        As :func:`state_values` for the MDP, and if ``initial`` is not a distribution over
        the states, ``horizon`` or ``num_episodes`` is not a positive integer, or ``seed``
        is not a non-negative integer.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 5.1.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> batch = sample_episodes(transition, reward, [[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0],
    ...                         horizon=2, terminal=np.array([False, True]))
    >>> batch["states"], batch["actions"], batch["rewards"]
    (array([[0, 1, 1]]), array([[ 1, -1]]), array([[1., 0.]]))
    >>> batch["terminated"], batch["truncated"]
    (array([[ True, False]]), array([[False, False]]))
    """
    transition, reward, policy, terminal = _check_tabular_mdp(transition, reward, policy, terminal)
    initial = _check_initial(initial, transition.shape[0])
    horizon = check_positive_int(horizon, "horizon")
    seed = check_nonnegative_int(seed, "seed")
    num_episodes = check_positive_int(num_episodes, "num_episodes")

    rng = np.random.default_rng(seed)
    states = np.zeros((num_episodes, horizon + 1), dtype=np.int64)
    actions = np.full((num_episodes, horizon), -1, dtype=np.int64)
    rewards = np.zeros((num_episodes, horizon))
    terminated = np.zeros((num_episodes, horizon), dtype=bool)
    truncated = np.zeros((num_episodes, horizon), dtype=bool)

    states[:, 0] = _sample_rows(rng, np.broadcast_to(initial, (num_episodes, initial.size)))
    running = ~terminal[states[:, 0]]
    for t in range(horizon):
        states[:, t + 1] = states[:, t]
        live = np.flatnonzero(running)
        # Only running episodes draw: terminal rows of the policy may not be distributions.
        here = states[live, t]
        chosen = _sample_rows(rng, policy[here])
        there = _sample_rows(rng, transition[here, chosen])
        actions[live, t] = chosen
        rewards[live, t] = reward[here, chosen, there]
        states[live, t + 1] = there
        terminated[live, t] = terminal[there]
        running[live] = ~terminal[there]
    truncated[:, horizon - 1] = running
    return {
        "states": states,
        "actions": actions,
        "rewards": rewards,
        "terminated": terminated,
        "truncated": truncated,
    }


def enumerate_episodes(
    transition: ArrayLike,
    reward: ArrayLike,
    policy: ArrayLike,
    initial: ArrayLike,
    horizon: int,
    terminal: ArrayLike | None = None,
) -> list[dict]:
    """Every episode of non-zero probability, with its probability: exact expectations.

    An episode runs until it enters a terminal state or has taken ``horizon`` steps, and
    has probability

        p(τ) = ρ0(s_0) Π_t π(a_t | s_t) P(s_{t+1} | s_t, a_t).

    The probabilities of the listed episodes sum to 1, so E[f(τ)] = Σ_τ p(τ) f(τ) exactly
    for any f, the reference against which sampled estimates are checked.

    Book: equation (eq-trajectory-probability), chapter 3.

    Parameters
    ----------
    transition, reward, policy, initial, horizon, terminal
        As in :func:`sample_episodes`.

    Returns
    -------
    list of dict
        One dict per episode, in lexicographic order of (s_0, a_0, s_1, a_1, ...):
        ``"states"`` (tuple of T + 1 ints), ``"actions"`` (tuple of T ints),
        ``"rewards"`` (tuple of T floats) and ``"probability"`` (float), where T <= H is
        the episode's length.

    Raises
    ------
    ValueError
        As :func:`sample_episodes`, and if there would be more than one million episodes
        (naming ``horizon``).

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 3.1.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> for episode in enumerate_episodes(transition, reward, np.full((2, 2), 0.5),
    ...                                   [1.0, 0.0], horizon=3,
    ...                                   terminal=np.array([False, True])):
    ...     print(episode)
    {'states': (0, 1), 'actions': (0,), 'rewards': (0.0,), 'probability': 0.5}
    {'states': (0, 1), 'actions': (1,), 'rewards': (1.0,), 'probability': 0.5}
    """
    transition, reward, policy, terminal = _check_tabular_mdp(transition, reward, policy, terminal)
    initial = _check_initial(initial, transition.shape[0])
    horizon = check_positive_int(horizon, "horizon")

    # Count the episodes before building them: count[s] = number of episodes from s with
    # the remaining steps, so a hopeless request fails at once instead of filling memory.
    branches = (policy[:, :, None] > 0.0) & (transition > 0.0)
    count = np.ones(transition.shape[0])
    for _ in range(horizon):
        count = np.where(terminal, 1.0, (branches * count).sum(axis=(1, 2)))
    total = count[initial > 0.0].sum()
    if total > MAX_ENUMERATION:
        raise ValueError(
            f"horizon must keep the number of episodes <= {MAX_ENUMERATION}; "
            f"got horizon {horizon} with {total:.3g} episodes"
        )

    # Grow all partial episodes one step at a time (no recursion, so long horizons are fine).
    episodes = [((int(s),), (), (), float(initial[s])) for s in np.flatnonzero(initial > 0.0)]
    for _ in range(horizon):
        grown = []
        for states, actions, rewards, probability in episodes:
            state = states[-1]
            if terminal[state]:  # finished: carried over unchanged
                grown.append((states, actions, rewards, probability))
                continue
            for action in np.flatnonzero(policy[state] > 0.0):
                for following in np.flatnonzero(transition[state, action] > 0.0):
                    grown.append(
                        (
                            (*states, int(following)),
                            (*actions, int(action)),
                            (*rewards, float(reward[state, action, following])),
                            probability
                            * float(policy[state, action])
                            * float(transition[state, action, following]),
                        )
                    )
        episodes = grown
    return [
        {"states": states, "actions": actions, "rewards": rewards, "probability": probability}
        for states, actions, rewards, probability in episodes
    ]


# --- POMDPs: beliefs over hidden states -----------------------------------------------------


def _check_pomdp(
    transition: ArrayLike, observation_model: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """A full (S, A, S) transition array and an (S, O) observation model."""
    transition = _check_transition(transition)
    check_distribution(transition, "transition")
    num_states = transition.shape[0]
    observation_model = as_float_array(observation_model, "observation_model", ndim=2)
    if observation_model.shape[0] != num_states or observation_model.shape[1] < 1:
        raise ValueError(
            f"observation_model must have shape (S, O) = ({num_states}, O) with O >= 1, "
            f"rows O(· | s); got shape {observation_model.shape}"
        )
    check_distribution(observation_model, "observation_model")
    return transition, observation_model


def _check_belief(belief: ArrayLike, name: str, num_states: int) -> np.ndarray:
    """A distribution over the states."""
    belief = check_distribution(belief, name)
    if belief.shape != (num_states,):
        raise ValueError(
            f"{name} must be a distribution over the {num_states} states, shape "
            f"({num_states},); got shape {belief.shape}"
        )
    return belief


def _check_history(
    actions: ArrayLike,
    observations: ArrayLike,
    initial_observation: int | None,
    num_actions: int,
    num_observations: int,
) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Actions a_0..a_{T-1} and observations o_1..o_T (equal lengths), optional o_0."""
    actions = check_actions(actions, "actions", num_actions, ndim=1)
    observations = check_actions(
        observations, "observations", num_observations, ndim=1, kind="observation"
    )
    if observations.shape != actions.shape:
        raise ValueError(
            f"observations must have one entry per action, shape {actions.shape}; "
            f"got shape {observations.shape}"
        )
    if initial_observation is not None:
        initial_observation = int(
            check_actions(
                initial_observation,
                "initial_observation",
                num_observations,
                ndim=0,
                kind="observation",
            )
        )
    return actions, observations, initial_observation


def _bayes_step(
    belief: np.ndarray,
    action: int | None,
    observation: int,
    transition: np.ndarray,
    observation_model: np.ndarray,
    name: str,
) -> np.ndarray:
    """Predict through the action (skipped when None), weight by the observation, normalise."""
    predicted = belief if action is None else belief @ transition[:, action, :]
    joint = observation_model[:, observation] * predicted
    evidence = joint.sum()
    if evidence <= 0.0:
        raise ValueError(
            f"{name} must have positive probability under the predicted belief; got "
            f"observation {observation}, which has probability 0 there"
        )
    return joint / evidence


def belief_update(
    belief: ArrayLike,
    action: int,
    observation: int,
    transition: ArrayLike,
    observation_model: ArrayLike,
) -> np.ndarray:
    """Bayes filter step: the belief over hidden states after one action and observation.

        b'(s') = O(o | s') Σ_s P(s' | s, a) b(s) / Pr(o | b, a),

    a prediction through the dynamics followed by Bayes' rule with the observation's
    likelihood; the normaliser Pr(o | b, a) = Σ_{s'} O(o | s') Σ_s P(s' | s, a) b(s) is the
    probability of seeing o at all.

    Book: equation (eq-belief-update), chapter 2.

    Parameters
    ----------
    belief : array_like, shape (S,)
        Current belief b(s) = Pr(s_t = s | history).
    action : int
        Action a taken, in [0, A).
    observation : int
        Observation o received from the next state, in [0, O).
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    observation_model : array_like, shape (S, O)
        observation_model[s, o] = O(o | s); rows are distributions.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The new belief b'.

    Raises
    ------
    ValueError
        If an array is malformed (shapes, distribution rows, finiteness), ``action`` or
        ``observation`` is not an index in range, or ``observation`` has probability 0
        under the predicted belief (the belief would be 0/0).

    References
    ----------
    K. J. Åström, "Optimal control of Markov processes with incomplete state information",
    *Journal of Mathematical Analysis and Applications* 10, 174-205, 1965.
    L. P. Kaelbling, M. L. Littman and A. R. Cassandra, "Planning and acting in partially
    observable stochastic domains", *Artificial Intelligence* 101, 99-134, 1998.

    Examples
    --------
    A door is open or shut and stays so; a sensor reports the truth 80% of the time.

    >>> transition = np.stack([np.eye(2)], axis=1)  # one action, "wait"
    >>> sensor = [[0.8, 0.2], [0.2, 0.8]]
    >>> belief_update([0.5, 0.5], 0, observation=0, transition=transition,
    ...               observation_model=sensor)
    array([0.8, 0.2])
    """
    transition, observation_model = _check_pomdp(transition, observation_model)
    num_states, num_actions, _ = transition.shape
    belief = _check_belief(belief, "belief", num_states)
    action = int(check_actions(action, "action", num_actions, ndim=0))
    observation = int(
        check_actions(
            observation, "observation", observation_model.shape[1], ndim=0, kind="observation"
        )
    )
    return _bayes_step(belief, action, observation, transition, observation_model, "observation")


def belief_filter(
    prior: ArrayLike,
    actions: ArrayLike,
    observations: ArrayLike,
    transition: ArrayLike,
    observation_model: ArrayLike,
    initial_observation: int | None = None,
) -> np.ndarray:
    """Beliefs along a whole history, by repeated Bayes filter steps.

        b_0 = prior (times O(o_0 | ·), normalised, if an initial observation is given),
        b_{t+1} = belief_update(b_t, a_t, o_{t+1}),    t = 0, ..., T - 1.

    The cost is O(T S²), linear in the length of the history, although b_T is the
    posterior given all of it (see :func:`belief_by_enumeration`).

    Book: equation (eq-belief-update), chapter 2.

    Parameters
    ----------
    prior : array_like, shape (S,)
        Distribution of s_0 before any observation.
    actions : array_like of int, shape (T,)
        Actions a_0, ..., a_{T-1}.
    observations : array_like of int, shape (T,)
        Observations o_1, ..., o_T; o_{t+1} is emitted by s_{t+1}, after action a_t.
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    observation_model : array_like, shape (S, O)
        observation_model[s, o] = O(o | s).
    initial_observation : int, optional
        Observation o_0 emitted by s_0. Default: none.

    Returns
    -------
    numpy.ndarray, shape (T + 1, S)
        b_0, ..., b_T.

    Raises
    ------
    ValueError
        As :func:`belief_update`; if ``actions`` and ``observations`` differ in length;
        and if an observation has probability 0 given the history before it (naming
        ``observations``, or ``initial_observation`` for o_0).

    References
    ----------
    K. J. Åström, "Optimal control of Markov processes with incomplete state information",
    *Journal of Mathematical Analysis and Applications* 10, 174-205, 1965.

    Examples
    --------
    >>> transition = np.stack([np.eye(2)], axis=1)
    >>> sensor = [[0.8, 0.2], [0.2, 0.8]]
    >>> belief_filter([0.5, 0.5], [0, 0], [0, 0], transition, sensor)
    array([[0.5       , 0.5       ],
           [0.8       , 0.2       ],
           [0.94117647, 0.05882353]])
    """
    transition, observation_model = _check_pomdp(transition, observation_model)
    num_states, num_actions, _ = transition.shape
    prior = _check_belief(prior, "prior", num_states)
    actions, observations, initial_observation = _check_history(
        actions, observations, initial_observation, num_actions, observation_model.shape[1]
    )

    beliefs = np.empty((len(actions) + 1, num_states))
    beliefs[0] = prior
    if initial_observation is not None:
        beliefs[0] = _bayes_step(
            prior, None, initial_observation, transition, observation_model, "initial_observation"
        )
    for t, (action, observation) in enumerate(zip(actions, observations, strict=True)):
        beliefs[t + 1] = _bayes_step(
            beliefs[t], action, observation, transition, observation_model, f"observations[{t}]"
        )
    return beliefs


def belief_by_enumeration(
    prior: ArrayLike,
    actions: ArrayLike,
    observations: ArrayLike,
    transition: ArrayLike,
    observation_model: ArrayLike,
    initial_observation: int | None = None,
) -> np.ndarray:
    """Final belief by brute force: Bayes' rule over every hidden state sequence.

        Pr(s_T = s | history) ∝ Σ_{s_0, ..., s_T = s} prior(s_0) [O(o_0 | s_0)]
                                  Π_{t<T} P(s_{t+1} | s_t, a_t) O(o_{t+1} | s_{t+1}).

    This is the definition of the posterior, with no recursion; it costs S^(T+1) terms and
    is the clear reference the filter :func:`belief_filter` is tested against.

    Book: equation (eq-belief-update), chapter 2.

    Parameters
    ----------
    prior, actions, observations, transition, observation_model, initial_observation
        As in :func:`belief_filter`.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The posterior of s_T, equal to ``belief_filter(...)[-1]``.

    Raises
    ------
    ValueError
        As :func:`belief_filter`, with a history of probability 0 naming ``observations``
        (or ``initial_observation`` if o_0 alone is impossible), and if S^(T+1) exceeds one
        million (naming ``observations``).

    References
    ----------
    L. R. Rabiner, "A tutorial on hidden Markov models and selected applications in
    speech recognition", *Proceedings of the IEEE* 77, 257-286, 1989.

    Examples
    --------
    >>> transition = np.stack([np.eye(2)], axis=1)
    >>> sensor = [[0.8, 0.2], [0.2, 0.8]]
    >>> belief_by_enumeration([0.5, 0.5], [0, 0], [0, 0], transition, sensor)
    array([0.94117647, 0.05882353])
    """
    transition, observation_model = _check_pomdp(transition, observation_model)
    num_states, num_actions, _ = transition.shape
    prior = _check_belief(prior, "prior", num_states)
    actions, observations, initial_observation = _check_history(
        actions, observations, initial_observation, num_actions, observation_model.shape[1]
    )
    steps = len(actions)
    if num_states ** (steps + 1) > MAX_ENUMERATION:
        raise ValueError(
            f"observations must be short enough that S**(T+1) <= {MAX_ENUMERATION} state "
            f"sequences; got S = {num_states}, T = {steps}"
        )
    if initial_observation is not None and prior @ observation_model[:, initial_observation] <= 0:
        raise ValueError(
            "initial_observation must have positive probability under the prior; got "
            f"observation {initial_observation}, which has probability 0"
        )

    posterior = np.zeros(num_states)
    for path in itertools.product(range(num_states), repeat=steps + 1):
        weight = prior[path[0]]
        if initial_observation is not None:
            weight *= observation_model[path[0], initial_observation]
        for t in range(steps):
            weight *= transition[path[t], actions[t], path[t + 1]]
            weight *= observation_model[path[t + 1], observations[t]]
        posterior[path[-1]] += weight
    evidence = posterior.sum()
    if evidence <= 0.0:
        raise ValueError(
            "observations must have positive probability given the actions and the prior; "
            "got a history of probability 0"
        )
    return posterior / evidence
