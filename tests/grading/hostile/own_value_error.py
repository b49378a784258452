"""Refuses bad input with a class of its own called ValueError, which is not the built-in one
(its module is the submission's)."""

from _parts.honest_gae import _gae


class ValueError(Exception):  # the point: it shadows the built-in name
    """Not the built-in ValueError, though it prints the same."""


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on values of the wrong length only: check values-length.
    if len(values) != len(rewards) + 1:
        raise ValueError("values must have T + 1 entries")
    return _gae(rewards, values, gamma, lam)
