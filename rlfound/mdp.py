"""Exact policy evaluation in small Markov decision processes.

A fixed policy π turns an MDP into a Markov reward process: a transition matrix
P_π[s, s'] = Σ_a π(a | s) p(s' | s, a) and an expected immediate reward r_π[s]. The functions
here take that pair and solve the Bellman equation for the state values exactly.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import as_float_array, check_distribution, check_unit_interval

__all__ = ["bellman_residual", "evaluate_policy", "tiny_chain", "tiny_chain_model"]


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
