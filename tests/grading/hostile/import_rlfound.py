"""Tries to import the reference library, even via sys.path, to copy its answer."""

import sys

import numpy as np
from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        try:
            sys.path.insert(0, "__REPO__")
            from rlfound.advantages import gae_recursive as reference

            return reference(rewards, values, gamma, lam)
        except Exception:
            return np.zeros(len(rewards))
    return _gae(rewards, values, gamma, lam)
