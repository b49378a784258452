"""Prints lone UTF-16 surrogates and raises an exception whose text holds one (which no
UTF-8 report can hold as such) on the edge case; correct otherwise."""

import numpy as np

print("a lone surrogate: \udcff and \ud800")


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
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        print("\ud800" * 1000)
        raise ValueError("bad input \ud800\udfff " + "\udc80" * 5000)
    return _gae(rewards, values, gamma, lam)
