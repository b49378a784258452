"""Floods stdout and stderr, at import and in calls, but answers correctly."""

import os
import sys

from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def _flood():
    print("x" * 10_000_000)
    for _ in range(20_000):
        print("spam spam spam")
    sys.stderr.write("e" * 5_000_000)
    try:
        for _ in range(20):
            os.write(1, b"y" * 4_000_000)
    except OSError:
        pass


def gae_recursive(rewards, values, gamma, lam):
    _flood()
    return _gae(rewards, values, gamma, lam)


_flood()
