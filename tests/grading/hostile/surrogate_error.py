"""Prints lone UTF-16 surrogates and raises an exception whose text holds one (which no
UTF-8 report can hold as such) on the edge case; correct otherwise."""

from _parts.honest_gae import _gae

print("a lone surrogate: \udcff and \ud800")


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on the edge case gamma = lam = 0 only: check recursive-edges.
    if gamma == 0 and lam == 0:
        print("\ud800" * 1000)
        raise ValueError("bad input \ud800\udfff " + "\udc80" * 5000)
    return _gae(rewards, values, gamma, lam)
