"""Floods stdout and stderr, at import and in calls, but answers correctly."""

import os
import sys

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


def _flood():
    print("x" * 10_000_000)
    for _ in range(20_000):
        print("spam spam spam")
    sys.stderr.write("e" * 5_000_000)
    try:
        for _ in range(20):
            os.write(1, b"y" * 4_000_000)
    except OSError:
        pass


def gae_recursive(rewards, values, gamma, lam):
    _flood()
    return _gae(rewards, values, gamma, lam)


_flood()
