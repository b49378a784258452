"""Returns shape (T, 1), which would broadcast against (T,) when T = 1."""

from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    answer = _gae(rewards, values, gamma, lam)
    return answer.reshape(-1, 1) if len(answer) == 1 else answer
