"""Exercise ``ppo-clip`` (chapter 5, two stars): PPO's clipped surrogate and its gradient.

Each token of a batch has a log-ratio ``log_ratio = log pi_theta(x) - log pi_old(x)`` (so the
ratio is ``rho = exp(log_ratio)``) and an advantage ``A``. PPO maximizes, token by token,

    L(rho, A) = min(rho * A, clip(rho, 1 - clip_low, 1 + clip_high) * A),

with possibly different clip ranges below and above 1 (``clip_high > clip_low`` is DAPO's
"clip-higher"). Its derivative with respect to the log-ratio is ``rho * A`` where the ratio is
inside its clip (for the sign of its advantage) and 0 where the clip is active:

* A > 0 and rho > 1 + clip_high: clipped (no gradient);
* A < 0 and rho < 1 - clip_low: clipped (no gradient);
* otherwise (including A = 0, and a ratio exactly on the boundary): ``rho * A``.

Implement

* :func:`clipped_surrogate`, the objective of every token (an array of the input's shape);
* :func:`clipped_surrogate_grad`, the derivative of ``sum(clipped_surrogate(...))`` with
  respect to ``log_ratio``, entry by entry.

Both take arrays of any shape (the same shape for ``log_ratio`` and ``advantages``) and raise
``ValueError`` for mismatched shapes, a negative clip range, or ``clip_low >= 1``.
"""

from __future__ import annotations

import numpy as np


def clipped_surrogate(log_ratio, advantages, clip_low, clip_high):
    """PPO's clipped objective of every token, from the log-ratios.

    Parameters
    ----------
    log_ratio : array_like
        Any shape: log pi_theta - log pi_old of each sampled token.
    advantages : array_like
        The same shape: the advantage of each token.
    clip_low : float
        Lower clip range, in [0, 1): the ratio is clipped at 1 - clip_low.
    clip_high : float
        Upper clip range, >= 0: the ratio is clipped at 1 + clip_high.

    Returns
    -------
    numpy.ndarray
        The shape of ``log_ratio``, float64: min(rho A, clip(rho) A).

    Raises
    ------
    ValueError
        If the shapes differ, a clip range is negative, or ``clip_low >= 1``.

    Examples
    --------
    >>> clipped_surrogate(np.log([0.5, 1.5, 1.5]), [1.0, 1.0, -1.0], 0.2, 0.2).round(6).tolist()
    [0.5, 1.2, -1.5]
    """
    ### BEGIN SOLUTION
    log_ratio = np.asarray(log_ratio, dtype=np.float64)
    advantages = np.asarray(advantages, dtype=np.float64)
    if advantages.shape != log_ratio.shape:
        raise ValueError(
            f"advantages must have the shape of log_ratio {log_ratio.shape}; got {advantages.shape}"
        )
    if not 0.0 <= clip_low < 1.0:
        raise ValueError(f"clip_low must be in [0, 1); got {clip_low}")
    if not clip_high >= 0.0:
        raise ValueError(f"clip_high must be >= 0; got {clip_high}")
    ratio = np.exp(log_ratio)
    clipped = np.clip(ratio, 1.0 - clip_low, 1.0 + clip_high)
    return np.minimum(ratio * advantages, clipped * advantages)
    ### END SOLUTION


def clipped_surrogate_grad(log_ratio, advantages, clip_low, clip_high):
    """Derivative of the clipped objective of every token with respect to its log-ratio.

    Parameters
    ----------
    log_ratio, advantages, clip_low, clip_high
        As in :func:`clipped_surrogate`.

    Returns
    -------
    numpy.ndarray
        The shape of ``log_ratio``, float64: rho A inside the clip, 0 where it is active.

    Raises
    ------
    ValueError
        As :func:`clipped_surrogate`.

    Examples
    --------
    >>> clipped_surrogate_grad(np.log([0.5, 1.5, 1.5]), [1.0, 1.0, -1.0], 0.2, 0.2).tolist()
    [0.5, 0.0, -1.5]
    """
    ### BEGIN SOLUTION
    log_ratio = np.asarray(log_ratio, dtype=np.float64)
    advantages = np.asarray(advantages, dtype=np.float64)
    if advantages.shape != log_ratio.shape:
        raise ValueError(
            f"advantages must have the shape of log_ratio {log_ratio.shape}; got {advantages.shape}"
        )
    if not 0.0 <= clip_low < 1.0:
        raise ValueError(f"clip_low must be in [0, 1); got {clip_low}")
    if not clip_high >= 0.0:
        raise ValueError(f"clip_high must be >= 0; got {clip_high}")
    ratio = np.exp(log_ratio)
    # d(rho A)/d log rho = rho A; the clipped branch is constant in rho.
    above = (advantages > 0) & (ratio > 1.0 + clip_high)
    below = (advantages < 0) & (ratio < 1.0 - clip_low)
    return np.where(above | below, 0.0, ratio * advantages)
    ### END SOLUTION


def test_clipped_surrogate():
    """Both functions agree with a token-by-token loop and with central differences."""
    ### BEGIN SOLUTION
    rng = np.random.default_rng(7)
    for clip_low, clip_high in ((0.2, 0.2), (0.2, 0.28), (0.0, 0.5)):
        log_ratio = rng.normal(scale=0.4, size=(5, 6))
        advantages = rng.normal(size=(5, 6))
        value = clipped_surrogate(log_ratio, advantages, clip_low, clip_high)
        for index in np.ndindex(log_ratio.shape):
            rho, a = np.exp(log_ratio[index]), advantages[index]
            branch = min(max(rho, 1 - clip_low), 1 + clip_high)
            assert np.isclose(value[index], min(rho * a, branch * a))
        step = 1e-6
        grad = clipped_surrogate_grad(log_ratio, advantages, clip_low, clip_high)
        numeric = (
            clipped_surrogate(log_ratio + step, advantages, clip_low, clip_high)
            - clipped_surrogate(log_ratio - step, advantages, clip_low, clip_high)
        ) / (2 * step)
        # Each entry depends on its own log-ratio only, so one shifted call per side suffices.
        assert np.allclose(grad, numeric, atol=1e-6)
    ### END SOLUTION
