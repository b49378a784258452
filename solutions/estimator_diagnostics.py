"""Exercise ``estimator-diagnostics`` (chapter 12, three stars): three diagnostics from scratch.

Implement, with NumPy only:

* :func:`explained_variance`: 1 - Var(G - V) / Var(G) for critic predictions V (``values``)
  and targets G (``returns``) of one shape, with population variances (divisor n);
* :func:`effective_sample_size`: (Σ w)² / Σ w² for non-negative importance weights, finite
  even for weights as large as 1e300 (where w² overflows);
* :func:`fraction_all_equal`: the fraction of groups (rows of a 2-D array) whose rewards are
  all exactly equal, the groups a group baseline learns nothing from;
* :func:`test_diagnostics`, a test of the three against explicit loops.

Bad input raises ``ValueError`` whose message starts with the argument's name.
"""

from __future__ import annotations

import numpy as np


def explained_variance(values, returns):
    """Fraction of the variance of the returns explained by the values.

        EV = 1 - Var(G - V) / Var(G),    Var(x) = mean((x - mean(x))²).

    Parameters
    ----------
    values : array_like
        Critic predictions V, any shape with at least one entry, finite.
    returns : array_like
        Targets G, the shape of ``values``, finite and not all equal.

    Returns
    -------
    float
        EV, at most 1.

    Raises
    ------
    ValueError
        If an array is empty or not finite (naming it), the shapes differ (naming
        ``returns``), or the returns are all equal (naming ``returns``).

    Examples
    --------
    >>> explained_variance([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])
    0.8571428571428571
    """
    ### BEGIN SOLUTION
    values = np.asarray(values, dtype=np.float64)
    returns = np.asarray(returns, dtype=np.float64)
    if values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"values must be a non-empty finite array; got shape {values.shape}")
    if returns.shape != values.shape:
        raise ValueError(
            f"returns must have the shape of values, {values.shape}; got {returns.shape}"
        )
    if not np.all(np.isfinite(returns)):
        raise ValueError("returns must be finite; got a NaN or an infinity")
    spread = np.mean((returns - returns.mean()) ** 2)
    if spread == 0.0:
        raise ValueError(
            "returns must not all be equal (EV divides by their variance); got a constant"
        )
    error = returns - values
    return float(1.0 - np.mean((error - error.mean()) ** 2) / spread)
    ### END SOLUTION


def effective_sample_size(weights):
    """Kish's effective sample size of non-negative weights.

        ESS = (Σ_i w_i)² / Σ_i w_i².

    Parameters
    ----------
    weights : array_like
        1-D, non-negative, finite, not all zero; entries may be as large as 1e300.

    Returns
    -------
    float
        The ESS, in [1, N].

    Raises
    ------
    ValueError
        If ``weights`` is not a finite 1-D array, has a negative entry, or is all zero.

    Examples
    --------
    >>> effective_sample_size([1.0, 1.0, 2.0])
    2.6666666666666665
    """
    ### BEGIN SOLUTION
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 1 or not np.all(np.isfinite(weights)):
        raise ValueError(f"weights must be a finite 1-D array; got shape {weights.shape}")
    if np.any(weights < 0.0):
        raise ValueError("weights must be non-negative; got a negative weight")
    largest = weights.max(initial=0.0)
    if largest == 0.0:
        raise ValueError("weights must not all be zero; got only zeros")
    scaled = weights / largest  # the ratio does not change, and nothing overflows
    return float(scaled.sum() ** 2 / np.sum(scaled**2))
    ### END SOLUTION


def fraction_all_equal(rewards):
    """Fraction of groups whose rewards are all exactly equal.

        F = (1/G) Σ_g [R_g1 = R_g2 = ... = R_gN].

    Parameters
    ----------
    rewards : array_like
        Shape (G, N), G >= 1 groups (rows) of N >= 1 rewards, finite.

    Returns
    -------
    float
        F, in [0, 1].

    Raises
    ------
    ValueError
        If ``rewards`` is not a finite 2-D array with at least one group and one reward.

    Examples
    --------
    >>> fraction_all_equal([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [0.5, 0.5]])
    0.75
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim != 2 or rewards.size == 0:
        raise ValueError(f"rewards must be a non-empty 2-D array (groups x N); got {rewards.shape}")
    if not np.all(np.isfinite(rewards)):
        raise ValueError("rewards must be finite; got a NaN or an infinity")
    equal = np.all(rewards == rewards[:, :1], axis=1)
    return float(equal.mean())
    ### END SOLUTION


def test_diagnostics():
    """The three functions against explicit loops, on random inputs and edge cases."""
    ### BEGIN SOLUTION
    rng = np.random.default_rng(0)
    for _ in range(20):
        returns = rng.normal(size=rng.integers(2, 30))
        values = returns + rng.normal(size=returns.size)
        n = returns.size
        mean_g = sum(returns) / n
        errors = [g - v for g, v in zip(returns, values, strict=True)]
        mean_e = sum(errors) / n
        var_g = sum((g - mean_g) ** 2 for g in returns) / n
        var_e = sum((e - mean_e) ** 2 for e in errors) / n
        assert abs(explained_variance(values, returns) - (1 - var_e / var_g)) < 1e-9
        assert abs(explained_variance(values + 3.0, returns) - (1 - var_e / var_g)) < 1e-9

        weights = rng.exponential(size=n)
        by_hand = sum(weights) ** 2 / sum(w * w for w in weights)
        assert abs(effective_sample_size(weights) - by_hand) < 1e-9 * by_hand
        assert abs(effective_sample_size(1e300 * weights) - by_hand) < 1e-9 * by_hand

        groups = rng.integers(0, 2, size=(rng.integers(1, 10), rng.integers(1, 6)))
        equal = [all(r == row[0] for r in row) for row in groups.tolist()]
        assert fraction_all_equal(groups) == sum(equal) / len(equal)
    assert explained_variance([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == 0.0
    assert effective_sample_size([0.0, 5.0, 0.0]) == 1.0
    for call in (
        lambda: explained_variance([1.0, 2.0], [1.0, 1.0]),
        lambda: explained_variance([1.0, 2.0], [1.0, 2.0, 3.0]),
        lambda: effective_sample_size([1.0, -1.0]),
        lambda: effective_sample_size([0.0, 0.0]),
        lambda: fraction_all_equal([1.0, 1.0]),
    ):
        try:
            call()
        except ValueError:
            continue
        raise AssertionError("bad input must raise ValueError")
    ### END SOLUTION
