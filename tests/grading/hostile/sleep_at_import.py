"""Sleeps for an hour while being imported: the import times out once."""

import time

from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


time.sleep(3600)
