"""Allocates memory until it runs out (bounded by the worker's address-space limit)."""

import numpy as np
from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        try:
            np.empty(2**40)  # 8 TiB: refused at once by the address-space limit
        except MemoryError:
            pass
        hoard = []
        while True:  # then fill memory 128 MiB at a time until the limit stops it
            hoard.append(bytearray(128 * 1024**2))
    return _gae(rewards, values, gamma, lam)
