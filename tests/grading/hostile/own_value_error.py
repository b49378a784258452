"""Refuses bad input with a class of its own called ValueError, which is not the built-in one
(its module is the submission's)."""

import numpy as np


def _gae(rewards, values, gamma, lam):
    rewards = np.asarray(rewards, dtype=float)
    values = np.asarray(values, dtype=float)
    if values.shape != (rewards.shape[0] + 1,):
        raise ValueError("values must have T + 1 entries")
    deltas = rewards + gamma * values[1:] - values[:-1]
    advantages = np.zeros(len(rewards))
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = deltas[t] + gamma * lam * running
        advantages[t] = running
    return advantages


class ValueError(Exception):  # the point: it shadows the built-in name
    """Not the built-in ValueError, though it prints the same."""


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on values of the wrong length only: check values-length.
    if len(values) != len(rewards) + 1:
        raise ValueError("values must have T + 1 entries")
    return _gae(rewards, values, gamma, lam)
