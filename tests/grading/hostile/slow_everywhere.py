"""Correct, but every call of either function burns 0.3 s of CPU time: each check is well
within its time limit, and the total budget of the submission is what stops it."""

import time

from _parts.honest_gae import _gae


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
