"""Exercise ``reward-to-go-reinforce`` (chapter 3, two stars): REINFORCE from one episode.

A tabular softmax policy has one row of logits per state, ``pi(a | s) = softmax(logits[s])[a]``,
and the score of an action is ``grad_logits log pi(a | s) = e_s (x) (e_a - pi(. | s))``: row ``s``
gets the one-hot vector of ``a`` minus the probabilities, every other row gets 0.

REINFORCE turns one episode ``s_0, a_0, r_0, s_1, ..., s_T`` into an unbiased estimate of the
gradient of ``J = E[sum_t gamma^t r_t]``:

    total return:   g = sum_t G_0 grad log pi(a_t | s_t),          G_0 = sum_k gamma^k r_k,
    reward-to-go:   g = sum_t gamma^t G_t grad log pi(a_t | s_t),  G_t = sum_{k>=t} gamma^(k-t) r_k.

Episodes come in a batch, stored as the arrays of ``rlfound.episodes.Episodes`` (what
``rlfound.episodes.sample_episodes`` and ``rlfound.episodes.enumerate_episodes`` return):
``states`` has shape (N, T + 1), ``actions`` and ``rewards`` shape (N, T), and an episode that
ended early is padded with action -1 and reward 0 after its last step. Padded steps are not
part of the episode and contribute nothing.

Implement :func:`reinforce_estimates`, one estimate per episode.
"""

from __future__ import annotations

import numpy as np


def reinforce_estimates(logits, states, actions, rewards, gamma, reward_to_go):
    """One-episode REINFORCE estimates of the policy gradient, for a batch of episodes.

    Parameters
    ----------
    logits : array_like
        Shape (S, A): the tabular softmax policy's logits.
    states : array_like of int
        Shape (N, T + 1): the states s_0, ..., s_T of each episode (entries after the end of
        an episode are ignored).
    actions : array_like of int
        Shape (N, T): the actions, in [0, A), followed by a trailing block of -1 once the
        episode has ended.
    rewards : array_like
        Shape (N, T): the rewards, 0 at padded steps.
    gamma : float
        Discount factor in [0, 1].
    reward_to_go : bool
        Weight step t by ``gamma^t G_t`` (True) or by the total return ``G_0`` (False).

    Returns
    -------
    numpy.ndarray
        Shape (N, S, A), float64: the estimate of each episode.

    Raises
    ------
    ValueError
        If the shapes do not match, an index is out of range, -1 appears before a valid
        action, a padded step has a non-zero reward, an input is non-finite, ``gamma`` is
        outside [0, 1] or ``reward_to_go`` is not a bool. The message starts with the name of
        the argument at fault.

    Examples
    --------
    Two steps in state 0 of a one-state policy, rewarded only at the first step:

    >>> reinforce_estimates(np.zeros((1, 2)), [[0, 0, 0]], [[0, 1]], [[1.0, 0.0]], 1.0, True)
    array([[[ 0.5, -0.5]]])
    >>> reinforce_estimates(np.zeros((1, 2)), [[0, 0, 0]], [[0, 1]], [[1.0, 0.0]], 1.0, False)
    array([[[0., 0.]]])
    """
    ### BEGIN SOLUTION
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2 or not np.all(np.isfinite(logits)):
        raise ValueError(f"logits must be a finite (S, A) array; got shape {logits.shape}")
    num_states, num_actions = logits.shape
    states = np.asarray(states)
    actions = np.asarray(actions)
    rewards = np.asarray(rewards, dtype=np.float64)
    if actions.ndim != 2 or not np.issubdtype(actions.dtype, np.integer):
        raise ValueError(f"actions must be an (N, T) integer array; got {actions.dtype}")
    num_episodes, horizon = actions.shape
    if states.shape != (num_episodes, horizon + 1) or not np.issubdtype(states.dtype, np.integer):
        raise ValueError(
            f"states must be an integer array of shape {(num_episodes, horizon + 1)}; "
            f"got {states.dtype} of shape {states.shape}"
        )
    if rewards.shape != actions.shape or not np.all(np.isfinite(rewards)):
        raise ValueError(f"rewards must be finite with shape {actions.shape}")
    if np.any(states < 0) or np.any(states >= num_states):
        raise ValueError(f"states must lie in [0, {num_states})")
    if np.any(actions < -1) or np.any(actions >= num_actions):
        raise ValueError(f"actions must lie in [0, {num_actions}) or be -1 (padding)")
    if not np.isscalar(gamma) or not 0.0 <= float(gamma) <= 1.0:
        raise ValueError(f"gamma must be a number in [0, 1]; got {gamma!r}")
    if not isinstance(reward_to_go, bool | np.bool_):
        raise ValueError(f"reward_to_go must be True or False; got {reward_to_go!r}")
    gamma = float(gamma)

    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = shifted / shifted.sum(axis=1, keepdims=True)
    estimates = np.zeros((num_episodes, num_states, num_actions))
    for n in range(num_episodes):
        padded = actions[n] < 0
        length = int(np.argmax(padded)) if padded.any() else horizon
        if not padded[length:].all():
            raise ValueError(f"actions must be -1 only after the end of episode {n}")
        if np.any(rewards[n, length:] != 0.0):
            raise ValueError(f"rewards must be 0 after the end of episode {n}")
        episode_rewards = rewards[n, :length]
        discounts = gamma ** np.arange(length)
        if reward_to_go:
            to_go = np.zeros(length)
            running = 0.0
            for t in reversed(range(length)):
                running = episode_rewards[t] + gamma * running
                to_go[t] = running
            weights = discounts * to_go
        else:
            weights = np.full(length, discounts @ episode_rewards)
        for t in range(length):
            s, a = states[n, t], actions[n, t]
            estimates[n, s] -= weights[t] * probs[s]
            estimates[n, s, a] += weights[t]
    return estimates
    ### END SOLUTION
