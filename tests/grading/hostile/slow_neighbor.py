"""Correct, but slow: every call burns 0.1 s of CPU time. Graded next to submissions that
start many busy processes, it must keep full marks (its time limit counts its own CPU)."""

import time

from _parts.honest_gae import _gae


def _burn(seconds=0.1):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def gae_explicit(rewards, values, gamma, lam):
    _burn()
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    _burn()
    return _gae(rewards, values, gamma, lam)
