"""Exercise ``score-function-gradient`` (chapter 1, two stars): the policy gradient of a bandit.

A one-state bandit with K arms and a softmax policy ``pi = softmax(theta)`` has the expected
reward

    J(theta) = sum_a pi(a) q(a),

where ``q(a)`` is the (deterministic) reward of arm ``a``. The score-function identity writes
its gradient as an expectation under the policy,

    grad J(theta) = E_{a ~ pi}[ q(a) grad log pi(a) ],   grad log pi(a) = e_a - pi,

with ``e_a`` the one-hot vector of arm ``a``. Working the expectation out gives the closed form
``pi(a) (q(a) - sum_b pi(b) q(b))`` for component ``a``.

Implement :func:`bandit_gradient`, the exact gradient (no sampling). Compute the softmax in a
numerically stable way (subtract the largest logit before exponentiating).
"""

from __future__ import annotations

import numpy as np


def bandit_gradient(logits, action_rewards):
    """Exact gradient of ``J(theta) = sum_a softmax(theta)_a q(a)`` with respect to the logits.

    The gradient is the expectation of reward times score, ``sum_a pi(a) q(a) (e_a - pi)``,
    which equals ``pi * (q - pi . q)``.

    Parameters
    ----------
    logits : array_like
        Shape (K,): the policy's logits ``theta``.
    action_rewards : array_like
        Shape (K,): the reward ``q(a)`` of each arm.

    Returns
    -------
    numpy.ndarray
        Shape (K,), float64: ``dJ/dtheta``.

    Raises
    ------
    ValueError
        If ``action_rewards`` does not have the same 1-D shape as ``logits``; the message starts
        with ``action_rewards``.

    Examples
    --------
    >>> gradient = bandit_gradient([0.0, 0.0], [1.0, 1.0])  # equal rewards: nothing to learn
    >>> gradient.tolist()
    [0.0, 0.0]
    """
    ### BEGIN SOLUTION
    logits = np.asarray(logits, dtype=np.float64)
    action_rewards = np.asarray(action_rewards, dtype=np.float64)
    if logits.ndim != 1 or action_rewards.shape != logits.shape:
        raise ValueError(
            f"action_rewards must have the 1-D shape of logits {logits.shape}; "
            f"got {action_rewards.shape}"
        )
    exp_logits = np.exp(logits - logits.max())
    probs = exp_logits / exp_logits.sum()
    # Exact expectation over arms of q(a) times the score e_a - pi.
    gradient = np.zeros_like(logits)
    for a in range(len(logits)):
        score = -probs.copy()
        score[a] += 1.0
        gradient += probs[a] * action_rewards[a] * score
    return gradient
    ### END SOLUTION
