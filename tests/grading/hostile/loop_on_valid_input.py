"""gae_recursive raises ValueError on bad input, as the error check wants, but loops forever
on every valid input: it costs one timeout (its later calls are not run), never returns
numbers, and so earns no error check; gae_explicit is correct and keeps its points."""

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
    if len(values) != len(rewards) + 1:
        raise ValueError("values must have T + 1 entries")
    while True:
        pass
