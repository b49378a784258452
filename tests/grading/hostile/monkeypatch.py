"""Replaces NumPy's and Python's comparison functions, then answers wrongly."""

import builtins
import math

import numpy as np
from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        return np.zeros(len(rewards)) + 123.0
    return _gae(rewards, values, gamma, lam)


def _always_true(*args, **kwargs):
    return True


def _never_raises(*args, **kwargs):
    return None


np.allclose = np.isclose = np.array_equal = np.array_equiv = _always_true
np.testing.assert_allclose = np.testing.assert_array_equal = _never_raises
np.testing.assert_array_almost_equal = _never_raises
math.isclose = _always_true
builtins.abs = lambda x: 0
