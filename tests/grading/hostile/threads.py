"""Leaves non-daemon threads running; answers correctly."""

import threading
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


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def _spin():
    while True:
        time.sleep(0.05)


_started = []


def gae_recursive(rewards, values, gamma, lam):
    if not _started:  # one more thread, left running, from inside a graded call
        _started.append(threading.Thread(target=_spin))
        _started[0].start()
    return _gae(rewards, values, gamma, lam)


for _ in range(4):
    threading.Thread(target=_spin).start()
