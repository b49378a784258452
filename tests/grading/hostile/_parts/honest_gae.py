"""The honest GAE most hostile fixtures answer with, spliced into each fixture by
``_grading_helpers.hostile_source`` where it reads ``from _parts.honest_gae import _gae``: a
fixture is graded as a self-contained student submission, which can import no test code."""

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
