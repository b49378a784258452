"""Refuses bad input with a TypeError whose text ends in a line "ValueError: ...": an error
check wants the class ValueError (or a subclass), and an exception's text is the student's."""

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


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on values of the wrong length only: check values-length.
    try:
        return _gae(rewards, values, gamma, lam)
    except ValueError:
        # The last line of its text reads like a ValueError's.
        raise TypeError("bad values\nValueError: values must have T + 1 entries") from None
