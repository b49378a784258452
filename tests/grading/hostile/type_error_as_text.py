"""Refuses bad input with a TypeError whose text ends in a line "ValueError: ...": an error
check wants the class ValueError (or a subclass), and an exception's text is the student's."""

from _parts.honest_gae import _gae


def gae_explicit(rewards, values, gamma, lam):
    return _gae(rewards, values, gamma, lam)


def gae_recursive(rewards, values, gamma, lam):
    # The attack runs on values of the wrong length only: check values-length.
    try:
        return _gae(rewards, values, gamma, lam)
    except ValueError:
        # The last line of its text reads like a ValueError's.
        raise TypeError("bad values\nValueError: values must have T + 1 entries") from None
