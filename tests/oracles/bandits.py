"""Bandits: the objective, its gradient, exact expectations over groups of draws."""

from __future__ import annotations

import math

import numpy as np

from tests.oracles.basics import softmax_rows

# ---------------------------------------------------------------------------------------------
# Bandits
# ---------------------------------------------------------------------------------------------


def bandit_objective_by_hand(logits, action_rewards):
    """J(θ) = Σ_a π_θ(a) q(a), with the softmax of :func:`softmax_rows`."""
    return float(softmax_rows(logits) @ np.asarray(action_rewards, dtype=np.float64))


def bandit_gradient_by_hand(logits, action_rewards):
    """∇_θ J = π(a) (q(a) - Σ_b π(b) q(b)) for every a: eq-bandit-gradient, written out."""
    probs = softmax_rows(logits)
    action_rewards = np.asarray(action_rewards, dtype=np.float64)
    return probs * (action_rewards - probs @ action_rewards)


def group_expectation_by_hand(logits, action_rewards, group_size, advantage_fn, joint=None):
    """E[(1/G) Σ_i A_i (e_{a_i} - π)] over all K^G groups (a_1, ..., a_G) of actions, each
    group read off the base-K digits of its index.

    The advantages are ``advantage_fn(q(a_1), ..., q(a_G))`` (any function of the whole
    group). The group's probability is Π_i π(a_i) (independent draws), or ``joint[group]``
    when a joint distribution of the G draws is given; groups of probability 0 are skipped.
    """
    probs = softmax_rows(logits)
    q = np.asarray(action_rewards, dtype=np.float64)
    k = len(probs)
    total = np.zeros(k)
    for code in range(k**group_size):
        group = [(code // k**i) % k for i in range(group_size)]
        if joint is None:
            probability = math.prod(probs[a] for a in group)
        else:
            probability = joint[tuple(group)]
        if probability == 0.0:
            continue
        advantages = advantage_fn(np.array([q[a] for a in group]))
        for i, a in enumerate(group):
            total += probability * advantages[i] * (np.eye(k)[a] - probs) / group_size
    return total
