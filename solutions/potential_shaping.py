"""Exercise ``potential-shaping`` (chapter 9, two stars): potential-based reward shaping.

A potential Φ assigns a number to every state. Shaping adds

    F(s, a, s') = gamma * Phi(s') - Phi(s)

to the reward of every transition. Along an episode these terms telescope, so the optimal
action values of the shaped task are q*(s, a) - Phi(s) and the optimal policies do not change,
provided the potential of every terminal state is taken to be 0 (an episode stops there, and
nothing is paid after it).

Implement

* :func:`shaped_reward`, the shaped reward table R'(s, a, s') of a tabular MDP, with the
  potential of terminal states taken as 0 and the rows of terminal states returned unshaped;
* :func:`shaped_episode_rewards`, the shaped rewards r_t + gamma Phi(s_{t+1}) - Phi(s_t) of
  episodes given the potentials of the states they visited;
* :func:`test_potential_shaping`, a test that checks the invariance q'* = q* - Phi by value
  iteration on random MDPs with random potentials, and the telescoping identity on random
  episodes.
"""

from __future__ import annotations

import numpy as np


def shaped_reward(reward, potential, gamma, terminal):
    """Potential-based shaping of a tabular reward function.

    Parameters
    ----------
    reward : array_like
        Shape (S, A, S): reward[s, a, s'] = R(s, a, s').
    potential : array_like
        Shape (S,): the potential Phi(s).
    gamma : float
        Discount factor, in [0, 1].
    terminal : array_like of bool
        Shape (S,): True for terminal states, whose potential is taken as 0 and whose rows are
        returned unchanged.

    Returns
    -------
    numpy.ndarray
        Shape (S, A, S), float64: R(s, a, s') + gamma Phi(s') - Phi(s), with Phi(s') = 0 for
        terminal s'.

    Raises
    ------
    ValueError
        If ``reward`` is not (S, A, S), ``potential`` or ``terminal`` does not have one entry
        per state, an input is not finite, or ``gamma`` is outside [0, 1].

    Examples
    --------
    >>> reward = np.zeros((2, 1, 2)); reward[0, 0, 1] = 1.0
    >>> shaped_reward(reward, [0.5, 2.0], 0.5, [False, True])[0, 0].tolist()
    [-0.25, 0.5]
    """
    ### BEGIN SOLUTION
    reward = np.asarray(reward, dtype=np.float64)
    if reward.ndim != 3 or reward.shape[0] != reward.shape[2] or reward.shape[0] < 1:
        raise ValueError(f"reward must have shape (S, A, S); got {reward.shape}")
    num_states = reward.shape[0]
    potential = np.asarray(potential, dtype=np.float64)
    if potential.shape != (num_states,):
        raise ValueError(f"potential must have shape ({num_states},); got {potential.shape}")
    terminal = np.asarray(terminal)
    if terminal.shape != (num_states,):
        raise ValueError(f"terminal must have shape ({num_states},); got {terminal.shape}")
    if not np.all((terminal == 0) | (terminal == 1)):
        raise ValueError("terminal must hold booleans (or 0/1)")
    terminal = terminal.astype(bool)
    for name, x in (("reward", reward), ("potential", potential)):
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be finite")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1]; got {gamma}")

    # An episode stops at a terminal state: its potential is never collected.
    next_potential = np.where(terminal, 0.0, potential)
    shaping = gamma * next_potential[None, None, :] - potential[:, None, None]
    shaping[terminal] = 0.0  # rows of terminal states are never used
    return reward + shaping
    ### END SOLUTION


def shaped_episode_rewards(rewards, potentials, gamma):
    """Shaped rewards of episodes: r_t + gamma Phi(s_{t+1}) - Phi(s_t).

    Parameters
    ----------
    rewards : array_like
        Shape (..., T), T >= 1: the rewards r_t; leading axes a batch.
    potentials : array_like
        Shape (..., T + 1): Phi(s_0), ..., Phi(s_T) (0 for a terminal s_T).
    gamma : float
        Discount factor, in [0, 1].

    Returns
    -------
    numpy.ndarray
        Shape (..., T), float64.

    Raises
    ------
    ValueError
        If the shapes do not agree, an input is not finite, or ``gamma`` is outside [0, 1].

    Examples
    --------
    >>> shaped_episode_rewards([0.0, 0.0, 1.0], [0.2, 0.5, 0.5, 0.0], 1.0).tolist()
    [0.3, 0.0, 0.5]
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    potentials = np.asarray(potentials, dtype=np.float64)
    if rewards.ndim == 0 or rewards.shape[-1] == 0:
        raise ValueError(f"rewards must have shape (..., T) with T >= 1; got {rewards.shape}")
    expected = (*rewards.shape[:-1], rewards.shape[-1] + 1)
    if potentials.shape != expected:
        raise ValueError(f"potentials must have shape {expected}; got {potentials.shape}")
    for name, x in (("rewards", rewards), ("potentials", potentials)):
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be finite")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1]; got {gamma}")

    return rewards + gamma * potentials[..., 1:] - potentials[..., :-1]
    ### END SOLUTION


def test_potential_shaping():
    """The shaped optimal action values are q* - Phi on random MDPs; shaped rewards telescope.

    Value iteration by hand on random MDPs (every transition probability positive, one or two
    terminal states, gamma in [0, 0.95]) with random potentials, including large values at the
    terminal states, which must not matter; and, for random episodes, the discounted sum of the
    shaped rewards equals the return minus Phi(s_0) plus gamma^T Phi(s_T).
    """
    ### BEGIN SOLUTION
    rng = np.random.default_rng(9)

    def optimal_q(transition, reward, gamma, terminal):
        q = np.zeros(transition.shape[:2])
        for _ in range(5000):
            values = np.where(terminal, 0.0, q.max(axis=1))
            new = np.einsum("sat,sat->sa", transition, reward + gamma * values)
            new[terminal] = 0.0
            if np.max(np.abs(new - q)) < 1e-13:
                return new
            q = new
        raise AssertionError("value iteration did not converge")

    for num_states, num_actions, num_terminal in ((3, 2, 1), (5, 3, 2), (6, 2, 1)):
        for gamma in (0.0, 0.5, 0.95):
            transition = rng.dirichlet(np.ones(num_states), size=(num_states, num_actions))
            reward = rng.normal(size=(num_states, num_actions, num_states))
            terminal = np.arange(num_states) >= num_states - num_terminal
            potential = rng.normal(size=num_states) * 3.0
            potential[terminal] = 100.0  # ignored: the potential of an end is 0
            shaped = shaped_reward(reward, potential, gamma, terminal)
            q = optimal_q(transition, reward, gamma, terminal)
            q_shaped = optimal_q(transition, shaped, gamma, terminal)
            live = ~terminal
            np.testing.assert_allclose(q_shaped[live], (q - potential[:, None])[live], atol=1e-9)

    for horizon in (1, 4, 9):
        for gamma in (0.0, 0.7, 1.0):
            rewards = rng.normal(size=(3, horizon))
            potentials = rng.normal(size=(3, horizon + 1))
            shaped = shaped_episode_rewards(rewards, potentials, gamma)
            discounts = gamma ** np.arange(horizon)
            np.testing.assert_allclose(
                shaped @ discounts,
                rewards @ discounts - potentials[:, 0] + gamma**horizon * potentials[:, -1],
                atol=1e-12,
            )
    ### END SOLUTION
