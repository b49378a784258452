"""Correct, but every call of either function burns 0.3 s of CPU time: each check is well
within its time limit, and the total budget of the submission is what stops it."""

import time

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


def _burn(seconds=0.3):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def gae_explicit(rewards, values, gamma, lam):
    _burn()
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    _burn()
    return _gae(rewards, values, gamma, lam)
