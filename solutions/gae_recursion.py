"""Exercise ``gae-recursion`` (chapter 1, three stars): GAE, its recursion, and a test.

For a trajectory of T rewards ``r_0, ..., r_{T-1}`` and T + 1 value estimates
``V(s_0), ..., V(s_T)`` (the last one is the bootstrap value, 0 after a true termination), the
temporal-difference errors are

    delta_t = r_t + gamma V(s_{t+1}) - V(s_t),   t = 0, ..., T - 1,

and generalized advantage estimation (GAE) weights them geometrically,

    A_t = sum_{l=0}^{T-t-1} (gamma lam)^l delta_{t+l}            (the explicit sum)
        = delta_t + gamma lam A_{t+1},   A_T = 0                  (the backward recursion).

Implement

* :func:`gae_recursive`, the backward recursion (one pass from the end of the trajectory);
* :func:`gae_explicit`, the explicit weighted sum, straight from the definition;
* :func:`test_gae_matches_explicit_sum`, a test that compares both against an independent
  double loop over ``t`` and ``l`` on random trajectories, for a grid of ``gamma`` and ``lam``
  that includes 0 and 1 and for random lengths that include T = 1.

Remember that ``0 ** 0 == 1``: with ``gamma * lam == 0`` the advantage is ``delta_t``.
"""

from __future__ import annotations

import numpy as np


def gae_recursive(rewards, values, gamma, lam):
    """GAE by the backward recursion ``A_t = delta_t + gamma lam A_{t+1}`` with ``A_T = 0``.

    Parameters
    ----------
    rewards : array_like
        Shape (T,): rewards ``r_0, ..., r_{T-1}`` of one trajectory.
    values : array_like
        Shape (T + 1,): ``V(s_0), ..., V(s_T)``; the last entry is the bootstrap value.
    gamma : float
        Discount factor, in [0, 1].
    lam : float
        GAE parameter lambda, in [0, 1].

    Returns
    -------
    numpy.ndarray
        Shape (T,), float64: the advantages ``A_0, ..., A_{T-1}``.

    Raises
    ------
    ValueError
        If ``gamma`` or ``lam`` is outside [0, 1], or ``values`` does not have T + 1 entries;
        the message starts with the argument's name.

    Examples
    --------
    >>> gae_recursive([1.0], [0.0, 0.0], gamma=0.9, lam=0.95).tolist()  # one step: A_0 = delta_0
    [1.0]
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    for name, x in (("gamma", gamma), ("lam", lam)):
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"{name} must be in [0, 1]; got {x}")
    if rewards.ndim != 1 or values.shape != (len(rewards) + 1,):
        raise ValueError(
            f"values must have one more entry than rewards ({len(rewards) + 1}); "
            f"got shape {values.shape}"
        )
    advantages = np.zeros(len(rewards))
    running = 0.0  # A_T = 0: nothing after the last step
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + gamma * values[t + 1] - values[t]
        running = delta + gamma * lam * running
        advantages[t] = running
    return advantages
    ### END SOLUTION


def gae_explicit(rewards, values, gamma, lam):
    """GAE from its definition, ``A_t = sum_{l=0}^{T-t-1} (gamma lam)^l delta_{t+l}``.

    Parameters
    ----------
    rewards : array_like
        Shape (T,): rewards ``r_0, ..., r_{T-1}`` of one trajectory.
    values : array_like
        Shape (T + 1,): ``V(s_0), ..., V(s_T)``; the last entry is the bootstrap value.
    gamma : float
        Discount factor, in [0, 1].
    lam : float
        GAE parameter lambda, in [0, 1].

    Returns
    -------
    numpy.ndarray
        Shape (T,), float64: the advantages ``A_0, ..., A_{T-1}``.

    Raises
    ------
    ValueError
        If ``gamma`` or ``lam`` is outside [0, 1], or ``values`` does not have T + 1 entries;
        the message starts with the argument's name.

    Examples
    --------
    >>> gae_explicit([1.0, 1.0], [0.0, 0.0, 0.0], gamma=0.5, lam=1.0).tolist()
    [1.5, 1.0]
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    for name, x in (("gamma", gamma), ("lam", lam)):
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"{name} must be in [0, 1]; got {x}")
    if rewards.ndim != 1 or values.shape != (len(rewards) + 1,):
        raise ValueError(
            f"values must have one more entry than rewards ({len(rewards) + 1}); "
            f"got shape {values.shape}"
        )
    deltas = rewards + gamma * values[1:] - values[:-1]
    horizon = len(rewards)
    advantages = np.zeros(horizon)
    for t in range(horizon):
        weights = (gamma * lam) ** np.arange(horizon - t)  # numpy gives 0.0 ** 0 == 1.0
        advantages[t] = weights @ deltas[t:]
    return advantages
    ### END SOLUTION


def test_gae_matches_explicit_sum():
    """Both GAE functions agree with an independent double loop over ``t`` and ``l``.

    Random rewards and values, a grid of ``gamma`` and ``lam`` that includes the edge cases 0
    and 1, and random trajectory lengths that include T = 1. The reference is written from the
    definition with scalar arithmetic only, so it shares no code with the functions under test.
    """
    ### BEGIN SOLUTION
    rng = np.random.default_rng(2024)
    lengths = [1, 2, *rng.integers(3, 40, size=3).tolist()]
    for gamma in (0.0, 0.5, 0.9, 0.99, 1.0):
        for lam in (0.0, 0.3, 0.95, 1.0):
            for horizon in lengths:
                rewards = rng.normal(size=horizon)
                values = rng.normal(size=horizon + 1)
                expected = np.zeros(horizon)
                for t in range(horizon):
                    for lag in range(horizon - t):
                        step = t + lag
                        delta = rewards[step] + gamma * values[step + 1] - values[step]
                        expected[t] += (gamma * lam) ** lag * delta
                for gae in (gae_recursive, gae_explicit):
                    np.testing.assert_allclose(
                        gae(rewards, values, gamma, lam),
                        expected,
                        rtol=1e-10,
                        atol=1e-12,
                        err_msg=f"{gae.__name__}: gamma={gamma}, lam={lam}, T={horizon}",
                    )
    ### END SOLUTION
