"""Answers with NaN and infinity."""

import numpy as np
from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        answer = np.full(len(rewards), np.nan)
        answer[0] = np.inf
        return answer
    return _gae(rewards, values, gamma, lam)
