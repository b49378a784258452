"""Exercise ``bellman-arithmetic`` (chapter 1, one star): Bellman arithmetic on a tiny chain.

The chain has three states, ``0 -> 1 -> terminal``. Every transition is deterministic, the
reward is 1 in state 1 and 0 elsewhere, and the terminal state is absorbing with value 0.

Implement :func:`chain_values`, which returns ``[v(0), v(1), v(terminal)]`` for a discount
``gamma`` in [0, 1]. The values solve the Bellman equations of the two non-terminal states,

    v(0) = r(0) + gamma * v(1)          = 0 + gamma * v(1)
    v(1) = r(1) + gamma * v(terminal)   = 1 + gamma * 0,

that is the 2x2 linear system ``(I - gamma P) v = r`` with ``P = [[0, 1], [0, 0]]`` (the
second row is empty because state 1 leaves to the terminal state, whose value is fixed at 0)
and ``r = [0, 1]``. Treating the terminal state separately, instead of as a state with a
self-loop, keeps the system solvable at ``gamma = 1`` too.
"""

from __future__ import annotations

import numpy as np


def chain_values(gamma):
    """State values of the chain ``0 -> 1 -> terminal`` with reward 1 in state 1.

    Solves ``v = r + gamma P v`` over the two non-terminal states and appends the value 0 of
    the terminal state.

    Parameters
    ----------
    gamma : float
        Discount factor, in [0, 1].

    Returns
    -------
    numpy.ndarray
        Shape (3,), float64: ``[v(0), v(1), v(terminal)]``.

    Raises
    ------
    ValueError
        If ``gamma`` is not a number in [0, 1]; the message starts with ``gamma``.

    Examples
    --------
    >>> values = chain_values(0.5)
    >>> values.shape
    (3,)
    >>> float(values[2])
    0.0
    """
    ### BEGIN SOLUTION
    gamma = float(gamma)
    if not 0.0 <= gamma <= 1.0:  # also rejects nan
        raise ValueError(f"gamma must be in [0, 1]; got {gamma}")
    # Transitions among the non-terminal states 0 and 1 only.
    transition = np.array([[0.0, 1.0], [0.0, 0.0]])
    reward = np.array([0.0, 1.0])
    non_terminal = np.linalg.solve(np.eye(2) - gamma * transition, reward)
    return np.append(non_terminal, 0.0)
    ### END SOLUTION
