"""Exercise ``action-values`` (chapter 3, two stars): action values from the Bellman equation.

A tabular MDP is given by ``transition[s, a, s'] = P(s' | s, a)`` and
``reward[s, a, s'] = R(s, a, s')``, a policy by ``policy[s, a] = pi(a | s)``, and ``terminal``
marks the states where an episode ends (they are worth 0 and their rows are never used).

The state values of the policy solve the Bellman expectation equation

    v(s) = sum_a pi(a | s) sum_s' P(s' | s, a) [R(s, a, s') + gamma v(s')],   v(terminal) = 0,

which is linear in v: with P_pi[s, s'] = sum_a pi(a | s) P(s' | s, a) and
r_pi[s] = sum_a pi(a | s) sum_s' P(s' | s, a) R(s, a, s') it reads v = r_pi + gamma P_pi v
on the non-terminal states. The action values are one step of the dynamics followed by v:

    q(s, a) = sum_s' P(s' | s, a) [R(s, a, s') + gamma v(s')],   q(terminal, a) = 0.

Implement :func:`q_values`. Solve the linear system directly (no iteration), and only for the
non-terminal states.
"""

from __future__ import annotations

import numpy as np


def q_values(transition, reward, policy, gamma, terminal):
    """Action values ``q_pi(s, a)`` of a policy in a tabular MDP, exactly.

    Parameters
    ----------
    transition : array_like
        Shape (S, A, S): ``transition[s, a, s'] = P(s' | s, a)``; the rows of non-terminal
        states are distributions (terminal rows are ignored).
    reward : array_like
        Shape (S, A, S): ``reward[s, a, s'] = R(s, a, s')``.
    policy : array_like
        Shape (S, A): ``policy[s, a] = pi(a | s)``; rows of non-terminal states are
        distributions (terminal rows are ignored).
    gamma : float
        Discount factor in [0, 1]. With ``gamma = 1`` every non-terminal state must reach a
        terminal state under the policy.
    terminal : array_like of bool
        Shape (S,): True for terminal states.

    Returns
    -------
    numpy.ndarray
        Shape (S, A), float64: ``q_pi``, with rows of terminal states equal to 0.

    Raises
    ------
    ValueError
        If an array has the wrong shape or non-finite entries, a non-terminal row of
        ``transition`` or ``policy`` is not a distribution, ``gamma`` is outside [0, 1], or
        ``gamma`` is 1 and some state never reaches a terminal state. The message starts with
        the name of the argument at fault.

    Examples
    --------
    One decision, then the end: action 1 pays 1 and action 0 pays 0.

    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> q_values(transition, reward, np.full((2, 2), 0.5), 1.0, np.array([False, True]))
    array([[0., 1.],
           [0., 0.]])
    """
    ### BEGIN SOLUTION
    transition = np.asarray(transition, dtype=np.float64)
    reward = np.asarray(reward, dtype=np.float64)
    policy = np.asarray(policy, dtype=np.float64)
    terminal = np.asarray(terminal)
    if transition.ndim != 3 or transition.shape[0] != transition.shape[2]:
        raise ValueError(f"transition must have shape (S, A, S); got shape {transition.shape}")
    num_states, num_actions, _ = transition.shape
    if reward.shape != transition.shape:
        raise ValueError(f"reward must have shape {transition.shape}; got shape {reward.shape}")
    if policy.shape != (num_states, num_actions):
        raise ValueError(
            f"policy must have shape {(num_states, num_actions)}; got shape {policy.shape}"
        )
    if terminal.dtype != np.bool_ or terminal.shape != (num_states,):
        raise ValueError(
            f"terminal must be a boolean array of shape ({num_states},); "
            f"got dtype {terminal.dtype}, shape {terminal.shape}"
        )
    if not np.isscalar(gamma) or not 0.0 <= float(gamma) <= 1.0:
        raise ValueError(f"gamma must be a number in [0, 1]; got {gamma!r}")
    gamma = float(gamma)
    live = ~terminal
    for name, array in (("transition", transition), ("reward", reward), ("policy", policy)):
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must be finite")
    for name, rows in (("transition", transition[live]), ("policy", policy[live])):
        if np.any(rows < 0) or not np.allclose(rows.sum(axis=-1), 1.0, rtol=0, atol=1e-8):
            raise ValueError(f"{name} rows of non-terminal states must be distributions")

    # The policy-averaged dynamics and expected one-step rewards: v = r_pi + gamma P_pi v.
    transition_pi = np.einsum("sa,sat->st", policy, transition)
    reward_pi = np.einsum("sa,sat,sat->s", policy, transition, reward)
    if gamma == 1.0:
        # Undiscounted values are finite only if every live state can reach a terminal one.
        reaches_end = terminal.copy()
        while True:
            grown = reaches_end | (transition_pi[:, reaches_end].sum(axis=1) > 0)
            if np.array_equal(grown, reaches_end):
                break
            reaches_end = grown
        if not reaches_end.all():
            raise ValueError("gamma must be < 1 when some state never reaches a terminal state")
    values = np.zeros(num_states)
    # v = 0 at terminal states, so only the live block of the system remains.
    system = np.eye(live.sum()) - gamma * transition_pi[np.ix_(live, live)]
    values[live] = np.linalg.solve(system, reward_pi[live])

    q = np.einsum("sat,sat->sa", transition, reward + gamma * values[None, None, :])
    q[terminal] = 0.0
    return q
    ### END SOLUTION
