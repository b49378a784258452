"""Calls sys.exit(0) while being imported: every check fails, nothing else does."""

import sys

from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


sys.exit(0)
